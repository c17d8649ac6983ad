"""`EmbeddedBackend`: sessions on an in-process `EmbeddedServer` (the default store, and the simulator's)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded import EmbeddedServer
from zkcontroller.coordination.embedded_session import EmbeddedSession


class EmbeddedBackend(CoordinationBackend):
    """Sessions on an in-process `EmbeddedServer`.

    Like ZooKeeper's session tracker, a task checks for timed-out sessions every ``tick_ms`` of loop time (the
    simulator's virtual time, or real time); pass ``tick_ms=None`` to drive `EmbeddedServer.tick` yourself.
    """

    name = "embedded"

    def __init__(
        self, clock: Callable[[], int], server: EmbeddedServer | None = None, *, tick_ms: int | None = 500
    ) -> None:
        self.server = server or EmbeddedServer(clock)
        self._tick_ms = tick_ms
        self._ticker: asyncio.Task[None] | None = None

    async def new_session(self, session_timeout_ms: int = 18000) -> EmbeddedSession:
        if self._tick_ms is not None and self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick_forever(self._tick_ms / 1000))
        return EmbeddedSession(self.server, session_timeout_ms)

    async def _tick_forever(self, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            self.server.tick()

    async def expire_session(self, session: CoordinationSession) -> None:
        self.server.expire_session(session.session_id)

    async def close(self) -> None:
        """Stops the session ticker and waits for it to end: a ticker only asked to cancel is still pending if
        the loop closes next, and asyncio then reports it destroyed ("Task was destroyed but it is pending")."""
        ticker, self._ticker = self._ticker, None
        if ticker is None:
            return
        ticker.cancel()
        # `wait` does not raise the ticker's CancelledError, only one aimed at close() itself (which must pass on);
        # closing often runs in a task already being cancelled (Ctrl-C, SIGTERM), so `cancelling()` cannot tell.
        await asyncio.wait((ticker,))
