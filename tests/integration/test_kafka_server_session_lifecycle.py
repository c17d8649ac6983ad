"""A broker's session re-initialisation after an expiry (Kafka's ZooKeeperClient ``reinitialize``) and the broker's
end: a crash stops it as a shutdown does, a session it was opening when the broker went is closed (never left
alive on the store with nobody to close it), and it logs Kafka's "Initializing a new session to ..." line."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from tests.helpers import OffsetClock, wait_until
from tests.integration.conftest import ClusterFactory, RecordingTransport, make_local_cluster

from zkcontroller.cluster.kafka_server import BrokerConfig, KafkaServer
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.controller.events import ControllerEvent
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.coordination.api import CoordinationSession, SessionState
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.runtime.clock import wall_clock_ms

ZK_CLIENT_LOGGER = "kafka.zookeeper.ZooKeeperClient"
BOUND_S = 5.0
"""How long a task or session gets to end once nothing keeps it (it takes a few loop steps)."""


class HandshakeBackend(CoordinationBackend):
    """The embedded store, where opening a session can be held after the store has it, as a real client's is
    between the server's session and the connection's handshake: the step a shutdown or crash can come in."""

    name = "embedded"

    def __init__(self) -> None:
        self.inner = EmbeddedBackend(OffsetClock(wall_clock_ms))
        self.hold = False
        self.held = asyncio.Event()
        self.release = asyncio.Event()
        self.opened: list[CoordinationSession] = []
        self.failing_closes: set[int] = set()
        """Ids of the sessions whose close fails (a connection reset while closing)."""

    async def new_session(self, session_timeout_ms: int = 18000) -> CoordinationSession:
        session = await self.inner.new_session(session_timeout_ms)
        self.opened.append(session)
        close = session.close

        async def failing_close() -> None:
            if session.session_id in self.failing_closes:
                raise OSError("connection reset while closing")
            await close()

        session.close = failing_close  # type: ignore[method-assign]
        if self.hold:
            self.held.set()
            await self.release.wait()
        return session

    async def expire_session(self, session: CoordinationSession) -> None:
        await self.inner.expire_session(session)

    async def close(self) -> None:
        await self.inner.close()

    def live(self, session: CoordinationSession) -> bool:
        return self.inner.server.session_state(session.session_id) in (SessionState.CONNECTED,
                                                                        SessionState.DISCONNECTED)


@pytest.fixture
async def handshake() -> AsyncIterator[tuple[HandshakeBackend, LocalCluster]]:
    """A one-broker cluster on a `HandshakeBackend` (no controlled shutdown: nobody could take its leadership)."""
    backend = HandshakeBackend()
    cluster = await make_local_cluster(backend, [1], RecordingTransport(), controlled_shutdown_enable=False)
    try:
        yield backend, cluster
    finally:
        backend.release.set()
        await cluster.shutdown()
        await backend.close()


def controller_of(server: KafkaServer) -> KafkaController:
    assert server.controller is not None
    return server.controller


async def expire_and_hold_the_new_session(backend: HandshakeBackend, cluster: LocalCluster
                                          ) -> tuple[CoordinationSession, asyncio.Task[None]]:
    """Expire broker 1's session and wait until its re-initialisation has a new session on the store, held: that
    session and the re-initialisation's task."""
    server = cluster.brokers[1]
    controller = controller_of(server)
    await wait_until(lambda: controller.is_active and controller.event_manager.queue_size == 0,
                     what="the first failover")
    backend.hold = True
    await cluster.expire_broker_session(1)
    await asyncio.wait_for(backend.held.wait(), BOUND_S)
    reinit = server._reinit
    assert reinit is not None
    session = backend.opened[-1]
    assert backend.live(session)
    return session, reinit


def opening_task() -> asyncio.Task[CoordinationSession | None]:
    [task] = [t for t in asyncio.all_tasks() if t.get_name().startswith("zk-session-open-")]
    return task


async def opened_not_taken(backend: HandshakeBackend) -> None:
    """Let the held open complete, and return in the loop step it does: the re-initialisation, woken by it, has
    not run yet (it would take the session in its next step)."""
    opening = opening_task()
    backend.release.set()
    for _ in range(100):
        if opening.done():
            return
        await asyncio.sleep(0)
    raise AssertionError("the session's open did not complete")


