"""`ZooKeeperBackend`: sessions on a real ZooKeeper server or ensemble, through kazoo."""

from __future__ import annotations

import asyncio

from kazoo.client import KazooClient

from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.kazoo_store import KazooSession, stop_kazoo_client


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
