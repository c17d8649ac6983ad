"""The controller's TCP transport against a real protocol server: request/response, reconnect after the broker
comes back, back-off while it is down, the request timeout, and a broker that moved."""

from __future__ import annotations

import asyncio

import pytest
from tests.helpers import wait_until

from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.request_handler import CloseConnection, KafkaApis
from zkcontroller.cluster.zookeeper_server import free_port
from zkcontroller.model import Broker, EndPoint
from zkcontroller.protocol.control_requests import (
    ApiKey,
    Errors,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    UpdateMetadataRequest,
)
from zkcontroller.protocol.transport import BrokerUnreachableError
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.runtime.socket_server import SocketServer
from zkcontroller.runtime.tcp_transport import RECONNECT_BACKOFF_MAX_MS, TcpTransport


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


async def test_unreachable_then_back_off_then_reconnect():
    port = free_port()
    # The transport's clock stands still until the back-off has been seen: on a loaded machine the 40-60 ms
    # back-off could pass between two sends of the wall clock.
    now = [0]
    transport = TcpTransport(AsyncioRuntime(clock=lambda: now[0]))
    broker = _broker(port)
    # Kafka's awaitReady text for a refused connection and for one in its reconnect back-off alike
    failed = rf"^Connection to 127\.0\.0\.1:{port} \(id: 1 rack: null\) failed\.$"
    with pytest.raises(BrokerUnreachableError, match=failed) as refused:
        await transport.send(broker, UpdateMetadataRequest(1, 1, -1))
    assert "Connect call failed" in refused.value.detail
    server = await _serve(port, BrokerControlPlane(1, 5))
    try:
        with pytest.raises(BrokerUnreachableError, match=failed) as backing_off:  # the broker is up: the back-off
            await transport.send(broker, UpdateMetadataRequest(1, 1, -1))
        assert "back-off" in backing_off.value.detail
        now[0] = RECONNECT_BACKOFF_MAX_MS  # past any first back-off (50 ms with 20 % jitter)
        answers: list[Errors] = []

        async def delivered() -> bool:
            try:
                answers.append((await transport.send(broker, UpdateMetadataRequest(1, 1, -1))).error)
            except BrokerUnreachableError:
                return False
            return True

        await wait_until(delivered, timeout_s=10, what="a reconnect after the broker came up", poll_s=0.02)
        assert answers == [Errors.NONE]
        await server.stop()  # the broker goes away: the next send notices
        with pytest.raises(BrokerUnreachableError):
            await transport.send(broker, UpdateMetadataRequest(1, 1, -1))
    finally:
        await transport.close()
        await server.stop()


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