@pytest.mark.parametrize("end", ["shutdown", "crash"])
async def test_a_session_opened_after_the_broker_went_is_closed(
        handshake: tuple[HandshakeBackend, LocalCluster], end: str) -> None:
    backend, cluster = handshake
    server = cluster.brokers[1]
    opened, reinit = await expire_and_hold_the_new_session(backend, cluster)
    if end == "shutdown":
        await cluster.stop_broker(1)
    else:
        await cluster.crash_broker(1)
    assert server._reinit is None
    backend.release.set()  # the open completes with the broker gone
    await wait_until(lambda: not backend.live(opened), timeout_s=BOUND_S, what="the new session closed")
    await wait_until(reinit.done, timeout_s=BOUND_S, what="the re-initialisation task ended")
    assert not any(backend.live(s) for s in backend.opened)


@pytest.mark.parametrize("end", ["shutdown", "crash"])
async def test_a_session_opened_as_the_broker_goes_is_closed(
        handshake: tuple[HandshakeBackend, LocalCluster], end: str) -> None:
    """The open completes in the very loop step the broker goes: its task has the session, but is cancelled
    before it can take it up."""
    backend, cluster = handshake
    server = cluster.brokers[1]
    opened, reinit = await expire_and_hold_the_new_session(backend, cluster)
    await opened_not_taken(backend)
    if end == "shutdown":
        await cluster.stop_broker(1)  # its reinit cancel comes before the open's next step (no await on the way)
    else:
        await cluster.crash_broker(1)  # crash() is the first thing it does, in this step
    await wait_until(lambda: not backend.live(opened), timeout_s=BOUND_S, what="the new session closed")
    await wait_until(reinit.done, timeout_s=BOUND_S, what="the re-initialisation task ended")
    assert server.zk is not None and server.zk.session.session_id != opened.session_id  # never taken up


async def test_a_crash_ends_a_reinitialisation_waiting_for_expire(
        handshake: tuple[HandshakeBackend, LocalCluster]) -> None:
    """The session expires while the controller is busy: Expire waits in the queue, and the re-initialisation waits
    for it. A crash aborts the event thread, so Expire never comes: the task waited for good, in a dead broker."""
    backend, cluster = handshake
    server = cluster.brokers[1]
    controller = controller_of(server)
    await wait_until(lambda: controller.is_active and controller.event_manager.queue_size == 0,
                     what="the first failover")
    held = asyncio.Event()

    @dataclass(frozen=True)
    class Busy(ControllerEvent):
        """An event that holds the event thread."""

    async def busy(_event: Busy) -> None:
        held.set()
        await asyncio.Event().wait()  # until the crash cancels it

    controller._handlers[Busy] = busy  # type: ignore[assignment]
    controller.event_manager.put(Busy())
    await asyncio.wait_for(held.wait(), BOUND_S)
    await cluster.expire_broker_session(1)
    await wait_until(lambda: server._reinit is not None, timeout_s=BOUND_S, what="the re-initialisation started")
    reinit = server._reinit
    assert reinit is not None
    await cluster.crash_broker(1)
    assert server._reinit is None
    await wait_until(reinit.done, timeout_s=BOUND_S, what="the re-initialisation task ended")
    assert len(backend.opened) == 1  # no new session: the crashed broker never got to open one


