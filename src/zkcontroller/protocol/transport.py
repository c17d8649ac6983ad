"""The seam between the controller and brokers: how a request reaches a broker, and how a broker listens.

The controller's channel manager sends through a `BrokerTransport`; a broker exposes one `RequestHandler`
through a `RequestListener`. `runtime.in_process.InProcessTransport` is both for brokers in one process (the
embedded default); the simulator puts its network at the same seam, and the wire-protocol transport later.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from zkcontroller.model import Broker
from zkcontroller.protocol.control_requests import ControlRequest
from zkcontroller.protocol.inter_broker import AlterIsrRequest, ControlledShutdownRequest, FetchRequest


class BrokerUnreachableError(ConnectionError):
    """The transport could not deliver a request (no connection, broker stopped, timeout). Its messages are
    Kafka's ``IOException`` texts (`connection_failed`, `disconnected`), which the logs print as Kafka does."""

    java_class = "java.io.IOException"
    """What Kafka's log lines name in its place (`runtime.log_lines.qualified_name`)."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail
        """Why, beyond Kafka's text (``[Errno 111] Connect call failed``, ``no connection within 150 ms``): for
        tests and debugging, never in a Kafka-format line."""


class ConnectionFailedError(BrokerUnreachableError):
    """No connection could be made, so nothing was sent (`connection_failed`): Kafka's controller logs this as
    its RequestSendThread's ``brokerReady`` failing ("connection ... was unsuccessful"), not as a lost send."""


class ConnectTimeoutError(ConnectionFailedError):
    """No connection within the caller's own bound (``NetworkClientUtils.awaitReady`` returned false): Kafka's
    callers throw ``SocketTimeoutException``, where a connection that failed (refused, or the connection-setup
    timeout ending first) is ``awaitReady``'s ``IOException``."""

    java_class = "java.net.SocketTimeoutException"


class UnsupportedVersionError(BrokerUnreachableError):
    """A client that discovers the broker's versions found none it may send of this API (Kafka's
    ``NodeApiVersions.latestUsableVersion`` throwing): nothing was sent, and the caller's retry applies, as Kafka's
    ``DefaultAlterIsrManager`` treats the version mismatch (UNSUPPORTED_VERSION, retried after its back-off)."""

    java_class = "org.apache.kafka.common.errors.UnsupportedVersionException"


def node_string(broker: Broker, listener_name: str | None = None) -> str:
    """Kafka's ``Node.toString`` of the broker's endpoint on ``listener_name`` (else its first):
    ``host:port (id: 1 rack: null)``."""
    endpoint = broker.endpoint(listener_name) if listener_name else None
    if endpoint is None and broker.endpoints:
        endpoint = broker.endpoints[0]
    host, port = (endpoint.host or "", endpoint.port) if endpoint is not None else ("", -1)
    return f"{host}:{port} (id: {broker.id} rack: {broker.rack if broker.rack is not None else 'null'})"


def connection_failed(broker: Broker, listener_name: str | None = None, detail: str = "") -> ConnectionFailedError:
    """No connection to ``broker`` (refused, set-up timeout, reconnect back-off, broker stopped): the
    ``IOException`` of Kafka's ``NetworkClientUtils.awaitReady``, ``Connection to <node> failed.``"""
    return ConnectionFailedError(f"Connection to {node_string(broker, listener_name)} failed.", detail)


def disconnected(broker_id: int) -> BrokerUnreachableError:
    """A connection lost, or dropped on the request timeout, with a request in flight: the ``IOException`` of
    Kafka's ``NetworkClientUtils.sendAndReceive``, which names the node by its id."""
    return BrokerUnreachableError(f"Connection to {broker_id} was disconnected before the response was read")


