"""Tearing the whole in-process cluster down (``quit`` at ``zkcontroller cluster``, `LocalCluster.shutdown`).

Kafka's controlled shutdown retries ``controlled.shutdown.max.retries`` times, ``retry.backoff.ms`` apart, while
the broker still leads partitions. When the whole cluster goes, the last broker (and one whose partitions' other
replicas are already stopped) can never hand its leadership over: those retries made ``quit`` wait 10 s per such
broker in silence. The tests count the ControlledShutdown requests each broker sent, not wall time; a single
broker's ``stop`` keeps Kafka's retries."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest
from tests.helpers import OffsetClock
from tests.integration.conftest import RecordingTransport, make_local_cluster

from zkcontroller.broker.config import ReplicationConfig, virtual_log_dirs
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.partition_wait import wait_for_partitions
from zkcontroller.coordination.api import SessionState
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from zkcontroller.protocol.inter_broker import ControlledShutdownRequest
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = pytest.mark.timeout(120)

RETRIES = 3  # Kafka's default controlled.shutdown.max.retries
BACKOFF_MS = 200
"""Short, so that without the fix these tests fail in seconds (on the count, not on time)."""

Started = tuple[LocalCluster, RecordingTransport]


@pytest.fixture
async def backend() -> AsyncIterator[EmbeddedBackend]:
    store = EmbeddedBackend(OffsetClock(wall_clock_ms))
    yield store
    await store.close()


async def _cluster_with(backend: EmbeddedBackend, broker_ids: list[int],
                        assignment: dict[int, tuple[int, ...]]) -> Started:
    """Brokers and topic ``orders`` placed as given, every partition led by its first replica with a full ISR."""
    transport = RecordingTransport()
    cluster = await make_local_cluster(backend, broker_ids, transport, controlled_shutdown_retry_backoff_ms=BACKOFF_MS,
                                       controlled_shutdown_max_retries=RETRIES)
    await cluster.wait_for_controller()
    session = await backend.new_session()
    try:
        admin = KafkaZkClient(session, wall_clock_ms)
        await admin.create_topic_assignment(
            "orders", None, {TopicPartition("orders", p): ReplicaAssignment(r) for p, r in assignment.items()})

        def settled(a: ReplicaAssignment, state: LeaderIsrAndControllerEpoch) -> bool:
            return state.leader_and_isr.leader == a.replicas[0] and set(state.leader_and_isr.isr) == set(a.replicas)

        assert (await wait_for_partitions(admin, settled, 30.0)).met, "the topic never came fully online"
    finally:
        await session.close()
    return cluster, transport


def _attempts(transport: RecordingTransport, broker_id: int) -> int:
    """ControlledShutdown requests ``broker_id`` sent (to whichever broker was controller)."""
    return sum(1 for _, r in transport.delivered
               if isinstance(r, ControlledShutdownRequest) and r.broker_id == broker_id)


async def test_the_last_broker_does_not_retry_when_the_cluster_is_torn_down(backend: EmbeddedBackend) -> None:
    cluster, transport = await _cluster_with(backend, [1, 2], {0: (1, 2), 1: (2, 1)})
    said: list[str] = []
    await cluster.shutdown(progress=said.append)
    assert _attempts(transport, 2) == 1  # its leadership moved to broker 1 at the first attempt
    assert _attempts(transport, 1) == 1  # was 3: two futile back-offs
    assert said == ["stopping broker 2", "stopping broker 1",
                    "broker 1 is the last one running, so its leadership has nowhere to go: "
                    "not retrying controlled shutdown"]


async def test_a_broker_whose_partners_are_stopped_does_not_retry_either(backend: EmbeddedBackend) -> None:
    """orders-0 lives on brokers 2 and 3; 3 stops first, so 2 still leads it and no running broker can take it."""
    cluster, transport = await _cluster_with(backend, [1, 2, 3], {0: (2, 3), 1: (1, 2)})
    said: list[str] = []
    await cluster.shutdown(progress=said.append)
    assert [_attempts(transport, b) for b in (3, 2, 1)] == [1, 1, 1]
    assert ("broker 2 still leads orders-0, whose other replicas are all on stopped brokers: "
            "not retrying controlled shutdown") in said


async def test_a_partner_replica_on_a_failed_log_dir_cannot_take_over_so_no_retries(backend: EmbeddedBackend) -> None:
    """The walkthrough's ``fail-log-dir 2 /tmp/kafka-logs-0`` then ``quit``: the leader's only partner runs, but its
    replica is offline and out of the ISR, and Kafka's controlled-shutdown election (an online ISR replica on a
    broker not shutting down) cannot pick it. Counting any replica on a running broker, quit retried twice."""
    transport = RecordingTransport()
    cluster = await make_local_cluster(backend, [1, 2, 3], transport,
                                       replication=ReplicationConfig(log_dirs=virtual_log_dirs(2)),
                                       controlled_shutdown_retry_backoff_ms=BACKOFF_MS,
                                       controlled_shutdown_max_retries=RETRIES)
    controller = (await cluster.wait_for_controller()).controller_id
    leader, partner = sorted((b for b in (1, 2, 3) if b != controller), reverse=True)  # the leader stops first
    session = await backend.new_session()
    try:
        admin = KafkaZkClient(session, wall_clock_ms)
        tp = TopicPartition("orders", 0)
        await admin.create_topic_assignment("orders", None, {tp: ReplicaAssignment((leader, partner))})

        def settled(a: ReplicaAssignment, state: LeaderIsrAndControllerEpoch) -> bool:
            return state.leader_and_isr.leader == leader and set(state.leader_and_isr.isr) == {leader, partner}

        assert (await wait_for_partitions(admin, settled, 30.0)).met, "the topic never came fully online"
        plane = cluster.brokers[partner].control_plane
        assert plane is not None
        assert await cluster.fail_log_dir(partner, plane.partitions[tp].log_dir) == [tp]

        def shrunk(_a: ReplicaAssignment, state: LeaderIsrAndControllerEpoch) -> bool:
            return state.leader_and_isr.isr == (leader,)

        assert (await wait_for_partitions(admin, shrunk, 30.0)).met, "the controller never took the replica out"
    finally:
        await session.close()
    said: list[str] = []
    await cluster.shutdown(progress=said.append)
    assert _attempts(transport, leader) == 1  # was 3: the partner's broker runs, so it retried
    assert (f"broker {leader} still leads orders-0 (broker {partner}'s replica offline: a failed log dir), which no "
            "running broker can take (Kafka elects an online ISR replica on a broker not shutting down): not retrying "
            "controlled shutdown") in said


async def test_a_running_partner_out_of_the_isr_cannot_take_over_so_no_retries(backend: EmbeddedBackend) -> None:
    """Kafka's controlled-shutdown election picks from the ISR only: a partner restarted but not caught up (no
    fetchers here, so it never is) cannot take the leadership, however long the retries wait."""
    transport = RecordingTransport()
    cluster = await make_local_cluster(backend, [1, 2, 3], transport,
                                       replication=ReplicationConfig(replica_fetching=False),
                                       controlled_shutdown_retry_backoff_ms=BACKOFF_MS,
                                       controlled_shutdown_max_retries=RETRIES)
    controller = (await cluster.wait_for_controller()).controller_id
    leader, partner = sorted((b for b in (1, 2, 3) if b != controller), reverse=True)  # the leader stops first
    session = await backend.new_session()
    try:
        admin = KafkaZkClient(session, wall_clock_ms)
        tp = TopicPartition("orders", 0)
        await admin.create_topic_assignment("orders", None, {tp: ReplicaAssignment((leader, partner))})

        def settled(a: ReplicaAssignment, state: LeaderIsrAndControllerEpoch) -> bool:
            return state.leader_and_isr.leader == leader and set(state.leader_and_isr.isr) == {leader, partner}

        assert (await wait_for_partitions(admin, settled, 30.0)).met, "the topic never came fully online"
        await cluster.stop_broker(partner)  # controlled shutdown takes it out of the ISR
        await cluster.start_broker(partner)

        def shrunk(_a: ReplicaAssignment, state: LeaderIsrAndControllerEpoch) -> bool:
            return state.leader_and_isr.isr == (leader,)

        assert (await wait_for_partitions(admin, shrunk, 30.0)).met, "the partner stayed in the ISR"
        await cluster.wait_for_controller()  # the partner's return handled
    finally:
        await session.close()
    said: list[str] = []
    await cluster.shutdown(progress=said.append)
    assert _attempts(transport, leader) == 1  # was 3: the partner runs, so it retried
    assert (f"broker {leader} still leads orders-0 (broker {partner}'s replica out of the ISR), which no running "
            "broker can take (Kafka elects an online ISR replica on a broker not shutting down): not retrying "
            "controlled shutdown") in said


async def test_no_retries_while_a_killed_controller_holds_the_controller_znode(
    backend: EmbeddedBackend, caplog: pytest.LogCaptureFixture
) -> None:
    """Its session outlives it (6 s here, 18 s by default): no other broker becomes controller meanwhile, and
    each running broker's attempts went unanswered, backing off, until it gave up."""
    cluster, _ = await _cluster_with(backend, [1, 2, 3], {0: (1, 2), 1: (2, 3), 2: (3, 1)})
    killed = (await cluster.wait_for_controller()).controller_id
    await cluster.crash_broker(killed)
    said: list[str] = []
    with caplog.at_level(logging.INFO, logger="kafka.server.KafkaServer"):
        await cluster.shutdown(progress=said.append)
    first = max(b for b in (1, 2, 3) if b != killed)
    assert (f"the controller, broker {killed}, was killed and cannot answer; no other broker becomes controller "
            "until its session expires: not retrying controlled shutdown") in said
    assert not [r for r in caplog.records if "Retrying controlled shutdown" in r.getMessage()]
    assert said[0] == f"stopping broker {first}"


