"""SocketServer: a broker's listener (Kafka's ``SocketServer``/``Processor``), the socket half of the protocol
server; what a request means is `broker.kafka_apis`'s business, handed in as ``handle``.

Each connection reads size-prefixed frames and answers them in order, one at a time (Kafka mutes a
channel while its request is processed). A size prefix below zero or above ``max_request_bytes``
(``socket.request.max.bytes``), a handler that asks for it (by raising an exception whose class is in
``close_on``), or any handler failure closes that connection only: the listener and every other
connection keep going. A connection on which no byte moves for ``connections.max.idle.ms`` is closed, as Kafka's
selector closes idle channels: counted from the last byte read (between frames, from the last answer sent), so a
client that stalls between frames or halfway through one does not hold a connection forever, while a large frame
that keeps arriving, however slowly, is read whole. An answer the client does not read is bounded the same way:
once no byte of it has left for that long, the connection is closed.

Connection closes are logged as Kafka 2.8.2 logs them, with the ``[SocketServer listenerType=ZK_BROKER, nodeId=N] ``
ident of the broker's ``LogContext``: an out-of-bounds size is the Selector's WARN ``Unexpected error from /<ip>;
closing connection`` over ``InvalidReceiveException: Invalid receive (size = ..)``; an idle connection the
Selector's TRACE ``About to close the idle connection from <id> due to being idle for <ms> millis``; a request the
handler refuses, or one it fails on, the Processor's ERROR ``Closing socket for <id> because of error`` over the
exception (ours, by its Python name; a ``close_on`` exception may lower the level by a ``log_level`` attribute).
``<id>`` is Kafka's connection id, ``<local ip:port>-<remote ip:port>-<index>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from zkcontroller.protocol.wire.frames import DEFAULT_MAX_REQUEST_BYTES, SIZE
from zkcontroller.runtime.log_lines import TRACE, exception_line

DEFAULT_CONNECTIONS_MAX_IDLE_MS = 600_000
"""Kafka's ``connections.max.idle.ms`` default (10 minutes)."""

CLOSE_FLUSH_S = 5.0
"""How long a closing connection may take to flush what is still buffered before it is dropped."""

log = logging.getLogger("kafka.network.Processor")
selector_log = logging.getLogger("org.apache.kafka.common.network.Selector")

FrameHandler = Callable[[bytes], Awaitable[bytes | None]]


class _Connection:
    """What Kafka's lines name a connection by: the client's address (``/127.0.0.1``) and the connection id."""

    __slots__ = ("address", "id")

    def __init__(self, writer: asyncio.StreamWriter, index: int) -> None:
        local, remote = writer.get_extra_info("sockname"), writer.get_extra_info("peername")
        self.address = f"/{remote[0]}" if remote else "/unknown"
        local_text = f"{local[0]}:{local[1]}" if local else "unknown"
        remote_text = f"{remote[0]}:{remote[1]}" if remote else "unknown"
        self.id = f"{local_text}-{remote_text}-{index}"


class ThrottledResponse(bytes):
    """An answer after which its connection reads no request until ``throttle()`` returns: Kafka's channel muted
    while a client's quota throttle lasts (``ThrottledChannel``). Empty, nothing is sent (an acks=0 Produce): only
    the mute."""

    throttle: Callable[[], Awaitable[None]]

    def __new__(cls, data: bytes, throttle: Callable[[], Awaitable[None]]) -> ThrottledResponse:
        response = super().__new__(cls, data)
        response.throttle = throttle
        return response


