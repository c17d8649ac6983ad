"""Backends: where sessions come from. One per store (an embedded server, or a ZooKeeper ensemble)."""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Callable

from kazoo.client import KazooClient

from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.coordination.embedded import EmbeddedServer, EmbeddedSession
from zkcontroller.coordination.kazoo_store import KazooSession, stop_kazoo_client


class CoordinationBackend(abc.ABC):
    """Opens sessions on one store, and expires them on demand (for failure drills and tests)."""

    name: str

    @abc.abstractmethod
    async def new_session(self, session_timeout_ms: int = 18000) -> CoordinationSession: ...

    @abc.abstractmethod
    async def expire_session(self, session: CoordinationSession) -> None:
        """Make the store expire ``session`` as if its client had gone silent past the timeout."""

    async def close(self) -> None:
        """Release what the backend holds (sessions are closed by their owners)."""
        return None


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
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None


class ZooKeeperBackend(CoordinationBackend):
    """Sessions on a real ZooKeeper server or ensemble, optionally under a chroot (created if missing)."""

    name = "zookeeper"

    def __init__(self, connect_string: str, chroot: str = "", *, max_in_flight: int = 128) -> None:
        self.connect_string = connect_string
        self.chroot = chroot.rstrip("/")
        self.max_in_flight = max_in_flight
        self._chroot_ready = not self.chroot

    @property
    def hosts(self) -> str:
        return self.connect_string + self.chroot

    async def _ensure_chroot(self) -> None:
        if self._chroot_ready:
            return
        root = await KazooSession.connect(self.connect_string)
        try:
            await root.ensure_path(self.chroot)
        finally:
            await root.close()
        self._chroot_ready = True

    async def new_session(self, session_timeout_ms: int = 18000) -> KazooSession:
        await self._ensure_chroot()
        return await KazooSession.connect(self.hosts, session_timeout_ms, max_in_flight=self.max_in_flight)

    async def expire_session(self, session: CoordinationSession) -> None:
        """ZooKeeper's standard way: a second connection takes over the session and closes it."""
        twin = KazooClient(
            hosts=self.hosts,
            timeout=session.session_timeout_ms / 1000,
            client_id=(session.session_id, session.session_password),
        )
        await asyncio.to_thread(twin.start, 15)
        await asyncio.to_thread(stop_kazoo_client, twin)
