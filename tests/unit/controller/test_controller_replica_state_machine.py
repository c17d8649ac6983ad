"""`ReplicaStateMachine` against a real `KafkaZkClient` on the embedded store (spec §6)."""

from __future__ import annotations

import logging

import pytest
from tests.helpers import snapshot
from tests.unit.controller.conftest import (
    JsonlSink,
    RecordingSender,
    create_topic,
    messages,
    read_state,
    write_states,
)

from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.event_log import StateChangeLogger
from zkcontroller.controller.replica_state_machine import ReplicaStateMachine
from zkcontroller.controller.request_batch import ControllerBrokerRequestBatch
from zkcontroller.controller.states import PartitionAndReplica, ReplicaState
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from zkcontroller.protocol.control_requests import (
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ControllerMovedError
from zkcontroller.zk.kafka_zk_client import NO_FENCING, KafkaZkClient

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def R(tp: TopicPartition, broker_id: int) -> PartitionAndReplica:
    return PartitionAndReplica(tp, broker_id)


@pytest.fixture
def rsm(config: ControllerConfig, context: ControllerContext, zk: KafkaZkClient,
        batch: ControllerBrokerRequestBatch, state_change_logger: StateChangeLogger) -> ReplicaStateMachine:
    return ReplicaStateMachine(config, context, zk, batch, state_change_logger)


async def led(admin_zk: KafkaZkClient, context: ControllerContext, tp: TopicPartition, lai: LeaderAndIsr,
              replica_state: ReplicaState = ReplicaState.ONLINE) -> None:
    """A partition with a state znode and cached leadership, every replica in ``replica_state``."""
    await write_states(admin_zk, {tp: lai}, context.epoch)
    context.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(lai, context.epoch))
    for r in context.partition_replica_assignment(tp):
        context.put_replica_state(R(tp, r), replica_state)


def lai_by_broker(sender: RecordingSender) -> dict[int, list[tuple]]:
    return {b: [(s.topic_partition, s.leader, s.leader_epoch, s.isr, s.is_new) for s in r.partition_states]
            for b, r in sender.of_type(LeaderAndIsrRequest)}


async def test_offline_replica_leaves_the_isr_and_the_others_are_told(
        rsm: ReplicaStateMachine, context: ControllerContext, admin_zk: KafkaZkClient, sender: RecordingSender,
        jsonl: JsonlSink, state_log: pytest.LogCaptureFixture) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2, 3), 1: (1, 2, 3)})
    await led(admin_zk, context, T0, LeaderAndIsr(1, 4, (1, 2, 3)))
    await led(admin_zk, context, T1, LeaderAndIsr(2, 4, (2, 3)))
    context.remove_live_brokers({1})
    await rsm.handle_state_changes([R(T0, 1), R(T1, 1)], ReplicaState.OFFLINE)
    # The leader left: no leader until an election; ISR shrinks; epoch +1. t-1 did not have 1 in its ISR.
    assert await read_state(admin_zk, T0) == LeaderIsrAndControllerEpoch(LeaderAndIsr(-1, 5, (2, 3), 1), 1)
    assert await read_state(admin_zk, T1) == LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 4, (2, 3), 0), 1)
    assert context.partition_leader_and_isr(T0) == LeaderAndIsr(-1, 5, (2, 3), 1)
    assert context.replica_state(R(T0, 1)) == ReplicaState.OFFLINE == context.replica_state(R(T1, 1))
    assert lai_by_broker(sender) == {
        2: [(T0, -1, 5, (2, 3), False), (T1, 2, 4, (2, 3), False)],
        3: [(T0, -1, 5, (2, 3), False), (T1, 2, 4, (2, 3), False)],
    }
    assert not sender.of_type(StopReplicaRequest)  # broker 1 is dead: its StopReplica is dropped
    assert [r["partition"] for r in jsonl.of_type("isr_change")] == [0]
    assert ("[Controller id=1 epoch=1] Partition t-0 state changed to (Leader:-1,ISR:2,3,LeaderEpoch:5,"
            "ControllerEpoch:1) after removing replica 1 from the ISR as part of transition to OfflineReplica"
            ) in messages(state_log, logging.INFO)


