"""A record's timestamp is Java long arithmetic: a v2 record's is ``baseTimestamp + timestampDelta`` (Kafka 2.8's
``DefaultRecord.readFrom``), which wraps at int64, and LogValidator's ``validateTimestamp`` tests
``math.abs(record.timestamp - now) > timestampDiffMaxMs`` and prints ``now -/+ timestampDiffMaxMs``, all of which
wrap too (``abs`` of Long.MIN_VALUE stays negative). Each case here differed before: the timestamp, the bounds or
the verdict as exact integers."""

from __future__ import annotations

from kafka.record.memory_records import MemoryRecordsBuilder
from tests.unit.broker.v2_batches import GZIP, NOW, accepted, refusal, v2_batch_of, v2_record

from zkcontroller.protocol.wire.log_validator import validate
from zkcontroller.protocol.wire.record_errors import timestamp_out_of_range
from zkcontroller.protocol.wire.record_sets import (
    INVALID_TIMESTAMP,
    LONG_MAX,
    LONG_MIN,
    UNKNOWN_SERVER_ERROR,
    inspect,
    java_long,
)

HOUR_MS = 3_600_000
NEAR_MAX = LONG_MAX - 5
"""A batch's base timestamp a delta of 10 carries past Long.MAX_VALUE: its record's is ``LONG_MIN + 4``."""
WRAPPED = LONG_MIN + 4


def wrapping_batch(**kwargs: object) -> bytes:
    return v2_batch_of([v2_record(0, timestamp_delta=10)], first_timestamp=NEAR_MAX, max_timestamp=NEAR_MAX,
                       **kwargs)  # type: ignore[arg-type]


def test_java_long_and_out_of_range_follow_java() -> None:
    assert java_long(LONG_MAX + 1) == LONG_MIN and java_long(LONG_MIN - 1) == LONG_MAX
    assert java_long(NEAR_MAX + 10) == WRAPPED
    assert not timestamp_out_of_range(LONG_MIN + NOW, NOW, 0)  # the difference is Long.MIN_VALUE: abs keeps it negative
    assert not timestamp_out_of_range(LONG_MIN + 10, NOW, LONG_MAX - 1)  # the difference wraps to below the maximum
    assert timestamp_out_of_range(NOW - LONG_MAX, NOW, LONG_MAX - 1)


def test_a_wrapped_record_timestamp_is_named_wrapped() -> None:
    e = refusal(wrapping_batch(), timestamp_difference_max_ms=HOUR_MS)
    assert e.error == INVALID_TIMESTAMP
    assert e.record_errors == ((0, f"Timestamp {WRAPPED} of message with offset 0 is out of range. The timestamp "
                                   f"should be within [{NOW - HOUR_MS}, {NOW + HOUR_MS}]"),)  # before: 2**63 + 4


def test_a_wrapped_negative_timestamp_fails_the_rebuild() -> None:
    """A batch LogValidator rebuilds (the topic names another codec): ``MemoryRecordsBuilder`` refuses the record's
    negative (wrapped) timestamp. Before: accepted, its timestamp read as 2**63 + 4."""
    e = refusal(wrapping_batch(), compression_type="gzip")
    assert (e.error, str(e), e.exception) == (UNKNOWN_SERVER_ERROR, f"Invalid negative timestamp {WRAPPED}",
                                              "java.lang.IllegalArgumentException")


def test_a_batch_kept_as_it_is_keeps_its_wrapped_timestamp() -> None:
    assert accepted(wrapping_batch()) == 1  # no timestamp check, no rebuild: as Kafka
    assert accepted(wrapping_batch(codec=GZIP)) == 1


def test_the_difference_wraps_so_a_timestamp_near_long_min_is_in_range() -> None:
    """With a maximum difference near Long.MaxValue, ``LONG_MIN + 10 - now`` wraps to a positive difference below
    it: in range (before: INVALID_TIMESTAMP, as exact integers are 2**63 apart)."""
    data = v2_batch_of([v2_record(0)], first_timestamp=LONG_MIN + 10, max_timestamp=LONG_MIN + 10)
    assert accepted(data, timestamp_difference_max_ms=LONG_MAX - 1) == 1


def test_the_bounds_printed_wrap() -> None:
    stamp = NOW - LONG_MAX  # a difference of -Long.MAX_VALUE: beyond a maximum of Long.MAX_VALUE - 1
    data = v2_batch_of([v2_record(0)], first_timestamp=stamp, max_timestamp=stamp)
    e = refusal(data, timestamp_difference_max_ms=LONG_MAX - 1)
    low, high = NOW - (LONG_MAX - 1), java_long(NOW + LONG_MAX - 1)
    assert high < 0  # before: printed as NOW + LONG_MAX - 1, beyond any long
    assert e.record_errors == ((0, f"Timestamp {stamp} of message with offset 0 is out of range. The timestamp "
                                   f"should be within [{low}, {high}]"),)


def legacy(timestamp: int, compression: int = 0) -> bytes:
    b = MemoryRecordsBuilder(magic=1, compression_type=compression, batch_size=1 << 20)
    b.append(timestamp=timestamp, key=b"k", value=b"v")
    b.close()
    return bytes(b.buffer())


def test_a_legacy_timestamp_in_range_by_wrapping_then_fails_the_conversion() -> None:
    """A v1 message at ``LONG_MIN + 10``: in range of a maximum near Long.MaxValue as Java computes it, so the
    conversion to a v2 batch refuses its negative timestamp (UNKNOWN_SERVER_ERROR); before, INVALID_TIMESTAMP."""
    for compression in (0, GZIP):
        data = legacy(LONG_MIN + 10, compression)
        e = refusal(data, 2, timestamp_difference_max_ms=LONG_MAX - 1)
        assert (e.error, str(e)) == (UNKNOWN_SERVER_ERROR, f"Invalid negative timestamp {LONG_MIN + 10}")


def test_a_legacy_out_of_range_text_prints_wrapped_bounds() -> None:
    stamp = NOW - LONG_MAX
    data = legacy(stamp)
    e = refusal(data, 2, timestamp_difference_max_ms=LONG_MAX - 1)
    assert e.error == INVALID_TIMESTAMP
    [(_, text)] = e.record_errors
    assert text.endswith(f"[{NOW - (LONG_MAX - 1)}, {java_long(NOW + LONG_MAX - 1)}]")


def test_legacy_timestamps_within_exact_bounds_are_unchanged() -> None:
    data = legacy(NOW + 5)
    assert validate(data, inspect(data, 2), None, "orders-0", now_ms=NOW, timestamp_difference_max_ms=10) == 1
