"""`EmbeddedSession`: one client session on an `EmbeddedServer`, the `CoordinationSession` the controller, the
brokers and the simulator use on the embedded store (the server's core lives in `embedded`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from zkcontroller.coordination.api import (
    ANY_VERSION,
    CoordinationSession,
    CreateMode,
    CreateOp,
    CreateResult,
    DeleteOp,
    MultiResult,
    Op,
    SessionListener,
    SessionState,
    SetDataOp,
    SetDataResult,
    Stat,
    Watcher,
    check_multi_ops,
    validate_path,
)
from zkcontroller.coordination.embedded import Delivery, EmbeddedServer


async def _yield_once() -> None:
    await asyncio.sleep(0)


class EmbeddedSession(CoordinationSession):
    """One client session on an `EmbeddedServer`, delivering watch events on its asyncio loop.

    ``round_trip`` is awaited before each request: by default one scheduler yield, so every store call is
    an interleaving point; the simulator passes a virtual network delay instead.
    """

    def __init__(
        self,
        server: EmbeddedServer,
        session_timeout_ms: int = 18000,
        *,
        loop: asyncio.AbstractEventLoop | None = None,
        round_trip: Callable[[], Awaitable[None]] = _yield_once,
    ) -> None:
        self._server = server
        self._loop = loop or asyncio.get_running_loop()
        self._round_trip = round_trip
        self._timeout_ms = session_timeout_ms
        self._id, self._password = server.open_session(session_timeout_ms, self._sink)

    @property
    def server(self) -> EmbeddedServer:
        return self._server

    @property
    def session_id(self) -> int:
        return self._id

    @property
    def session_password(self) -> bytes:
        return self._password

    @property
    def session_timeout_ms(self) -> int:
        return self._timeout_ms

    @property
    def state(self) -> SessionState:
        return self._server.session_state(self._id)

    def _sink(self, delivery: Delivery) -> None:
        if self._loop.is_closed():
            return
        for fn, arg in delivery:
            self._loop.call_soon_threadsafe(fn, arg)

    async def create(self, path: str, data: bytes | None = b"", mode: CreateMode = CreateMode.PERSISTENT) -> str:
        validate_path(path, sequential=mode.sequential)
        await self._round_trip()
        result = self._server.single(self._id, CreateOp(path, data, mode))
        assert isinstance(result, CreateResult)
        return result.path

    async def get_data(self, path: str, watch: Watcher | None = None) -> tuple[bytes | None, Stat]:
        validate_path(path)
        await self._round_trip()
        return self._server.get_data(self._id, path, watch)

    async def get_data_many(
        self, paths: Sequence[str], watch: Watcher | None = None, *, max_in_flight: int = 10
    ) -> list[tuple[bytes | None, Stat] | None]:
        """One round trip for the whole batch: the embedded store has no connection to pipeline on, and a
        scheduler yield per node was most of the cost of loading 100k partition states."""
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        for path in paths:
            validate_path(path)
        await self._round_trip()
        return self._server.get_data_many(self._id, paths, watch)

    async def exists(self, path: str, watch: Watcher | None = None) -> Stat | None:
        validate_path(path)
        await self._round_trip()
        return self._server.exists(self._id, path, watch)

    async def get_children(self, path: str, watch: Watcher | None = None) -> list[str]:
        validate_path(path)
        await self._round_trip()
        return self._server.get_children(self._id, path, watch)

    async def set_data(self, path: str, data: bytes | None, version: int = ANY_VERSION) -> Stat:
        validate_path(path)
        await self._round_trip()
        result = self._server.single(self._id, SetDataOp(path, data, version))
        assert isinstance(result, SetDataResult)
        return result.stat

    async def delete(self, path: str, version: int = ANY_VERSION) -> None:
        validate_path(path)
        await self._round_trip()
        self._server.single(self._id, DeleteOp(path, version))

    async def multi(self, ops: Sequence[Op]) -> MultiResult:
        checked = check_multi_ops(ops)
        await self._round_trip()
        return self._server.multi(self._id, checked)

    def add_session_listener(self, listener: SessionListener) -> None:
        self._server.add_listener(self._id, listener)

    async def close(self) -> None:
        self._server.close_session(self._id)
