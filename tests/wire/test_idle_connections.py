"""``connections.max.idle.ms``: a connection that says nothing, or stops halfway through a frame, is closed;
one that keeps talking stays open, and the listener keeps serving others.

Real loopback sockets on a virtual clock (`VirtualClockLoop`): the clock moves only when nothing can happen
before the next timer, so the limits pass in no wall time and a loaded machine's stalls cannot age a
connection."""

from __future__ import annotations

import asyncio
import socket
import struct

from tests.helpers import wait_until
from tests.wire.socket_virtual_clock import run_on_virtual_clock

from zkcontroller.runtime.socket_server import SocketServer

IDLE_MS = 1000
"""Virtual milliseconds: twenty times the 50 ms between the active connection's requests."""


async def echo(payload: bytes) -> bytes:
    return payload


async def closed_by_server(reader: asyncio.StreamReader, bound_s: float) -> bool:
    """True once the server closes (EOF), False if it is still open after ``bound_s`` (virtual seconds)."""
    try:
        return await asyncio.wait_for(reader.read(1), bound_s) == b""
    except TimeoutError:
        return False


def test_idle_and_half_frame_connections_are_closed_active_ones_are_not() -> None:
    run_on_virtual_clock(_idle_and_half_frame_connections_are_closed_active_ones_are_not())


async def _idle_and_half_frame_connections_are_closed_active_ones_are_not() -> None:
    server = SocketServer("127.0.0.1", 0, echo, connections_max_idle_ms=IDLE_MS)
    await server.start()
    try:
        opened_at = asyncio.get_running_loop().time()
        silent = await asyncio.open_connection("127.0.0.1", server.port)
        half = await asyncio.open_connection("127.0.0.1", server.port)
        half[1].write(b"\x00\x00")  # two bytes of a size prefix, then nothing
        partial = await asyncio.open_connection("127.0.0.1", server.port)
        partial[1].write(b"\x00\x00\x00\x08abc")  # a frame of 8 bytes, 3 sent
        active = await asyncio.open_connection("127.0.0.1", server.port)
        loop = asyncio.get_running_loop()
        talked_until = loop.time() + 1.25 * IDLE_MS / 1000
        while loop.time() < talked_until:  # a request every 50 ms, for longer than IDLE_MS: never idle for it
            active[1].write(b"\x00\x00\x00\x02hi")
            assert await asyncio.wait_for(active[0].readexactly(6), 30) == b"\x00\x00\x00\x02hi"
            await asyncio.sleep(0.05)
        for reader, _ in (silent, half, partial):
            assert await closed_by_server(reader, 30)
            assert loop.time() - opened_at >= IDLE_MS / 1000  # not before the limit
        assert not await closed_by_server(active[0], 0.01)
        assert server.closed_idle == 3
        assert server.connection_count == 1
        for _, writer in (silent, half, partial, active):
            writer.close()
    finally:
        await server.stop()


def test_the_default_is_kafkas_ten_minutes() -> None:
    assert SocketServer("127.0.0.1", 0, echo).connections_max_idle_ms == 600_000


def test_a_frame_trickling_in_for_longer_than_the_limit_is_read_whole() -> None:
    """Kafka counts idleness from the last byte read: a frame whose bytes keep coming, one every quarter of the
    limit, is answered even though the whole of it takes twice the limit to arrive."""
    run_on_virtual_clock(_a_frame_trickling_in_for_longer_than_the_limit_is_read_whole())


async def _a_frame_trickling_in_for_longer_than_the_limit_is_read_whole() -> None:
    server = SocketServer("127.0.0.1", 0, echo, connections_max_idle_ms=IDLE_MS)
    await server.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        frame = b"\x00\x00\x00\x08" + b"slow-one"  # 12 quarters: three limits long
        for i in range(len(frame)):
            writer.write(frame[i:i + 1])
            await writer.drain()
            await asyncio.sleep(IDLE_MS / 4000)  # the client's pace, a quarter of the limit a byte
        assert await asyncio.wait_for(reader.readexactly(len(frame)), 30) == frame
        assert server.closed_idle == 0
        writer.close()
    finally:
        await server.stop()


def test_an_answer_the_client_does_not_read_closes_the_connection() -> None:
    """An answer larger than both sockets' buffers, never read: once no byte of it has left for the limit, the
    server closes the connection instead of waiting in ``drain`` forever (Kafka's selector expires it)."""
    run_on_virtual_clock(_an_answer_the_client_does_not_read_closes_the_connection())


async def _an_answer_the_client_does_not_read_closes_the_connection() -> None:
    server = SocketServer("127.0.0.1", 0, echo, connections_max_idle_ms=IDLE_MS, max_request_bytes=64 << 20)
    await server.start()
    try:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect, so the window stays small
        sock.connect(("127.0.0.1", server.port))
        sock.setblocking(False)
        reader, writer = await asyncio.open_connection(sock=sock)
        payload = bytes(16 << 20)
        writer.write(struct.pack(">i", len(payload)) + payload)
        await writer.drain()  # the whole request is read by the server, which echoes it to a client not reading
        await wait_until(lambda: server.closed_idle == 1, 30, "the unread answer's connection to be closed idle")
        assert server.connection_count == 0
        received = 0
        while chunk := await asyncio.wait_for(reader.read(1 << 20), 30):  # EOF once the server has dropped it
            received += len(chunk)
        assert received < 4 + len(payload)  # the rest of the answer was dropped, not kept for a late reader
        writer.close()
    finally:
        await server.stop()
