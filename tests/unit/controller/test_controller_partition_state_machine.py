"""`PartitionStateMachine` against a real `KafkaZkClient` on the embedded store (spec §5).

Assertions are on ZooKeeper contents, the requests a recording sender received, the context, and the
state-change log; never on which methods were called.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from tests.helpers import snapshot
from tests.unit.controller.conftest import (
    CONTROLLER_ID,
    JsonlSink,
    RecordingSender,
    create_topic,
    messages,
    read_state,
    write_states,
)

from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.dynamic_config import DynamicBrokerConfig
from zkcontroller.controller.election import (
    ControlledShutdownPartitionLeaderElectionStrategy,
    OfflinePartitionLeaderElectionStrategy,
    PreferredReplicaPartitionLeaderElectionStrategy,
)
from zkcontroller.controller.errors import StateChangeFailedError
from zkcontroller.controller.event_log import StateChangeLogger
from zkcontroller.controller.partition_state_machine import PartitionStateMachine
from zkcontroller.controller.request_batch import ControllerBrokerRequestBatch
from zkcontroller.controller.states import PartitionState
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from zkcontroller.protocol.control_requests import AnyControlRequest, LeaderAndIsrRequest, UpdateMetadataRequest
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ControllerMovedError
from zkcontroller.zk.kafka_zk_client import NO_FENCING, KafkaZkClient
from zkcontroller.zk.znodes import TopicPartitionStateZNode

OFFLINE_CLEAN = OfflinePartitionLeaderElectionStrategy(False)
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


@pytest.fixture
def psm(config: ControllerConfig, context: ControllerContext, zk: KafkaZkClient,
        batch: ControllerBrokerRequestBatch, state_change_logger: StateChangeLogger) -> PartitionStateMachine:
    return PartitionStateMachine(config, context, zk, batch, state_change_logger)


def lai_requests(sender: RecordingSender) -> dict[int, list]:
    """broker → its LeaderAndIsr partition states."""
    return {b: list(r.partition_states) for b, r in sender.of_type(LeaderAndIsrRequest)}


async def online_partition(admin_zk: KafkaZkClient, context: ControllerContext, tp: TopicPartition,
                           lai: LeaderAndIsr) -> None:
    """A partition the controller already knows as Online with ``lai`` (written by this controller's epoch)."""
    await write_states(admin_zk, {tp: lai}, context.epoch)
    context.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(lai, context.epoch))
    context.put_partition_state(tp, PartitionState.ONLINE)


async def test_the_leader_and_isr_requests_are_handed_over_before_the_update_metadata_is_built(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient,
        sender: RecordingSender) -> None:
    """The loop's next turn after the first LeaderAndIsr is queued (when the send loops, other tasks, run) comes
    before the step's UpdateMetadata requests, as Kafka's send threads send while its controller builds them."""
    await create_topic(admin_zk, context, "t", {0: (1, 2), 1: (2, 3)})
    await psm.handle_state_changes([T0, T1], PartitionState.NEW)
    sent_by_next_turn: list[list[str]] = []
    record = sender.__call__

    def sending(broker_id: int, request: AnyControlRequest) -> None:
        if isinstance(request, LeaderAndIsrRequest) and not sent_by_next_turn:
            asyncio.get_running_loop().call_soon(
                lambda: sent_by_next_turn.append([type(r).__name__ for _, r in sender.sent]))
            sent_by_next_turn.append([])  # once
        record(broker_id, request)

    psm.batch._sender = sending  # type: ignore[attr-defined]
    await psm.handle_state_changes([T0, T1], PartitionState.ONLINE, OFFLINE_CLEAN)
    await asyncio.sleep(0)  # that turn has come by now, however late
    assert sent_by_next_turn[1] == ["LeaderAndIsrRequest"] * 3
    assert [type(r).__name__ for _, r in sender.sent] == ["LeaderAndIsrRequest"] * 3 + ["UpdateMetadataRequest"] * 3


