"""The AlterIsr channel discovers the controller's versions, as Kafka 2.8.2's does: of the inter-broker
NetworkClients only BrokerToControllerChannelManager's is made with ``discoverBrokerVersions`` true, so on each new
connection it sends ApiVersions first (correlation id 0, ``apache-kafka-java`` 2.8.2) and then AlterIsr at the
highest version both sides allow. ControllerChannelManager, ReplicaFetcherBlockingSend and controlled shutdown's
client send their request first. Ours sent AlterIsr first. Captured on loopback from a real protocol server."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from tests.wire.test_tcp_transport import _broker

from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.protocol.control_requests import ControlResponse, Errors, UpdateMetadataRequest
from zkcontroller.protocol.inter_broker import (
    AlterIsrRequest,
    AlterIsrResponse,
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    FetchRequest,
    FetchResponse,
)
from zkcontroller.protocol.transport import ALTER_ISR_CLIENT, BrokerUnreachableError, UnsupportedVersionError
from zkcontroller.protocol.wire import client_apis
from zkcontroller.protocol.wire.frames import RequestHeader, decode_request_header, encode_response_header
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.runtime.socket_server import SocketServer
from zkcontroller.runtime.tcp_transport import TcpTransport

API_VERSIONS, ALTER_ISR = 18, 56


def _answer(request: Any, correlation_id: int) -> Any:
    if isinstance(request, FetchRequest):
        return FetchResponse()
    if isinstance(request, AlterIsrRequest):
        return AlterIsrResponse()
    if isinstance(request, ControlledShutdownRequest):
        return ControlledShutdownResponse()
    return ControlResponse(request.api_key, Errors.NONE)


class Recorded:
    """A broker's protocol server whose every request header (and ApiVersions body) is captured as it arrives;
    ``api_versions`` stands in for the broker's ApiVersions answer when given (header and body bytes)."""

    def __init__(self, api_versions: Callable[[RequestHeader], bytes] | None = None) -> None:
        self.apis = KafkaApis(2, control_handler=lambda: _answer, metadata_cache=lambda: None, cluster_id=lambda: "c")
        self.headers: list[RequestHeader] = []
        self.api_versions_bodies: list[Any] = []
        self._api_versions = api_versions
        self.server = SocketServer("127.0.0.1", 0, self.handle, close_on=(CloseConnection,))

    async def handle(self, payload: bytes) -> bytes | None:
        header, offset = decode_request_header(payload)
        self.headers.append(header)
        if header.api_key == API_VERSIONS:
            self.api_versions_bodies.append(client_apis.decode_body(API_VERSIONS, header.api_version, payload,
                                                                    offset))
            if self._api_versions is not None:
                return self._api_versions(header)
        return await self.apis.handle(payload)

    def calls(self) -> list[tuple[int, int, int, str | None]]:
        return [(h.api_key, h.api_version, h.correlation_id, h.client_id) for h in self.headers]


async def _with_transport(recorded: Recorded, work: Callable[[TcpTransport], Awaitable[None]]) -> None:
    await recorded.server.start()
    transport = TcpTransport(AsyncioRuntime(), client_id="1")
    try:
        await work(transport)
    finally:
        await transport.close()
        await recorded.server.stop()


async def test_the_first_request_on_a_new_alter_isr_connection_is_api_versions() -> None:
    recorded = Recorded()

    async def work(transport: TcpTransport) -> None:
        broker = _broker(recorded.server.port, 2)
        assert isinstance(await transport.send(broker, AlterIsrRequest(1, 7)), AlterIsrResponse)
        assert isinstance(await transport.send(broker, AlterIsrRequest(1, 7)), AlterIsrResponse)
        transport.close_client(2, ALTER_ISR_CLIENT)  # a new connection: asked again
        assert isinstance(await transport.send(broker, AlterIsrRequest(1, 7)), AlterIsrResponse)

    await _with_transport(recorded, work)
    assert recorded.calls() == [(API_VERSIONS, 3, 0, "1"), (ALTER_ISR, 0, 1, "1"), (ALTER_ISR, 0, 2, "1"),
                                (API_VERSIONS, 3, 0, "1"), (ALTER_ISR, 0, 1, "1")]
    (name, version), = {(b.client_software_name, b.client_software_version) for b in recorded.api_versions_bodies}
    assert (name, version) == ("apache-kafka-java", "2.8.2")


async def test_the_other_inter_broker_clients_send_their_request_first() -> None:
    """The controller channel, a replica fetcher and controlled shutdown: ``discoverBrokerVersions`` false."""
    recorded = Recorded()

    async def work(transport: TcpTransport) -> None:
        broker = _broker(recorded.server.port, 2)
        for request in (UpdateMetadataRequest(1, 5, 100), FetchRequest(1), ControlledShutdownRequest(1, 7)):
            await transport.send(broker, request)

    await _with_transport(recorded, work)
    assert [(key, correlation_id) for key, _, correlation_id, _ in recorded.calls()] == [(6, 0), (1, 0), (7, 0)]


def _unsupported_then(header: RequestHeader) -> bytes:
    """A broker without ApiVersions v3: UNSUPPORTED_VERSION in the v0 layout with its own range (KIP-511), as
    Kafka answers; the version it lists is then answered normally."""
    if header.api_version > 2:
        return (encode_response_header(header.correlation_id, API_VERSIONS, 0)
                + client_apis.api_versions_response(0, {API_VERSIONS: (0, 2)}, client_apis.UNSUPPORTED_VERSION))
    return (encode_response_header(header.correlation_id, API_VERSIONS, header.api_version)
            + client_apis.api_versions_response(header.api_version, {API_VERSIONS: (0, 2), ALTER_ISR: (0, 0)}))


