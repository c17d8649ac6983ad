"""TcpTransport: the controller's `BrokerTransport` over Kafka's wire protocol (the network half of Kafka's
``ControllerChannelManager``: a ``NetworkClient`` per broker).

It carries the controller's requests to brokers, a replica fetcher's Fetch, and a broker's ControlledShutdown and
AlterIsr to the controller. Each of these Kafka clients (`protocol.transport.client_name`: a NetworkClient each in
Kafka) has its own connection per broker, opened on first use on the broker's inter-broker listener, and counts its
correlation ids from 0: the controller channel's (a new one per controller epoch and broker epoch, as Kafka's
RequestSendThread per added broker), the fetcher's (a new one when the fetcher is shut down: `close_client`), the
AlterIsr channel's and controlled shutdown's (a new one per run). A failed connect, and a connection lost (the
broker hung up, a request timed out), starts the client's reconnect back-off (`RECONNECT_BACKOFF`, Kafka's values per
client: none for the controller channel, the fetcher and controlled shutdown, whose callers pace their own retries,
50 ms for AlterIsr, ``reconnect.backoff.ms`` 50 doubling per failed attempt to ``reconnect.backoff.max.ms`` 1000 with
jitter for any other), during which sends fail at once. A client that discovers
versions (`DISCOVERS_VERSIONS`: AlterIsr's, as in Kafka) sends ApiVersions first on each new connection, then each
request at the highest version both its bound (``versions``, set by the IBP) and the broker allow; the others send at
once, at their bound. A failed handshake (an error answer, the connection closed, no answer in time) closes the
connection and starts the back-off as a failed connect does. Each request waits at most ``request_timeout_ms`` for its
answer; a timeout closes the connection (Kafka disconnects on it) and every request in flight on it fails. Connecting
waits at most ``connect_timeout_ms`` (Kafka's ``controller.socket.timeout.ms``, RequestSendThread's ``awaitReady``
bound) and no longer than the NetworkClient's connection-setup timeout (``socket.connection.setup.timeout.ms``,
doubling per failed attempt up to ``socket.connection.setup.timeout.max.ms``, ±20% jitter), whichever ends first.
Every one of these bounds is on the runtime's time (`runtime.runtime_timeout`), as every other wait of a broker: the
loop's on `AsyncioRuntime`, its own on another (a test's manual clock). The simulator does not use this transport: its
network (`sim.network`) times requests out on virtual time itself. At most ``max_in_flight`` requests are outstanding
per connection (the controller sends one at a time, as Kafka's does with ``max.in.flight.requests.per.connection=1``).
`close_broker` drops a broker's connection when it leaves the cluster; a broker that re-registers at a new address
is reconnected.

It is also the `RequestListener` of the broker in this process: `register` keeps the control plane's
handler for the protocol server to call (`local_handler`), so `KafkaServer` can take it in place of the
in-process transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from dataclasses import dataclass, field, replace
from typing import Any, cast

from zkcontroller.model import Broker
from zkcontroller.protocol.control_requests import (
    ApiKey,
    ControlRequest,
    ControlResponse,
    Errors,
    StopReplicaRequest,
)
from zkcontroller.protocol.error_names import error_name
from zkcontroller.protocol.transport import (
    ALTER_ISR_CLIENT,
    CONTROLLED_SHUTDOWN_CLIENT,
    CONTROLLER_CLIENT,
    FETCHER_CLIENT,
    BrokerUnreachableError,
    ConnectTimeoutError,
    CorrelationIds,
    RequestHandler,
    UnsupportedVersionError,
    client_name,
    connection_failed,
    disconnected,
)
from zkcontroller.protocol.wire import control_codec
from zkcontroller.protocol.wire.codec import WireFormatError
from zkcontroller.protocol.wire.control_codec import WireRequest, WireResponse
from zkcontroller.protocol.wire.frames import (
    API_VERSIONS_KEY,
    SIZE,
    RequestHeader,
    decode_response_header,
    encode_request_header,
)
from zkcontroller.protocol.wire.messages import IBP_2_8_VERSIONS, INTER_BROKER_APIS
from zkcontroller.runtime.runtime import Runtime, runtime_timeout

log = logging.getLogger("kafka.controller.RequestSendThread")
client_log = logging.getLogger("org.apache.kafka.clients.NetworkClient")

RECONNECT_BACKOFF_MS = 50
RECONNECT_BACKOFF_MAX_MS = 1000
RECONNECT_BACKOFF_JITTER = 0.2
RECONNECT_BACKOFF: dict[str, tuple[int, int]] = {
    CONTROLLER_CLIENT: (0, 0),  # ControllerChannelManager: RequestSendThread pauses 100 ms itself
    FETCHER_CLIENT: (0, 0),  # ReplicaFetcherBlockingSend: the fetcher waits replica.fetch.backoff.ms itself
    CONTROLLED_SHUTDOWN_CLIENT: (0, 0),  # KafkaServer.controlledShutdown: controlled.shutdown.retry.backoff.ms
    ALTER_ISR_CLIENT: (50, 50),  # BrokerToControllerChannelManager
}
"""Kafka 2.8's (``reconnect.backoff.ms``, ``reconnect.backoff.max.ms``) of each inter-broker NetworkClient; a
client not named here gets the client defaults (`RECONNECT_BACKOFF_MS`, `RECONNECT_BACKOFF_MAX_MS`)."""
DISCOVERS_VERSIONS = frozenset({ALTER_ISR_CLIENT})
"""The inter-broker NetworkClients Kafka 2.8.2 makes with ``discoverBrokerVersions`` true: the AlterIsr channel's
(BrokerToControllerChannelManager) alone. ControllerChannelManager, ReplicaFetcherBlockingSend and
``KafkaServer.controlledShutdown`` pass false: they send their first request at once, at the IBP's version."""
API_VERSIONS_VERSION = 3
"""The ApiVersions version a 2.8 client asks first (``ApiVersionsRequest.Builder()``: the latest)."""
CLIENT_SOFTWARE = ("apache-kafka-java", "2.8.2")
"""What a 2.8.2 broker's NetworkClient names itself in ApiVersions v3 (``ApiVersionsRequest.Builder``'s
``DEFAULT_CLIENT_SOFTWARE_NAME`` and ``AppInfoParser.getVersion()``)."""
MAX_RESPONSE_BYTES = 100 * 1024 * 1024
CONNECTION_SETUP_TIMEOUT_JITTER = 0.2
"""``ClusterConnectionStates``' jitter on the connection-setup timeout."""