async def test_new_partitions_get_first_live_replica_as_leader(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient, sender: RecordingSender,
        jsonl: JsonlSink) -> None:
    await create_topic(admin_zk, context, "t", {0: (4, 2, 3), 1: (1, 2)})
    assert await psm.handle_state_changes([T0, T1], PartitionState.NEW) == {}
    assert context.partition_states == {T0: PartitionState.NEW, T1: PartitionState.NEW}
    assert await psm.handle_state_changes([T0, T1], PartitionState.ONLINE, OFFLINE_CLEAN) == {}
    assert await read_state(admin_zk, T0) == LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 0, (2, 3), 0), 1)
    assert await read_state(admin_zk, T1) == LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2), 0), 1)
    assert context.partition_states == {T0: PartitionState.ONLINE, T1: PartitionState.ONLINE}
    requests = lai_requests(sender)
    assert sorted(requests) == [1, 2, 3]  # the ISR members; broker 4 is not live
    assert [(s.topic_partition, s.leader, s.isr, s.is_new) for s in requests[2]] == [
        (T0, 2, (2, 3), True), (T1, 1, (1, 2), True)]
    assert [b for b, _ in sender.of_type(UpdateMetadataRequest)] == [1, 2, 3]
    changes = [(r["partition"], r["from_state"], r["to_state"]) for r in jsonl.of_type("partition_state_change")]
    assert changes == [(0, "NonExistentPartition", "NewPartition"), (1, "NonExistentPartition", "NewPartition"),
                       (0, "NewPartition", "OnlinePartition"), (1, "NewPartition", "OnlinePartition")]


async def test_new_partition_without_live_replica_stays_new(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient, sender: RecordingSender,
        state_log: pytest.LogCaptureFixture) -> None:
    await create_topic(admin_zk, context, "t", {0: (5, 6)})
    await psm.handle_state_changes([T0], PartitionState.NEW)
    await psm.handle_state_changes([T0], PartitionState.ONLINE, OFFLINE_CLEAN)
    assert context.partition_state(T0) == PartitionState.NEW
    assert await read_state(admin_zk, T0) is None
    assert not sender.of_type(LeaderAndIsrRequest)
    [error] = messages(state_log, logging.ERROR)
    assert "failed to change state for partition t-0 from NewPartition to OnlinePartition" in error


async def test_new_partition_whose_state_exists_fails(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    await write_states(admin_zk, {T0: LeaderAndIsr(2, 5, (2,))}, 1)
    await psm.handle_state_changes([T0], PartitionState.NEW)
    await psm.handle_state_changes([T0], PartitionState.ONLINE, OFFLINE_CLEAN)
    assert context.partition_state(T0) == PartitionState.NEW
    assert context.partition_leadership_info(T0) is None
    assert (await read_state(admin_zk, T0)).leader_and_isr.leader_epoch == 5


async def test_offline_election_bumps_epoch_and_drops_dead_replicas(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient, sender: RecordingSender,
        jsonl: JsonlSink) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2, 3)})
    await online_partition(admin_zk, context, T0, LeaderAndIsr(1, 4, (1, 2, 3)))
    context.remove_live_brokers({1})
    await psm.handle_state_changes([T0], PartitionState.OFFLINE)
    assert context.offline_partition_count == 1
    result = await psm.handle_state_changes([T0], PartitionState.ONLINE, OFFLINE_CLEAN)
    assert result == {T0: LeaderAndIsr(2, 5, (2, 3), 1)}  # created at version 0, one conditional set
    assert await read_state(admin_zk, T0) == LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 5, (2, 3), 1), 1)
    assert context.partition_state(T0) == PartitionState.ONLINE and context.offline_partition_count == 0
    assert context.partition_leader_and_isr(T0) == LeaderAndIsr(2, 5, (2, 3), 1)
    assert {b: [(s.leader, s.leader_epoch, s.is_new) for s in states]
            for b, states in lai_requests(sender).items()} == {2: [(2, 5, False)], 3: [(2, 5, False)]}
    [election] = jsonl.of_type("leader_election")
    assert (election["old_leader"], election["leader"], election["clean"], election["strategy"]) == (
        1, 2, True, "offline")


