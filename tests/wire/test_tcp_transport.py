"""The controller's TCP transport against a real protocol server: request/response, reconnect after the broker
comes back, each client's reconnect back-off while it is down, the request timeout, and a broker that moved."""

from __future__ import annotations

import asyncio
import random

import pytest
from tests.helpers import ManualRuntime, until_idle, wait_until

from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.cluster.zookeeper_server import free_port
from zkcontroller.model import Broker, EndPoint
from zkcontroller.protocol.control_requests import (
    ApiKey,
    Errors,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    UpdateMetadataRequest,
)
from zkcontroller.protocol.inter_broker import AlterIsrRequest
from zkcontroller.protocol.transport import (
    ALTER_ISR_CLIENT,
    CONTROLLED_SHUTDOWN_CLIENT,
    CONTROLLER_CLIENT,
    FETCHER_CLIENT,
    BrokerUnreachableError,
)
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.runtime.socket_server import SocketServer
from zkcontroller.runtime.tcp_transport import TcpTransport


def _broker(port: int, broker_id: int = 1) -> Broker:
    return Broker(broker_id, (EndPoint("127.0.0.1", port, "PLAINTEXT", "PLAINTEXT"),))


async def _serve(port: int, control_plane: BrokerControlPlane) -> SocketServer:
    apis = KafkaApis(control_plane.broker_id, control_handler=lambda: control_plane.handle,
                     metadata_cache=lambda: control_plane.metadata_cache, cluster_id=lambda: "c")
    server = SocketServer("127.0.0.1", port, apis.handle, close_on=(CloseConnection,))
    await server.start()
    return server


async def test_requests_reach_the_control_plane_and_answers_come_back():
    control_plane = BrokerControlPlane(1, 7)
    server = await _serve(0, control_plane)
    transport = TcpTransport(AsyncioRuntime())
    try:
        broker = _broker(server.port)
        state = LeaderAndIsrPartitionState("t", 0, 3, 1, 1, (1,), 0, (1, 2))
        response = await transport.send(broker, LeaderAndIsrRequest(2, 3, 7, partition_states=(state,)))
        assert response.api_key is ApiKey.LEADER_AND_ISR
        assert response.partition_error_map() == {state.topic_partition: Errors.NONE}
        assert control_plane.partition(state.topic_partition).leader_epoch == 1
        stale = await transport.send(broker, UpdateMetadataRequest(2, 2, 7))
        assert stale.error is Errors.STALE_CONTROLLER_EPOCH
        assert server.connection_count == 1  # one connection per broker, reused
    finally:
        await transport.close()
        await server.stop()


async def test_unreachable_then_reconnect():
    """The controller channel has no reconnect back-off (ControllerChannelManager's NetworkClient: 0 ms): its
    RequestSendThread paces its retries, so the send after the broker came up connects."""
    port = free_port()
    transport = TcpTransport(AsyncioRuntime(clock=lambda: 0))  # no time passes: no back-off could end
    broker = _broker(port)
    # Kafka's awaitReady text for a refused connection
    failed = rf"^Connection to 127\.0\.0\.1:{port} \(id: 1 rack: null\) failed\.$"
    with pytest.raises(BrokerUnreachableError, match=failed) as refused:
        await transport.send(broker, UpdateMetadataRequest(1, 1, -1))
    assert "Connect call failed" in refused.value.detail
    server = await _serve(port, BrokerControlPlane(1, 5))
    try:
        assert (await transport.send(broker, UpdateMetadataRequest(1, 1, -1))).error is Errors.NONE
        await server.stop()  # the broker goes away: the next send notices
        with pytest.raises(BrokerUnreachableError):
            await transport.send(broker, UpdateMetadataRequest(1, 1, -1))
    finally:
        await transport.close()
        await server.stop()


async def test_each_client_backs_off_as_kafkas_does():
    """Kafka 2.8's reconnect back-off per inter-broker NetworkClient, on the runtime's clock: none for the
    controller channel, a replica fetcher and controlled shutdown (each caller waits itself: 100 ms,
    ``replica.fetch.backoff.ms``, ``controlled.shutdown.retry.backoff.ms``), 50 ms for AlterIsr (50/50: no
    growth, no jitter), and the client defaults (50 ms doubling to 1 s, ±20%) for another client. The transport
    once backed every client off by the defaults, the controller channel included."""
    port = free_port()
    now = [0]
    transport = TcpTransport(AsyncioRuntime(clock=lambda: now[0]))
    broker = _broker(port)

    async def attempt(client: str) -> str:
        with pytest.raises(BrokerUnreachableError) as failed:
            if client == ALTER_ISR_CLIENT:
                await transport.send(broker, AlterIsrRequest(2, 7))
            elif client == CONTROLLER_CLIENT:
                await transport.send(broker, UpdateMetadataRequest(1, 1, -1))
            else:
                await transport.connect(broker, client=client)
        return "back-off" if "back-off" in failed.value.detail else "refused"

    try:
        for client in (CONTROLLER_CLIENT, FETCHER_CLIENT, CONTROLLED_SHUTDOWN_CLIENT):
            assert [await attempt(client) for _ in range(3)] == ["refused"] * 3, client
        assert [await attempt(ALTER_ISR_CLIENT), await attempt(ALTER_ISR_CLIENT)] == ["refused", "back-off"]
        assert [await attempt("other"), await attempt("other")] == ["refused", "back-off"]
        now[0] = 49
        assert await attempt(ALTER_ISR_CLIENT) == "back-off"
        now[0] = 50
        assert [await attempt(ALTER_ISR_CLIENT), await attempt(ALTER_ISR_CLIENT)] == ["refused", "back-off"]
        now[0] = 100
        assert await attempt(ALTER_ISR_CLIENT) == "refused"  # 50 ms again: it does not grow
        assert await attempt("other") == "refused"  # past the other client's first back-off (50 ms ±20%)
        now[0] = 100 + 79  # its second: 100 ms ±20%
        assert await attempt("other") == "back-off"
        now[0] = 100 + 121
        assert await attempt("other") == "refused"
    finally:
        await transport.close()


