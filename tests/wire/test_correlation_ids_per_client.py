"""Correlation ids count per Kafka client, as each NetworkClient does from 0: every controller-to-broker channel
(a new one per controller tenure and per broker registration), every fetcher (a new one when it is shut down and
made again), the AlterIsr channel and controlled shutdown on its own. One counter per process made the controller's
ids to a broker jump with every replica fetch (6205 after half an hour), on the in-process transport every id was 0;
then over TCP a fetcher, AlterIsr and controlled shutdown still shared one count per destination."""

from __future__ import annotations

from typing import Any

from tests.wire.test_tcp_transport import _broker

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.broker.replica_fetcher import ReplicaFetcher
from zkcontroller.protocol.control_requests import ControlResponse, Errors, StopReplicaRequest, UpdateMetadataRequest
from zkcontroller.protocol.inter_broker import (
    AlterIsrRequest,
    AlterIsrResponse,
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    FetchRequest,
    FetchResponse,
)
from zkcontroller.protocol.transport import FETCHER_CLIENT, CorrelationClients
from zkcontroller.runtime.in_process import InProcessTransport
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.runtime.socket_server import SocketServer
from zkcontroller.runtime.tcp_transport import TcpTransport


class _Fetch:
    """Any request that is not a control request (a fetcher's, AlterIsr's): one client per kind and broker."""


def test_each_client_counts_from_zero() -> None:
    ids = CorrelationClients()
    um = UpdateMetadataRequest(1, 5, 100)
    assert [ids.next_id(2, um), ids.next_id(3, um), ids.next_id(2, um), ids.next_id(2, _Fetch()),
            ids.next_id(2, StopReplicaRequest(1, 5, 100)), ids.next_id(2, _Fetch())] == [0, 0, 1, 0, 2, 1]
    assert ids.next_id(2, UpdateMetadataRequest(3, 6, 100)) == 0  # a new controller: new channels
    assert ids.next_id(2, UpdateMetadataRequest(3, 6, 100)) == 1
    assert ids.next_id(2, UpdateMetadataRequest(3, 6, 140)) == 0  # broker 2 registered again: re-added
    assert ids.next_id(2, _Fetch()) == 2  # the fetcher's own count went on


async def test_the_in_process_transport_hands_each_channels_ids_to_the_broker() -> None:
    transport = InProcessTransport()
    seen: list[tuple[int, int]] = []

    def broker(broker_id: int) -> Any:
        def handle(request: Any, correlation_id: int) -> ControlResponse:
            seen.append((broker_id, correlation_id))
            return ControlResponse(request.api_key, Errors.NONE)
        return handle

    transport.register(2, broker(2))
    transport.register(3, broker(3))
    for target in (2, 3, 2, 2, 3):
        await transport.send(_broker(0, target), UpdateMetadataRequest(1, 5, 100))
    assert seen == [(2, 0), (3, 0), (2, 1), (2, 2), (3, 1)]


async def test_the_tcp_transport_sends_each_channels_ids_on_the_wire() -> None:
    seen: list[tuple[int, int]] = []
    servers = []
    for broker_id in (2, 3):
        def handle(request: Any, correlation_id: int, broker_id: int = broker_id) -> ControlResponse:
            seen.append((broker_id, correlation_id))
            return ControlResponse(request.api_key, Errors.NONE)
        apis = KafkaApis(broker_id, control_handler=lambda h=handle: h, metadata_cache=lambda: None,
                         cluster_id=lambda: "c")
        server = SocketServer("127.0.0.1", 0, apis.handle, close_on=(CloseConnection,))
        await server.start()
        servers.append(server)
    transport = TcpTransport(AsyncioRuntime())
    try:
        brokers = {2: _broker(servers[0].port, 2), 3: _broker(servers[1].port, 3)}
        for target in (2, 3, 2, 2):
            await transport.send(brokers[target], UpdateMetadataRequest(1, 5, 100))
        await transport.send(brokers[2], UpdateMetadataRequest(4, 6, 100))  # the next controller's channel
    finally:
        await transport.close()
        for server in servers:
            await server.stop()
    assert seen == [(2, 0), (3, 0), (2, 1), (2, 2), (2, 0)]