async def test_whole_isr_dead_means_no_leader_and_nothing_written(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient, sender: RecordingSender,
        state_log: pytest.LogCaptureFixture) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2, 3)})
    await online_partition(admin_zk, context, T0, LeaderAndIsr(1, 4, (1,)))
    context.remove_live_brokers({1})
    await psm.handle_state_changes([T0], PartitionState.OFFLINE)
    before = await snapshot(admin_zk.session)
    result = await psm.handle_state_changes([T0], PartitionState.ONLINE, OFFLINE_CLEAN)
    assert isinstance(result[T0], StateChangeFailedError)
    assert str(result[T0]) == (
        "Failed to elect leader for partition t-0 under strategy OfflinePartitionLeaderElectionStrategy(false)")
    assert await snapshot(admin_zk.session) == before
    assert context.partition_state(T0) == PartitionState.OFFLINE and context.stats.unclean_leader_elections == 0
    assert not sender.of_type(LeaderAndIsrRequest)


@pytest.mark.parametrize(("broker_default", "topic_override", "elected"), [
    (False, "true", True), (False, " TRUE ", True), (True, None, True), (True, "false", False), (False, None, False),
])
async def test_unclean_election_from_topic_config_overlaid_on_broker_default(
        context: ControllerContext, zk: KafkaZkClient, admin_zk: KafkaZkClient, batch: ControllerBrokerRequestBatch,
        state_change_logger: StateChangeLogger, jsonl: JsonlSink, broker_default: bool, topic_override: str | None,
        elected: bool) -> None:
    psm = PartitionStateMachine(ControllerConfig(CONTROLLER_ID, unclean_leader_election_enable=broker_default),
                                context, zk, batch, state_change_logger)
    await create_topic(admin_zk, context, "t", {0: (1, 2, 3)})
    await online_partition(admin_zk, context, T0, LeaderAndIsr(1, 4, (1,)))
    if topic_override is not None:
        await admin_zk.set_or_create_entity_configs(
            paths.ConfigType.TOPIC, "t", {"unclean.leader.election.enable": topic_override})
    context.remove_live_brokers({1})
    result = await psm.handle_state_changes([T0], PartitionState.ONLINE, OFFLINE_CLEAN)
    if elected:
        assert result == {T0: LeaderAndIsr(2, 5, (2,), 1)}
        assert context.stats.unclean_leader_elections == 1
        assert [r["clean"] for r in jsonl.of_type("leader_election")] == [False]
    else:
        assert isinstance(result[T0], StateChangeFailedError)
        assert context.stats.unclean_leader_elections == 0
        assert (await read_state(admin_zk, T0)).leader_and_isr == LeaderAndIsr(1, 4, (1,), 0)


async def test_admin_unclean_election_ignores_configs(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient, jsonl: JsonlSink) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2, 3), 1: (1, 2, 3)})
    await online_partition(admin_zk, context, T0, LeaderAndIsr(1, 4, (1,)))
    await online_partition(admin_zk, context, T1, LeaderAndIsr(3, 4, (1, 3)))
    context.remove_live_brokers({1})
    result = await psm.handle_state_changes([T0, T1], PartitionState.ONLINE,
                                            OfflinePartitionLeaderElectionStrategy(True))
    assert result == {T0: LeaderAndIsr(2, 5, (2,), 1), T1: LeaderAndIsr(3, 5, (3,), 1)}  # t-1 stays clean
    assert context.stats.unclean_leader_elections == 1
    # each election's record names its own partition's old leader (the unclean check orders t-0 after t-1)
    assert [(r["partition"], r["old_leader"], r["leader"], r["clean"]) for r in jsonl.of_type("leader_election")] == [
        (0, 1, 2, False), (1, 3, 3, True)]


