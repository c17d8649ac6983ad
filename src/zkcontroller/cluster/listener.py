"""A broker's PLAINTEXT listener: the broker process's `SocketServer` and `KafkaApis`, for any assembly.

`broker_apis` is the one place that wires a `KafkaServer` to `KafkaApis` (the metadata cache, the cluster id,
CreateTopics, Metadata's topic auto-creation, DeleteTopics, CreatePartitions, ElectLeaders, the reassignment
APIs, InitProducerId's producer id blocks, DescribeConfigs and (Incremental)AlterConfigs); `BrokerListener` binds
it on a port for an in-process broker, so ``zkcontroller cluster`` answers kcat and kafka-python as broker
processes do. It binds before the broker registers, so the broker registers the port it really listens on, and
the host clients should use (`advertised_host`).
"""

from __future__ import annotations

import errno
import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass

from zkcontroller.broker.kafka_apis import AdminHandlers, CloseConnection, KafkaApis
from zkcontroller.broker.metadata_cache import MetadataCache
from zkcontroller.broker.producer_ids import ProducerIdManager
from zkcontroller.cluster.admin_apis.alter_configs import alter_configs_handler
from zkcontroller.cluster.admin_apis.client_quotas import alter_client_quotas_handler, describe_client_quotas_handler
from zkcontroller.cluster.admin_apis.create_partitions import create_partitions_handler
from zkcontroller.cluster.admin_apis.create_topics import MetadataTopicCreator, create_topics_handler
from zkcontroller.cluster.admin_apis.delete_topics import delete_topics_handler
from zkcontroller.cluster.admin_apis.describe_configs import describe_configs_handler
from zkcontroller.cluster.admin_apis.elect_leaders import elect_leaders_handler
from zkcontroller.cluster.admin_apis.reassignments import alter_reassignments_handler, list_reassignments_handler
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.protocol.transport import RequestHandler
from zkcontroller.runtime.socket_server import SocketServer

log = logging.getLogger("kafka.network.SocketServer")

DEFAULT_PORT_BASE = 9092
"""Broker N listens on 9092 + N, as the in-process brokers' registrations always said."""
DEFAULT_LISTEN_HOST = "127.0.0.1"
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
"""Hosts that mean "every interface": no client can connect to them."""


def advertised_host(listen_host: str) -> str:
    """The host a broker listening on ``listen_host`` registers in ``/brokers/ids/<id>``, for clients to connect
    to. Kafka refuses the meta-address 0.0.0.0 as an advertised listener, and a listener with no host
    (``PLAINTEXT://:9092``, every interface) advertises the machine's canonical host name: so does a wildcard
    here. Any other host is advertised as given."""
    return socket.getfqdn() if listen_host in WILDCARD_HOSTS else listen_host


