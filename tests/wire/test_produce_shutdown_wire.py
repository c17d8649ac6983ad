"""An acks=-1 Produce still waiting for replication when its broker shuts down: Kafka 2.8.2 closes every client
connection (``SocketServer.stopProcessingRequests``, right after the controlled shutdown) before the replica manager
shuts the produce purgatory down, dropping the request unanswered; the producer sees a disconnect. Here the
purgatory's shutdown ends the request's connection without a response, quietly, and leaves the other connections
and the listener alone (the broker's own shutdown closes those next)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import pytest

from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.runtime.socket_server import SocketServer

from .test_produce_idempotence_wire import apis  # noqa: F401  (the fixture)
from .test_produce_wire import BOUND_S, NONE, ORDERS_0, Replicas, answers, batch, frame


async def _until(condition: Callable[[], bool]) -> None:
    """Wait for ``condition`` (socket I/O involved: checked every loop turn), at most `BOUND_S`."""
    deadline = asyncio.get_running_loop().time() + BOUND_S
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0)


async def _request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, payload: bytes) -> None:
    writer.write(len(payload).to_bytes(4, "big") + payload)
    await writer.drain()


async def _response(reader: asyncio.StreamReader) -> bytes:
    size = int.from_bytes(await asyncio.wait_for(reader.readexactly(4), BOUND_S), "big")
    return await asyncio.wait_for(reader.readexactly(size), BOUND_S)


@pytest.fixture
async def listening(apis: tuple[KafkaApis, Replicas]):  # noqa: F811
    api, replicas = apis
    server = SocketServer("127.0.0.1", 0, api.handle, close_on=(CloseConnection,))
    await server.start()
    yield server, replicas
    await server.stop()


async def test_a_waiting_acks_all_request_is_dropped_and_its_connection_closed(listening, caplog) -> None:
    server, replicas = listening
    caplog.set_level(logging.DEBUG)
    waiting_r, waiting_w = await asyncio.open_connection("127.0.0.1", server.port)
    other_r, other_w = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        await _request(waiting_r, waiting_w, frame(8, -1, [("orders", [(0, batch(3))])]))
        await _until(lambda: replicas.waiters.waiting() == 1)
        replicas.waiters.shutdown()  # what ReplicaManager.shutdown does
        assert await asyncio.wait_for(waiting_r.read(), BOUND_S) == b""  # closed, nothing answered
        await _until(lambda: server.connection_count == 1)
        assert replicas.waiters.waiting() == 0
        assert replicas.parts[ORDERS_0].log_end_offset == 13  # appended before it waited, as in Kafka
        await _request(other_r, other_w, frame(8, 1, [("orders", [(0, batch(1))])]))
        assert answers(await _response(other_r), 8) == [("orders", 0, NONE, 13, 0)]
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    finally:
        for w in (waiting_w, other_w):
            w.close()


async def test_after_the_shutdown_an_acks_all_request_is_not_answered_either(listening) -> None:
    server, replicas = listening
    replicas.waiters.shutdown()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        await _request(reader, writer, frame(8, -1, [("orders", [(0, batch(1))])]))
        assert await asyncio.wait_for(reader.read(), BOUND_S) == b""
    finally:
        writer.close()
