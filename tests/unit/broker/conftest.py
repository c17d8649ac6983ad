"""The replica managers most broker tests start from (a module may define its own ``brokers``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .replica_helpers import Brokers, RecordingIsrManager


@pytest.fixture
def brokers() -> Iterator[Brokers]:
    """Three brokers whose ISR proposals are kept, not sent (`RecordingIsrManager`)."""
    b = Brokers()
    for rm in b.rms.values():
        rm.isr_manager = RecordingIsrManager()  # type: ignore[assignment]
    yield b
    b.close()
