"""Kafka's ZooKeeperClient retry rule (spec §1.7): a request that fails with CONNECTIONLOSS is sent again once
the session is connected again, as often as it takes; any other outcome, session expiry included, is final.

A retried write may find its own earlier, committed attempt (NODEEXISTS, BADVERSION): the Kafka-level callers
that care (controller election, broker registration) check for exactly that, as Kafka's do.
"""

from __future__ import annotations

import asyncio
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
from zkcontroller.coordination.errors import ConnectionLossError

T = TypeVar("T")

STALE_STATE_BACKOFF_S = 0.05
"""Pause before retrying when the session still looks connected right after a connection loss."""


class ReconnectingSession(CoordinationSession):
    """Wraps a session so that connection losses are waited out instead of reaching the caller."""

    def __init__(self, inner: CoordinationSession) -> None:
        self.inner = inner
        self._connected = asyncio.Event()
        if inner.state is SessionState.CONNECTED:
            self._connected.set()
        inner.add_session_listener(self._on_state)
        self.retries = 0

    def _on_state(self, state: SessionState) -> None:
        if state is SessionState.DISCONNECTED:
            self._connected.clear()
        else:  # connected again, or gone for good: either way waiters must wake up
            self._connected.set()

    async def _retrying(self, call: Callable[[], Awaitable[T]]) -> T:
        while True:
            try:
                return await call()
            except ConnectionLossError:
                self.retries += 1
                if self.inner.state is SessionState.CONNECTED:
                    await asyncio.sleep(STALE_STATE_BACKOFF_S)
                else:
                    self._connected.clear()
                    await self._connected.wait()

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

    async def create(self, path: str, data: bytes = b"", mode: CreateMode = CreateMode.PERSISTENT) -> str:
        return await self._retrying(lambda: self.inner.create(path, data, mode))

    async def get_data(self, path: str, watch: Watcher | None = None) -> tuple[bytes, Stat]:
        return await self._retrying(lambda: self.inner.get_data(path, watch))

    async def get_data_many(
        self, paths: Sequence[str], watch: Watcher | None = None, *, max_in_flight: int = 10
    ) -> list[tuple[bytes, Stat] | None]:
        """The batch goes to the inner session whole, keeping its batching; a connection loss re-sends all of
        it (reads are idempotent, and the loss disarmed every watch, so re-reading re-arms them all)."""
        return await self._retrying(lambda: self.inner.get_data_many(paths, watch, max_in_flight=max_in_flight))

    async def exists(self, path: str, watch: Watcher | None = None) -> Stat | None:
        return await self._retrying(lambda: self.inner.exists(path, watch))

    async def get_children(self, path: str, watch: Watcher | None = None) -> list[str]:
        return await self._retrying(lambda: self.inner.get_children(path, watch))

    async def set_data(self, path: str, data: bytes, version: int = ANY_VERSION) -> Stat:
        return await self._retrying(lambda: self.inner.set_data(path, data, version))

    async def delete(self, path: str, version: int = ANY_VERSION) -> None:
        await self._retrying(lambda: self.inner.delete(path, version))

    async def multi(self, ops: Sequence[Op]) -> MultiResult:
        return await self._retrying(lambda: self.inner.multi(ops))

    def add_session_listener(self, listener: SessionListener) -> None:
        self.inner.add_session_listener(listener)

    async def close(self) -> None:
        await self.inner.close()
