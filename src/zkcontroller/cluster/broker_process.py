"""``zkcontroller broker``: one Kafka broker as an OS process, as ``kafka-server-start.sh`` runs one.

The assembly of Kafka's ``KafkaServer.startup`` over the wire: the listener (`SocketServer` with
`KafkaApis`) binds first, then the broker registers in ZooKeeper and becomes a controller candidate whose
requests (control requests and the replica fetchers' Fetch) travel over TCP (`TcpTransport`). SIGTERM (or
SIGINT) is Kafka's orderly stop: a controlled shutdown (ControlledShutdown to the controller, retried per
``controlled.shutdown.*``), then the listener closes (Kafka's ``stopProcessingRequests``: its connections
go, a produce still waiting is dropped unanswered), then the controller resigns and the session closes so the
broker's znode goes at once. SIGUSR1 is the same stop as one step of stopping the whole cluster (``cluster
--processes``' ``quit``): the controlled shutdown does not retry once retrying cannot help (`teardown_give_up`),
as the in-process cluster's ``quit``. SIGKILL is a hard failure, left to ZooKeeper's session timeout. The replica
manager takes ``replica.*``, ``inter.broker.protocol.version`` and ``log.dirs`` from server.properties.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import signal
import sys

from zkcontroller.broker.kafka_apis import CloseConnection
from zkcontroller.broker.log_offsets_journal import LogDirLockedError, LogOffsetsJournal
from zkcontroller.cluster.controlled_shutdown import GiveUp
from zkcontroller.cluster.kafka_server import BrokerConfig, KafkaServer
from zkcontroller.cluster.line_writer import LineWriter, LineWriterHandler
from zkcontroller.cluster.listener import broker_apis
from zkcontroller.cluster.logs import KafkaFormatter
from zkcontroller.cluster.metrics import BrokerMetrics
from zkcontroller.cluster.server_properties import BrokerProperties
from zkcontroller.controller.event_log import EventLog
from zkcontroller.coordination.connect import make_backend
from zkcontroller.coordination.errors import ZkError
from zkcontroller.model import sorted_partitions
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import ControlledShutdownResponse
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.runtime.socket_server import SocketServer
from zkcontroller.runtime.tcp_transport import TcpTransport
from zkcontroller.zk.errors import ZnodeDecodeError

log = logging.getLogger("kafka.server.KafkaServer")

def configure_logging(level: int = logging.INFO) -> None:
    """To stderr (the cluster runner sends it to the broker's log file), flushed once per event-loop turn: a
    controller logs a line per partition when a broker fails. Python makes a non-interactive stderr
    line-buffered (a write per line), so a broker process turns that off; the writer flushes instead. Lines are
    in Kafka's layout (`KafkaFormatter`: ``WARN``, not Python's ``WARNING``)."""
    if not sys.stderr.isatty() and isinstance(sys.stderr, io.TextIOWrapper):
        sys.stderr.reconfigure(line_buffering=False)
    handler = LineWriterHandler(LineWriter(stream=sys.stderr))
    handler.setFormatter(KafkaFormatter())
    logging.basicConfig(level=level, handlers=[handler], force=True)
    logging.getLogger("kazoo").setLevel(logging.WARNING)


class FatalStartupError(Exception):
    """Kafka's "Fatal error during KafkaServer startup": the broker shuts down and the command prints this one
    line (a taken port was an OSError traceback)."""


def _reason(e: OSError) -> str:
    """``Address already in use``, without asyncio's "error while attempting to bind on address" wrapper."""
    return os.strerror(e.errno) if e.errno else str(e)