@dataclass
class _Connection:
    address: tuple[str, int]
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    pending: dict[int, tuple[WireRequest, int, asyncio.Future[WireResponse]]] = field(default_factory=dict)
    reader_task: asyncio.Task[None] | None = None
    api_versions: dict[int, tuple[int, int]] | None = None
    """The broker's (min, max) version per API key, when the client discovered them on this connection."""


@dataclass
class _BrokerState:
    connection: _Connection | None = None
    in_flight: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(1))
    connect_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    failed_attempts: int = 0
    """Kafka's ``failedAttempts``: disconnects (a failed connect, or a connection lost) since the client was last
    connected; the reconnect back-off is ``backoff(failed_attempts)`` before the count goes up."""
    failed_connect_attempts: int = 0
    """Kafka's ``failedConnectAttempts``: connects that failed in a row; the setup timeout grows with it."""
    next_attempt_ms: int = 0
    correlation: CorrelationIds = field(default_factory=CorrelationIds)
    """This client's correlation ids, from 0: unique on its connection, as Wireshark's Kafka dissector (and
    Kafka's NetworkClient) pair answers with requests by them."""
    generation: tuple[int, ...] = ()
    """For the controller's channel: the sending controller, its epoch and the broker's epoch it was made for."""


class TcpTransport:
    def __init__(self, runtime: Runtime, *, listener_name: str = "PLAINTEXT", client_id: str = "controller",
                 request_timeout_ms: int = 30000, connect_timeout_ms: int = 30000,
                 connection_setup_timeout_ms: int = 10000, connection_setup_timeout_max_ms: int = 127000,
                 max_in_flight: int = 1, versions: dict[int, int] | None = None) -> None:
        """``request_timeout_ms`` is ``request.timeout.ms`` and ``connect_timeout_ms`` is
        ``controller.socket.timeout.ms``, as ControllerChannelManager gives them to its NetworkClient and
        ``awaitReady``; the setup timeouts are the NetworkClient's own (Kafka's defaults)."""
        self._runtime = runtime
        self.listener_name = listener_name
        self.client_id = client_id
        self.request_timeout_ms = request_timeout_ms
        self.connect_timeout_ms = connect_timeout_ms
        self.connection_setup_timeout_ms = connection_setup_timeout_ms
        self.connection_setup_timeout_max_ms = connection_setup_timeout_max_ms
        self._open_connection = asyncio.open_connection
        """How a connection is opened (a test stands in one that never completes)."""
        self.max_in_flight = max_in_flight
        self.versions = dict(versions or IBP_2_8_VERSIONS)
        self._brokers: dict[tuple[int, str], _BrokerState] = {}
        """Per destination broker and `client_name`, that client's connection, correlation ids and back-off."""
        self._handlers: dict[int, RequestHandler] = {}
        self.sent = 0

    # ------------------------------------------------------------------ RequestListener (the local broker)

    def register(self, broker_id: int, handler: RequestHandler) -> None:
        self._handlers[broker_id] = handler

    def unregister(self, broker_id: int) -> None:
        self._handlers.pop(broker_id, None)

    def local_handler(self, broker_id: int) -> RequestHandler | None:
        return self._handlers.get(broker_id)

    # ------------------------------------------------------------------ BrokerTransport

    def _address(self, broker: Broker) -> tuple[str, int]:
        endpoint = broker.endpoint(self.listener_name)
        if endpoint is None:
            raise BrokerUnreachableError(f"broker {broker.id} has no {self.listener_name} endpoint")
        return endpoint.host or "localhost", endpoint.port

    async def send(self, broker: Broker, request: Any) -> WireResponse:
        if isinstance(request, StopReplicaRequest) and self.versions[request.api_key] < 3:
            split = _split_by_delete_flag(request)
            if len(split) > 1:  # before v3 one delete flag covers the request: Kafka's batch sends two
                # a StopReplica's answer is a ControlResponse (`_send` types every answer as the union)
                responses = [cast(ControlResponse, await self._send(broker, r)) for r in split]
                bad = next((r.error for r in responses if r.error is not Errors.NONE), Errors.NONE)
                return ControlResponse(request.api_key, bad, tuple(e for r in responses for e in r.partition_errors))
        return await self._send(broker, request)

    async def connect(self, broker: Broker, timeout_ms: int | None = None, *, client: str) -> None:
        """Open ``client``'s connection to ``broker`` now, if there is none (Kafka's
        ``NetworkClientUtils.awaitReady``): a caller that bounds the connection and the answer apart (controlled
        shutdown, a replica fetcher) connects first. ``timeout_ms`` is the caller's ``awaitReady`` bound
        (``connect_timeout_ms`` if None): when it ends before the connection-setup timeout, `ConnectTimeoutError`
        (the caller's ``SocketTimeoutException``); a refused connection, a reconnect back-off or the setup
        timeout ending first is a plain `BrokerUnreachableError` (``awaitReady``'s ``IOException``)."""
        bound = self.connect_timeout_ms if timeout_ms is None else timeout_ms
        try:  # the bound covers waiting for another caller's connect too
            async with runtime_timeout(self._runtime, bound):
                await self._connection(broker, client, self._state(broker, client), bound)
        except TimeoutError:
            raise ConnectTimeoutError(f"Failed to connect within {bound} ms") from None

    def _state(self, broker: Broker, client: str) -> _BrokerState:
        return self._brokers.setdefault((broker.id, client),
                                        _BrokerState(in_flight=asyncio.Semaphore(self.max_in_flight)))

    async def _send(self, broker: Broker, request: Any) -> WireResponse:
        client = client_name(request)
        state = self._state(broker, client)
        async with state.in_flight:
            if isinstance(request, ControlRequest):
                generation = (request.controller_id, request.controller_epoch, request.broker_epoch)
                if generation != state.generation:  # a new channel (tenure, broker re-added): a new NetworkClient
                    if state.connection is not None:
                        self._disconnect(broker.id, client, state.connection, "a new controller channel",
                                         back_off=False)
                    state.generation, state.correlation = generation, CorrelationIds()
            connection = await self._connection(broker, client, state)
            correlation_id = state.correlation.next()  # Kafka's newClientRequest takes it, even for a mismatch
            version = self._version(request.api_key, connection)
            header = encode_request_header(RequestHeader(int(request.api_key), version, correlation_id,
                                                         self.client_id))
            body = control_codec.encode_request(request, version)
            future: asyncio.Future[WireResponse] = asyncio.get_running_loop().create_future()
            connection.pending[correlation_id] = (request, version, future)
            try:
                connection.writer.write(SIZE.pack(len(header) + len(body)) + header + body)
                await connection.writer.drain()
                self.sent += 1
                # a timeout block, not wait_for: on 3.11 wait_for can swallow the channel manager's cancel when
                # the answer lands at that moment (and it starts a task per request).
                async with runtime_timeout(self._runtime, self.request_timeout_ms):
                    return await asyncio.shield(future)
            except TimeoutError:
                connection.pending.pop(correlation_id, None)
                self._disconnect(broker.id, client, connection,
                                 f"request timed out after {self.request_timeout_ms} ms")
                raise disconnected(broker.id) from None
            except asyncio.CancelledError as e:
                # The channel manager dropped this broker's queue (it left the cluster), or another client's
                # caller gave up (its own timeout, `broker.timeouts.within`, or it stopped): drop the connection
                # too, as Kafka's removeBroker closes the NetworkClient and its request timeout disconnects,
                # rather than leave an answer nobody awaits. The back-off this starts is the controller channel's,
                # none; another client's, as Kafka's disconnect on a request timeout.
                connection.pending.pop(correlation_id, None)
                self._disconnect(broker.id, client, connection, cancel_reason(client, e))
                raise
            except (ConnectionError, OSError) as e:
                connection.pending.pop(correlation_id, None)
                self._disconnect(broker.id, client, connection, f"connection lost while sending: {e}")
                raise disconnected(broker.id) from e
            finally:
                connection.pending.pop(correlation_id, None)

    async def _connection(self, broker: Broker, client: str, state: _BrokerState,
                          bound_ms: int | None = None) -> _Connection:
        address = self._address(broker)
        async with state.connect_lock:
            current = state.connection
            if current is not None and current.address != address:
                self._disconnect(broker.id, client, current,  # a new host: a new state in Kafka, no back-off
                                 f"broker {broker.id} moved to {address[0]}:{address[1]}", back_off=False)
                current = None
            if current is not None:
                return current
            now = self._runtime.now_ms()
            if now < state.next_attempt_ms:
                raise connection_failed(broker, self.listener_name,  # awaitReady: connectionFailed in back-off
                                        f"reconnect back-off for {state.next_attempt_ms - now} ms more")
            setup_ms = self._setup_timeout_ms(state.failed_connect_attempts)
            wait_ms = min(self.connect_timeout_ms if bound_ms is None else bound_ms, setup_ms)
            # A caller's bound shorter than the setup timeout is the caller's to enforce (`connect`): the attempt
            # is not a failed one then, only given up.
            caller_bound = bound_ms is not None and bound_ms <= setup_ms
            try:
                async with runtime_timeout(self._runtime, None if caller_bound else wait_ms):
                    reader, writer = await self._open_connection(*address)
            except (OSError, TimeoutError) as e:
                state.failed_connect_attempts += 1
                self._back_off(client, state)
                reason = f"no connection within {wait_ms} ms" if isinstance(e, TimeoutError) else str(e)
                raise connection_failed(broker, self.listener_name, reason) from e
            state.failed_attempts = state.failed_connect_attempts = 0  # ready / checkingApiVersions
            connection = _Connection(address, reader, writer)
            if client in DISCOVERS_VERSIONS:
                try:
                    connection.api_versions = await self._discover_versions(broker, state, connection)
                except BrokerUnreachableError:
                    # Kafka's disconnect from CHECKING_API_VERSIONS: the reconnect back-off starts, as after a
                    # failed connect, from the attempt count the connection reset (``backoff(0)``); the setup
                    # timeout stays reset. Without it the next send reconnected and asked again at once.
                    writer.close()
                    self._back_off(client, state)
                    raise
                except BaseException:
                    writer.close()
                    raise
            connection.reader_task = self._runtime.spawn(self._read_responses(broker.id, client, connection),
                                                         f"controller-to-broker-{broker.id}-reader")
            state.connection = connection
            return connection

    async def _discover_versions(self, broker: Broker, state: _BrokerState,
                                 connection: _Connection) -> dict[int, tuple[int, int]]:
        """Kafka's NetworkClient with ``discoverBrokerVersions`` on a new connection: ApiVersions (v3) before any
        other request, with the client's next correlation id, answered within ``request_timeout_ms``. An answer of
        UNSUPPORTED_VERSION is asked again at the highest ApiVersions version the broker lists (v0 if it lists
        none); any other error, or no readable answer, closes the connection (`BrokerUnreachableError`)."""
        from zkcontroller.protocol.wire import client_apis  # kio: loaded only by a process that discovers versions

        version = API_VERSIONS_VERSION
        try:
            async with runtime_timeout(self._runtime, self.request_timeout_ms):
                while True:
                    correlation_id = state.correlation.next()
                    header = encode_request_header(RequestHeader(API_VERSIONS_KEY, version, correlation_id,
                                                                 self.client_id))
                    body = client_apis.api_versions_request(version, *CLIENT_SOFTWARE)
                    connection.writer.write(SIZE.pack(len(header) + len(body)) + header + body)
                    await connection.writer.drain()
                    (size,) = SIZE.unpack(await connection.reader.readexactly(4))
                    if not 4 <= size <= MAX_RESPONSE_BYTES:
                        raise WireFormatError(f"response size {size} out of range")
                    payload = await connection.reader.readexactly(size)
                    answered, offset = decode_response_header(payload, API_VERSIONS_KEY, version)
                    if answered != correlation_id:
                        raise WireFormatError(f"correlation id {answered}, expected {correlation_id}")
                    error, versions = client_apis.api_versions_answer(version, payload, offset)
                    if error == Errors.NONE:
                        return versions
                    if version == 0 or error != client_apis.UNSUPPORTED_VERSION:
                        # the AlterIsr channel's LogContext; its client id is the broker id
                        client_log.warning("[broker-%s-to-controller] Received error %s from node %d when making an "
                                           "ApiVersionsRequest with correlation id %d. Disconnecting.",
                                           self.client_id, error_name(error), broker.id, correlation_id)
                        raise disconnected(broker.id)
                    version = min(versions.get(API_VERSIONS_KEY, (0, 0))[1], API_VERSIONS_VERSION)
        except TimeoutError:
            raise disconnected(broker.id) from None
        except (asyncio.IncompleteReadError, WireFormatError, ConnectionError, OSError) as e:
            if isinstance(e, BrokerUnreachableError):
                raise
            raise disconnected(broker.id) from e

    def _version(self, api_key: int, connection: _Connection) -> int:
        """The version to send: the client's bound (``versions``, set by the IBP), or, where the client discovered
        the broker's versions, the highest both allow (Kafka's ``NodeApiVersions.latestUsableVersion``);
        `UnsupportedVersionError` when they share none."""
        ours = self.versions[api_key]
        theirs = connection.api_versions
        if theirs is None:
            return ours
        name = ApiKey(api_key).name
        if api_key not in theirs:
            raise UnsupportedVersionError(f"The broker does not support {name}")
        oldest = INTER_BROKER_APIS[api_key].min_version
        low, high = theirs[api_key]
        if high < oldest or low > ours:
            raise UnsupportedVersionError(f"The broker does not support {name} with version in range [{oldest},"
                                          f"{ours}]. The supported range is [{low},{high}].")
        return min(ours, high)

    def _back_off(self, client: str, state: _BrokerState) -> None:
        """``ClusterConnectionStates.disconnected``'s ``updateReconnectBackoff``: no new connection for the
        client's back-off from now, and one more failed attempt. Kafka does it on every disconnect of a client
        that goes on (a failed connect, a failed handshake, a connection lost: the peer hung up, a request timed
        out), not on a close (``remove``)."""
        state.next_attempt_ms = self._runtime.now_ms() + self._reconnect_backoff_ms(client, state.failed_attempts)
        state.failed_attempts += 1

    def _reconnect_backoff_ms(self, client: str, failed_attempts: int) -> int:
        """``ClusterConnectionStates``' ``ExponentialBackoff(reconnect.backoff.ms, 2, reconnect.backoff.max.ms,
        0.2).backoff(failed_attempts)`` for ``client``: the initial value without jitter when the maximum is not
        above it (0 for the controller channel, so each of its retries tries to connect)."""
        initial, maximum = RECONNECT_BACKOFF.get(client, (RECONNECT_BACKOFF_MS, RECONNECT_BACKOFF_MAX_MS))
        if maximum <= initial:
            return initial
        exp = min(failed_attempts, math.log2(maximum / max(initial, 1)))
        jitter = 1 - RECONNECT_BACKOFF_JITTER + 2 * RECONNECT_BACKOFF_JITTER * self._runtime.rng.random()
        return int(jitter * initial * 2 ** exp)

    def _setup_timeout_ms(self, failed_attempts: int) -> int:
        """Kafka's ``ExponentialBackoff(setup, 2, setup.max, 0.2).backoff(failedConnectAttempts)``."""
        initial, maximum = self.connection_setup_timeout_ms, self.connection_setup_timeout_max_ms
        if maximum <= initial:  # expMax 0: the initial value, without jitter
            return initial
        exp = min(failed_attempts, math.log2(maximum / max(initial, 1)))
        jitter = 1 - CONNECTION_SETUP_TIMEOUT_JITTER + 2 * CONNECTION_SETUP_TIMEOUT_JITTER * self._runtime.rng.random()
        return int(jitter * initial * 2 ** exp)

    async def _read_responses(self, broker_id: int, client: str, connection: _Connection) -> None:
        reason = f"connection closed by the {peer_role(client)}"
        try:
            while True:
                (size,) = SIZE.unpack(await connection.reader.readexactly(4))
                if not 4 <= size <= MAX_RESPONSE_BYTES:
                    reason = f"response size {size} out of range"
                    return
                payload = await connection.reader.readexactly(size)
                correlation_id = SIZE.unpack_from(payload, 0)[0]
                entry = connection.pending.get(correlation_id)
                if entry is None:
                    reason = f"response with unknown correlation id {correlation_id}"
                    return
                request, version, future = entry
                try:
                    _, offset = decode_response_header(payload, int(request.api_key), version)
                    response = control_codec.decode_response(request, version, payload, offset)
                except WireFormatError as e:
                    reason = f"malformed response: {e}"
                    return
                if not future.done():
                    future.set_result(response)
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            self._disconnect(broker_id, client, connection, reason)

    def _disconnect(self, broker_id: int, client: str, connection: _Connection, reason: str, *,
                    back_off: bool = True) -> None:
        """Close ``connection`` and fail what is in flight on it. When it is the client's current one and
        ``back_off``, the reconnect back-off starts, as Kafka's NetworkClient does for an established connection
        it loses (``processDisconnection``): without it a client whose peer hung up reconnected at once."""
        state = self._brokers.get((broker_id, client))
        if state is not None and state.connection is connection:
            state.connection = None
            if back_off:
                self._back_off(client, state)
            log.info("Disconnected from %s %d at %s:%d: %s", peer_role(client), broker_id, *connection.address,
                     reason)
        for _, _, future in connection.pending.values():
            if not future.done():
                future.set_exception(disconnected(broker_id))
        connection.pending.clear()
        connection.writer.close()
        task = connection.reader_task
        if task is not None and task is not asyncio.current_task() and not task.done():
            task.cancel()

    def close_client(self, broker_id: int, client: str, reason: str = "client closed") -> None:
        """Close ``client``'s connection to ``broker_id`` and forget its state (Kafka's ``NetworkClient.close``):
        the next request of that client opens a new connection and counts its correlation ids from 0 (a replica
        fetcher shut down and made again, a controlled shutdown run after another)."""
        state = self._brokers.pop((broker_id, client), None)
        if state is not None and state.connection is not None:
            self._disconnect(broker_id, client, state.connection, reason, back_off=False)

    def close_broker(self, broker_id: int) -> None:
        """The broker left: drop its connections and whatever is in flight on them."""
        for _, client in [key for key in self._brokers if key[0] == broker_id]:
            self.close_client(broker_id, client, "broker removed")

    async def close(self) -> None:
        for broker_id in {broker_id for broker_id, _ in self._brokers}:
            self.close_broker(broker_id)
        with contextlib.suppress(Exception):
            await asyncio.sleep(0)