async def test_the_reinitialisation_logs_kafkas_initializing_line(
        make_cluster: ClusterFactory, backend: CoordinationBackend, caplog: pytest.LogCaptureFixture) -> None:
    """Kafka's ``reinitialize``: "Session expired.", the controller's Expire, then "Initializing a new session to
    <zookeeper.connect>." (INFO, ZooKeeperClient's ident), before the broker registers again.

    A request in flight when the session ends may come back CONNECTIONLOSS: Kafka's ``KafkaZkClient`` then calls
    ``waitUntilConnected``, which logs "Waiting until connected." (and "Connected." once connected, or throws for
    an ended session), wherever that falls between the two lines (`ReconnectingSession` does the same). Under load
    on a real ZooKeeper one did: those retry lines may appear, each "Connected." after a wait, and nothing else."""
    caplog.set_level(logging.INFO, ZK_CLIENT_LOGGER)
    caplog.set_level(logging.INFO, "kafka.zk.KafkaZkClient")
    cluster = await make_cluster([1])
    server = cluster.brokers[1]
    controller = controller_of(server)
    await wait_until(lambda: controller.is_active and controller.event_manager.queue_size == 0,
                     what="the first failover")
    broker_epoch = controller.broker_epoch
    caplog.clear()
    await cluster.expire_broker_session(1)
    await wait_until(lambda: controller.broker_epoch != broker_epoch and controller.is_active,
                     what="the broker registered again and re-elected itself")
    records = list(caplog.records)
    where = getattr(backend, "hosts", "embedded")
    waiting, connected = ("[ZooKeeperClient Kafka server] Waiting until connected.",
                          "[ZooKeeperClient Kafka server] Connected.")
    all_zk_lines = [r for r in records if r.name == ZK_CLIENT_LOGGER]
    retries = [r.getMessage() for r in all_zk_lines if r.getMessage() in (waiting, connected)]
    assert all(retries[:i + 1].count(connected) <= retries[:i + 1].count(waiting) for i in range(len(retries)))
    zk_lines = [r for r in all_zk_lines if r.getMessage() not in (waiting, connected)]
    assert [(r.levelno, r.getMessage()) for r in zk_lines] == [
        (logging.INFO, "[ZooKeeperClient Kafka server] Session expired."),
        (logging.INFO, f"[ZooKeeperClient Kafka server] Initializing a new session to {where}."),
    ]
    assert all(r.levelno == logging.INFO for r in all_zk_lines)
    registered = next(i for i, r in enumerate(records) if r.getMessage().startswith("Registered broker 1 at path"))
    assert records.index(zk_lines[1]) < registered


async def test_start_up_and_shutdown_log_kafkas_connection_lines(
        make_cluster: ClusterFactory, backend: CoordinationBackend, caplog: pytest.LogCaptureFixture) -> None:
    """Kafka's ZooKeeperClient as it is built ("Initializing a new session to …", "Waiting until connected.",
    "Connected.", before the broker registers) and closed at shutdown ("Closing.", "Closed.")."""
    caplog.set_level(logging.INFO, ZK_CLIENT_LOGGER)
    caplog.set_level(logging.INFO, "kafka.zk.KafkaZkClient")
    caplog.set_level(logging.INFO, "kafka.server.KafkaServer")
    cluster = await make_cluster([1])
    where = getattr(backend, "hosts", "embedded")
    records = list(caplog.records)
    zk_lines = [r for r in records if r.name == ZK_CLIENT_LOGGER]
    chroot_lines = [] if not backend.chroot else [  # a real ZooKeeper under a chroot: Kafka's initZkClient first
        (logging.INFO, f"[ZooKeeperClient Kafka server] Initializing a new session to {where[:-len(backend.chroot)]}."),
        (logging.INFO, "[ZooKeeperClient Kafka server] Waiting until connected."),
        (logging.INFO, "[ZooKeeperClient Kafka server] Connected."),
        (logging.INFO, "[ZooKeeperClient Kafka server] Closing."),
        (logging.INFO, "[ZooKeeperClient Kafka server] Closed.")]
    if backend.chroot:
        assert any(r.getMessage() == f"[KafkaServer id=1] Created zookeeper path {backend.chroot}" for r in records)
    assert [(r.levelno, r.getMessage()) for r in zk_lines] == [
        *chroot_lines,
        (logging.INFO, f"[ZooKeeperClient Kafka server] Initializing a new session to {where}."),
        (logging.INFO, "[ZooKeeperClient Kafka server] Waiting until connected."),
        (logging.INFO, "[ZooKeeperClient Kafka server] Connected."),
    ]
    registered = next(i for i, r in enumerate(records) if r.getMessage().startswith("Registered broker 1 at path"))
    assert records.index(zk_lines[-1]) < registered
    # Kafka's "Cluster ID = X" (no [KafkaServer id=n] prefix yet), between connecting and registering
    said_id = next(i for i, r in enumerate(records) if r.name == "kafka.server.KafkaServer"
                   and r.getMessage() == f"Cluster ID = {cluster.brokers[1].cluster_id}")
    assert records.index(zk_lines[-1]) < said_id < registered
    caplog.clear()
    await asyncio.wait_for(cluster.stop_broker(1), BOUND_S)
    assert [r.getMessage() for r in caplog.records if r.name == ZK_CLIENT_LOGGER] == [
        "[ZooKeeperClient Kafka server] Closing.", "[ZooKeeperClient Kafka server] Closed."]


