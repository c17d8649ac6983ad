"""The replica managers most broker tests start from (a module may define its own ``brokers``), and the
ZooKeeper client on an embedded store the ones that read or write znodes use (a module may define its own
``zk``), and one on a manual clock for the config-change listener's tests (``store``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from tests.helpers import ManualClock, embedded_zk_client

from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

from .replica_helpers import Brokers, RecordingIsrManager


@pytest.fixture
def brokers() -> Iterator[Brokers]:
    """Three brokers whose ISR proposals are kept, not sent (`RecordingIsrManager`)."""
    b = Brokers()
    for rm in b.rms.values():
        rm.isr_manager = RecordingIsrManager()  # type: ignore[assignment]
    yield b
    b.close()


@pytest.fixture
async def zk() -> AsyncIterator[KafkaZkClient]:
    """`embedded_zk_client`: a fresh embedded store, its top-level paths created (the producer-id block empty)."""
    async with embedded_zk_client() as client:
        yield client


@pytest.fixture
async def store() -> AsyncIterator[tuple[KafkaZkClient, ManualClock]]:
    """An embedded store on a manual clock without a session ticker (the clock jumps minutes: no expiry)."""
    clock = ManualClock()
    backend = EmbeddedBackend(clock, tick_ms=None)
    session = await backend.new_session()
    zk = KafkaZkClient(session, clock)
    await zk.create_top_level_paths()
    try:
        yield zk, clock
    finally:
        await session.close()
        await backend.close()