def _answer(request: Any) -> Any:
    if isinstance(request, FetchRequest):
        return FetchResponse()
    if isinstance(request, AlterIsrRequest):
        return AlterIsrResponse()
    if isinstance(request, ControlledShutdownRequest):
        return ControlledShutdownResponse()
    return ControlResponse(request.api_key, Errors.NONE)


async def test_over_tcp_a_fetcher_alter_isr_and_controlled_shutdown_each_count_from_zero() -> None:
    """Kafka's ReplicaFetcherBlockingSend, BrokerToControllerChannelManager and controlledShutdown's NetworkClient
    are three clients: to one broker each has its own connection and its own ids, beside the controller channel's.
    A fetcher shut down closes its client (ReplicaFetcherBlockingSend.close): the next one counts from 0."""
    seen: list[tuple[str, int]] = []

    def handle(request: Any, correlation_id: int) -> Any:
        seen.append((type(request).__name__, correlation_id))
        return _answer(request)

    apis = KafkaApis(2, control_handler=lambda: handle, metadata_cache=lambda: None, cluster_id=lambda: "c")
    server = SocketServer("127.0.0.1", 0, apis.handle, close_on=(CloseConnection,))
    await server.start()
    runtime = AsyncioRuntime()
    transport = TcpTransport(runtime)
    try:
        broker = _broker(server.port, 2)
        for request in (UpdateMetadataRequest(1, 5, 100), FetchRequest(1), FetchRequest(1), AlterIsrRequest(1, 7),
                        ControlledShutdownRequest(1, 7), UpdateMetadataRequest(1, 5, 100), AlterIsrRequest(1, 7),
                        FetchRequest(1)):
            await transport.send(broker, request)
        assert server.connection_count == 4  # one per client
        ReplicaFetcher(1, 2, lambda _: None, lambda _: broker, transport, runtime, ReplicationConfig()).shutdown()
        await transport.send(broker, FetchRequest(1))  # the next fetcher's first fetch
        await transport.send(broker, FetchRequest(1))
    finally:
        await transport.close()
        await server.stop()
    # AlterIsr's client sent ApiVersions first, with its id 0 (answered by KafkaApis, not the handler)
    assert seen == [("UpdateMetadataRequest", 0), ("FetchRequest", 0), ("FetchRequest", 1), ("AlterIsrRequest", 1),
                    ("ControlledShutdownRequest", 0), ("UpdateMetadataRequest", 1), ("AlterIsrRequest", 2),
                    ("FetchRequest", 2), ("FetchRequest", 0), ("FetchRequest", 1)]


def test_in_process_a_closed_client_counts_from_zero_again() -> None:
    ids = CorrelationClients()
    assert [ids.next_id(2, FetchRequest(1)), ids.next_id(2, FetchRequest(1)), ids.next_id(2, AlterIsrRequest(1, 7)),
            ids.next_id(2, ControlledShutdownRequest(1, 7))] == [0, 1, 0, 0]
    ids.close(2, FETCHER_CLIENT)
    assert ids.next_id(2, FetchRequest(1)) == 0
    assert ids.next_id(2, AlterIsrRequest(1, 7)) == 1


async def test_in_process_a_fetcher_made_again_counts_from_zero() -> None:
    transport = InProcessTransport()
    seen: list[int] = []

    def handle(request: Any, correlation_id: int) -> Any:
        seen.append(correlation_id)
        return _answer(request)

    transport.register(2, handle)
    broker = _broker(0, 2)
    await transport.send(broker, FetchRequest(1))
    await transport.send(broker, FetchRequest(1))
    ReplicaFetcher(1, 2, lambda _: None, lambda _: broker, transport, AsyncioRuntime(), ReplicationConfig()).shutdown()
    await transport.send(broker, FetchRequest(1))
    assert seen == [0, 1, 0]