def check_listen_host(host: str) -> None:
    """Raise ValueError, in a sentence, if no socket can listen on ``host`` (not an address of this machine, or
    a name that does not resolve): the brokers would otherwise fail at start-up with a traceback."""
    try:
        infos = socket.getaddrinfo(host or None, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise ValueError(f"cannot resolve {host!r}: {e.strerror}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        try:
            probe.bind(address)
        except OSError as e:
            raise ValueError(f"cannot listen on {host}: {e.strerror}") from None


def broker_apis(broker_id: int, server: Callable[[], KafkaServer | None],
                control_handler: Callable[[], RequestHandler | None], listener_name: str = "PLAINTEXT") -> KafkaApis:
    """One broker's request dispatch; ``server`` is looked up per request (it exists once the broker starts)."""
    def metadata_cache() -> MetadataCache | None:
        current = server()
        return current.control_plane.metadata_cache if current is not None and current.control_plane else None

    def cluster_id() -> str | None:
        current = server()
        return current.cluster_id if current is not None else None

    return KafkaApis(broker_id, control_handler=control_handler, metadata_cache=metadata_cache,
                     cluster_id=cluster_id, listener_name=listener_name,
                     create_topics=create_topics_handler(server), auto_create_topics=MetadataTopicCreator(server),
                     delete_topics=delete_topics_handler(server),
                     admin=AdminHandlers(create_partitions=create_partitions_handler(server),
                                         elect_leaders=elect_leaders_handler(server),
                                         alter_reassignments=alter_reassignments_handler(server),
                                         list_reassignments=list_reassignments_handler(server),
                                         describe_client_quotas=describe_client_quotas_handler(server),
                                         alter_client_quotas=alter_client_quotas_handler(server)),
                     replica_manager=lambda: current.replica_manager if (current := server()) is not None else None,
                     producer_ids=ProducerIdManager(broker_id, lambda: current.zk if (current := server()) else None),
                     describe_configs=describe_configs_handler(server), alter_configs=alter_configs_handler(server),
                     produce_quotas=lambda: current.replica_manager.topic_configs.produce_quotas
                     if (current := server()) is not None and current.replica_manager is not None else None,
                     controller_mutation_quotas=lambda: current.replica_manager.topic_configs.controller_mutation_quotas
                     if (current := server()) is not None and current.replica_manager is not None else None,
                     request_quotas=lambda: current.replica_manager.topic_configs.request_quotas
                     if (current := server()) is not None and current.replica_manager is not None else None)


@dataclass(frozen=True)
class ListenerPorts:
    """Where in-process brokers listen: ``base`` + broker id, or a free ephemeral port when that one is taken
    (or for every broker when ``base`` is None), on ``host`` (0.0.0.0: every interface, advertising this
    machine's host name). A restarted broker takes its previous port again if it can."""

    base: int | None = DEFAULT_PORT_BASE
    host: str = DEFAULT_LISTEN_HOST


class BrokerListener:
    """An in-process broker's listener. Its control requests go straight to the broker's own handler (the
    control plane fences them by epoch, as over the in-process transport)."""

    def __init__(self, broker_id: int, host: str) -> None:
        self.broker_id = broker_id
        self.host = host
        """Where it binds."""
        self.advertised_host = advertised_host(host)
        """What the broker registers, and clients connect to."""
        self.server: KafkaServer | None = None
        """The broker this listener answers for; set before its start-up, replaced on a restart."""
        self.apis = broker_apis(broker_id, lambda: self.server, self._control_handler)
        self.socket_server: SocketServer | None = None
        self.taken_port: int | None = None
        """The port asked for when it could not be bound (taken, or another error) and an ephemeral one was bound
        instead."""
        self.fallback_reason: str | None = None
        """Why `taken_port` could not be bound, for the start-up lines (`fallback_note`)."""
        self.last_port: int | None = None

    def _control_handler(self) -> RequestHandler | None:
        server = self.server
        return server.handle_request if server is not None and server.running else None

    @property
    def port(self) -> int | None:
        """The bound port while listening, else None."""
        return self.socket_server.port if self.socket_server is not None else None

    @property
    def address(self) -> str | None:
        """Where clients connect (the advertised host) while listening, else None."""
        return _host_port(self.advertised_host, self.port) if self.socket_server is not None else None

    @property
    def bind_address(self) -> str | None:
        """Where it listens while listening (differs from `address` on a wildcard host), else None."""
        return _host_port(self.host, self.port) if self.socket_server is not None else None

    async def bind(self, wanted: int) -> int:
        """Listen on ``wanted`` (0: any free port); if it is taken (or out of range), on a free one."""
        self.taken_port = self.fallback_reason = None
        try:
            await self._start(wanted)
        except (OSError, OverflowError) as e:
            if wanted == 0:
                raise
            log.warning("[SocketServer brokerId=%d] cannot listen on %s:%d (%s); using a free port instead",
                        self.broker_id, self.host, wanted, e)
            self.taken_port, self.fallback_reason = wanted, _bind_failure(e)
            await self._start(0)
        port = self.port
        assert port is not None
        self.last_port = port
        return port

    @property
    def fallback_note(self) -> str | None:
        """Why it listens on another port than asked (None if it does not): ``9093 was taken`` only when another
        socket holds that port; any other bind failure (a port out of range, permission denied) was reported as
        taken too, blaming a process that did not exist."""
        if self.taken_port is None:
            return None
        if self.fallback_reason is None:
            return f"{self.taken_port} was taken"
        return f"cannot listen on {self.taken_port}: {self.fallback_reason}"

    async def _start(self, port: int) -> None:
        socket_server = SocketServer(self.host, port, self.apis.handle, close_on=(CloseConnection,),
                                     node_id=self.broker_id)
        await socket_server.start()
        self.socket_server = socket_server

    async def close(self) -> None:
        """Stop listening and drop every client connection (a stopped or killed broker's sockets go)."""
        if self.socket_server is not None:
            socket_server, self.socket_server = self.socket_server, None
            await socket_server.stop()


def _bind_failure(error: OSError | OverflowError) -> str | None:
    """The reason a bind failed, in words; None for an address in use (the port was taken)."""
    if isinstance(error, OverflowError):  # socket's own wording: "bind(): port must be 0-65535."
        return "not a port (0 to 65535)"
    if error.errno == errno.EADDRINUSE:
        return None
    # asyncio rewords the error ("error while attempting to bind on address ...: [errno 13] ..."): the errno's
    # own words say it plainly
    return os.strerror(error.errno) if error.errno else str(error)


def _host_port(host: str, port: int | None) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
