"""A v2 batch all in error keeps its first `RECORD_ERRORS_KEPT` record errors (`record_sets.validate`): Kafka 2.8's
LogValidator lists one per record, which for a small zstd request inflating to 64 MiB of the smallest records is
9.6 million texts (about 1 GB kept for the answer). The error code and message stay Kafka's (INVALID_TIMESTAMP as
soon as any record error, kept or not, is a timestamp one), the indexes kept are the first ones Kafka lists, and the
walk stops building texts (and walking) once the answer can no longer change. Bounds are counted, never timed.

Before, every record in error got its text and a place in the answer."""

from __future__ import annotations

import struct

import cramjam
import pytest

from zkcontroller.protocol.wire import record_sets
from zkcontroller.protocol.wire.record_sets import (
    INVALID_RECORD,
    INVALID_TIMESTAMP,
    RECORD_ERRORS_KEPT,
    RecordSetError,
    crc32c,
    inspect,
    validate,
)

ZSTD = 4
NOW = 1_700_000_000_000
MANY = 50_000
KEYLESS = "Compacted topic cannot accept message without key in topic partition orders-0."
REJECTED = "One or more records have been rejected"
REJECTED_TIMESTAMP = "One or more records have been rejected due to invalid timestamp"


def record(key: bool, timestamp_delta: int = 0, offset_delta: int = 0) -> bytes:
    """A DefaultRecord: an empty key (or null), a null value, no headers; deltas as zig-zag varints."""
    body = bytes([0]) + _varint(timestamp_delta) + _varint(offset_delta) + (b"\x00" if key else b"\x01") + b"\x01\x00"
    return _varint(len(body)) + body


