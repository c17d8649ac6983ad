"""Fixtures for `KafkaZkClient` contract tests: clients on the parametrized ``backend``, closed after."""

from __future__ import annotations

import contextlib
import itertools
import random
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from tests.helpers import ManualClock

from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.zk.fencing import BatchLimits
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

MakeClient = Callable[..., Awaitable[KafkaZkClient]]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def make_client(backend: CoordinationBackend, clock: ManualClock) -> AsyncIterator[MakeClient]:
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