class UnreachableBackend(EmbeddedBackend):
    """A store whose sessions never connect (ZooKeeper down): the open fails as Kafka's connection timeout."""

    async def new_session(self, session_timeout_ms: int = 18000) -> CoordinationSession:
        raise TimeoutError("Timed out waiting for connection while in state: CONNECTING")


async def test_a_start_up_that_never_connects_closes_the_client_as_kafka_s_constructor_does(
        caplog: pytest.LogCaptureFixture) -> None:
    """Kafka's ZooKeeperClient constructor closes itself when ``waitUntilConnected`` throws: "Closing." and
    "Closed." follow "Waiting until connected.", and the start-up fails with the connection's error."""
    caplog.set_level(logging.INFO, ZK_CLIENT_LOGGER)
    server = KafkaServer(BrokerConfig(1), UnreachableBackend(wall_clock_ms), RecordingTransport(), None,
                         None)  # type: ignore[arg-type]
    with pytest.raises(TimeoutError, match="Timed out waiting for connection"):
        await server.startup()
    assert [r.getMessage() for r in caplog.records if r.name == ZK_CLIENT_LOGGER] == [
        "[ZooKeeperClient Kafka server] Initializing a new session to embedded.",
        "[ZooKeeperClient Kafka server] Waiting until connected.",
        "[ZooKeeperClient Kafka server] Closing.",
        "[ZooKeeperClient Kafka server] Closed.",
    ]
    assert not server.running


def test_the_connect_string_is_zookeeper_connect_as_given() -> None:
    """A broker process names its ``zookeeper.connect`` as written in server.properties, chroot included (trimmed,
    as Kafka's STRING configs are)."""
    server = KafkaServer(BrokerConfig(1, static_configs={"zookeeper.connect": " zk1:2181,zk2:2181/kafka "}),
                         EmbeddedBackend(wall_clock_ms), None, None, None)  # type: ignore[arg-type]
    assert server._connect_string() == "zk1:2181,zk2:2181/kafka"


async def test_a_failed_close_of_a_session_not_yet_taken_still_ends_the_reinitialisation(
        handshake: tuple[HandshakeBackend, LocalCluster], caplog: pytest.LogCaptureFixture) -> None:
    """The close of a session opened as the broker went fails: reported, and the re-initialisation still ends
    cancelled (not read as a failed open to retry, with its back-off, for a broker that is gone)."""
    caplog.set_level(logging.INFO, ZK_CLIENT_LOGGER)
    backend, cluster = handshake
    opened, reinit = await expire_and_hold_the_new_session(backend, cluster)
    await opened_not_taken(backend)
    backend.failing_closes.add(opened.session_id)
    await asyncio.wait_for(cluster.stop_broker(1), BOUND_S)
    await wait_until(reinit.done, timeout_s=BOUND_S, what="the re-initialisation task ended")
    assert reinit.cancelled()
    lines = [r.getMessage() for r in caplog.records if r.name == ZK_CLIENT_LOGGER]
    assert not [line for line in lines if "Error when recreating ZooKeeper" in line]
    assert [line for line in lines if "Closing a session opened after broker 1 went failed" in line]