async def test_malformed_topic_config_fails_that_partition(
        config: ControllerConfig, context: ControllerContext, zk: KafkaZkClient, batch: ControllerBrokerRequestBatch,
        state_change_logger: StateChangeLogger, admin_zk: KafkaZkClient) -> None:
    """Well-formed JSON with a value that is not a string: Kafka's decoder throws there too."""
    psm = PartitionStateMachine(config, context, zk, batch, state_change_logger, DynamicBrokerConfig(True))
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    await online_partition(admin_zk, context, T0, LeaderAndIsr(1, 4, (1,)))
    await admin_zk.session.ensure_path(paths.topic_config_path("t"))
    await admin_zk.session.set_data(paths.topic_config_path("t"),
                                    b'{"version":1,"config":{"unclean.leader.election.enable":true}}', -1)
    context.remove_live_brokers({1})
    result = await psm.handle_state_changes([T0], PartitionState.ONLINE, OFFLINE_CLEAN)
    assert isinstance(result[T0], StateChangeFailedError) and "Failed to elect leader" in str(result[T0])


@pytest.mark.parametrize("data", [b"{not json", b"[]", b'{"version":1,"config":null}', b'{"version":1,"config":[]}'],
                         ids=["not-json", "array", "config-null", "config-array"])
async def test_topic_config_kafka_reads_as_empty_means_the_broker_default(
        config: ControllerConfig, context: ControllerContext, zk: KafkaZkClient, batch: ControllerBrokerRequestBatch,
        state_change_logger: StateChangeLogger, admin_zk: KafkaZkClient, caplog: pytest.LogCaptureFixture,
        data: bytes) -> None:
    """Kafka's ConfigEntityZNode.decode reads these as no overrides, so the broker default (here true) lets a
    live out-of-sync replica lead; the znode is still reported, with its path and what is wrong."""
    psm = PartitionStateMachine(config, context, zk, batch, state_change_logger, DynamicBrokerConfig(True))
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    await online_partition(admin_zk, context, T0, LeaderAndIsr(1, 4, (1,)))
    await admin_zk.session.ensure_path(paths.topic_config_path("t"))
    await admin_zk.session.set_data(paths.topic_config_path("t"), data, -1)
    context.remove_live_brokers({1})
    result = await psm.handle_state_changes([T0], PartitionState.ONLINE, OFFLINE_CLEAN)
    assert result == {T0: LeaderAndIsr(2, 5, (2,), 1)}
    [warning] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "/config/topics/t" in warning and "as no overrides" in warning


class RacingZkClient(KafkaZkClient):
    """Lets a broker rewrite the partition state between the controller's read and its conditional write."""

    def __init__(self, inner: KafkaZkClient, admin: KafkaZkClient, races: dict[TopicPartition, LeaderAndIsr]):
        super().__init__(inner.session, lambda: 0)
        self._admin = admin
        self._races = dict(races)

    async def get_topic_partition_states(self, partitions, watch=None):  # type: ignore[no-untyped-def]
        read = await super().get_topic_partition_states(partitions, watch)
        for tp, lai in list(self._races.items()):
            current = await self._admin.get_topic_partition_state(tp)
            await self._admin.update_leader_and_isr({tp: lai.with_zk_version(current.leader_and_isr.zk_version)},
                                                    current.controller_epoch, NO_FENCING)
            del self._races[tp]
        return read


async def leader_rewrites(admin_zk: KafkaZkClient, tp: TopicPartition, lai: LeaderAndIsr) -> None:
    """A pre-2.7 leader's own ISR write, which the controller has not seen (no notification processed yet)."""
    current = await admin_zk.get_topic_partition_state(tp)
    assert current is not None
    await admin_zk.update_leader_and_isr({tp: lai.with_zk_version(current.leader_and_isr.zk_version)},
                                         current.controller_epoch, NO_FENCING)


