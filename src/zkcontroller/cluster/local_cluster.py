"""A whole Kafka cluster's control plane in one process: N brokers, each a controller candidate with its
own session, on the embedded store or a real ZooKeeper, sharing one in-process broker transport.

Used by ``zkcontroller cluster``, the README's demo, the integration tests and the benchmarks. With
``listeners`` (the ``cluster`` and ``demo`` commands) each broker also answers Kafka's wire protocol on a port
(`cluster.listener`; loopback unless ``--listen-host`` says otherwise) and registers its advertised host and that
port; without (the default: tests, benchmarks) no socket is opened and brokers register ``localhost:9092+id`` where
nothing listens.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
from collections.abc import Callable, Iterable
from dataclasses import replace

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.cluster.controlled_shutdown import GiveUp
from zkcontroller.cluster.kafka_server import BrokerConfig, KafkaServer
from zkcontroller.cluster.listener import DEFAULT_PORT_BASE, BrokerListener, ListenerPorts
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.event_log import EventLog
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.controller.states import ControllerState
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.coordination.errors import NodeExistsError, ZkError
from zkcontroller.model import TopicPartition, sorted_partitions
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import ControlledShutdownResponse
from zkcontroller.runtime.in_process import InProcessTransport
from zkcontroller.runtime.poll import poll_until
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.zk.errors import ZnodeDecodeError

POLL_S = 0.01
"""How often a wait on the brokers' in-process state looks again: a read of memory, no request, so it can be
often; the controller settles within milliseconds."""


class ClusterStartError(Exception):
    """A broker of the cluster could not start for an operator's reason (its id registered by another live
    session): the message says which broker and why, for the command's one ``Error:`` line."""


