"""The max timestamp a client's v2 batch is indexed at is the one Kafka's LogValidator writes in it
(``batch.setMaxTimestamp`` for a CreateTime topic): its records' largest timestamp, each its base timestamp plus
its delta in Java long arithmetic (so wrapping at int64), or -1; not the header's word. What the time index keeps,
and so what ListOffsets by timestamp finds, follows. Read in the walk that checks the records, the structure-only
one (`v2_well_formed`) or the full one (`_v2_rejection`: a compacted topic, checked timestamps, a rebuild)."""

from __future__ import annotations

import struct

import pytest
from tests.unit.broker.test_produce_offload_bounds import KNOWN, Broker
from tests.unit.broker.v2_batches import GZIP, v2_batch_of, v2_record

from zkcontroller.broker.produce import ProducePartition, produce
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire.log_validator import validate
from zkcontroller.protocol.wire.record_sets import LONG_MAX, LONG_MIN, crc32c, inspect, java_long

BASE = 1_000_000


def indexed(data: bytes, **checks: object) -> list[int]:
    found: list[int] = []
    validate(data, inspect(data, 9), None, "orders-0", timestamps=found, now_ms=BASE, **checks)  # type: ignore[arg-type]
    return found


WALKS = [{}, {"compacted": True}, {"timestamp_difference_max_ms": LONG_MAX - 1}, {"compression_type": "zstd"}]
"""The structure-only walk, then three that read every record whole."""


@pytest.mark.parametrize("checks", WALKS)
@pytest.mark.parametrize("codec", [0, GZIP])
def test_the_records_largest_timestamp_not_the_headers(checks: dict[str, object], codec: int) -> None:
    data = v2_batch_of([v2_record(0, timestamp_delta=0), v2_record(1, timestamp_delta=7),
                        v2_record(2, timestamp_delta=3)], first_timestamp=BASE, max_timestamp=BASE + 5_000, codec=codec)
    assert indexed(data, **checks) == [BASE, BASE + 7]  # before: the header's BASE + 5_000


@pytest.mark.parametrize("checks", WALKS)
def test_longer_and_negative_deltas(checks: dict[str, object]) -> None:
    data = v2_batch_of([v2_record(0, timestamp_delta=-70), v2_record(1, timestamp_delta=100_000),
                        v2_record(2, timestamp_delta=64)], first_timestamp=BASE, max_timestamp=BASE)
    assert indexed(data, **checks) == [BASE - 70, BASE + 100_000]  # the first record's: base + its delta


@pytest.mark.parametrize("checks", [{}, {"compacted": True}])
def test_a_wrapped_record_timestamp_is_not_the_largest(checks: dict[str, object]) -> None:
    near = LONG_MAX - 5
    both = v2_batch_of([v2_record(0, timestamp_delta=0), v2_record(1, timestamp_delta=10)], first_timestamp=near,
                       max_timestamp=near)
    assert indexed(both, **checks) == [near, near]  # the second record's is LONG_MIN + 4
    alone = v2_batch_of([v2_record(0, timestamp_delta=10)], first_timestamp=near, max_timestamp=near)
    assert indexed(alone, **checks) == [LONG_MIN + 4, -1]  # only a wrapped, negative one: -1 (before: the header's)
    low = v2_batch_of([v2_record(0, timestamp_delta=-10)], first_timestamp=LONG_MIN + 5, max_timestamp=0)
    assert indexed(low, **checks) == [java_long(LONG_MIN - 5)] * 2  # wraps up to near LONG_MAX


def test_all_records_without_timestamps_give_minus_one() -> None:
    data = v2_batch_of([v2_record(0), v2_record(1)], first_timestamp=-1, max_timestamp=BASE)
    assert indexed(data) == [-1, -1]


async def test_list_offsets_by_timestamp_finds_what_kafka_indexed() -> None:
    """A batch whose header claims a later max than its records: Kafka indexes (and searches) its records' max, so
    a target past it finds the next batch, not this one."""
    broker = Broker()
    broker.compacted = False
    lying = v2_batch_of([v2_record(0, timestamp_delta=0)], first_timestamp=BASE, max_timestamp=BASE + 500)
    honest = v2_batch_of([v2_record(0, timestamp_delta=0)], first_timestamp=BASE + 100, max_timestamp=BASE + 100)
    for data in (lying, honest):
        [got] = await produce(9, 1, 30_000, "c", [ProducePartition("t", 0, data)], cache=KNOWN,
                              target=broker.target())  # type: ignore[arg-type]
        assert got.error == 0
    index = broker.parts[TopicPartition("t", 0)].time_index
    assert index.lookup(BASE + 50) == (BASE + 100, 1)  # before: (BASE + 500, 0), the first batch's header
    assert index.lookup(BASE) == (BASE, 0)


def idempotent(first: int, header_max: int) -> bytes:
    """A one-record batch of producer 7 (epoch 0, sequence 0) whose header claims ``header_max``."""
    data = bytearray(v2_batch_of([v2_record(0, timestamp_delta=2)], first_timestamp=first, max_timestamp=header_max))
    struct.pack_into(">qhi", data, 43, 7, 0, 0)
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    return bytes(data)


async def test_a_duplicate_answers_the_max_timestamp_kafka_kept() -> None:
    broker = Broker()
    broker.compacted = False
    data = idempotent(BASE, BASE + 500)
    answers = []
    for _ in range(2):
        [got] = await produce(9, 1, 30_000, "c", [ProducePartition("t", 0, data)], cache=KNOWN,
                              target=broker.target())  # type: ignore[arg-type]
        answers.append((got.error, got.base_offset, got.log_append_time))
    assert answers == [(0, 0, -1), (0, 0, BASE + 2)]  # before: the retry answered the header's BASE + 500


@pytest.mark.parametrize("checks", WALKS)
def test_the_first_timestamp_is_the_first_records_not_the_base(checks: dict[str, object]) -> None:
    """Kafka's ``searchForTimestamp`` answers the first record whose own timestamp reaches the target: the first
    record's is the base timestamp plus its delta (a producer writes delta 0, but need not). The base was indexed,
    so a target between the two was answered the base timestamp."""
    data = v2_batch_of([v2_record(0, timestamp_delta=-10), v2_record(1, timestamp_delta=0)], first_timestamp=BASE,
                       max_timestamp=BASE)
    assert indexed(data, **checks) == [BASE - 10, BASE]  # before: [BASE, BASE]