async def test_a_stale_cached_state_is_re_read_without_a_retry_line(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient,
        caplog: pytest.LogCaptureFixture) -> None:
    """The first attempt writes from the context's copy; a copy older than ZooKeeper's state loses the version
    check, nothing of it lands, and the re-read attempt (the one Kafka makes first) elects from ZooKeeper."""
    caplog.set_level(logging.INFO)
    await create_topic(admin_zk, context, "t", {0: (1, 2, 3), 1: (1, 2, 3)})
    await online_partition(admin_zk, context, T0, LeaderAndIsr(1, 4, (1, 2, 3)))
    await online_partition(admin_zk, context, T1, LeaderAndIsr(1, 4, (1, 2, 3)))
    await leader_rewrites(admin_zk, T0, LeaderAndIsr(1, 4, (1, 3)))  # ZooKeeper: v1, ISR (1, 3); copy: v0
    context.remove_live_brokers({1})
    result = await psm.handle_state_changes([T0, T1], PartitionState.ONLINE, OFFLINE_CLEAN)
    assert result == {T0: LeaderAndIsr(3, 5, (3,), 2), T1: LeaderAndIsr(2, 5, (2, 3), 1)}
    assert (await read_state(admin_zk, T0)).leader_and_isr == LeaderAndIsr(3, 5, (3,), 2)
    assert context.partition_leader_and_isr(T0) == LeaderAndIsr(3, 5, (3,), 2)
    assert not any("Retrying leader election" in r.getMessage() for r in caplog.records)


async def test_version_conflict_after_a_fresh_read_is_retried_with_kafkas_line(
        config: ControllerConfig, context: ControllerContext, zk: KafkaZkClient, admin_zk: KafkaZkClient,
        batch: ControllerBrokerRequestBatch, state_change_logger: StateChangeLogger,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    await create_topic(admin_zk, context, "t", {0: (1, 2, 3), 1: (1, 2, 3)})
    await online_partition(admin_zk, context, T0, LeaderAndIsr(1, 4, (1, 2, 3)))
    await online_partition(admin_zk, context, T1, LeaderAndIsr(1, 4, (1, 2, 3)))
    await leader_rewrites(admin_zk, T0, LeaderAndIsr(1, 4, (1, 2, 3)))  # the copy is stale: T0 is re-read...
    racing = RacingZkClient(zk, admin_zk, {T0: LeaderAndIsr(1, 4, (1, 3))})  # ...and shrunk again right after
    psm = PartitionStateMachine(config, context, racing, batch, state_change_logger)
    context.remove_live_brokers({1})
    result = await psm.handle_state_changes([T0, T1], PartitionState.ONLINE, OFFLINE_CLEAN)
    assert result == {T0: LeaderAndIsr(3, 5, (3,), 3), T1: LeaderAndIsr(2, 5, (2, 3), 1)}
    assert (await read_state(admin_zk, T0)).leader_and_isr == LeaderAndIsr(3, 5, (3,), 3)
    assert any("Retrying leader election with strategy OfflinePartitionLeaderElectionStrategy(false) for "
               "partitions t-0" in r.getMessage() for r in caplog.records)


async def test_before_alter_isr_an_election_the_copy_cannot_make_asks_zookeeper(
        context: ControllerContext, zk: KafkaZkClient, admin_zk: KafkaZkClient,
        batch: ControllerBrokerRequestBatch, state_change_logger: StateChangeLogger) -> None:
    """IBP 2.6: leaders write ISR changes themselves, so "no live ISR member" in the copy is checked against
    ZooKeeper, where the leader may have added one; from 2.7-IV2 the copy is authoritative."""
    await create_topic(admin_zk, context, "t", {0: (1, 2, 3)})
    await online_partition(admin_zk, context, T0, LeaderAndIsr(1, 4, (1,)))
    await leader_rewrites(admin_zk, T0, LeaderAndIsr(1, 4, (1, 3)))  # broker 3 caught up; the copy says (1,)
    context.remove_live_brokers({1})
    old = PartitionStateMachine(ControllerConfig(broker_id=CONTROLLER_ID, inter_broker_protocol_version="2.6"),
                                context, zk, batch, state_change_logger)
    assert not old.only_controller_writes_states
    assert await old.handle_state_changes([T0], PartitionState.ONLINE, OFFLINE_CLEAN) == {
        T0: LeaderAndIsr(3, 5, (3,), 2)}
    new = PartitionStateMachine(ControllerConfig(broker_id=CONTROLLER_ID), context, zk, batch, state_change_logger)
    assert new.only_controller_writes_states


async def test_state_written_by_a_newer_controller_fails_the_election(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2, 3)})
    await online_partition(admin_zk, context, T0, LeaderAndIsr(1, 4, (1, 2, 3)))
    # a newer controller's write, after the one this controller's copy holds (v0 → v1)
    await admin_zk.update_leader_and_isr({T0: LeaderAndIsr(1, 4, (1, 2, 3))}, context.epoch + 1, NO_FENCING)
    context.remove_live_brokers({1})
    before = await snapshot(admin_zk.session)
    result = await psm.handle_state_changes([T0], PartitionState.ONLINE, OFFLINE_CLEAN)
    assert isinstance(result[T0], StateChangeFailedError)
    assert "already written by another controller" in str(result[T0]) and "epoch 2." in str(result[T0])
    assert await snapshot(admin_zk.session) == before


