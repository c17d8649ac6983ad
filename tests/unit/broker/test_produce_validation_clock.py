"""An offloaded record check reads the broker's clock when its walk starts, as Kafka's ``Log.append`` reads it for
LogValidator: not when the request reached the check, since a walk may wait behind another one for the worker. On
the test's manual clock, moved while the walk waits for its turn."""

from __future__ import annotations

import struct
from typing import Any

import cramjam
import pytest
from tests.unit.broker.test_produce_offload_bounds import JUST_PAST, KNOWN, Broker
from tests.unit.broker.v2_batches import numbered
from tests.wire.test_produce_offload_wire import KEYED_RECORD

from zkcontroller.broker.produce import ProducePartition, produce
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire.record_sets import INVALID_TIMESTAMP, crc32c
from zkcontroller.runtime import blocking_worker

RECORD_TIME = 60_000
"""Every record's timestamp (CreateTime)."""
MAX_DIFFERENCE_MS = 1_000
"""The topic's ``message.timestamp.difference.max.ms``."""


def zstd_batch_at(n: int, timestamp: int) -> bytes:
    """A zstd v2 batch of ``n`` keyed records, all at ``timestamp``, past the inline limit (checked off the loop)."""
    compressor = cramjam.zstd.Compressor()
    compressor.compress(numbered(KEYED_RECORD, n))
    head = struct.pack(">qiibIhiqqqhii", 0, 0, 0, 2, 0, 4, n - 1, timestamp, timestamp, -1, -1, -1, n)
    out = bytearray(head + bytes(compressor.finish()))
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


async def send_waiting(monkeypatch: pytest.MonkeyPatch, start_ms: int, walk_starts_ms: int) -> Any:
    """The batch produced with the clock at ``start_ms``, moved to ``walk_starts_ms`` while the check waits for the
    worker (another walk ahead of it); the partition's answer."""
    broker = Broker()
    broker.compacted = False
    broker.runtime.now = start_ms
    real_run = blocking_worker.run

    async def after_a_wait(*args: Any, **kwargs: Any) -> Any:
        broker.runtime.advance(walk_starts_ms - broker.runtime.now)
        return await real_run(*args, **kwargs)
    monkeypatch.setattr(blocking_worker, "run", after_a_wait)
    target = broker.target()
    target.timestamp_difference_max_ms = lambda _topic: MAX_DIFFERENCE_MS
    [got] = await produce(9, 1, 30_000, "c", [ProducePartition("t", 0, zstd_batch_at(JUST_PAST, RECORD_TIME))],
                          cache=KNOWN, target=target)  # type: ignore[arg-type]
    return got, broker


async def test_the_walk_checks_timestamps_at_the_time_it_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    got, broker = await send_waiting(monkeypatch, start_ms=0, walk_starts_ms=RECORD_TIME + MAX_DIFFERENCE_MS)
    assert got.error == 0  # before: INVALID_TIMESTAMP, the records checked against the clock before the wait (0)
    assert broker.parts[TopicPartition("t", 0)].log_end_offset == JUST_PAST


async def test_a_record_too_old_by_the_time_the_walk_starts_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    got, _ = await send_waiting(monkeypatch, start_ms=RECORD_TIME, walk_starts_ms=RECORD_TIME + MAX_DIFFERENCE_MS + 1)
    assert got.error == INVALID_TIMESTAMP  # before: accepted, checked at the time the request reached the check
    assert got.error_message == "One or more records have been rejected due to invalid timestamp"
    [(index, text)] = got.record_errors[:1]
    assert index == 0 and text == (f"Timestamp {RECORD_TIME} of message with offset 0 is out of range. The timestamp "
                                   f"should be within [{RECORD_TIME + 1}, {RECORD_TIME + 2 * MAX_DIFFERENCE_MS + 1}]")