CONTROLLER_CLIENT = "controller"
"""The controller's channel to a broker (``ControllerChannelManager``'s NetworkClient per broker)."""
FETCHER_CLIENT = "fetcher"
"""A replica fetcher's (``ReplicaFetcherBlockingSend``'s NetworkClient, one per fetcher thread)."""
ALTER_ISR_CLIENT = "alter-isr"
"""The AlterIsr channel's (``BrokerToControllerChannelManager``'s NetworkClient, one per broker process)."""
CONTROLLED_SHUTDOWN_CLIENT = "controlled-shutdown"
"""Controlled shutdown's (``KafkaServer.controlledShutdown`` makes a NetworkClient per run and closes it after)."""


def client_name(request: Any) -> str:
    """Which of a broker process's Kafka clients (NetworkClients) sends ``request``: each has its own connection,
    correlation ids and reconnect back-off. A request of another kind gets a client of its own."""
    if isinstance(request, ControlRequest):
        return CONTROLLER_CLIENT
    if isinstance(request, FetchRequest):
        return FETCHER_CLIENT
    if isinstance(request, AlterIsrRequest):
        return ALTER_ISR_CLIENT
    if isinstance(request, ControlledShutdownRequest):
        return CONTROLLED_SHUTDOWN_CLIENT
    return type(request).__name__


class CorrelationIds:
    """The correlation ids of one Kafka client (one ``NetworkClient``): from 0, one per request sent. Kafka gives
    every controller-to-broker channel (a ``RequestSendThread`` per broker, made anew when the broker is added,
    and by each new controller), every replica fetcher thread (made anew when a fetcher is removed and added
    again), the AlterIsr channel and each controlled shutdown its own client, so each counts on its own; one
    counter per process made a controller's ids read like a fetcher's (6205 after half an hour).
    `CorrelationClients` finds the client a request belongs to."""

    __slots__ = ("_next",)

    def __init__(self) -> None:
        self._next = 0

    def next(self) -> int:
        value = self._next
        self._next = (value + 1) & 0x7FFFFFFF  # a Java int's non-negative range
        return value


class CorrelationClients:
    """The `CorrelationIds` of the Kafka client that would send ``request`` to ``broker_id``, for a transport that
    carries every client of a process. A control request is the controller channel's: the channel is new when
    the sending controller, its epoch or the destination broker's epoch (its registration, which re-adds it to
    the channel manager) changes, and then counts from 0 again. Other requests have one client per `client_name`
    and destination, until `close` ends it (a fetcher shut down, a controlled shutdown over)."""

    def __init__(self) -> None:
        self._clients: dict[tuple[str, int], tuple[tuple[int, ...], CorrelationIds]] = {}

    def next_id(self, broker_id: int, request: Any) -> int:
        key = (client_name(request), broker_id)
        generation: tuple[int, ...] = ()
        if isinstance(request, ControlRequest):
            generation = (request.controller_id, request.controller_epoch, request.broker_epoch)
        current = self._clients.get(key)
        if current is None or current[0] != generation:
            current = (generation, CorrelationIds())
            self._clients[key] = current
        return current[1].next()

    def close(self, broker_id: int, client: str) -> None:
        """The client to ``broker_id`` is closed: the next one made counts from 0."""
        self._clients.pop((client, broker_id), None)


RequestHandler = Callable[[Any], Any | Awaitable[Any]]
"""A broker's entry point: one request in, its response out (directly, or as an awaitable)."""


class BrokerTransport(Protocol):
    async def send(self, broker: Broker, request: Any) -> Any:
        """Deliver one request and return the broker's response; raise `BrokerUnreachableError` if it can't."""
        ...


class RequestListener(Protocol):
    def register(self, broker_id: int, handler: RequestHandler) -> None:
        """Start taking requests for ``broker_id``."""
        ...

    def unregister(self, broker_id: int) -> None:
        """Stop taking requests: from now on senders find the broker unreachable."""
        ...


class BrokerNetwork(BrokerTransport, RequestListener, Protocol):
    """Both sides at once, as one broker process uses its network: it listens for requests to itself and its
    controller candidate sends to the other brokers (in-process, simulated or TCP)."""