async def test_missing_state_znode_fails_the_election(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    context.put_partition_state(T0, PartitionState.OFFLINE)
    result = await psm.handle_state_changes([T0], PartitionState.ONLINE, OFFLINE_CLEAN)
    assert str(result[T0]) == "LeaderAndIsr information doesn't exist for partition t-0 in OfflinePartition state"


async def depose(backend: EmbeddedBackend, admin_zk: KafkaZkClient) -> None:
    """Another broker becomes controller: ``/controller_epoch``'s version moves past our fencing token."""
    await admin_zk.session.delete(paths.CONTROLLER, -1)
    other = KafkaZkClient(await backend.new_session(), lambda: 0)
    await other.register_controller_and_increment_controller_epoch(2)


async def test_deposed_controller_election_raises_and_writes_nothing(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient, sender: RecordingSender,
        backend: EmbeddedBackend) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2, 3)})
    await online_partition(admin_zk, context, T0, LeaderAndIsr(1, 4, (1, 2, 3)))
    context.remove_live_brokers({1})
    await depose(backend, admin_zk)
    before = await snapshot(admin_zk.session)
    with pytest.raises(ControllerMovedError):
        await psm.handle_state_changes([T0], PartitionState.ONLINE, OFFLINE_CLEAN)
    assert await snapshot(admin_zk.session) == before
    assert sender.sent == []
    assert context.partition_leader_and_isr(T0) == LeaderAndIsr(1, 4, (1, 2, 3))


async def test_deposed_controller_cannot_initialise_partitions(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient,
        backend: EmbeddedBackend) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    await psm.handle_state_changes([T0], PartitionState.NEW)
    await depose(backend, admin_zk)
    before = await snapshot(admin_zk.session)
    with pytest.raises(ControllerMovedError):
        await psm.handle_state_changes([T0], PartitionState.ONLINE, OFFLINE_CLEAN)
    assert await snapshot(admin_zk.session) == before
    assert context.partition_state(T0) == PartitionState.NEW


async def test_invalid_transitions_are_logged_and_skipped(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient,
        state_log: pytest.LogCaptureFixture, sender: RecordingSender) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    await psm.handle_state_changes([T0], PartitionState.NEW)
    assert await psm.handle_state_changes([T0], PartitionState.NON_EXISTENT) == {}
    assert await psm.handle_state_changes([T1], PartitionState.OFFLINE) == {}
    assert context.partition_states == {T0: PartitionState.NEW, T1: PartitionState.NON_EXISTENT}
    assert [m.split("] ", 1)[1] for m in messages(state_log, logging.ERROR)] == [
        "Controller 1 epoch 1 failed to change state for partition t-0 from NewPartition to NonExistentPartition",
        "Controller 1 epoch 1 failed to change state for partition t-1 from NonExistentPartition to OfflinePartition",
    ]
    errors = [str(r.exc_info[1]) for r in state_log.records if r.levelno == logging.ERROR and r.exc_info]
    assert errors[0] == ("Partition t-0 should be in one of OfflinePartition states before moving to "
                         "NonExistentPartition state. Instead it is in NewPartition state")
    assert errors[1] == ("Partition t-1 should be in one of NewPartition,OnlinePartition,OfflinePartition states "
                         "before moving to OfflinePartition state. Instead it is in NonExistentPartition state")


