"""`DelegatingSession`: a session that forwards everything to another one, for wrappers to build on.

Every request goes through `_forward`, so a wrapper changes how requests are made (retried, delayed,
observed) by overriding that one method, or a single operation by overriding it alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from zkcontroller.coordination.api import (
    ANY_VERSION,
    CoordinationSession,
    CreateMode,
    MultiResult,
    Op,
    SessionListener,
    SessionState,
    Stat,
    Watcher,
)

T = TypeVar("T")


class DelegatingSession(CoordinationSession):
    def __init__(self, inner: CoordinationSession) -> None:
        self.inner = inner

    async def _forward(self, call: Callable[[], Awaitable[T]]) -> T:
        return await call()

    @property
    def session_id(self) -> int:
        return self.inner.session_id

    @property
    def session_password(self) -> bytes:
        return self.inner.session_password

    @property
    def session_timeout_ms(self) -> int:
        return self.inner.session_timeout_ms

    @property
    def state(self) -> SessionState:
        return self.inner.state

    async def create(self, path: str, data: bytes | None = b"", mode: CreateMode = CreateMode.PERSISTENT) -> str:
        return await self._forward(lambda: self.inner.create(path, data, mode))

    async def get_data(self, path: str, watch: Watcher | None = None) -> tuple[bytes | None, Stat]:
        return await self._forward(lambda: self.inner.get_data(path, watch))

    async def get_data_many(
        self, paths: Sequence[str], watch: Watcher | None = None, *, max_in_flight: int = 10
    ) -> list[tuple[bytes | None, Stat] | None]:
        """The batch goes to the inner session whole, keeping its own batching."""
        return await self._forward(lambda: self.inner.get_data_many(paths, watch, max_in_flight=max_in_flight))

    async def exists(self, path: str, watch: Watcher | None = None) -> Stat | None:
        return await self._forward(lambda: self.inner.exists(path, watch))

    async def get_children(self, path: str, watch: Watcher | None = None) -> list[str]:
        return await self._forward(lambda: self.inner.get_children(path, watch))

    async def set_data(self, path: str, data: bytes | None, version: int = ANY_VERSION) -> Stat:
        return await self._forward(lambda: self.inner.set_data(path, data, version))

    async def delete(self, path: str, version: int = ANY_VERSION) -> None:
        await self._forward(lambda: self.inner.delete(path, version))

    async def multi(self, ops: Sequence[Op]) -> MultiResult:
        return await self._forward(lambda: self.inner.multi(ops))

    def add_session_listener(self, listener: SessionListener) -> None:
        self.inner.add_session_listener(listener)

    async def close(self) -> None:
        await self.inner.close()