class LocalCluster:
    def __init__(
        self,
        backend: CoordinationBackend,
        broker_ids: list[int],
        clock: Callable[[], int],
        *,
        event_log: EventLog | None = None,
        controller_config: ControllerConfig | None = None,
        session_timeout_ms: int = 18000,
        racks: dict[int, str] | None = None,
        seed: int | None = None,
        transport: InProcessTransport | None = None,
        replication: ReplicationConfig | None = None,
        listeners: ListenerPorts | None = None,
    ) -> None:
        self.backend = backend
        self.clock = clock
        self.event_log = event_log or EventLog("local", clock, None)
        self.transport = transport or InProcessTransport()
        self.rng = random.Random(seed) if seed is not None else None
        """Seeded runs (tests) derive each broker's generator from it; otherwise each uses the OS's randomness."""
        self._template = controller_config or ControllerConfig(broker_id=-1)
        self._session_timeout_ms = session_timeout_ms
        self.replication = replication or ReplicationConfig()
        self._racks = racks or {}
        self.brokers: dict[int, KafkaServer] = {}
        self.broker_ids = sorted(broker_ids)
        self._listener_ports = listeners
        self.listeners: dict[int, BrokerListener] = {}
        """Each broker's listener (with ``listeners``), kept while it is down so a restart reuses its port."""

    @property
    def session_timeout_ms(self) -> int:
        """Each broker's ZooKeeper session timeout: how long a killed broker stays registered on the embedded store."""
        return self._session_timeout_ms

    def _static_configs(self, broker_id: int, controller: ControllerConfig,
                        listener: BrokerListener | None) -> dict[str, str]:
        """The server.properties this broker would have been started with, so DescribeConfigs shows its own id,
        log dirs and listener as STATIC_BROKER_CONFIG (it showed broker.id -1 and log.dirs null, Kafka's defaults,
        to kafka-configs --describe --entity-type brokers --entity-name 2 and every admin client)."""
        static = {"broker.id": str(broker_id), "log.dirs": ",".join(self.replication.log_dirs),
                  "zookeeper.session.timeout.ms": str(self._session_timeout_ms),
                  "controlled.shutdown.enable": str(controller.controlled_shutdown_enable).lower(),
                  "auto.leader.rebalance.enable": str(controller.auto_leader_rebalance_enable).lower()}
        if broker_id in self._racks:
            static["broker.rack"] = self._racks[broker_id]
        if listener is not None and listener.port is not None:
            static["listeners"] = f"PLAINTEXT://{listener.host}:{listener.port}"
            static["advertised.listeners"] = f"PLAINTEXT://{listener.advertised_host}:{listener.port}"
        return static

    def _new_server(self, broker_id: int, recovered_logs: dict[TopicPartition, tuple[int, int]] | None = None,
                    listener: BrokerListener | None = None) -> KafkaServer:
        host, port = "localhost", DEFAULT_PORT_BASE + broker_id  # registered; nothing listens there
        if listener is not None and listener.port is not None:
            host, port = listener.advertised_host, listener.port  # for clients; the port it really listens on
        controller = replace(self._template, broker_id=broker_id)
        config = BrokerConfig(
            broker_id=broker_id,
            host=host,
            port=port,
            rack=self._racks.get(broker_id),
            controller=controller,
            session_timeout_ms=self._session_timeout_ms,
            replication=self.replication,
            static_configs=self._static_configs(broker_id, controller, listener),
        )
        return KafkaServer(
            config, self.backend, self.transport, self._runtime_for(broker_id), self.event_log, recovered_logs
        )

    def _runtime_for(self, broker_id: int) -> AsyncioRuntime:
        rng = random.Random(self.rng.random()) if self.rng is not None else None
        return AsyncioRuntime(rng, self.clock)

    async def start(self) -> None:
        """Start each broker in turn; the first that cannot register ends it with `ClusterStartError` (the ones
        already started keep running: the caller's `shutdown` stops them)."""
        for broker_id in self.broker_ids:
            try:
                await self.start_broker(broker_id)
            except NodeExistsError as e:
                raise ClusterStartError(str(e)) from e

    async def start_broker(self, broker_id: int) -> KafkaServer:
        if broker_id in self.brokers and self.brokers[broker_id].running:
            raise ValueError(f"broker {broker_id} is already running")
        previous = self.brokers.get(broker_id)
        logs = previous.replica_manager.log_offsets() if previous and previous.replica_manager else None
        listener = await self._open_listener(broker_id)
        # a restarted broker finds its logs where it left them
        server = self._new_server(broker_id, logs, listener)
        if listener is not None:
            listener.server = server
        try:
            await server.startup()
        except BaseException:
            if listener is not None:
                await listener.close()
            if server.zk is not None:  # not in `brokers`, so no shutdown would close its session (and kazoo thread)
                with contextlib.suppress(Exception):
                    await server.zk.session.close()
            raise
        self.brokers[broker_id] = server
        if broker_id not in self.broker_ids:
            self.broker_ids = sorted([*self.broker_ids, broker_id])
        return server

    async def _open_listener(self, broker_id: int) -> BrokerListener | None:
        """Bind the broker's listener before it registers: its previous port on a restart, else base + id, else
        (taken, or no base) a free port."""
        ports = self._listener_ports
        if ports is None:
            return None
        listener = self.listeners.get(broker_id)
        if listener is None:
            listener = self.listeners[broker_id] = BrokerListener(broker_id, ports.host)
        if listener.last_port is not None:
            wanted = listener.last_port
        else:
            wanted = ports.base + broker_id if ports.base is not None else 0
        await listener.bind(wanted)
        return listener

    async def _close_listener(self, broker_id: int) -> None:
        listener = self.listeners.get(broker_id)
        if listener is not None:
            await listener.close()

    async def stop_broker(self, broker_id: int) -> None:
        """Kafka's orderly stop; the listener closes right after the controlled shutdown, as Kafka's
        ``stopProcessingRequests`` (closing it again afterwards does nothing)."""
        stop_listener = functools.partial(self._close_listener, broker_id)
        await self._running(broker_id).shutdown(stop_processing_requests=stop_listener)
        await self._close_listener(broker_id)

    async def crash_broker(self, broker_id: int) -> None:
        """Stop a broker mid-step, as a killed process. On the embedded store its session is cut off and times
        out like a real one. A real ZooKeeper client cannot be silenced without closing its session, so there
        the session is expired at once: what the server does once the timeout has passed."""
        server = self._running(broker_id)
        server.crash()
        await self._close_listener(broker_id)  # a killed process's sockets close with it
        await self._cut_off_session(server)

    async def _cut_off_session(self, server: KafkaServer) -> None:
        if server.zk is None:
            return
        if isinstance(self.backend, EmbeddedBackend):
            self.backend.server.disconnect(server.zk.session.session_id)
        else:
            await self.backend.expire_session(server.zk.session)

    async def fail_log_dir(self, broker_id: int, log_dir: str) -> list[TopicPartition]:
        """Fail one of a running broker's log dirs (`KafkaServer.fail_log_dir`); returns the partitions taken
        offline. If it was the broker's last online dir the broker halts: then its session goes as a killed
        process's does (`crash_broker`)."""
        server = self._running(broker_id)
        failed = await server.fail_log_dir(log_dir)
        if not server.running:
            await self._close_listener(broker_id)
            await self._cut_off_session(server)
        return failed

    async def expire_broker_session(self, broker_id: int) -> None:
        server = self._running(broker_id)
        assert server.zk is not None
        await self.backend.expire_session(server.zk.session)

    def _running(self, broker_id: int) -> KafkaServer:
        server = self.brokers.get(broker_id)
        if server is None or not server.running:
            if server is None:  # "is not running" suggested it was one of this cluster's, stopped
                raise ValueError(f"broker {broker_id} is not running: this cluster has brokers "
                                 f"{', '.join(map(str, self.broker_ids))} (`start {broker_id}` adds one)")
            raise ValueError(f"broker {broker_id} is not running")
        return server

    def leaders(self, topic: str) -> dict[TopicPartition, KafkaServer]:
        """The running broker that leads each partition of ``topic`` as the brokers themselves see it (during a
        move two may believe they lead: the newer leader epoch wins)."""
        found: dict[TopicPartition, tuple[int, KafkaServer]] = {}
        for server in self.running_brokers():
            rm = server.replica_manager
            if rm is None:
                continue
            for tp in rm.leader_partitions():
                epoch = rm.partition(tp).leader_epoch  # type: ignore[union-attr]
                if tp.topic == topic and (tp not in found or found[tp][0] < epoch):
                    found[tp] = (epoch, server)
        return {tp: server for tp, (_, server) in found.items()}

    def produce(self, topic: str, records: int) -> dict[TopicPartition, int]:
        """Append ``records`` (offsets only) to ``topic``, spread evenly over the partitions that have a running
        leader (lowest partitions take the remainder); returns each touched partition's new log end offset."""
        if records < 0:
            raise ValueError(f"cannot produce {records} records")
        leaders = self.leaders(topic)
        if not leaders:
            raise ValueError(f"no running broker leads a partition of topic {topic!r}")
        parts = sorted_partitions(leaders)
        share, extra = divmod(records, len(parts))
        out = {}
        for i, tp in enumerate(parts):
            count = share + (1 if i < extra else 0)
            if count:
                out[tp] = leaders[tp].replica_manager.append(tp, count)  # type: ignore[union-attr]
        return out

    def running_brokers(self) -> list[KafkaServer]:
        return [s for _, s in sorted(self.brokers.items()) if s.running]

    def active_controller(self, exclude: int | None = None) -> KafkaController | None:
        """The running broker whose controller believes it is active (None while an election is under way).

        ``exclude`` leaves out a controller known to be deposed but not yet aware of it (split brain).
        """
        active = [
            s.controller
            for s in self.running_brokers()
            if s.controller is not None and s.controller.is_active and s.broker_id != exclude
        ]
        return active[0] if len(active) == 1 else None

    async def wait_for_controller(
        self, timeout_s: float = 30.0, exclude: int | None = None, min_epoch: int = 1
    ) -> KafkaController:
        """Wait until exactly one running broker (other than ``exclude``) is controller with an epoch of at
        least ``min_epoch`` and has finished failover (its event queue idle). An epoch wrapped past Int.MaxValue
        (negative, as Kafka's Int overflows) counts as later than any ``min_epoch`` not below zero."""
        async def settled() -> KafkaController | None:
            controller = self.active_controller(exclude)
            if (
                controller is not None
                and controller.event_manager.queue_size == 0
                and controller.event_manager.state is ControllerState.IDLE
                and (controller.context.epoch >= min_epoch or controller.context.epoch < 0 <= min_epoch)
            ):
                return controller
            return None

        controller = await poll_until(settled, timeout_s, POLL_S)
        if controller is None:
            raise TimeoutError(f"no controller within {timeout_s}s")
        return controller

    async def shutdown(self, timeout_s: float = 30.0, progress: Callable[[str], None] | None = None) -> None:
        """Stop every broker, from the highest id, the active controller last; one stuck mid-event (a stalled
        store call) is crashed instead. Every listener is closed, whatever state its broker is in. ``progress``
        is told which broker is stopping and why one gives up controlled shutdown early: with the whole cluster
        going, a broker whose remaining leadership no running broker can take does not retry (`_futile_retry`);
        Kafka's retries would only add ``controlled.shutdown.max.retries`` back-offs (10 s by default) per such
        broker."""
        say = progress or (lambda _line: None)
        active = self.active_controller()
        # The controller last, as Kafka's rolling-restart advice: stopped first, it moved to another broker at
        # each stop on the way down, elections the run's logs (and the demo's report) counted as failovers.
        order = sorted(reversed(self.running_brokers()),
                       key=lambda s: active is not None and s.broker_id == active.controller_id)
        try:
            for server in order:
                say(f"stopping broker {server.broker_id}")
                try:
                    await asyncio.wait_for(server.shutdown(
                        self._futile_retry(server, say),
                        stop_processing_requests=functools.partial(self._close_listener, server.broker_id)),
                        timeout_s)
                except TimeoutError:
                    say(f"broker {server.broker_id} did not stop within {timeout_s:.0f} s: stopping it abruptly")
                    server.crash()
                await self._close_listener(server.broker_id)
        finally:
            for listener in self.listeners.values():
                await listener.close()

    def _futile_retry(self, server: KafkaServer, say: Callable[[str], None]) -> GiveUp:
        """When retrying ``server``'s controlled shutdown cannot help: no other broker is running; or no partition
        it still leads has a replica Kafka's controlled-shutdown election could pick (`_no_successor`); or no
        answer came because ``/controller`` names a broker of this cluster that was killed (no other becomes
        controller before its session expires). An election under way ends in moments: then it retries, as
        Kafka does."""
        async def reason(response: ControlledShutdownResponse | None) -> str | None:
            others = {s.broker_id for s in self.running_brokers() if s is not server}
            why = None
            if not others:
                why = f"broker {server.broker_id} is the last one running, so its leadership has nowhere to go"
            elif response is None:
                killed = await self._killed_controller(server)
                if killed is not None:
                    why = (f"the controller, broker {killed}, was killed and cannot answer; no other broker becomes "
                           "controller until its session expires")
            elif response.error is Errors.NONE and response.remaining_partitions:
                why = self._no_successor(server, response.remaining_partitions, others)
            if why is not None:
                say(f"{why}: not retrying controlled shutdown")
            return why

        return reason

    def _no_successor(self, server: KafkaServer, remaining: Iterable[TopicPartition], others: set[int]) -> str | None:
        """Why no running broker can take over any partition ``server`` still leads, by the rule Kafka's
        controlled-shutdown election applies (``Election.leaderForControlledShutdown``): a replica in the ISR,
        online (its broker live, not on a failed log dir) and not shutting down; None when some partition has
        one (or no controller is active to ask: an election under way), so retrying may help. The active
        controller's context is what that election read. It counted any replica on a running broker, and a
        ``quit`` after ``fail-log-dir`` retried a broker whose partner replica was offline for 10 s."""
        controller = self.active_controller()
        if controller is None:
            return None
        context = controller.context
        stopped_only = True
        reasons = []
        for tp in sorted_partitions(remaining):
            state = context.partition_leader_and_isr(tp)
            isr = state.isr if state is not None else ()
            partners = [r for r in context.partition_replica_assignment(tp) if r != server.broker_id]
            why = []
            for r in partners:
                if r not in others:
                    why.append(f"broker {r} stopped")
                elif not context.is_replica_online(r, tp):
                    why.append(f"broker {r}'s replica offline: a failed log dir" if r in context.live_broker_ids
                               else f"broker {r} not live to the controller")
                elif r not in isr:
                    why.append(f"broker {r}'s replica out of the ISR")
                else:
                    return None  # r can take tp over: the controller will elect it on a retry
            stopped_only = stopped_only and all(w.endswith(" stopped") for w in why)
            reasons.append(f"{tp} ({'; '.join(why) or 'no other replica'})")
        names = ", ".join(map(str, sorted_partitions(remaining)))
        if stopped_only:
            return f"broker {server.broker_id} still leads {names}, whose other replicas are all on stopped brokers"
        return (f"broker {server.broker_id} still leads {', '.join(reasons)}, which no running broker can take "
                "(Kafka elects an online ISR replica on a broker not shutting down)")

    async def _killed_controller(self, server: KafkaServer) -> int | None:
        """The broker ``/controller`` names (as ``server`` reads it) if it is one of this cluster's and not running
        (killed: its session outlives it), else None."""
        if server.zk is None:
            return None
        try:
            controller_id = await server.zk.get_controller_id()
        except (ZkError, ZnodeDecodeError, OSError):
            return None
        registered = self.brokers.get(controller_id) if controller_id is not None else None
        return controller_id if registered is not None and not registered.running else None