async def test_isr_removal_never_empties_the_isr(
        rsm: ReplicaStateMachine, context: ControllerContext, admin_zk: KafkaZkClient) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2), 1: (1, 2)})
    await led(admin_zk, context, T0, LeaderAndIsr(1, 4, (1,)))
    await led(admin_zk, context, T1, LeaderAndIsr(2, 4, (1,)))  # a leader outside its ISR: leader kept
    context.remove_live_brokers({1})
    await rsm.handle_state_changes([R(T0, 1), R(T1, 1)], ReplicaState.OFFLINE)
    assert (await read_state(admin_zk, T0)).leader_and_isr == LeaderAndIsr(-1, 5, (1,), 1)
    assert (await read_state(admin_zk, T1)).leader_and_isr == LeaderAndIsr(2, 5, (1,), 1)


async def test_offline_replica_without_leadership_only_queues_update_metadata(
        rsm: ReplicaStateMachine, context: ControllerContext, admin_zk: KafkaZkClient,
        sender: RecordingSender) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    context.put_replica_state(R(T0, 2), ReplicaState.NEW)
    await rsm.handle_state_changes([R(T0, 2)], ReplicaState.OFFLINE)
    assert context.replica_state(R(T0, 2)) == ReplicaState.OFFLINE
    assert [(b, type(r).__name__) for b, r in sender.sent] == [
        (1, "UpdateMetadataRequest"), (2, "UpdateMetadataRequest"), (3, "UpdateMetadataRequest"),
        (2, "StopReplicaRequest")]
    assert all(r.partition_states == () for _, r in sender.of_type(UpdateMetadataRequest))


class RacingZkClient(KafkaZkClient):
    """A broker's ISR write lands between the controller's read and its conditional write (once)."""

    def __init__(self, inner: KafkaZkClient, admin: KafkaZkClient, tp: TopicPartition, lai: LeaderAndIsr):
        super().__init__(inner.session, lambda: 0)
        self._admin, self._race = admin, (tp, lai)

    async def get_topic_partition_states(self, partitions, watch=None):  # type: ignore[no-untyped-def]
        read = await super().get_topic_partition_states(partitions, watch)
        if self._race is not None:
            tp, lai = self._race
            self._race = None
            current = await self._admin.get_topic_partition_state(tp)
            await self._admin.update_leader_and_isr({tp: lai.with_zk_version(current.leader_and_isr.zk_version)},
                                                    current.controller_epoch, NO_FENCING)
        return read


async def test_isr_removal_retries_version_conflicts(
        config: ControllerConfig, context: ControllerContext, zk: KafkaZkClient, admin_zk: KafkaZkClient,
        batch: ControllerBrokerRequestBatch, state_change_logger: StateChangeLogger) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2, 3)})
    await led(admin_zk, context, T0, LeaderAndIsr(2, 4, (1, 2, 3)))
    # the context's copy (v0) is stale: the leader rewrote the state (v1), so the first, cached attempt loses
    # the version check and reads; then the leader shrinks the ISR between that read and the write (v2)
    current = await admin_zk.get_topic_partition_state(T0)
    await admin_zk.update_leader_and_isr({T0: current.leader_and_isr}, current.controller_epoch, NO_FENCING)
    racing = RacingZkClient(zk, admin_zk, T0, LeaderAndIsr(2, 4, (1, 2)))
    rsm = ReplicaStateMachine(config, context, racing, batch, state_change_logger)
    await rsm.handle_state_changes([R(T0, 1)], ReplicaState.OFFLINE)
    assert (await read_state(admin_zk, T0)).leader_and_isr == LeaderAndIsr(2, 5, (2,), 3)
    assert context.replica_state(R(T0, 1)) == ReplicaState.OFFLINE


async def test_state_from_a_newer_controller_fails_the_removal(
        rsm: ReplicaStateMachine, context: ControllerContext, admin_zk: KafkaZkClient,
        state_log: pytest.LogCaptureFixture) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    await led(admin_zk, context, T0, LeaderAndIsr(1, 4, (1, 2)))
    # a newer controller's write, after the one this controller's copy holds (v0 → v1)
    await admin_zk.update_leader_and_isr({T0: LeaderAndIsr(1, 4, (1, 2))}, context.epoch + 1, NO_FENCING)
    context.put_replica_state(R(T0, 1), ReplicaState.ONLINE)
    before = await snapshot(admin_zk.session)
    await rsm.handle_state_changes([R(T0, 1)], ReplicaState.OFFLINE)
    assert await snapshot(admin_zk.session) == before
    assert context.replica_state(R(T0, 1)) == ReplicaState.ONLINE
    [error] = [r for r in state_log.records if r.levelno == logging.ERROR]
    assert "initiated state change of replica 1 for partition t-0 from OnlineReplica to OfflineReplica failed" in (
        error.getMessage())
    assert "Leader and isr path written by another controller" in str(error.exc_info[1])


