"""`ZooKeeperBackend`: sessions on a real ZooKeeper server or ensemble, through kazoo."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable

from kazoo.client import KazooClient

from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.errors import NoNodeError
from zkcontroller.coordination.kazoo_store import KazooSession, stop_kazoo_client


class ChrootMissingError(NoNodeError):
    """The chroot named in a connect string does not exist (and this backend must not create it). The message
    is whole on its own (not the base's "NO_NODE for <path>"): an admin command prints it as its one line."""

    def __init__(self, chroot: str, connect_string: str) -> None:
        super().__init__(None, f"ZooKeeper chroot {chroot} does not exist on {connect_string}: check the path in "
                               f"--zookeeper, or start a broker with zookeeper.connect={connect_string}{chroot} "
                               "first (brokers create their chroot)")
        self.path = chroot


class ZooKeeperBackend(CoordinationBackend):
    """Sessions on a real ZooKeeper server or ensemble, optionally under a chroot: created if missing, as a
    Kafka broker creates its own (``create_chroot``), or required to exist, as an admin tool wants it."""

    name = "zookeeper"

    def __init__(self, connect_string: str, chroot: str = "", *, max_in_flight: int = 128,
                 create_chroot: bool = True, on_slow_connect: Callable[[], None] | None = None) -> None:
        """``on_slow_connect``: called when a connection is slow to come up (`KazooSession.connect`'s ``on_slow``),
        for a command to say what it waits for; at most once per backend, though the chroot check and every
        session (one per broker in a cluster) each connect."""
        self.connect_string = connect_string
        self.on_slow_connect = _once(on_slow_connect) if on_slow_connect is not None else None
        self.chroot = chroot.rstrip("/")
        self.max_in_flight = max_in_flight
        self.create_chroot = create_chroot
        self._chroot_ready = not self.chroot
        self._sessions: weakref.WeakSet[KazooSession] = weakref.WeakSet()

    @property
    def hosts(self) -> str:
        return self.connect_string + self.chroot

    async def make_sure_chroot_exists(self) -> None:
        """Create the chroot (and its parents) if missing, on a connection to the ensemble's root of its own,
        closed after: what each Kafka broker does as it starts. Done whatever `create_chroot` says (a broker
        asks for it)."""
        if not self.chroot:
            return
        root = await KazooSession.connect(self.connect_string, on_slow=self.on_slow_connect)
        try:
            await root.ensure_path(self.chroot)
        finally:
            await root.close()
        self._chroot_ready = True

    async def _ensure_chroot(self) -> None:
        if self._chroot_ready:
            return
        if self.create_chroot:
            await self.make_sure_chroot_exists()
            return
        root = await KazooSession.connect(self.connect_string, on_slow=self.on_slow_connect)
        try:
            if await root.exists(self.chroot) is None:
                raise ChrootMissingError(self.chroot, self.connect_string)
        finally:
            await root.close()
        self._chroot_ready = True

    async def new_session(self, session_timeout_ms: int = 18000) -> KazooSession:
        await self._ensure_chroot()
        session = await KazooSession.connect(self.hosts, session_timeout_ms, max_in_flight=self.max_in_flight,
                                             on_slow=self.on_slow_connect)
        self._sessions.add(session)
        return session

    async def close(self) -> None:
        """Close every session this backend opened that its owner abandoned (a crash drill leaves one open on
        purpose, for the server to expire). Otherwise kazoo's connection thread outlives its user: it pings and
        reconnects forever, drawing its jitter from the process-wide ``random``."""
        for session in list(self._sessions):
            await session.close()

    async def expire_session(self, session: CoordinationSession) -> None:
        """ZooKeeper's standard way: a second connection takes over the session and closes it."""
        twin = KazooClient(
            hosts=self.hosts,
            timeout=session.session_timeout_ms / 1000,
            client_id=(session.session_id, session.session_password),
        )
        await asyncio.to_thread(twin.start, 15)
        await asyncio.to_thread(stop_kazoo_client, twin)


def _once(hook: Callable[[], None]) -> Callable[[], None]:
    """``hook``, called on the first call only (all calls come from the event loop's thread)."""
    called = False

    def first_time_only() -> None:
        nonlocal called
        if not called:
            called = True
            hook()

    return first_time_only
