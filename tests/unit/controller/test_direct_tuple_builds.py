"""The hot loops of the controller and the ZooKeeper client build some NamedTuples with ``tuple.__new__`` and every
field given in order (the generated ``__new__`` is a Python frame per object). A field added, removed or reordered
would then build wrong objects without an error: these field lists pin what those builders assume."""

from __future__ import annotations

import pytest

from zkcontroller.controller.election import ElectionResult
from zkcontroller.controller.states import PartitionAndReplica
from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from zkcontroller.protocol.control_requests import (
    LeaderAndIsrPartitionState,
    StopReplicaPartitionState,
    UpdateMetadataPartitionState,
)

BUILT_DIRECTLY = [
    # (class, the fields the direct builds give, where)
    (TopicPartition, ("topic", "partition"),
     "ControllerContext.replicas_on_brokers, ControlledShutdownEvents._partitions_to_act_on"),
    (PartitionAndReplica, ("topic_partition", "replica"),
     "ControllerContext.replicas_on_brokers, ReplicaStateMachine._to_offline, "
     "ControlledShutdownEvents.do_controlled_shutdown"),
    (LeaderAndIsr, ("leader", "leader_epoch", "isr", "zk_version"),
     "TopicOps.update_leader_and_isr, ReplicaStateMachine._do_remove_replicas_from_isr, election.leader_for_offline, "
     "election.leader_for_controlled_shutdown, election._elect_for_controlled_shutdown"),
    (ElectionResult, ("topic_partition", "leader_and_isr", "live_replicas", "unclean"),
     "election.leader_for_offline, election.leader_for_controlled_shutdown, election._elect_for_controlled_shutdown"),
    (LeaderIsrAndControllerEpoch, ("leader_and_isr", "controller_epoch"),
     "PartitionStateMachine._write_elected, ReplicaStateMachine._do_remove_replicas_from_isr"),
    (LeaderAndIsrPartitionState, ("topic", "partition", "controller_epoch", "leader", "leader_epoch", "isr",
                                  "zk_version", "replicas", "adding_replicas", "removing_replicas", "is_new"),
     "ControllerBrokerRequestBatch.add_leader_and_isr_requests"),
    (UpdateMetadataPartitionState, ("topic", "partition", "controller_epoch", "leader", "leader_epoch", "isr",
                                    "zk_version", "replicas", "offline_replicas"),
     "ControllerBrokerRequestBatch._update_metadata_partition_states"),
    (StopReplicaPartitionState, ("topic", "partition", "leader_epoch", "delete_partition"),
     "ControllerBrokerRequestBatch.add_stop_replica_requests"),
]


@pytest.mark.parametrize(("cls", "fields", "where"), BUILT_DIRECTLY, ids=[c.__name__ for c, _, _ in BUILT_DIRECTLY])
def test_fields_are_what_the_direct_builds_give(cls: type, fields: tuple[str, ...], where: str) -> None:
    assert cls._fields == fields, f"{cls.__name__}'s fields changed: update the direct builds in {where}"  # type: ignore[attr-defined]


def test_a_direct_build_is_the_same_object_as_the_constructors() -> None:
    built = tuple.__new__(LeaderAndIsr, (2, 5, (2, 3), 7))
    assert type(built) is LeaderAndIsr
    assert built == LeaderAndIsr(2, 5, (2, 3), 7) and hash(built) == hash(LeaderAndIsr(2, 5, (2, 3), 7))
    assert built.with_zk_version(8) == LeaderAndIsr(2, 5, (2, 3), 8)


def test_stop_replicas_queued_as_a_step_are_those_queued_one_by_one() -> None:
    """`add_stop_replica_requests` (a step's partitions at once) queues what one call per partition queued, and
    nothing at all for no partitions or no live broker (an empty entry would send an empty StopReplica)."""
    from zkcontroller.controller.context import ControllerContext
    from zkcontroller.controller.event_log import EventLog, StateChangeLogger
    from zkcontroller.controller.request_batch import ControllerBrokerRequestBatch
    from zkcontroller.model import Broker, LeaderIsrAndControllerEpoch, ReplicaAssignment

    context = ControllerContext()
    context.set_live_brokers({Broker(1, ()): 10, Broker(2, ()): 11})
    parts = [TopicPartition("t", p) for p in range(4)]
    for tp in parts:
        context.update_partition_full_replica_assignment(tp, ReplicaAssignment((1, 2)))
    context.put_partition_leadership_info(parts[0], LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 7, (1, 2), 3), 1))
    context.queue_topic_deletion(["u"])
    parts.append(TopicPartition("u", 0))
    logger = StateChangeLogger(0, lambda: 1, EventLog("c", lambda: 0, None))

    def batch() -> ControllerBrokerRequestBatch:
        return ControllerBrokerRequestBatch(0, context, lambda _b, _r: None, logger)

    one_by_one, stepwise = batch(), batch()
    for delete in (False, True, False):
        for tp in parts[1:] if delete else parts:
            one_by_one.add_stop_replica_request_for_brokers([2, 3], tp, delete)
        stepwise.add_stop_replica_requests([2, 3], parts[1:] if delete else parts, delete)
    assert stepwise.stop_replica_request_map == one_by_one.stop_replica_request_map
    assert [type(s) for s in stepwise.stop_replica_request_map[2].values()] == [StopReplicaPartitionState] * 5
    assert stepwise.stop_replica_request_map[2][parts[0]] == StopReplicaPartitionState("t", 0, 7, False)
    assert stepwise.stop_replica_request_map[2][parts[4]] == StopReplicaPartitionState("u", 0, -2, True)
    empty = batch()
    empty.add_stop_replica_requests([2], [], True)
    empty.add_stop_replica_requests([3], parts, True)
    assert empty.stop_replica_request_map == {} and empty.is_empty