async def test_request_timeout_closes_the_connection():
    silent_connections = []
    hung_up = asyncio.Event()

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        silent_connections.append(writer)
        await reader.read()  # reads everything, answers nothing, until the client hangs up
        hung_up.set()

    silent = await asyncio.start_server(swallow, "127.0.0.1", 0)
    port = silent.sockets[0].getsockname()[1]
    transport = TcpTransport(AsyncioRuntime(), request_timeout_ms=200)
    try:
        with pytest.raises(BrokerUnreachableError,  # sendAndReceive's text: the NetworkClient disconnected
                           match=r"^Connection to 1 was disconnected before the response was read$"):
            await transport.send(_broker(port), UpdateMetadataRequest(1, 1, -1))
        await asyncio.wait_for(hung_up.wait(), 30)
    finally:
        for w in silent_connections:
            w.close()
        silent.close()
        await transport.close()


class _SeededManualRuntime(ManualRuntime):
    """A manual clock with the generator the transport draws its jitter from."""

    rng = random.Random(5)


async def test_the_request_timeout_runs_on_the_runtimes_clock():
    """The request timeout is armed on the transport's runtime (virtual in the simulator), not on the loop's time:
    it ends when the runtime's time passes ``request_timeout_ms``, however little real time went by."""
    arrived = asyncio.Event()
    silent_connections = []

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        silent_connections.append(writer)
        await reader.read(1)
        arrived.set()
        await reader.read()

    silent = await asyncio.start_server(swallow, "127.0.0.1", 0)
    runtime = _SeededManualRuntime()
    transport = TcpTransport(runtime, request_timeout_ms=30000)  # type: ignore[arg-type]
    try:
        send = asyncio.ensure_future(transport.send(_broker(silent.sockets[0].getsockname()[1]),
                                                    UpdateMetadataRequest(1, 1, -1)))
        await asyncio.wait_for(arrived.wait(), 30)
        await wait_until(lambda: bool(runtime.sleeping()), timeout_s=30, what="the request timeout armed")
        assert runtime.sleeping() == [30000]
        runtime.advance(29999)
        await until_idle()
        assert not send.done()
        runtime.advance(1)
        with pytest.raises(BrokerUnreachableError, match=r"^Connection to 1 was disconnected before the response"):
            await asyncio.wait_for(send, 30)
    finally:
        for w in silent_connections:
            w.close()
        silent.close()
        await transport.close()


async def test_a_broker_at_a_new_address_is_reconnected():
    first, second = BrokerControlPlane(1, 5), BrokerControlPlane(1, 6)
    s1, s2 = await _serve(0, first), await _serve(0, second)
    transport = TcpTransport(AsyncioRuntime())
    try:
        await transport.send(_broker(s1.port), UpdateMetadataRequest(1, 4, -1))
        await transport.send(_broker(s2.port), UpdateMetadataRequest(1, 9, -1))
        assert (first.controller_epoch, second.controller_epoch) == (4, 9)
        await wait_until(lambda: s1.connection_count == 0, timeout_s=30, what="the old connection closed")
    finally:
        await transport.close()
        await s1.stop()
        await s2.stop()


async def test_a_cancelled_send_drops_the_connection():
    """The channel manager cancels a removed broker's sender: the transport hangs up on that broker."""
    hung_up = asyncio.Event()
    received = asyncio.Event()

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1)
        received.set()
        await reader.read()
        hung_up.set()
        writer.close()

    silent = await asyncio.start_server(swallow, "127.0.0.1", 0)
    transport = TcpTransport(AsyncioRuntime())
    try:
        send = asyncio.ensure_future(transport.send(_broker(silent.sockets[0].getsockname()[1]),
                                                    UpdateMetadataRequest(1, 1, -1)))
        await asyncio.wait_for(received.wait(), 30)
        send.cancel()
        await asyncio.wait_for(hung_up.wait(), 30)
        assert send.cancelled()
    finally:
        silent.close()
        await transport.close()