async def test_missing_state_znode_fails_unless_topic_is_being_deleted(
        rsm: ReplicaStateMachine, context: ControllerContext, admin_zk: KafkaZkClient,
        state_log: pytest.LogCaptureFixture) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    await create_topic(admin_zk, context, "d", {0: (1, 2)})
    d0 = TopicPartition("d", 0)
    for tp in (T0, d0):
        context.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2)), 1))
        context.put_replica_state(R(tp, 1), ReplicaState.ONLINE)
    context.queue_topic_deletion({"d"})
    await rsm.handle_state_changes([R(T0, 1), R(d0, 1)], ReplicaState.OFFLINE)
    assert context.replica_state(R(T0, 1)) == ReplicaState.ONLINE == context.replica_state(R(d0, 1))
    errors = [str(r.exc_info[1]) for r in state_log.records if r.levelno == logging.ERROR]
    assert errors == ["Failed to change state of replica 1 for partition t-0 since the leader and isr path in "
                      "zookeeper is empty"]


async def test_deposed_controller_raises_and_writes_nothing(
        rsm: ReplicaStateMachine, context: ControllerContext, admin_zk: KafkaZkClient, backend: EmbeddedBackend,
        sender: RecordingSender) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    await led(admin_zk, context, T0, LeaderAndIsr(1, 4, (1, 2)))
    await admin_zk.session.delete(paths.CONTROLLER, -1)
    other = KafkaZkClient(await backend.new_session(), lambda: 0)
    await other.register_controller_and_increment_controller_epoch(2)
    before = await snapshot(admin_zk.session)
    with pytest.raises(ControllerMovedError):
        await rsm.handle_state_changes([R(T0, 1)], ReplicaState.OFFLINE)
    assert await snapshot(admin_zk.session) == before and sender.sent == []
    assert context.replica_state(R(T0, 1)) == ReplicaState.ONLINE


async def test_new_replica(rsm: ReplicaStateMachine, context: ControllerContext, admin_zk: KafkaZkClient,
                           sender: RecordingSender, state_log: pytest.LogCaptureFixture) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2, 3), 1: (1, 2)})
    context.put_partition_leadership_info(T0, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 2, (1, 2)), 1))
    await rsm.handle_state_changes([R(T0, 1), R(T0, 3), R(T1, 2)], ReplicaState.NEW)
    assert context.replica_states == {R(T0, 1): ReplicaState.NON_EXISTENT, R(T0, 3): ReplicaState.NEW,
                                      R(T1, 2): ReplicaState.NEW}
    assert lai_by_broker(sender) == {3: [(T0, 1, 2, (1, 2), True)]}
    [error] = messages(state_log, logging.ERROR)
    assert error.endswith("initiated state change of replica 1 for partition t-0 from NonExistentReplica to "
                          "OfflineReplica failed")


async def test_online_replica(rsm: ReplicaStateMachine, context: ControllerContext, admin_zk: KafkaZkClient,
                              sender: RecordingSender, state_log: pytest.LogCaptureFixture) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    context.put_partition_leadership_info(T0, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 2, (1, 2)), 1))
    context.put_replica_state(R(T0, 3), ReplicaState.NEW)
    context.put_replica_state(R(T0, 2), ReplicaState.OFFLINE)
    await rsm.handle_state_changes([R(T0, 3), R(T0, 2)], ReplicaState.ONLINE)
    assert context.partition_full_replica_assignment(T0) == ReplicaAssignment((1, 2, 3))
    assert lai_by_broker(sender) == {2: [(T0, 1, 2, (1, 2), False)]}
    assert context.replica_state(R(T0, 3)) == ReplicaState.ONLINE == context.replica_state(R(T0, 2))
    assert "[Controller id=1 epoch=1] Changed state of replica 3 for partition t-0 from NewReplica to OnlineReplica" \
        in messages(state_log)