async def test_a_failed_close_of_an_abandoned_open_is_reported_not_left_unretrieved(
        handshake: tuple[HandshakeBackend, LocalCluster], caplog: pytest.LogCaptureFixture) -> None:
    """The open completes after the broker went and its close fails: our WARN, not asyncio's "Task exception was
    never retrieved" (nobody awaits the open any more)."""
    caplog.set_level(logging.INFO, ZK_CLIENT_LOGGER)
    backend, cluster = handshake
    opened, _reinit = await expire_and_hold_the_new_session(backend, cluster)
    opening = opening_task()
    await cluster.stop_broker(1)
    reported: list[dict[str, object]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        backend.failing_closes.add(opened.session_id)
        backend.release.set()
        await wait_until(opening.done, timeout_s=BOUND_S, what="the abandoned open ended")
        del opening
        gc.collect()  # an unretrieved exception is reported when its task is collected
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert not reported, [context.get("message") for context in reported]
    assert [r for r in caplog.records if r.name == ZK_CLIENT_LOGGER and r.levelno == logging.WARNING
            and "Closing a session opened after broker 1 went failed" in r.getMessage()]


class ChrootedUnreachableBackend(UnreachableBackend):
    """A store under a chroot whose creation works (or fails with ``chroot_error``) but whose sessions never
    connect: enough for a start-up's log lines up to the broker's own client."""

    chroot = "/kafka"

    def __init__(self, chroot_error: Exception | None = None) -> None:
        super().__init__(wall_clock_ms)
        self.chroot_error = chroot_error
        self.chroots_made = 0

    async def make_sure_chroot_exists(self) -> None:
        if self.chroot_error is not None:
            raise self.chroot_error
        self.chroots_made += 1


async def test_a_chroot_is_created_on_a_client_of_its_own_as_kafkas_init_zk_client_does(
        caplog: pytest.LogCaptureFixture) -> None:
    """Kafka's ``initZkClient``: a ZooKeeperClient on ``zookeeper.connect`` without the chroot creates it, logs
    "Created zookeeper path <chroot>" (KafkaServer) and is closed, before the broker's own client is built."""
    caplog.set_level(logging.INFO, ZK_CLIENT_LOGGER)
    caplog.set_level(logging.INFO, "kafka.server.KafkaServer")
    backend = ChrootedUnreachableBackend()
    server = KafkaServer(BrokerConfig(3, static_configs={"zookeeper.connect": "zk1:2181,zk2:2181/kafka"}), backend,
                         RecordingTransport(), None, None)  # type: ignore[arg-type]
    with pytest.raises(TimeoutError):
        await server.startup()
    assert backend.chroots_made == 1
    assert [(r.name, r.getMessage()) for r in caplog.records if r.name in (ZK_CLIENT_LOGGER, "kafka.server.KafkaServer")
            ][:8] == [
        (ZK_CLIENT_LOGGER, "[ZooKeeperClient Kafka server] Initializing a new session to zk1:2181,zk2:2181."),
        (ZK_CLIENT_LOGGER, "[ZooKeeperClient Kafka server] Waiting until connected."),
        (ZK_CLIENT_LOGGER, "[ZooKeeperClient Kafka server] Connected."),
        ("kafka.server.KafkaServer", "[KafkaServer id=3] Created zookeeper path /kafka"),
        (ZK_CLIENT_LOGGER, "[ZooKeeperClient Kafka server] Closing."),
        (ZK_CLIENT_LOGGER, "[ZooKeeperClient Kafka server] Closed."),
        (ZK_CLIENT_LOGGER, "[ZooKeeperClient Kafka server] Initializing a new session to zk1:2181,zk2:2181/kafka."),
        (ZK_CLIENT_LOGGER, "[ZooKeeperClient Kafka server] Waiting until connected."),
    ]


async def test_a_chroot_that_cannot_be_created_fails_the_start_up_after_closing_its_client(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, ZK_CLIENT_LOGGER)
    backend = ChrootedUnreachableBackend(TimeoutError("Timed out waiting for connection while in state: CONNECTING"))
    server = KafkaServer(BrokerConfig(3, static_configs={"zookeeper.connect": "zk1:2181/kafka"}), backend,
                         RecordingTransport(), None, None)  # type: ignore[arg-type]
    with pytest.raises(TimeoutError, match="Timed out waiting for connection"):
        await server.startup()
    assert [r.getMessage() for r in caplog.records if r.name == ZK_CLIENT_LOGGER] == [
        "[ZooKeeperClient Kafka server] Initializing a new session to zk1:2181.",
        "[ZooKeeperClient Kafka server] Waiting until connected.",
        "[ZooKeeperClient Kafka server] Closing.",
        "[ZooKeeperClient Kafka server] Closed.",
    ]
    assert not server.running
