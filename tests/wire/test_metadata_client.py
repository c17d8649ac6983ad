"""`partition_replicas` (what `reassign --verify` asks each broker): a clear reason for every way a broker can
fail to answer, and the replicas a real broker's Metadata answer lists."""

from __future__ import annotations

import asyncio
import socket

import pytest
from tests.unit.broker.helpers import um_state, update_metadata

from zkcontroller.admin.metadata_client import MetadataUnavailableError, partition_replicas
from zkcontroller.broker.kafka_apis import KafkaApis
from zkcontroller.broker.metadata_cache import MetadataCache
from zkcontroller.model import TopicPartition
from zkcontroller.runtime.socket_server import SocketServer


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_closed_port_is_reported_with_host_and_port() -> None:
    port = _free_port()
    with pytest.raises(MetadataUnavailableError, match=f"127.0.0.1:{port}"):
        await partition_replicas("127.0.0.1", port, ["t"], timeout_ms=2000)


async def _serve(reply: bytes | None) -> tuple[asyncio.Server, int]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(4)
        if reply is None:
            await asyncio.Event().wait()  # never answers
        writer.write(reply)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def test_a_broker_that_never_answers_is_bounded_by_the_timeout() -> None:
    server, port = await _serve(None)
    async with server:
        with pytest.raises(MetadataUnavailableError, match=r"no answer .* within 200 ms"):
            await partition_replicas("127.0.0.1", port, ["t"], timeout_ms=200)


async def test_unreadable_bytes_are_reported_not_trusted() -> None:
    server, port = await _serve(b"\x00\x00\x00\x06\x00\x00\x00\x01\xff\xff")
    async with server:
        with pytest.raises(MetadataUnavailableError, match="unreadable bytes"):
            await partition_replicas("127.0.0.1", port, ["t"], timeout_ms=2000)


async def test_the_replicas_a_broker_lists_come_back() -> None:
    cache = MetadataCache(1)
    cache.update_metadata(0, update_metadata(um_state(0, leader=2, replicas=(2, 3), topic="moving"),
                                             um_state(0, leader=1, replicas=(1,), topic="other")))
    apis = KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: cache, cluster_id=lambda: "c")
    port = _free_port()
    server = SocketServer("127.0.0.1", port, apis.handle)
    await server.start()
    try:
        found = await partition_replicas("127.0.0.1", port, ["moving", "absent"])
    finally:
        await server.stop()
    assert found == {TopicPartition("moving", 0): (2, 3)}