async def test_deletion_states_and_removal(rsm: ReplicaStateMachine, context: ControllerContext,
                                           admin_zk: KafkaZkClient, sender: RecordingSender) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    await led(admin_zk, context, T0, LeaderAndIsr(1, 2, (1, 2)), ReplicaState.OFFLINE)
    context.queue_topic_deletion({"t"})
    replicas = [R(T0, 1), R(T0, 2)]
    await rsm.handle_state_changes(replicas, ReplicaState.DELETION_STARTED)
    assert sorted((b, r.partition_states) for b, r in sender.of_type(StopReplicaRequest)) == [
        (1, (StopReplicaPartitionState("t", 0, -2, True),)), (2, (StopReplicaPartitionState("t", 0, -2, True),))]
    await rsm.handle_state_changes(replicas[:1], ReplicaState.DELETION_INELIGIBLE)
    await rsm.handle_state_changes(replicas[1:], ReplicaState.DELETION_SUCCESSFUL)
    assert context.replica_states == {R(T0, 1): ReplicaState.DELETION_INELIGIBLE,
                                      R(T0, 2): ReplicaState.DELETION_SUCCESSFUL}
    await rsm.handle_state_changes(replicas, ReplicaState.NON_EXISTENT)  # only 2 may go
    assert context.replica_states == {R(T0, 1): ReplicaState.DELETION_INELIGIBLE}
    assert context.partition_full_replica_assignment(T0) == ReplicaAssignment((1,))
    assert (await read_state(admin_zk, T0)).leader_and_isr == LeaderAndIsr(1, 2, (1, 2), 0)  # ZK untouched


async def test_invalid_transition_message(rsm: ReplicaStateMachine, context: ControllerContext,
                                          state_log: pytest.LogCaptureFixture) -> None:
    context.put_replica_state(R(T0, 1), ReplicaState.ONLINE)
    await rsm.handle_state_changes([R(T0, 1)], ReplicaState.DELETION_STARTED)
    assert context.replica_state(R(T0, 1)) == ReplicaState.ONLINE
    [record] = [r for r in state_log.records if r.levelno == logging.ERROR]
    assert str(record.exc_info[1]) == (
        "Replica [Topic=t,Partition=0,Replica=1] should be in the OfflineReplica states before moving to "
        "ReplicaDeletionStarted state. Instead it is in OnlineReplica state")
    await rsm.handle_state_changes([R(T0, 1)], ReplicaState.DELETION_INELIGIBLE)
    last_error = [r for r in state_log.records if r.levelno == logging.ERROR][-1]
    assert "should be in the OfflineReplica,ReplicaDeletionStarted states" in str(last_error.exc_info[1])


async def test_startup(rsm: ReplicaStateMachine, context: ControllerContext, admin_zk: KafkaZkClient,
                       sender: RecordingSender) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 4), 1: (4, 2)})
    await write_states(admin_zk, {T0: LeaderAndIsr(1, 0, (1, 4))}, 1)
    context.put_partition_leadership_info(T0, await read_state(admin_zk, T0))
    await rsm.startup()
    assert context.replica_states == {R(T0, 1): ReplicaState.ONLINE, R(T0, 4): ReplicaState.OFFLINE,
                                      R(T1, 4): ReplicaState.OFFLINE, R(T1, 2): ReplicaState.ONLINE}
    assert (await read_state(admin_zk, T0)).leader_and_isr == LeaderAndIsr(1, 1, (1,), 1)
    # Online round: LeaderAndIsr to broker 1 for t-0; offline round: the new ISR to the remaining replica 1.
    assert [(b, [(s.leader_epoch, s.isr) for s in r.partition_states])
            for b, r in sender.of_type(LeaderAndIsrRequest)] == [(1, [(0, (1, 4))]), (1, [(1, (1,))])]


async def test_batch_left_non_empty_by_a_failure_is_reported_not_raised(
        rsm: ReplicaStateMachine, context: ControllerContext, batch: ControllerBrokerRequestBatch,
        caplog: pytest.LogCaptureFixture) -> None:
    batch.add_update_metadata_request_for_brokers([1], [])
    context.put_replica_state(R(T0, 1), ReplicaState.OFFLINE)
    await rsm.handle_state_changes([R(T0, 1)], ReplicaState.ONLINE)
    assert context.replica_state(R(T0, 1)) == ReplicaState.OFFLINE
    assert any("Error while moving some replicas to OnlineReplica state" in r.getMessage() for r in caplog.records)