async def test_stopping_one_broker_keeps_kafkas_retries(backend: EmbeddedBackend) -> None:
    cluster, transport = await _cluster_with(backend, [1, 2], {0: (1, 2), 1: (2, 1)})
    try:
        await cluster.stop_broker(2)
        await cluster.stop_broker(1)  # the last one, but `stop` is Kafka's controlled shutdown, retries and all
        assert _attempts(transport, 1) == RETRIES
    finally:
        await cluster.shutdown()


def test_quit_says_what_it_stops_and_skips_the_futile_retries() -> None:
    """The command a user types, with Kafka's default 5 s back-off: quit used to sit silent for 20 s here."""
    run = subprocess.run(
        [sys.executable, "-m", "zkcontroller.cli", "cluster", "--brokers", "3", "--no-listeners"],
        input="create orders 3 2\nquit\n", capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "3 of 3 partitions have a leader." in out
    assert [line for line in out.splitlines() if "stopping broker" in line] == [
        "> stopping broker 3", "stopping broker 2", "stopping broker 1"]
    assert ("broker 1 is the last one running, so its leadership has nowhere to go: "
            "not retrying controlled shutdown") in out
    assert "Retrying controlled shutdown" not in out + run.stderr
    assert out.rstrip().endswith("all brokers stopped")


async def test_the_listener_stops_after_controlled_shutdown_before_the_replica_manager(
    backend: EmbeddedBackend,
) -> None:
    """Kafka's ``KafkaServer.shutdown``: ``controlledShutdown()``, then ``socketServer.stopProcessingRequests()``,
    and only then the replica manager (its produce purgatory) and the ZooKeeper session. So no client request is
    served, and no waiting produce answered, while the broker takes itself apart."""
    cluster, transport = await _cluster_with(backend, [1, 2], {0: (1, 2), 1: (2, 1)})
    server = cluster.brokers[2]
    seen: list[tuple[int, bool, bool]] = []

    async def stop_processing_requests() -> None:
        assert server.replica_manager is not None and server.zk is not None
        session = getattr(server.zk.session, "inner", server.zk.session)  # under `ReconnectingSession`
        seen.append((_attempts(transport, 2), server.replica_manager.produce_waiters.shut_down,
                     session.state is SessionState.CONNECTED))

    await server.shutdown(stop_processing_requests=stop_processing_requests)
    assert seen == [(1, False, True)]  # after the one ControlledShutdown, before the purgatory and the session
    await cluster.shutdown()


async def test_the_controller_stops_last_so_teardown_elects_no_controller(backend: EmbeddedBackend) -> None:
    """Stopped in id order from the highest, a cluster whose controller was broker 3 (the demo's, after its
    failovers) moved the controller twice on the way down: two needless elections, which the demo's report
    counted as failovers of the story. Kafka's rolling-restart advice, the controller last, makes none."""
    cluster, _ = await _cluster_with(backend, [1, 2, 3], {0: (1, 2), 1: (2, 3), 2: (3, 1)})
    first = (await cluster.wait_for_controller()).controller_id
    await cluster.stop_broker(first)
    await cluster.start_broker(first)
    controller = await cluster.wait_for_controller(exclude=first)
    controller_id, epoch_before = controller.controller_id, controller.context.epoch
    said: list[str] = []
    await cluster.shutdown(progress=said.append)
    stopping = [line for line in said if line.startswith("stopping broker")]
    assert stopping[-1] == f"stopping broker {controller_id}", stopping
    session = await backend.new_session()
    try:
        epoch = await KafkaZkClient(session, wall_clock_ms).get_controller_epoch()
    finally:
        await session.close()
    assert epoch is not None and epoch[0] == epoch_before  # no election on the way down
