"""KafkaServer: one broker's lifecycle around the controller (spec §2.1, §2.8).

Start-up mirrors Kafka's ``KafkaServer.startup``: top-level paths, cluster id, broker registration (the
broker epoch), then the controller candidate. It also owns the session: when it expires, the controller
resigns (``Expire``), a new session is opened, and the broker re-registers and re-runs the election
(``RegisterBrokerAndReelect``); when a dropped connection comes back, the controller re-arms its watches.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.log_config import LogDefaults
from zkcontroller.broker.log_offsets_journal import LogOffsetsJournal
from zkcontroller.broker.replica_manager import ReplicaManager
from zkcontroller.cluster.controlled_shutdown import GiveUp, controlled_shutdown
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.event_log import EventLog
from zkcontroller.controller.event_manager import QueuedEvent
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.coordination.api import CoordinationSession, EventType, SessionState, WatchedEvent
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.errors import NodeExistsError, ZkError
from zkcontroller.coordination.reconnecting import ReconnectingSession
from zkcontroller.model import (
    GROUP_METADATA_TOPIC_NAME,
    TRANSACTION_STATE_TOPIC_NAME,
    Broker,
    BrokerInfo,
    EndPoint,
    TopicId,
    TopicPartition,
)
from zkcontroller.protocol.ibp import broker_registration_version
from zkcontroller.protocol.inter_broker import AlterIsrRequest, ControlledShutdownRequest, FetchRequest
from zkcontroller.protocol.transport import BrokerNetwork, BrokerTransport
from zkcontroller.runtime.log_lines import exception_line
from zkcontroller.runtime.runtime import Runtime
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import BatchLimits, KafkaZkClient

log = logging.getLogger("kafka.server.KafkaServer")
zk_client_log = logging.getLogger("kafka.zookeeper.ZooKeeperClient")
"""Kafka's ZooKeeper client's lines about its session (its ident for the broker's client: ``Kafka server``)."""
failure_channel_log = logging.getLogger("kafka.server.LogDirFailureChannel")
replica_manager_log = logging.getLogger("kafka.server.ReplicaManager")

SESSION_RETRY_BACKOFF_MS = 1000
REGISTRATION_WAIT_MARGIN_MS = 2000
"""How long past the session timeout a restarting broker waits for its old registration to expire."""


@dataclass(frozen=True)
class AutoCreateConfig:
    """``auto.create.topics.enable`` and what a topic a Metadata request creates gets (Kafka 2.8's keys and
    defaults; ``AutoTopicCreationManager.creatableTopic``): ``num.partitions`` and ``default.replication.factor``,
    but the internal topics' own sizes and configs (the group coordinator's and transaction state manager's)."""

    enable: bool = True
    num_partitions: int = 1
    default_replication_factor: int = 1
    offsets_topic_num_partitions: int = 50
    offsets_topic_replication_factor: int = 3
    offsets_topic_segment_bytes: int = 104857600
    transaction_state_log_num_partitions: int = 50
    transaction_state_log_replication_factor: int = 3
    transaction_state_log_min_isr: int = 2
    transaction_state_log_segment_bytes: int = 104857600

    def creatable_topic(self, topic: str) -> tuple[int, int, dict[str, str]]:
        """Partitions, replication factor and topic configs for auto-creating ``topic``."""
        if topic == GROUP_METADATA_TOPIC_NAME:
            return (self.offsets_topic_num_partitions, self.offsets_topic_replication_factor,
                    {"cleanup.policy": "compact", "segment.bytes": str(self.offsets_topic_segment_bytes),
                     "compression.type": "producer"})
        if topic == TRANSACTION_STATE_TOPIC_NAME:
            return (self.transaction_state_log_num_partitions, self.transaction_state_log_replication_factor,
                    {"unclean.leader.election.enable": "false", "compression.type": "uncompressed",
                     "cleanup.policy": "compact", "min.insync.replicas": str(self.transaction_state_log_min_isr),
                     "segment.bytes": str(self.transaction_state_log_segment_bytes)})
        return self.num_partitions, self.default_replication_factor, {}


@dataclass(frozen=True)
class BrokerConfig:
    broker_id: int
    host: str = "localhost"
    port: int = 9092
    rack: str | None = None
    controller: ControllerConfig | None = None
    session_timeout_ms: int = 18000
    replication: ReplicationConfig = field(default_factory=ReplicationConfig)
    """replica.lag.time.max.ms, replica.fetch.*, inter.broker.protocol.version (the replica manager's)."""
    auto_create: AutoCreateConfig = field(default_factory=AutoCreateConfig)
    extra: dict[str, str] = field(default_factory=dict)
    static_configs: dict[str, str] = field(default_factory=dict)
    """server.properties as given (a broker process; in-process, the id, log dirs, listener and settings
    `LocalCluster` gives it). The topic defaults (``message.max.bytes``, ``min.insync.replicas``,
    ``log.retention.*``...) come from it, and DescribeConfigs shows it for this broker."""

    @property
    def log_dirs(self) -> tuple[str, ...]:
        """``log.dirs`` from server.properties (a broker process) if given, else the replication config's."""
        given = tuple(d.strip() for d in self.extra.get("log.dirs", "").split(",") if d.strip())
        return given or self.replication.log_dirs

    @property
    def controller_config(self) -> ControllerConfig:
        return self.controller or ControllerConfig(broker_id=self.broker_id)

    def broker(self) -> Broker:
        return Broker(self.broker_id, (EndPoint(self.host, self.port, "PLAINTEXT", "PLAINTEXT"),), self.rack)


class KafkaServer:
    def __init__(
        self,
        config: BrokerConfig,
        backend: CoordinationBackend,
        transport: BrokerNetwork,
        runtime: Runtime,
        event_log: EventLog,
        recovered_logs: Mapping[TopicPartition, tuple[int, int]] | None = None,
        log_offsets_journal: LogOffsetsJournal | None = None,
        fetcher_transport: BrokerTransport | None = None,
    ) -> None:
        self.config = config
        self.fetcher_transport = fetcher_transport
        """The replica fetchers' own connections (Kafka's ``ReplicaFetcherBlockingSend``), when ``transport`` limits
        requests in flight per broker (TCP): a fetch the leader holds must not hold up controller requests."""
        self.recovered_logs = dict(recovered_logs or {})
        """The offsets of the logs a previous run of this broker left (offsets only: the "disk")."""
        self.log_offsets_journal = log_offsets_journal
        """A broker process's journal of those offsets, written through as they change."""
        self.backend = backend
        self.transport = transport
        self.runtime = runtime
        self.event_log = event_log
        self.zk: KafkaZkClient | None = None
        self.controller: KafkaController | None = None
        self.control_plane: BrokerControlPlane | None = None
        self.replica_manager: ReplicaManager | None = None
        self.cluster_id: str | None = None
        self.running = False
        self._reinit: asyncio.Task[None] | None = None
        self._openings: set[asyncio.Task[CoordinationSession | None]] = set()
        self._was_disconnected = False

    @property
    def broker_id(self) -> int:
        return self.config.broker_id

    @property
    def active_controller(self) -> KafkaController | None:
        """This broker's controller if it is the active one: only it serves what Kafka's clients send the
        controller (CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders, the reassignment APIs)."""
        return self.controller if self.controller is not None and self.controller.is_active else None

    async def startup(self) -> None:
        runtime = self.runtime
        # Kafka's ZooKeeperClient logs these as it is built at start-up (the first also on each re-initialisation,
        # which does not wait for the connection), and "Closing."/"Closed." around its close at shutdown, or at
        # once when the connection never comes (its constructor closes it and rethrows).
        if self.backend.chroot:
            await self._make_sure_chroot_exists()
        zk_client_log.info("[ZooKeeperClient Kafka server] Initializing a new session to %s.", self._connect_string())
        zk_client_log.info("[ZooKeeperClient Kafka server] Waiting until connected.")
        try:
            session = await self.backend.new_session(self.config.session_timeout_ms)
        except BaseException:
            zk_client_log.info("[ZooKeeperClient Kafka server] Closing.")
            zk_client_log.info("[ZooKeeperClient Kafka server] Closed.")
            raise
        zk_client_log.info("[ZooKeeperClient Kafka server] Connected.")
        # zookeeper.max.in.flight.requests: Kafka's ZooKeeperClient holds that many requests outstanding at most;
        # ours bounds each pipelined read and fenced multi batch by it (the session's own bound is the backend's)
        limits = BatchLimits(max_in_flight=self.config.controller_config.zookeeper_max_in_flight_requests)
        self.zk = zk = KafkaZkClient(ReconnectingSession(session, _zk_client_say), runtime.now_ms, rng=runtime.rng,
                                     limits=limits)
        await zk.create_top_level_paths()
        self.cluster_id = await zk.create_or_get_cluster_id(str(TopicId.generate(runtime.rng)))
        # as Kafka's startup, before its log prefix is set: what tells two runs' lines apart in one log directory
        log.info("Cluster ID = %s", self.cluster_id)
        info = BrokerInfo(self.config.broker(),
                          broker_registration_version(self.config.controller_config.inter_broker_protocol_version))
        epoch = await self._register(zk, info)
        self.control_plane = BrokerControlPlane(self.broker_id, epoch, log_dirs=self.config.log_dirs)
        self.replica_manager = ReplicaManager(self.control_plane, self.transport, runtime, self.config.replication,
                                              zk=lambda: self.zk,
                                              recovered_logs=self.recovered_logs,
                                              log_defaults=LogDefaults.from_properties(self.config.static_configs),
                                              journal=self.log_offsets_journal,
                                              fetcher_transport=self.fetcher_transport)
        self.replica_manager.startup()
        self.transport.register(self.broker_id, self.handle_request)
        self.controller = KafkaController(
            self.config.controller_config, zk, info, epoch, self.transport, runtime, self.event_log
        )
        self.controller.on_registered = self._on_registered
        self._watch_session(session)
        self.controller.startup()
        self.running = True

    async def _register(self, zk: KafkaZkClient, info: BrokerInfo) -> int:
        """Register; if an earlier session of this broker id (a crashed process) still holds the registration,
        wait for ZooKeeper to expire it — at most one session timeout and a margin — then register. Kafka
        refuses to start instead; a restart right after a crash should just take a little longer."""
        try:
            return await zk.register_broker(info)
        except NodeExistsError:
            pass
        path = paths.broker_id_path(self.broker_id)
        bound_ms = self.config.session_timeout_ms + REGISTRATION_WAIT_MARGIN_MS
        log.warning("[KafkaServer id=%d] %s is still held by an earlier session of this broker id; waiting up to "
                    "%d ms for ZooKeeper to expire it", self.broker_id, path, bound_ms)
        gone = asyncio.Event()

        def on_change(event: WatchedEvent) -> None:
            if event.type is EventType.NODE_DELETED:
                gone.set()

        if await zk.path_exists(path, on_change):
            try:
                await asyncio.wait_for(gone.wait(), bound_ms / 1000)
            except TimeoutError:
                raise NodeExistsError(path, f"broker id {self.broker_id} is still registered by another live "
                                            f"session after {bound_ms} ms: is another broker running with it?"
                                      ) from None
        log.warning("[KafkaServer id=%d] the earlier registration at %s is gone; registering", self.broker_id, path)
        return await zk.register_broker(info)

    def handle_request(self, request: Any, correlation_id: int = 0) -> Any:
        """This broker's request entry point: requests for the controller go to this broker's controller
        candidate (which answers NOT_CONTROLLER unless active); fetches and control requests to the replica
        manager (control requests pass through it to the control plane, which decides). ``correlation_id``: the
        wire header's, for Kafka's state-change lines (the in-process transport has none: 0)."""
        if isinstance(request, ControlledShutdownRequest | AlterIsrRequest):
            assert self.controller is not None
            return self.controller.handle_broker_request(request)
        assert self.replica_manager is not None
        if isinstance(request, FetchRequest):
            return self.replica_manager.handle_fetch_request(request)  # a follower's may be held: awaitable
        return self.replica_manager.handle_control_request(request, correlation_id)

    def _on_registered(self, broker_epoch: int) -> None:
        if self.control_plane is not None:
            self.control_plane.broker_epoch = broker_epoch

    def _watch_session(self, session: CoordinationSession) -> None:
        session.add_session_listener(lambda state: self._on_session_state(session, state))

    def _on_session_state(self, session: CoordinationSession, state: SessionState) -> None:
        if not self.running or self.zk is None or self.controller is None:
            return
        if session.session_id != self.zk.session.session_id:
            return  # a listener of a session we already replaced
        if state is SessionState.DISCONNECTED:
            self._was_disconnected = True
        elif state is SessionState.CONNECTED and self._was_disconnected:
            self._was_disconnected = False
            self.controller.on_session_reconnected()
            if self.replica_manager is not None:
                self.replica_manager.on_session_reconnected()
        elif state is SessionState.EXPIRED and self._reinit is None:
            # Kafka's ZooKeeperClient: "Session expired.", then beforeInitializingSession clears the controller's
            # queue for Expire. Done here, in the listener, not in the task: an event woken by the expiry (its
            # request failed) resumes before a new task's first step, and would take the next queued event of the
            # lost session, and the next, each failing on the dead session.
            zk_client_log.info("[ZooKeeperClient Kafka server] Session expired.")
            expire = self.controller.before_initializing_session()
            self._reinit = self.runtime.spawn(self._reinitialize_session(expire),
                                              f"zk-session-reinit-{self.broker_id}")

    async def _reinitialize_session(self, expire: QueuedEvent) -> None:
        """Kafka's ZooKeeperClient re-initialisation: once the controller processes Expire (it resigns), a new
        session, then re-register. A shutdown or crash meanwhile ends it (cancels it): Expire dropped unprocessed,
        or the broker gone while the new session was being opened (that session is closed, not left to outlive the
        broker: `_open_session`)."""
        assert self.controller is not None and self.zk is not None
        try:
            await expire.await_processing()
            if not self.running:  # spawned by a session event that came as the broker went (after its cancel)
                return
            zk_client_log.info("[ZooKeeperClient Kafka server] Initializing a new session to %s.",
                               self._connect_string())
            while True:
                try:
                    session = await self._open_session()
                    break
                except (ZkError, OSError) as e:
                    zk_client_log.info("[ZooKeeperClient Kafka server] Error when recreating ZooKeeper, retrying after "
                                       "a short sleep\n%s", exception_line(e))
                    await self.runtime.sleep_ms(SESSION_RETRY_BACKOFF_MS)
            # No check of `running` after an await here: a shutdown or crash cancels this task in the step it
            # stops the broker, and `_open_session` closes a session opened meanwhile.
            self.zk.replace_session(ReconnectingSession(session, _zk_client_say))
            self._watch_session(session)
            self.controller.after_initializing_session()
            if self.replica_manager is not None:
                self.replica_manager.on_session_reconnected()
        finally:
            self._reinit = None

    async def _open_session(self) -> CoordinationSession:
        """``backend.new_session`` in a task of its own, so that cancelling the re-initialisation (a shutdown or a
        crash) cannot drop a session the backend has opened, or goes on to open, on the floor: alive on the store
        with nobody to close it. Whichever of the two ends last closes it. Closed even after a crash: a killed
        process's connections close too, and this session holds nothing (no ephemeral node, no watch), so to every
        other client its close and its expiry look the same, only sooner."""
        abandoned = False

        async def open_unless_abandoned() -> CoordinationSession | None:
            try:
                session = await self.backend.new_session(self.config.session_timeout_ms)
            except Exception:
                if abandoned:
                    return None  # nobody waits for it any more: no error for nobody
                raise
            if abandoned:
                await self._close_abandoned(session)
                return None
            return session

        opening = self.runtime.spawn(open_unless_abandoned(), f"zk-session-open-{self.broker_id}")
        self._openings.add(opening)  # the loop holds tasks weakly: an abandoned open must still run to its close
        opening.add_done_callback(self._openings.discard)
        try:
            session = await asyncio.shield(opening)
        except asyncio.CancelledError:
            abandoned = True
            if opening.done() and not opening.cancelled() and opening.exception() is None:
                opened = opening.result()  # opened, but this task was cancelled before it could take it
                if opened is not None:
                    await self._close_abandoned(opened)
            raise  # outside the re-initialisation's retry: a failed close is no failed open to retry
        assert session is not None
        return session

    async def _close_abandoned(self, session: CoordinationSession) -> None:
        """Close a session opened for a broker that has gone. A failure is logged, not raised: nobody waits for
        this session, and the cancellation that abandoned it must go on."""
        try:
            await session.close()
        except Exception as e:  # reported; the store expires the session in the end
            zk_client_log.warning("[ZooKeeperClient Kafka server] Closing a session opened after broker %d went "
                                  "failed; it will expire\n%s", self.broker_id, exception_line(e))

    async def _make_sure_chroot_exists(self) -> None:
        """Kafka's ``initZkClient`` before the broker's own client: a ZooKeeperClient on ``zookeeper.connect``
        without its chroot, which creates the chroot, logs "Created zookeeper path <chroot>", and is closed."""
        connect = self._connect_string()
        at = connect.find("/")
        root, chroot = (connect[:at], connect[at:]) if at > 0 else (connect, self.backend.chroot)
        zk_client_log.info("[ZooKeeperClient Kafka server] Initializing a new session to %s.", root)
        zk_client_log.info("[ZooKeeperClient Kafka server] Waiting until connected.")
        try:
            await self.backend.make_sure_chroot_exists()
        except BaseException:
            zk_client_log.info("[ZooKeeperClient Kafka server] Closing.")
            zk_client_log.info("[ZooKeeperClient Kafka server] Closed.")
            raise
        zk_client_log.info("[ZooKeeperClient Kafka server] Connected.")
        log.info("[KafkaServer id=%d] Created zookeeper path %s", self.broker_id, chroot)
        zk_client_log.info("[ZooKeeperClient Kafka server] Closing.")
        zk_client_log.info("[ZooKeeperClient Kafka server] Closed.")

    def _connect_string(self) -> str:
        """What Kafka's ZooKeeperClient names as where it connects: ``zookeeper.connect`` as given (a broker
        process), else the backend's hosts (a real ZooKeeper), else the store's name (the embedded one)."""
        given = self.config.static_configs.get("zookeeper.connect", "").strip()  # Kafka's STRING config is trimmed
        if given:
            return given
        hosts = getattr(self.backend, "hosts", None)  # ZooKeeperBackend's, without importing kazoo here
        return hosts if isinstance(hosts, str) else self.backend.name

    def _end_reinitialization(self) -> asyncio.Task[None] | None:
        """Cancel a session re-initialisation under way (a shutdown or a crash): nothing is left to re-register.
        Returns its task, for a shutdown to wait until a session it had opened is closed."""
        task, self._reinit = self._reinit, None
        if task is not None:
            task.cancel()
        return task

    async def fail_log_dir(self, log_dir: str) -> list[TopicPartition]:
        """A disk failure under ``log_dir`` (Kafka's ``LogDirFailureChannel`` then ``handleLogDirFailure``): its
        replicas go offline and stop fetching and leading, then ``/log_dir_event_notification/log_dir_event_<n>``
        tells the controller, whose LeaderAndIsr this broker answers KAFKA_STORAGE_ERROR for exactly those
        replicas. When it was the last online dir the broker halts (crashes) instead, as Kafka does. Returns the
        partitions taken offline; an unknown dir is refused (ValueError) and changes nothing."""
        if not self.running or self.replica_manager is None or self.zk is None:
            raise ValueError(f"broker {self.broker_id} is not running")
        rm, plane = self.replica_manager, self.replica_manager.control_plane
        if log_dir in plane.offline_log_dirs:
            return []  # already failed: Kafka's handleLogDirFailure returns at once
        if log_dir in plane.log_dirs:
            failure_channel_log.error("Error while accessing log dir %s: the disk failed (injected)", log_dir)
        failed = rm.handle_log_dir_failure(log_dir)  # ValueError naming the broker's dirs if unknown
        if rm.all_log_dirs_offline:
            self.crash()  # Exit.halt(1): no notification, the session is left to expire
            return failed
        await self.zk.propagate_log_dir_event(self.broker_id)
        replica_manager_log.warning("[ReplicaManager broker=%d] Stopped serving replicas in dir %s",
                                    self.broker_id, log_dir)
        return failed

    async def shutdown(self, give_up: GiveUp | None = None,
                       stop_processing_requests: Callable[[], Awaitable[None]] | None = None) -> None:
        """An orderly stop: the controller resigns, the session closes (its znodes go at once). ``give_up``: when
        controlled shutdown may stop retrying (`controlled_shutdown.GiveUp`; None: Kafka's retries).
        ``stop_processing_requests``: the listener's stop, run right after the controlled shutdown as Kafka's
        ``socketServer.stopProcessingRequests()``, so no client request is served (and no waiting produce answered)
        while the replica manager and controller shut down."""
        if not self.running:
            return
        if self.replica_manager is not None:
            self.replica_manager.shutting_down = True  # Kafka sets isShuttingDown before controlledShutdown()
        if self.zk is not None and self.control_plane is not None:
            plane = self.control_plane
            await controlled_shutdown(self.broker_id, lambda: plane.broker_epoch, self.config.controller_config,
                                      self.zk, self.transport, self.runtime, give_up)
        if stop_processing_requests is not None:
            await stop_processing_requests()
        self.running = False
        self.transport.unregister(self.broker_id)
        if self.replica_manager is not None:
            self.replica_manager.shutdown()
        reinit = self._end_reinitialization()
        if reinit is not None:
            await asyncio.wait((reinit,))  # its cancellation closes a session it had opened: none outlives us
        if self.controller is not None:
            await self.controller.shutdown()
        if self.zk is not None:
            zk_client_log.info("[ZooKeeperClient Kafka server] Closing.")
            await self.zk.session.close()
            zk_client_log.info("[ZooKeeperClient Kafka server] Closed.")

    def crash(self) -> None:
        """A crash: everything stops mid-step; the session is left to time out on the store. A session
        re-initialisation stops too (as shutdown's): a dead broker neither waits for Expire nor registers again."""
        self.running = False
        self._end_reinitialization()
        self.transport.unregister(self.broker_id)
        if self.replica_manager is not None:
            self.replica_manager.shutdown()
        if self.controller is not None:
            self.controller.abort()


def _zk_client_say(message: str) -> None:
    """A broker's ZooKeeperClient line (its ``waitUntilConnected``'s, after a connection loss)."""
    zk_client_log.info("[ZooKeeperClient Kafka server] %s", message)

