"""The hot loops of the controller and the ZooKeeper client build some NamedTuples with ``tuple.__new__`` and every
field given in order (the generated ``__new__`` is a Python frame per object). A field added, removed or reordered
would then build wrong objects without an error: these field lists pin what those builders assume."""

from __future__ import annotations

import pytest

from zkcontroller.controller.election import ElectionResult
from zkcontroller.controller.states import PartitionAndReplica
from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from zkcontroller.protocol.control_requests import LeaderAndIsrPartitionState, UpdateMetadataPartitionState

BUILT_DIRECTLY = [
    # (class, the fields the direct builds give, where)
    (TopicPartition, ("topic", "partition"), "ControllerContext.replicas_on_brokers"),
    (PartitionAndReplica, ("topic_partition", "replica"),
     "ControllerContext.replicas_on_brokers, ReplicaStateMachine._to_offline"),
    (LeaderAndIsr, ("leader", "leader_epoch", "isr", "zk_version"),
     "TopicOps.update_leader_and_isr, ReplicaStateMachine._do_remove_replicas_from_isr, election.leader_for_offline, "
     "election.leader_for_controlled_shutdown"),
    (ElectionResult, ("topic_partition", "leader_and_isr", "live_replicas", "unclean"),
     "election.leader_for_offline, election.leader_for_controlled_shutdown"),
    (LeaderIsrAndControllerEpoch, ("leader_and_isr", "controller_epoch"),
     "PartitionStateMachine._write_elected, ReplicaStateMachine._do_remove_replicas_from_isr"),
    (LeaderAndIsrPartitionState, ("topic", "partition", "controller_epoch", "leader", "leader_epoch", "isr",
                                  "zk_version", "replicas", "adding_replicas", "removing_replicas", "is_new"),
     "ControllerBrokerRequestBatch.add_leader_and_isr_requests"),
    (UpdateMetadataPartitionState, ("topic", "partition", "controller_epoch", "leader", "leader_epoch", "isr",
                                    "zk_version", "replicas", "offline_replicas"),
     "ControllerBrokerRequestBatch._update_metadata_partition_states"),
]


@pytest.mark.parametrize(("cls", "fields", "where"), BUILT_DIRECTLY, ids=[c.__name__ for c, _, _ in BUILT_DIRECTLY])
def test_fields_are_what_the_direct_builds_give(cls: type, fields: tuple[str, ...], where: str) -> None:
    assert cls._fields == fields, f"{cls.__name__}'s fields changed: update the direct builds in {where}"  # type: ignore[attr-defined]


def test_a_direct_build_is_the_same_object_as_the_constructors() -> None:
    built = tuple.__new__(LeaderAndIsr, (2, 5, (2, 3), 7))
    assert type(built) is LeaderAndIsr
    assert built == LeaderAndIsr(2, 5, (2, 3), 7) and hash(built) == hash(LeaderAndIsr(2, 5, (2, 3), 7))
    assert built.with_zk_version(8) == LeaderAndIsr(2, 5, (2, 3), 8)
