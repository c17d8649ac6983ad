"""Backends: where sessions come from. One per store: `EmbeddedBackend` (``embedded_backend``) and
`ZooKeeperBackend` (``kazoo_backend``), each in its own module so that the embedded store never imports kazoo."""

from __future__ import annotations

import abc

from zkcontroller.coordination.api import CoordinationSession


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