TO_CONTROLLER_CLIENTS = frozenset({ALTER_ISR_CLIENT, CONTROLLED_SHUTDOWN_CLIENT})
"""The clients whose peer is the controller (a broker's AlterIsr channel, its controlled shutdown)."""


def peer_role(client: str) -> str:
    """What ``client``'s peer is to it, for the disconnect line: the controller, or a broker."""
    return "controller" if client in TO_CONTROLLER_CLIENTS else "broker"


def cancel_reason(client: str, cancelled: asyncio.CancelledError) -> str:
    """Why a request of ``client`` was cancelled, for the disconnect line: the canceller's message when it gave one
    (`broker.timeouts.within`: its bound passed, or its own caller stopped); else the controller channel's one
    canceller, the channel manager removing the broker (it left, or the controller resigned); else its sender."""
    message = cancelled.args[0] if cancelled.args and isinstance(cancelled.args[0], str) else None
    if message:
        return f"request cancelled: {message}"
    if client == CONTROLLER_CLIENT:
        return "request cancelled: the broker was removed from the controller's channel"
    return "request cancelled by its sender"


def _split_by_delete_flag(request: StopReplicaRequest) -> list[StopReplicaRequest]:
    groups = [tuple(s for s in request.partition_states if s.delete_partition is flag) for flag in (False, True)]
    return [replace(request, partition_states=g) for g in groups if g] or [request]