async def test_an_unsupported_api_versions_version_is_asked_again_at_the_brokers_highest() -> None:
    recorded = Recorded(_unsupported_then)

    async def work(transport: TcpTransport) -> None:
        assert isinstance(await transport.send(_broker(recorded.server.port, 2), AlterIsrRequest(1, 7)),
                          AlterIsrResponse)

    await _with_transport(recorded, work)
    assert recorded.calls() == [(API_VERSIONS, 3, 0, "1"), (API_VERSIONS, 2, 1, "1"), (ALTER_ISR, 0, 2, "1")]


def _advertising(alter_isr: tuple[int, int] | None) -> Callable[[RequestHeader], bytes]:
    supported = {API_VERSIONS: (0, 3)} | ({} if alter_isr is None else {ALTER_ISR: alter_isr})
    return lambda header: (encode_response_header(header.correlation_id, API_VERSIONS, header.api_version)
                           + client_apis.api_versions_response(header.api_version, supported))


@pytest.mark.parametrize(("alter_isr", "sent", "refused"), [
    ((0, 4), True, None),  # a newer controller: ours is the highest both have (v0, 2.8's only)
    (None, False, "The broker does not support ALTER_ISR"),
    ((1, 1), False, "The broker does not support ALTER_ISR with version in range [0,0]. The supported range is "
                    "[1,1]."),
])
async def test_alter_isr_goes_at_a_version_the_answer_allows_or_not_at_all(
        alter_isr: tuple[int, int] | None, sent: bool, refused: str | None) -> None:
    """Kafka's ``NodeApiVersions.latestUsableVersion``: the highest version in both ranges (ours bounded by the
    IBP); none in common is an ``UnsupportedVersionException`` and nothing goes on the wire, which AlterIsr's
    manager retries after its back-off (as Kafka's treats UNSUPPORTED_VERSION)."""
    recorded = Recorded(_advertising(alter_isr))

    async def work(transport: TcpTransport) -> None:
        broker = _broker(recorded.server.port, 2)
        if refused is None:
            assert isinstance(await transport.send(broker, AlterIsrRequest(1, 7)), AlterIsrResponse)
        else:
            with pytest.raises(UnsupportedVersionError) as raised:
                await transport.send(broker, AlterIsrRequest(1, 7))
            assert str(raised.value) == refused

    await _with_transport(recorded, work)
    assert recorded.calls() == [(API_VERSIONS, 3, 0, "1")] + ([(ALTER_ISR, 0, 1, "1")] if sent else [])


async def test_an_api_versions_error_closes_the_connection_with_kafkas_warning(
        caplog: pytest.LogCaptureFixture) -> None:
    """NetworkClient's ``handleApiVersionsResponse``: an error other than UNSUPPORTED_VERSION (or any at v0) is
    logged and the connection closed; the send fails as a lost connection, which AlterIsr retries."""
    def refuse(header: RequestHeader) -> bytes:
        return (encode_response_header(header.correlation_id, API_VERSIONS, header.api_version)
                + client_apis.api_versions_response(header.api_version, {}, client_apis.INVALID_REQUEST))

    recorded = Recorded(refuse)

    async def work(transport: TcpTransport) -> None:
        with pytest.raises(BrokerUnreachableError, match=r"^Connection to 2 was disconnected before the response"):
            await transport.send(_broker(recorded.server.port, 2), AlterIsrRequest(1, 7))

    caplog.set_level(logging.WARNING, "org.apache.kafka.clients.NetworkClient")
    await _with_transport(recorded, work)
    assert recorded.calls() == [(API_VERSIONS, 3, 0, "1")]
    assert caplog.messages == ["[broker-1-to-controller] Received error INVALID_REQUEST from node 2 when making an "
                               "ApiVersionsRequest with correlation id 0. Disconnecting."]


@pytest.mark.parametrize("failure", ["error", "closed", "silent"])
async def test_a_failed_handshake_backs_off_before_connecting_again(failure: str) -> None:
    """NetworkClient's disconnect from CHECKING_API_VERSIONS starts the reconnect back-off (``reconnect.backoff.ms``,
    50 ms for the AlterIsr channel) as a failed connect does. Ours reconnected and asked again at once: a
    controller answering ApiVersions with an error (or hanging up, or not answering) was asked in a tight loop."""
    def fail(header: RequestHeader) -> bytes:
        if failure == "closed":
            raise CloseConnection("hang up")
        return (encode_response_header(header.correlation_id, API_VERSIONS, header.api_version)
                + client_apis.api_versions_response(header.api_version, {}, client_apis.INVALID_REQUEST))

    recorded = Recorded(fail)
    if failure == "silent":
        async def never(payload: bytes) -> bytes | None:
            recorded.headers.append(decode_request_header(payload)[0])
            await asyncio.Event().wait()
            return None
        recorded.server = SocketServer("127.0.0.1", 0, never)
    await recorded.server.start()
    now = [0]
    transport = TcpTransport(AsyncioRuntime(clock=lambda: now[0]), client_id="1", request_timeout_ms=100)
    broker = _broker(recorded.server.port, 2)

    async def attempt() -> str:
        with pytest.raises(BrokerUnreachableError) as failed:
            await transport.send(broker, AlterIsrRequest(1, 7))
        return "back-off" if "back-off" in failed.value.detail else "handshake failed"

    try:
        assert [await attempt(), await attempt()] == ["handshake failed", "back-off"]
        now[0] = 49
        assert await attempt() == "back-off"
        assert len(recorded.calls()) == 1  # asked once, not once per send
        now[0] = 50
        assert [await attempt(), await attempt()] == ["handshake failed", "back-off"]
        assert [key for key, *_ in recorded.calls()] == [API_VERSIONS, API_VERSIONS]
    finally:
        await transport.close()
        await recorded.server.stop()
