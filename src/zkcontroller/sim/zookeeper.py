"""`SimZooKeeper`: the embedded store as the simulator's ZooKeeper, on virtual time.

The `EmbeddedServer` runs on the virtual clock, so sessions whose client stops talking expire after their
timeout of virtual time (a ticker checks every ``tick_ms``, as ZooKeeper's session tracker does). Every
request pays a latency drawn from the simulator's generator, twice: on the way in (then the server applies it)
and on the way back. Requests of one session are applied and answered in the order sent, as over ZooKeeper's
single TCP connection. A `SimSession` wraps each session at the `CoordinationSession` API:

- it waits while its host is paused (a GC freeze runs nothing), and a request already on the wire is still
  applied by the server while its sender is frozen;
- it hands each landed write to the world's observer (the invariant checker, the split-brain figures);
- the ``no-controller-epoch-check`` mutation strips the ``/controller_epoch`` check from the controller's
  fenced multis at this seam, so the controller's own code runs unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from zkcontroller.coordination.api import (
    ANY_VERSION,
    CheckOp,
    CheckResult,
    CoordinationSession,
    CreateMode,
    CreateOp,
    DeleteOp,
    ErrorResult,
    MultiResult,
    Op,
    SessionState,
    SetDataOp,
    Stat,
    Watcher,
)
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.delegating import DelegatingSession
from zkcontroller.coordination.embedded import Delivery, EmbeddedServer
from zkcontroller.coordination.embedded_session import EmbeddedSession
from zkcontroller.coordination.errors import ErrorCode, ZkError
from zkcontroller.zk import paths
from zkcontroller.zk.errors import require_data

T = TypeVar("T")


class SessionOwner(Protocol):
    """Who a session belongs to: a host (which may be paused) or the simulator's own admin client."""

    name: str

    async def wait_runnable(self) -> None: ...

    def deliver(self, delivery: Delivery) -> None: ...


class WriteObserver(Protocol):
    def on_write(self, owner: SessionOwner, ops: Sequence[Op], landed: bool, fenced: bool) -> None: ...


@dataclass
class StoreLatency:
    """Per-leg latency in ms, uniform in [min_ms, max_ms], times ``slow_factor`` (the slow-store fault)."""

    min_ms: float = 0.5
    max_ms: float = 2.0
    slow_factor: float = 1.0


async def _no_wait() -> None:
    return None


class _SimEmbeddedSession(EmbeddedSession):
    """An embedded session whose watch and session events go through its owner (held while it is paused)."""

    def __init__(self, server: EmbeddedServer, timeout_ms: int, owner: SessionOwner) -> None:
        self._owner = owner
        super().__init__(server, timeout_ms, round_trip=_no_wait)

    def _sink(self, delivery: Delivery) -> None:
        if delivery:
            self._owner.deliver(delivery)


class SimZooKeeper:
    def __init__(self, rng_uniform: Callable[[float, float], float], clock: Callable[[], int],
                 latency: StoreLatency | None = None, *, tick_ms: int = 200) -> None:
        self.server = EmbeddedServer(clock)
        self.latency = latency or StoreLatency()
        self._uniform = rng_uniform
        self._tick_ms = tick_ms
        self._last_apply: dict[int, float] = {}
        self._last_reply: dict[int, float] = {}
        self.observer: WriteObserver | None = None
        self.strip_epoch_check = False
        """The ``no-controller-epoch-check`` mutation: fenced multis lose their ``/controller_epoch`` check."""
        self.rewrite: Callable[[Op], Op] | None = None
        """A mutation that rewrites each write op on its way to the server (``reassign-drops-origin-early``)."""
        self.read_rewrite: Callable[[str, bytes], bytes] | None = None
        """A mutation that rewrites what a broker's batched read returns (``unclean-read-as-enabled``)."""
        self.ops = 0
        self._ticker: asyncio.Task[None] | None = None
        self._observer_sid: int | None = None

    def start(self) -> None:
        self._ticker = asyncio.get_running_loop().create_task(self._tick_forever(), name="sim-zk-ticker")

    async def _tick_forever(self) -> None:
        while True:
            await asyncio.sleep(self._tick_ms / 1000)
            self.server.tick()

    def _leg_s(self) -> float:
        lat = self.latency
        return self._uniform(lat.min_ms, lat.max_ms) * lat.slow_factor / 1000

    def apply_at(self, session_id: int) -> float:
        """When a request sent now reaches the server: after its latency and after the session's previous one."""
        now = asyncio.get_running_loop().time()
        at = max(now + self._leg_s(), self._last_apply.get(session_id, 0.0))
        self._last_apply[session_id] = at
        return at

    def reply_at(self, session_id: int) -> float:
        now = asyncio.get_running_loop().time()
        at = max(now + self._leg_s(), self._last_reply.get(session_id, 0.0))
        self._last_reply[session_id] = at
        return at

    def open(self, owner: SessionOwner, timeout_ms: int) -> SimSession:
        return SimSession(_SimEmbeddedSession(self.server, timeout_ms, owner), self, owner)

    def read(self, path: str) -> tuple[bytes, Stat] | None:
        """A znode as the server holds it now (the simulator's own look: no session latency, no watch). For the
        nodes with data (the ones the simulator reads): a node created with null data (`ensure_path`'s parents,
        ``/brokers/topics/T/partitions/...``) raises `NullZnodeDataError` here."""
        observer = self._observer()
        if self.server.exists(observer, path, None) is None:
            return None
        data, stat = self.server.get_data(observer, path, None)
        return require_data(data, path), stat

    def children(self, path: str) -> list[str]:
        observer = self._observer()
        if self.server.exists(observer, path, None) is None:  # not `read`: a parent's data is null
            return []
        return self.server.get_children(observer, path, None)

    def _observer(self) -> int:
        """The simulator's own session for its looks at the store (never expires, no watches delivered)."""
        if self._observer_sid is None:
            self._observer_sid, _ = self.server.open_session(2**62, lambda _delivery: None)
        return self._observer_sid

    def controller_epoch(self) -> int:
        """The epoch in ``/controller_epoch`` now (0 before the first election)."""
        node = self.read(paths.CONTROLLER_EPOCH)
        return 0 if node is None else int(node[0])