class BrokerProcess:
    """One broker's parts, started and stopped in Kafka's order."""

    def __init__(self, props: BrokerProperties) -> None:
        self.props = props
        self.runtime = AsyncioRuntime()
        self.transport = TcpTransport(self.runtime, listener_name=props.listener.name,
                                      # Kafka's client id for the controller channel, AlterIsr and
                                      # controlled shutdown alike: the broker id
                                      client_id=str(props.broker_id),
                                      # ControllerChannelManager: the NetworkClient's request timeout is
                                      # request.timeout.ms; awaitReady waits controller.socket.timeout.ms
                                      request_timeout_ms=props.controller.request_timeout_ms,
                                      connect_timeout_ms=props.controller.controller_socket_timeout_ms,
                                      connection_setup_timeout_ms=props.connection_setup_timeout_ms,
                                      connection_setup_timeout_max_ms=props.connection_setup_timeout_max_ms,
                                      versions=props.control_request_versions)
        self.fetcher_transport = TcpTransport(self.runtime, listener_name=props.listener.name,
                                              client_id=f"broker-{props.broker_id}-fetcher-0",
                                              # ReplicaFetcherBlockingSend: its own NetworkClient (a fetch the
                                              # leader holds must not hold up controller requests behind it)
                                              request_timeout_ms=props.replication.request_timeout_ms,
                                              connect_timeout_ms=props.replication.replica_socket_timeout_ms,
                                              connection_setup_timeout_ms=props.connection_setup_timeout_ms,
                                              connection_setup_timeout_max_ms=props.connection_setup_timeout_max_ms,
                                              versions=props.control_request_versions)
        self.server: KafkaServer | None = None
        self.journal: LogOffsetsJournal | None = None
        self.apis = broker_apis(props.broker_id, lambda: self.server,
                                lambda: self.transport.local_handler(props.broker_id), props.listener.name)
        self.socket_server = SocketServer(props.listener.host or "0.0.0.0", props.listener.port, self.apis.handle,
                                          max_request_bytes=props.socket_request_max_bytes,
                                          connections_max_idle_ms=props.connections_max_idle_ms,
                                          close_on=(CloseConnection,), node_id=props.broker_id)
        self.backend = make_backend(props.zookeeper_connect, wall_clock_ms)
        self.metrics = BrokerMetrics(lambda: self.server) if props.metrics_port is not None else None
        self.teardown = False
        """Stopped as one step of stopping the whole cluster (SIGUSR1): see `shutdown`."""

    def broker_config(self) -> BrokerConfig:
        p = self.props
        return BrokerConfig(broker_id=p.broker_id, host=p.advertised.host, port=p.advertised.port, rack=p.rack,
                            controller=p.controller, session_timeout_ms=p.session_timeout_ms,
                            replication=p.replication, auto_create=p.auto_create,
                            extra={"log.dirs": ",".join(p.log_dirs)}, static_configs=p.given)

    async def startup(self) -> None:
        p = self.props
        log.info("[KafkaServer id=%d] starting", p.broker_id)
        host = p.listener.host or "0.0.0.0"
        try:
            await self.socket_server.start()
        except OSError as e:
            raise self._fatal(f"Socket server failed to bind to {host}:{p.listener.port}: {_reason(e)}.") from None
        logging.getLogger("kafka.network.Acceptor").info("Awaiting socket connections on %s:%d.", host,
                                                           self.socket_server.port)
        logging.getLogger("kafka.network.SocketServer").info(
            "[SocketServer brokerId=%d] Started data-plane acceptor and processor(s) for endpoint : ListenerName(%s)",
            p.broker_id, p.listener.name)
        sink = self.metrics.event_sink if self.metrics is not None else None
        try:  # the "disk": what the last run of this broker left of its logs (LogManager's lock and load)
            self.journal = LogOffsetsJournal(p.log_dirs[0])
        except LogDirLockedError as e:
            raise self._fatal(str(e)) from None
        except OSError as e:
            raise self._fatal(f"Failed to create or validate data directory {p.log_dirs[0]}: {_reason(e)}") from None
        self.server = KafkaServer(self.broker_config(), self.backend, self.transport,
                                  self.runtime, EventLog(f"broker-{p.broker_id}", wall_clock_ms, sink),
                                  recovered_logs=self.journal.recovered(), log_offsets_journal=self.journal,
                                  fetcher_transport=self.fetcher_transport)
        if self.metrics is not None and p.metrics_port is not None:
            try:
                self.metrics.serve(p.metrics_port)
            except OSError as e:
                raise self._fatal(f"Prometheus metrics failed to bind to 127.0.0.1:{p.metrics_port}: {_reason(e)} "
                                  "(metrics.prometheus.port).") from None
            log.info("[KafkaServer id=%d] Prometheus metrics on http://127.0.0.1:%d/metrics", p.broker_id,
                     p.metrics_port)
        # Kafka's KafkaServer.initZkClient line, before the wait for ZooKeeper (up to 15 s if it does not answer)
        log.info("[KafkaServer id=%d] Connecting to zookeeper on %s", p.broker_id, p.zookeeper_connect)
        await self.server.startup()
        log.info("[KafkaServer id=%d] started", p.broker_id)

    def _fatal(self, reason: str) -> FatalStartupError:
        log.error("[KafkaServer id=%d] Fatal error during KafkaServer startup. Prepare to shutdown",
                  self.props.broker_id)
        return FatalStartupError(reason)

    async def shutdown(self) -> None:
        """Kafka's orderly stop. Once `teardown` is set (SIGUSR1: the whole cluster is being stopped, maybe
        while a SIGTERM's controlled shutdown still retries), retries that cannot help are given up
        (`teardown_give_up`)."""
        log.info("[KafkaServer id=%d] shutting down", self.props.broker_id)
        if self.server is not None:
            futile = teardown_give_up(self.server)

            async def give_up(response: ControlledShutdownResponse | None) -> str | None:
                return await futile(response) if self.teardown else None

            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.shutdown(give_up, stop_processing_requests=self.socket_server.stop),
                                       30)
        await self.socket_server.stop()
        await self.transport.close()
        await self.fetcher_transport.close()
        with contextlib.suppress(Exception):
            await self.backend.close()
        if self.journal is not None:
            self.journal.close()
        log.info("[KafkaServer id=%d] shut down completed", self.props.broker_id)