async def test_missing_strategy_fails_every_partition(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    await online_partition(admin_zk, context, T0, LeaderAndIsr(1, 0, (1, 2)))
    result = await psm.handle_state_changes([T0], PartitionState.ONLINE)
    assert isinstance(result[T0], ValueError)


async def test_offline_and_nonexistent_transitions_and_gauge(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient,
        sender: RecordingSender) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    await online_partition(admin_zk, context, T0, LeaderAndIsr(1, 0, (1, 2)))
    await psm.handle_state_changes([T0], PartitionState.OFFLINE)
    assert context.offline_partition_count == 1
    await psm.handle_state_changes([T0], PartitionState.NON_EXISTENT)
    assert context.partition_state(T0) == PartitionState.NON_EXISTENT and context.offline_partition_count == 0
    assert [type(r).__name__ for _, r in sender.sent] == []  # no requests, and no UpdateMetadata receivers


async def test_startup_derives_states_then_elects(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient) -> None:
    t2, t3 = TopicPartition("t", 2), TopicPartition("t", 3)
    await create_topic(admin_zk, context, "t", {0: (1, 2), 1: (4, 2), 2: (2, 3), 3: (4,)})
    await write_states(admin_zk, {T0: LeaderAndIsr(1, 0, (1, 2)), T1: LeaderAndIsr(4, 0, (4, 2))}, 1)
    for tp in (T0, T1):
        context.put_partition_leadership_info(tp, await read_state(admin_zk, tp))
    await create_topic(admin_zk, context, "gone", {0: (4,)})
    context.put_partition_leadership_info(TopicPartition("gone", 0), LeaderIsrAndControllerEpoch(
        LeaderAndIsr(4, 0, (4,)), 1))
    context.queue_topic_deletion({"gone"})
    await psm.startup()
    assert context.partition_states == {
        T0: PartitionState.ONLINE, T1: PartitionState.ONLINE, t2: PartitionState.ONLINE, t3: PartitionState.NEW,
        TopicPartition("gone", 0): PartitionState.OFFLINE}
    assert (await read_state(admin_zk, T1)).leader_and_isr == LeaderAndIsr(2, 1, (2,), 1)
    assert (await read_state(admin_zk, t2)).leader_and_isr == LeaderAndIsr(2, 0, (2, 3), 0)
    assert context.offline_partition_count == 1


async def test_controlled_shutdown_and_preferred_strategies(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient,
        sender: RecordingSender) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2, 3)})
    await online_partition(admin_zk, context, T0, LeaderAndIsr(1, 0, (1, 2, 3)))
    context.shutting_down_broker_ids.add(1)
    result = await psm.handle_state_changes([T0], PartitionState.ONLINE,
                                            ControlledShutdownPartitionLeaderElectionStrategy())
    assert result == {T0: LeaderAndIsr(2, 1, (2, 3), 1)}
    assert sorted(lai_requests(sender)) == [1, 2, 3]  # the shutting-down broker still hears about it
    context.shutting_down_broker_ids.clear()
    result = await psm.handle_state_changes([T0], PartitionState.ONLINE,
                                            PreferredReplicaPartitionLeaderElectionStrategy())
    assert isinstance(result[T0], StateChangeFailedError)  # 1 is no longer in the ISR
    assert context.preferred_replica_imbalance_count == 1


async def test_trigger_skips_topics_queued_for_deletion(
        psm: PartitionStateMachine, context: ControllerContext, admin_zk: KafkaZkClient) -> None:
    await create_topic(admin_zk, context, "t", {0: (1, 2)})
    await create_topic(admin_zk, context, "d", {0: (1, 2)})
    for tp in (T0, TopicPartition("d", 0)):
        context.put_partition_state(tp, PartitionState.NEW)
    context.queue_topic_deletion({"d"})
    await psm.trigger_online_partition_state_change()
    assert context.partition_state(T0) == PartitionState.ONLINE
    assert context.partition_state(TopicPartition("d", 0)) == PartitionState.NEW
    assert await read_state(admin_zk, TopicPartition("d", 0)) is None


def test_state_znode_path_is_kafkas() -> None:
    assert TopicPartitionStateZNode.path(T0) == "/brokers/topics/t/partitions/0/state"
