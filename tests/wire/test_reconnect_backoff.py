"""A lost connection starts the reconnect back-off, as a failed connect does: Kafka 2.8.2's NetworkClient calls
``ClusterConnectionStates.disconnected`` (``updateReconnectBackoff``) whenever a connection goes, an established one
too (the peer hung up, a request timed out). Ours reconnected at once after an established connection dropped, so
the AlterIsr channel to a controller that answers and hangs up reconnected (and asked ApiVersions) in a tight loop.
The back-off is measured on the runtime's clock (a manual one here); no time passes on it unless a test moves it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.helpers import wait_until
from tests.wire.test_tcp_transport import _broker

from zkcontroller.broker.kafka_apis import KafkaApis
from zkcontroller.protocol.control_requests import ControlResponse, Errors, UpdateMetadataRequest
from zkcontroller.protocol.inter_broker import AlterIsrRequest, AlterIsrResponse
from zkcontroller.protocol.transport import ALTER_ISR_CLIENT, CONTROLLER_CLIENT, BrokerUnreachableError
from zkcontroller.protocol.wire.frames import SIZE, decode_request_header
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.runtime.tcp_transport import TcpTransport

API_VERSIONS = 18


class AnswersOnce:
    """A broker that accepts a connection, answers ApiVersions and the first other request on it, then hangs up
    (``after`` "hang-up") or answers nothing more (``after`` "silent": the client's request timeout ends it)."""

    def __init__(self, after: str) -> None:
        self.after = after
        self.apis = KafkaApis(2, control_handler=lambda: self._answer, metadata_cache=lambda: None,
                              cluster_id=lambda: "c")
        self.connections = 0
        self.requests: list[int] = []
        self._writers: list[asyncio.StreamWriter] = []
        self._server: asyncio.Server | None = None

    @staticmethod
    def _answer(request: Any, correlation_id: int) -> Any:
        if isinstance(request, AlterIsrRequest):
            return AlterIsrResponse()
        return ControlResponse(request.api_key, Errors.NONE)

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self._server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.append(writer)
        answered = False
        try:
            while True:
                (size,) = SIZE.unpack(await reader.readexactly(4))
                payload = await reader.readexactly(size)
                api_key = decode_request_header(payload)[0].api_key
                self.requests.append(api_key)
                if answered:
                    continue  # silent: read on, answer nothing
                answer = await self.apis.handle(payload)
                assert answer is not None
                writer.write(SIZE.pack(len(answer)) + answer)
                await writer.drain()
                if api_key != API_VERSIONS:
                    answered = True
                    if self.after == "hang-up":
                        return
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def stop(self) -> None:
        for writer in self._writers:
            writer.close()
        if self._server is not None:
            self._server.close()


def _connected(transport: TcpTransport, broker_id: int, client: str) -> bool:
    state = transport._brokers.get((broker_id, client))
    return state is not None and state.connection is not None


@pytest.mark.parametrize("after", ["hang-up", "silent"])
async def test_a_lost_alter_isr_connection_backs_off_before_reconnecting(after: str) -> None:
    """The AlterIsr channel (50 ms, BrokerToControllerChannelManager's NetworkClient): the send after the
    controller hung up (or after a request timed out) fails at once with the back-off, and no new connection is
    made until 50 ms of the runtime's time passed."""
    clock = [0]
    server = AnswersOnce(after)
    broker = _broker(await server.start(), 2)
    transport = TcpTransport(AsyncioRuntime(clock=lambda: clock[0]), client_id="1", request_timeout_ms=100)

    async def attempt() -> str:
        try:
            assert isinstance(await transport.send(broker, AlterIsrRequest(1, 7)), AlterIsrResponse)
        except BrokerUnreachableError as e:
            return "back-off" if "back-off" in e.detail else "disconnected"
        return "answered"

    try:
        assert await attempt() == "answered"
        if after == "silent":
            assert await attempt() == "disconnected"  # request.timeout.ms (100 ms) ended: Kafka disconnects
        await wait_until(lambda: not _connected(transport, 2, ALTER_ISR_CLIENT), timeout_s=30,
                         what="the transport to notice the lost connection")
        assert await attempt() == "back-off"
        clock[0] = 49
        assert await attempt() == "back-off"
        assert server.connections == 1
        clock[0] = 50
        assert await attempt() == "answered"  # a new connection: ApiVersions first again
        assert server.connections == 2
        assert server.requests.count(API_VERSIONS) == 2
    finally:
        await transport.close()
        await server.stop()


async def test_the_controller_channel_reconnects_at_once() -> None:
    """ControllerChannelManager's NetworkClient has no reconnect back-off (0/0: its RequestSendThread waits 100 ms
    itself after a failed send), so after a broker hung up the next send connects again, with no time passed."""
    clock = [0]
    server = AnswersOnce("hang-up")
    broker = _broker(await server.start(), 2)
    transport = TcpTransport(AsyncioRuntime(clock=lambda: clock[0]))
    try:
        for connections in (1, 2):
            assert (await transport.send(broker, UpdateMetadataRequest(1, 1, -1))).error is Errors.NONE
            assert server.connections == connections
            await wait_until(lambda: not _connected(transport, 2, CONTROLLER_CLIENT), timeout_s=30,
                             what="the transport to notice the lost connection")
    finally:
        await transport.close()
        await server.stop()


async def test_the_back_off_after_a_lost_connection_grows_with_the_failed_connects() -> None:
    """Kafka counts the lost connection as a failed attempt (``failedAttempts`` 1, back-off ``backoff(0)``,
    50 ms ±20% with the client defaults) and resets the setup timeout: a connect refused after it backs off
    ``backoff(1)``, 100 ms ±20%."""
    clock = [0]
    server = AnswersOnce("hang-up")
    broker = _broker(await server.start(), 2)
    transport = TcpTransport(AsyncioRuntime(clock=lambda: clock[0]))

    async def attempt() -> str:
        try:
            await transport.connect(broker, client="other")
        except BrokerUnreachableError as e:
            return "back-off" if "back-off" in e.detail else "refused"
        return "connected"

    try:
        assert await attempt() == "connected"
        await server.stop()  # hangs up on the connection and takes no more
        await wait_until(lambda: not _connected(transport, 2, "other"), timeout_s=30,
                         what="the transport to notice the lost connection")
        assert await attempt() == "back-off"
        clock[0] = 61  # past 50 ms +20%
        assert await attempt() == "refused"
        clock[0] = 61 + 79  # 100 ms -20% not yet passed
        assert await attempt() == "back-off"
        clock[0] = 61 + 121
        assert await attempt() == "refused"
    finally:
        await transport.close()
        await server.stop()
