"""Fixtures for `KafkaZkClient` contract tests: clients on the parametrized ``backend``, closed after."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.zk.fencing import BatchLimits
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

MakeClient = Callable[..., Awaitable[KafkaZkClient]]


class FakeClock:
    """A millisecond clock that only moves when told (timestamps in znodes are then predictable)."""

    def __init__(self, start_ms: int = 1_662_110_000_000) -> None:
        self.now_ms = start_ms

    def __call__(self) -> int:
        return self.now_ms


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def make_client(backend: CoordinationBackend, clock: FakeClock) -> AsyncIterator[MakeClient]:
    """``await make_client(session=None, limits=None, seed=0)``: a client on a new (or given) session."""
    sessions: list[CoordinationSession] = []
    seeds = itertools.count()

    async def make(session: CoordinationSession | None = None, *, limits: BatchLimits | None = None,
                   seed: int | None = None) -> KafkaZkClient:
        if session is None:
            session = await backend.new_session()
            sessions.append(session)
        rng = random.Random(next(seeds) if seed is None else seed)
        return KafkaZkClient(session, clock, rng=rng, limits=limits)

    yield make
    for session in sessions:
        with contextlib.suppress(Exception):
            await session.close()


async def snapshot(session: CoordinationSession, root: str = "/") -> dict[str, tuple[bytes, int]]:
    """Every node under ``root`` with its data and version: compare before/after to prove nothing changed."""
    out: dict[str, tuple[bytes, int]] = {}
    data, stat = await session.get_data(root)
    out[root] = (data, stat.version)
    for child in await session.get_children(root):
        out.update(await snapshot(session, f"{root.rstrip('/')}/{child}"))
    return out


async def eventually(check: Callable[[], Awaitable[bool]], what: str, timeout_s: float = 20.0) -> None:
    """Await ``check()`` until it is true, failing after ``timeout_s`` (for effects the server applies
    asynchronously, such as an expired session's ephemeral nodes going away)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        await asyncio.sleep(0.005)