async def _sleep_until(when: float) -> None:
    loop = asyncio.get_running_loop()
    delay = when - loop.time()
    await asyncio.sleep(delay if delay > 0 else 0)


def _is_epoch_check(op: Op) -> bool:
    return isinstance(op, CheckOp) and op.path == paths.CONTROLLER_EPOCH


class SimSession(DelegatingSession):
    """One host's session: latency each way, frozen with its host, writes observed (see module doc)."""

    def __init__(self, inner: EmbeddedSession, zk: SimZooKeeper, owner: SessionOwner) -> None:
        super().__init__(inner)
        self._zk = zk
        self.owner = owner

    async def _call(self, call: Callable[[], Awaitable[T]], ops: Sequence[Op] | None = None,
                    fenced: bool = False) -> T:
        await self.owner.wait_runnable()
        sid = self.inner.session_id
        await _sleep_until(self._zk.apply_at(sid))
        self._zk.ops += 1
        error: ZkError | None = None
        result: T | None = None
        try:
            result = await call()  # applied now: the embedded session does not yield
        except ZkError as e:
            error = e
        if ops is not None and self._zk.observer is not None:
            landed = error is None and (not isinstance(result, MultiResult) or result.ok)
            self._zk.observer.on_write(self.owner, ops, landed, fenced)
        await _sleep_until(self._zk.reply_at(sid))
        await self.owner.wait_runnable()
        if error is not None:
            raise error
        return result  # type: ignore[return-value]

    async def _forward(self, call: Callable[[], Awaitable[T]]) -> T:
        return await self._call(call)

    async def create(self, path: str, data: bytes | None = b"", mode: CreateMode = CreateMode.PERSISTENT) -> str:
        return await self._call(lambda: self.inner.create(path, data, mode), [CreateOp(path, data, mode)])

    async def set_data(self, path: str, data: bytes | None, version: int = ANY_VERSION) -> Stat:
        if self._zk.rewrite is not None:
            rewritten = self._zk.rewrite(SetDataOp(path, data, version))
            assert isinstance(rewritten, SetDataOp)
            data = rewritten.data
        return await self._call(lambda: self.inner.set_data(path, data, version), [SetDataOp(path, data, version)])

    async def delete(self, path: str, version: int = ANY_VERSION) -> None:
        await self._call(lambda: self.inner.delete(path, version), [DeleteOp(path, version)])

    async def get_data_many(self, paths_: Sequence[str], watch: Watcher | None = None, *,
                            max_in_flight: int = 10) -> list[tuple[bytes | None, Stat] | None]:
        found = await self._call(lambda: self.inner.get_data_many(paths_, watch, max_in_flight=max_in_flight))
        rewrite = self._zk.read_rewrite
        if rewrite is None or self.owner.name == "admin":
            return found
        return [f if f is None or f[0] is None else (rewrite(path, f[0]), f[1])
                for path, f in zip(paths_, found, strict=True)]

    async def multi(self, ops: Sequence[Op]) -> MultiResult:
        if self._zk.rewrite is not None:
            ops = [self._zk.rewrite(op) for op in ops]
        fenced = any(_is_epoch_check(op) for op in ops)
        writes = [op for op in ops if not isinstance(op, CheckOp)]
        if not (fenced and self._zk.strip_epoch_check):
            return await self._call(lambda: self.inner.multi(ops), writes, fenced)
        checks = [i for i, op in enumerate(ops) if _is_epoch_check(op)]
        kept = [op for op in ops if not _is_epoch_check(op)]
        result = await self._call(lambda: self.inner.multi(kept), writes, fenced)
        out = list(result.results)
        for i in checks:  # put back a passing check where the controller expects one
            out.insert(i, CheckResult() if result.ok else ErrorResult(ErrorCode.OK))
        return MultiResult(tuple(out))


class SimHostBackend(CoordinationBackend):
    """The `CoordinationBackend` one host sees: its sessions are `SimSession`s owned by that host."""

    name = "sim"

    def __init__(self, zk: SimZooKeeper, owner: SessionOwner) -> None:
        self.zk = zk
        self.owner = owner
        self.sessions: list[SimSession] = []

    async def new_session(self, session_timeout_ms: int = 18000) -> CoordinationSession:
        await self.owner.wait_runnable()
        session = self.zk.open(self.owner, session_timeout_ms)
        self.sessions.append(session)
        return session

    async def expire_session(self, session: CoordinationSession) -> None:
        self.zk.server.expire_session(session.session_id)

    def live_session_ids(self) -> list[int]:
        server = self.zk.server
        return [s.session_id for s in self.sessions
                if server.session_state(s.session_id) in (SessionState.CONNECTED, SessionState.DISCONNECTED)]
