"""Backends: where sessions come from. One per store: `EmbeddedBackend` (``embedded_backend``) and
`ZooKeeperBackend` (``kazoo_backend``), each in its own module so that the embedded store never imports kazoo."""

from __future__ import annotations

import abc

from zkcontroller.coordination.api import CoordinationSession


class CoordinationBackend(abc.ABC):
    """Opens sessions on one store, and expires them on demand (for failure drills and tests)."""

    name: str
    chroot: str = ""
    """The path the sessions are rooted at ("" for none)."""

    @abc.abstractmethod
    async def new_session(self, session_timeout_ms: int = 18000) -> CoordinationSession: ...

    @abc.abstractmethod
    async def expire_session(self, session: CoordinationSession) -> None:
        """Make the store expire ``session`` as if its client had gone silent past the timeout."""

    async def make_sure_chroot_exists(self) -> None:
        """Create `chroot` if missing, on a connection of its own that is closed after (Kafka's broker start-up,
        ``KafkaServer.initZkClient``); nothing to do without a chroot."""
        return None

    async def close(self) -> None:
        """Release what the backend holds (sessions are closed by their owners)."""
        return None
