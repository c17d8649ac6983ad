"""An asyncio loop with real loopback sockets and a virtual clock, for tests of time limits on real connections.

`zkcontroller.sim.loop.VirtualTimeLoop` has no I/O. This one is asyncio's selector loop whose ``time()`` is
virtual: when nothing is ready to run, no socket is ready, and no byte is still on its way between two of the
loop's sockets (Linux's ``TCP_INFO``: more data bytes sent by one end than received by the other), the clock
jumps to the next timer instead of the loop sleeping. So a test waits on conditions
(the server's counters, EOF, an answer) and never on wall time, and an idle limit of a virtual second passes in
no wall time. A byte that is sent but cannot leave (the peer's window is shut) is not in flight: time passes
for it, as the idle limit on a stuck answer needs.
"""

from __future__ import annotations

import asyncio
import selectors
import socket
import struct
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_IN_FLIGHT_POLL_S = 0.001
"""How long one real wait for bytes in flight lasts before they are counted again (they land in microseconds)."""
_TCP_INFO_LEN = 232
_BYTES_RECEIVED_AT = 128
"""``struct tcp_info``: ``tcpi_bytes_received`` (u64); ``tcpi_bytes_sent`` and ``tcpi_bytes_retrans`` follow at 200."""
_BYTES_SENT_AT = 200


def _data_bytes(sock: socket.socket) -> tuple[int, int]:
    """(data bytes sent, retransmissions aside; data bytes received) by this end of a TCP connection."""
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_LEN)
    (received,) = struct.unpack_from("Q", info, _BYTES_RECEIVED_AT)
    sent, retransmitted = struct.unpack_from("QQ", info, _BYTES_SENT_AT)
    return sent - retransmitted, received


class _QuiescentSelector:
    """The loop's selector: a wait with nothing ready and nothing in flight moves the clock instead."""

    def __init__(self) -> None:
        self._real = selectors.DefaultSelector()
        self.loop: VirtualClockLoop | None = None

    def __getattr__(self, name: str) -> Any:  # register, modify, unregister, get_key, get_map, close
        return getattr(self._real, name)

    def _bytes_in_flight(self) -> bool:
        """Whether one of the loop's connected sockets has sent bytes its peer (also the loop's) has not received.
        A peer outside the loop (or not registered: its reading paused) is not waited for."""
        ends: dict[tuple[Any, Any], tuple[int, int]] = {}  # (this end, its peer) → data bytes sent, received
        for key in self._real.get_map().values():  # asyncio registers file descriptors
            try:
                with socket.socket(fileno=socket.dup(key.fd)) as sock:
                    if sock.type == socket.SOCK_STREAM and sock.family in (socket.AF_INET, socket.AF_INET6):
                        ends[sock.getsockname(), sock.getpeername()] = _data_bytes(sock)
            except OSError:  # not a socket, listening, or already shut
                continue
        for (name, peer), (sent, _received) in ends.items():
            other = ends.get((peer, name))
            if other is not None and sent > other[1]:
                return True
        return False

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        events = self._real.select(0)
        if events or timeout == 0:
            return events
        while self._bytes_in_flight():
            events = self._real.select(_IN_FLIGHT_POLL_S)
            if events:
                return events
        assert self.loop is not None
        if timeout is None:
            raise RuntimeError(f"every task waits, no byte is on its way and no timer is due at "
                               f"t={self.loop.time():.3f}s: nothing can happen any more")
        self.loop.advance(timeout)
        return []


class VirtualClockLoop(asyncio.SelectorEventLoop):
    """asyncio's selector loop on virtual seconds from 0.0 (see the module's docstring)."""

    def __init__(self) -> None:
        selector = _QuiescentSelector()
        super().__init__(selector)  # type: ignore[arg-type]
        selector.loop = self
        self._now = 0.0

    def time(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds


def run_on_virtual_clock(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` on a fresh `VirtualClockLoop`, then close the loop."""
    loop = VirtualClockLoop()
    try:
        return loop.run_until_complete(main)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