class SocketServer:
    def __init__(self, host: str, port: int, handle: FrameHandler, *,
                 max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
                 connections_max_idle_ms: int = DEFAULT_CONNECTIONS_MAX_IDLE_MS,
                 close_on: tuple[type[BaseException], ...] = (), node_id: int | None = None) -> None:
        self.host = host
        self._ident = "" if node_id is None else f"[SocketServer listenerType=ZK_BROKER, nodeId={node_id}] "
        """Kafka's SocketServer ``LogContext`` prefix (none when the broker id is not known)."""
        self._connection_index = 0
        self.requested_port = port
        self._handle = handle
        self.max_request_bytes = max_request_bytes
        self.connections_max_idle_ms = connections_max_idle_ms
        self._close_on = close_on
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.StreamWriter] = set()
        self._mutes: set[asyncio.Future[None]] = set()
        """Throttles under way (`ThrottledResponse`): `stop` ends them with their connections."""
        self._stopping = False
        self.closed_for_bad_input = 0
        self.closed_idle = 0
        self.requests = 0

    @property
    def port(self) -> int:
        """The bound port (the real one when started on port 0)."""
        assert self._server is not None, "not started"
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    async def start(self) -> None:
        self._stopping = False
        self._server = await asyncio.start_server(self._serve, self.host, self.requested_port, reuse_address=True)

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        self._stopping = True
        for mute in list(self._mutes):
            mute.cancel()
        for writer in list(self._connections):
            writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 5)
        self._server = None

    async def _read_frame(self, reader: asyncio.StreamReader, conn: _Connection, idle_s: float,
                          ) -> bytes | None:
        """The next frame's payload (None: a size out of bounds, reported; the connection closes).

        One idle deadline, by ``asyncio.timeout``, moved on each time bytes arrive: ``asyncio.wait_for`` would
        start a task for every read (Python 3.11), so a frame already buffered would still wait a turn of the
        loop (docs/benchmarks.md, Produce)."""
        async with asyncio.timeout(idle_s) as idle:
            (size,) = SIZE.unpack(await _read_exactly(reader, 4, idle, idle_s))
            if size < 0 or size > self.max_request_bytes:
                self.closed_for_bad_input += 1
                invalid = f"size = {size}" if size < 0 else f"size = {size} larger than {self.max_request_bytes}"
                selector_log.warning("%sUnexpected error from %s; closing connection\n"
                                     "org.apache.kafka.common.network.InvalidReceiveException: Invalid receive (%s)",
                                     self._ident, conn.address, invalid)
                return None
            idle.reschedule(asyncio.get_running_loop().time() + idle_s)  # from the size's last byte
            return await _read_exactly(reader, size, idle, idle_s)

    async def _drain(self, writer: asyncio.StreamWriter, idle_s: float) -> None:
        """Wait for an answer to leave, closing (TimeoutError) once no byte of it has for ``idle_s``.

        ``drain`` returns only when the buffer is below its low-water mark, so a large answer read slowly but
        steadily is progress, not idleness: the wait is cut into quarters of the limit and the buffer's size
        compared, so the connection closes between 1 and 1.25 times the limit after the last byte left."""
        transport = writer.transport
        buffered = transport.get_write_buffer_size()
        if buffered <= transport.get_write_buffer_limits()[0]:  # at or below low water: drain does not wait
            await writer.drain()
            return
        loop = asyncio.get_running_loop()
        last_progress = loop.time()
        while True:
            try:
                async with asyncio.timeout(idle_s / 4):
                    await writer.drain()
                return
            except TimeoutError:
                now, left = loop.time(), transport.get_write_buffer_size()
                if left < buffered:
                    last_progress, buffered = now, left
                elif now - last_progress >= idle_s:
                    raise

    async def _muted(self, response: ThrottledResponse) -> bool:
        """Read nothing more until the response's throttle ends; False if the server stopped meanwhile."""
        if self._stopping:
            return False
        mute = asyncio.ensure_future(response.throttle())
        self._mutes.add(mute)
        try:
            await mute
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not mute.cancelled() or (current is not None and current.cancelling()):
                raise
            return False
        finally:
            self._mutes.discard(mute)
        return True

    def _idle(self, conn: _Connection) -> None:
        self.closed_idle += 1
        selector_log.log(TRACE, "%sAbout to close the idle connection from %s due to being idle for %d millis",
                         self._ident, conn.id, self.connections_max_idle_ms)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections.add(writer)
        conn = _Connection(writer, self._connection_index)
        self._connection_index += 1
        try:
            idle_s = self.connections_max_idle_ms / 1000
            while True:
                try:
                    payload = await self._read_frame(reader, conn, idle_s)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return  # the client went away (between requests, or halfway through one)
                except TimeoutError:
                    self._idle(conn)
                    return
                if payload is None:
                    return
                self.requests += 1
                try:
                    response = await self._handle(payload)
                except self._close_on as e:
                    self.closed_for_bad_input += 1
                    log.log(getattr(e, "log_level", logging.ERROR), "%sClosing socket for %s because of error\n%s",
                            self._ident, conn.id, exception_line(e))
                    return
                except Exception:
                    self.closed_for_bad_input += 1
                    log.exception("%sClosing socket for %s because of error", self._ident, conn.id)
                    return
                if response is not None and (response or not isinstance(response, ThrottledResponse)):
                    writer.write(SIZE.pack(len(response)) + response)
                    try:
                        await self._drain(writer, idle_s)
                    except TimeoutError:
                        self._idle(conn)
                        writer.transport.abort()  # the unsent answer is dropped, as Kafka's Selector.close drops it
                        return
                if isinstance(response, ThrottledResponse) and not await self._muted(response):
                    return
        except ConnectionError:
            return
        finally:
            self._connections.discard(writer)
            writer.close()  # flushes what is buffered first: bounded, then dropped
            with contextlib.suppress(Exception):
                async with asyncio.timeout(CLOSE_FLUSH_S):
                    await writer.wait_closed()
            writer.transport.abort()


async def _read_exactly(reader: asyncio.StreamReader, n: int, idle: asyncio.Timeout, idle_s: float) -> bytes:
    """``n`` bytes, the idle deadline moved to ``idle_s`` from now each time some arrive (Kafka counts idleness
    from the last byte). A frame already buffered is one ``read``, as cheap as ``readexactly``."""
    data = await reader.read(n)
    if len(data) == n:
        return data
    parts = [data]
    left = n - len(data)
    loop = asyncio.get_running_loop()
    while True:
        if not data:
            raise asyncio.IncompleteReadError(b"".join(parts), n)
        idle.reschedule(loop.time() + idle_s)
        data = await reader.read(left)
        parts.append(data)
        left -= len(data)
        if left == 0:
            return b"".join(parts)