def _varint(value: int) -> bytes:
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    while raw >= 0x80:
        out.append(raw & 0x7F | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def batch(records: list[bytes], *, log_append_time: bool = False, first_timestamp: int = NOW,
          max_timestamp: int = NOW, compressed: bool = True) -> bytes:
    """A zstd (or uncompressed) v2 batch of ``records`` (offset deltas as given by the records themselves)."""
    payload = b"".join(records)
    if compressed:
        c = cramjam.zstd.Compressor()
        c.compress(payload)
        payload = bytes(c.finish())
    n = len(records)
    attributes = (ZSTD if compressed else 0) | (0x08 if log_append_time else 0)
    head = struct.pack(">qiibIhiqqqhii", 0, 0, 0, 2, 0, attributes, n - 1, first_timestamp, max_timestamp, -1, -1,
                       -1, n)
    out = bytearray(head + payload)
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


def refusal(data: bytes, **checks: object) -> RecordSetError:
    with pytest.raises(RecordSetError) as e:
        validate(data, inspect(data, 9), None, "orders-0", now_ms=NOW, **checks)  # type: ignore[arg-type]
    return e.value


def test_a_compacted_topics_keyless_bomb_keeps_the_first_record_errors() -> None:
    e = refusal(batch([record(False, offset_delta=i) for i in range(MANY)]), compacted=True)
    assert (e.error, str(e), e.exception) == (INVALID_RECORD, REJECTED, None)
    assert e.record_errors == tuple((i, KEYLESS) for i in range(RECORD_ERRORS_KEPT))


def test_a_batch_marked_log_append_time_keeps_the_first_record_errors() -> None:
    e = refusal(batch([record(True, offset_delta=i) for i in range(MANY)], log_append_time=True))
    assert (e.error, str(e)) == (INVALID_TIMESTAMP, REJECTED_TIMESTAMP)
    assert len(e.record_errors) == RECORD_ERRORS_KEPT
    assert e.record_errors[-1] == (RECORD_ERRORS_KEPT - 1, (
        f"Invalid timestamp type in message PartialDefaultRecord(offset={RECORD_ERRORS_KEPT - 1}, timestamp={NOW}, "
        "key=0 bytes, value=-1 bytes). Producer should not set timestamp type to LogAppendTime."))


@pytest.mark.parametrize("compressed", [True, False])
def test_a_log_append_time_records_text_is_the_one_kafkas_path_reads(compressed: bool) -> None:
    """A compressed batch kept as it is (no ``compression.type``) is read by ``skipKeyValueIterator``: its records
    are ``PartialDefaultRecord``s, printing the lengths read (-1 for null); an uncompressed one's are
    ``DefaultRecord``s, printing their buffers' sizes (0 for null). Before, both printed ``DefaultRecord``."""
    keyed_null_value, keyless = record(True, offset_delta=0), record(False, offset_delta=1)
    e = refusal(batch([keyed_null_value, keyless], log_append_time=True, compressed=compressed))
    kind, null = ("PartialDefaultRecord", -1) if compressed else ("DefaultRecord", 0)
    assert [text for _, text in e.record_errors] == [
        f"Invalid timestamp type in message {kind}(offset=0, timestamp={NOW}, key=0 bytes, value={null} bytes). "
        "Producer should not set timestamp type to LogAppendTime.",
        f"Invalid timestamp type in message {kind}(offset=1, timestamp={NOW}, key={null} bytes, value={null} bytes). "
        "Producer should not set timestamp type to LogAppendTime."]


def test_out_of_range_timestamps_keep_the_first_record_errors_in_kafkas_order() -> None:
    """Good and bad records interleaved, keyless ones among them: the kept indexes are the first refused ones, each
    with its own error (the key error first, as ``validateKey(...).orElse(validateTimestamp(...))``)."""
    records = [record(i % 3 != 1, timestamp_delta=0 if i % 3 == 0 else -10_000, offset_delta=i) for i in range(MANY)]
    e = refusal(batch(records), compacted=True, timestamp_difference_max_ms=1_000)
    assert (e.error, str(e)) == (INVALID_TIMESTAMP, REJECTED_TIMESTAMP)
    refused = [i for i in range(MANY) if i % 3][:RECORD_ERRORS_KEPT]
    assert [i for i, _ in e.record_errors] == refused
    window = f"The timestamp should be within [{NOW - 1_000}, {NOW + 1_000}]"
    assert e.record_errors[:2] == (
        (1, KEYLESS), (2, f"Timestamp {NOW - 10_000} of message with offset 2 is out of range. {window}"))


def test_a_timestamp_error_beyond_the_kept_ones_still_makes_it_invalid_timestamp() -> None:
    """Kafka's code is INVALID_TIMESTAMP if any record error is a timestamp one, listed or not: the last record's
    alone here, after 49,999 keyless ones."""
    records = [record(False, offset_delta=i) for i in range(MANY - 1)] + [record(True, -10_000, MANY - 1)]
    e = refusal(batch(records), compacted=True, timestamp_difference_max_ms=1_000)
    assert (e.error, str(e)) == (INVALID_TIMESTAMP, REJECTED_TIMESTAMP)
    assert e.record_errors == tuple((i, KEYLESS) for i in range(RECORD_ERRORS_KEPT))
    assert refusal(batch(records[:-1]), compacted=True, timestamp_difference_max_ms=1_000).error == INVALID_RECORD


def test_texts_are_built_for_the_kept_record_errors_only_and_the_walk_stops_once_settled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The records read are counted as the walk hands them out: a settled answer reads no further (a bomb's
    millions of records in error cost no more than its first thousand)."""
    read: list[int] = []
    real_walk = record_sets.walk_v2_records

    def counted(records: bytes | memoryview, count: int):  # type: ignore[no-untyped-def]
        for r in real_walk(records, count):
            read.append(1)
            yield r
    monkeypatch.setattr(record_sets, "walk_v2_records", counted)
    e = refusal(batch([record(True, offset_delta=i) for i in range(MANY)], log_append_time=True))
    assert len(e.record_errors) == RECORD_ERRORS_KEPT and len(read) == RECORD_ERRORS_KEPT
    read.clear()
    e = refusal(batch([record(False, offset_delta=i) for i in range(MANY)]), compacted=True,
                timestamp_difference_max_ms=1_000)  # keyless, timestamps fine: no timestamp error to come
    assert e.error == INVALID_RECORD and len(read) == MANY  # walked on to find one: none


def test_a_small_batch_keeps_every_record_error() -> None:
    e = refusal(batch([record(i % 2 == 0, offset_delta=i) for i in range(7)]), compacted=True)
    assert e.record_errors == ((1, KEYLESS), (3, KEYLESS), (5, KEYLESS))


def test_a_compacted_only_batch_stops_at_the_kept_record_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """A compacted topic with no timestamp check (the default Long.MaxValue difference, CreateTime) and a bomb of
    keyless records: each is a key error, no later record can make it INVALID_TIMESTAMP, so the walk (counted as it
    hands records out) ends at the 1,000th record error, as the LogAppendTime path does. Without the bound it read
    all 50,000 and built their texts."""
    read: list[int] = []
    real_walk = record_sets.walk_v2_records

    def counted(records: bytes | memoryview, count: int):  # type: ignore[no-untyped-def]
        for r in real_walk(records, count):
            read.append(1)
            yield r
    monkeypatch.setattr(record_sets, "walk_v2_records", counted)
    keyless = [record(False, offset_delta=i) for i in range(MANY)]
    for records in (keyless, [record(True, offset_delta=0), *keyless[1:]]):  # a keyed first record: index 1 on
        read.clear()
        e = refusal(batch(records), compacted=True)
        assert (e.error, str(e)) == (INVALID_RECORD, REJECTED)
        first = records is not keyless
        assert e.record_errors == tuple((i, KEYLESS) for i in range(first, first + RECORD_ERRORS_KEPT))
        assert len(read) == first + RECORD_ERRORS_KEPT


def test_a_keyless_bomb_whose_timestamps_are_checked_is_read_to_its_end_as_kafka_reads_it() -> None:
    """Why the walk of a compacted topic's keyless bomb with timestamps checked goes on past its 1,000 key errors:
    the answer still depends on the last record. Kafka's iterator reads every record, so a malformed last one
    answers the reader's exception (no record errors), a keyed one out of range INVALID_TIMESTAMP. Before, the
    malformed one was taken for the end of the records: INVALID_RECORD with the key errors."""
    keyless = [record(False, offset_delta=i) for i in range(MANY - 1)]
    malformed = bytes([0x0C, 0, 0, 0, 0xC8, 0x01, 0x01, 0])  # length 6, a key length of 100 in a 6-byte body
    e = refusal(batch([*keyless, malformed]), compacted=True, timestamp_difference_max_ms=1_000)
    assert (e.error, str(e), e.exception, e.record_errors) == (
        INVALID_RECORD, "Invalid record size: expected to read more bytes in record payload",
        "org.apache.kafka.common.InvalidRecordException", ())
    e = refusal(batch([*keyless, record(True, -10_000, MANY - 1)]), compacted=True, timestamp_difference_max_ms=1_000)
    assert e.error == INVALID_TIMESTAMP and len(e.record_errors) == RECORD_ERRORS_KEPT