def teardown_give_up(server: KafkaServer) -> GiveUp:
    """When a broker stopped as part of stopping the whole cluster may stop retrying its controlled shutdown: the
    controller answered, and no partition it still leads has another ISR replica on a registered broker (read from
    ZooKeeper), so no retry can move them: the others have stopped (Kafka's controlled-shutdown election picks an
    ISR replica on a live broker). The in-process cluster's ``quit`` applies the same rule from the controller's
    context (`LocalCluster._futile_retry`); a broker process reads ZooKeeper, the controller's record of the ISR
    and of live brokers. Anything else (no answer, an error, a ZooKeeper read that fails) retries, as Kafka does:
    a broker process was stopped with Kafka's retries, and a quit of ``cluster --processes`` then waited 10 s for
    each broker whose partners had stopped, and ended with "all the controlled shutdown attempts failed" lines that
    `zkcontroller analyze` rightly reads as failed controlled shutdowns."""
    broker_id = server.broker_id

    async def reason(response: ControlledShutdownResponse | None) -> str | None:
        zk = server.zk
        if zk is None or response is None or response.error is not Errors.NONE or not response.remaining_partitions:
            return None
        try:
            others = set(await zk.get_sorted_broker_list()) - {broker_id}
            if not others:
                return f"broker {broker_id} is the last one running, so its leadership has nowhere to go"
            for tp in response.remaining_partitions:
                state = await zk.get_topic_partition_state(tp)
                if state is None or others & set(state.leader_and_isr.isr):
                    return None  # deleted meanwhile, or a running ISR replica: a retry may move it
        except (ZkError, ZnodeDecodeError, OSError):
            return None
        names = ", ".join(map(str, sorted_partitions(response.remaining_partitions)))
        return f"broker {broker_id} still leads {names}, with no other ISR replica on a running broker"

    return reason


async def run_broker(props: BrokerProperties) -> None:
    """Run until SIGTERM/SIGINT (or SIGUSR1, a stop as part of the whole cluster's), then stop in order."""
    process = BrokerProcess(props)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_teardown() -> None:
        process.teardown = True
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, on_teardown)
    try:
        await process.startup()
        await stop.wait()
    finally:
        await process.shutdown()
