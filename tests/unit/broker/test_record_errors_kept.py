"""A v2 batch all in error keeps its first `RECORD_ERRORS_KEPT` record errors (`log_validator.validate`): Kafka 2.8's
LogValidator lists one per record, which for a small zstd request inflating to 64 MiB of the smallest records is
9.6 million texts (about 1 GB kept for the answer). The error code and message stay Kafka's (INVALID_TIMESTAMP as
soon as any record error, kept or not, is a timestamp one), the indexes kept are the first ones Kafka lists, and the
walk stops building texts (and walking record by record) once only a malformed record could change the answer.
Bounds are counted, never timed.

Before, every record in error got its text and a place in the answer."""

from __future__ import annotations

import pytest
from tests.unit.broker.v2_batches import LOG_APPEND_TIME, NONE, NOW, ZSTD, count_walked_records, refusal, v2_record
from tests.unit.broker.v2_batches import v2_batch_of as batch

from zkcontroller.protocol.wire.record_errors import RECORD_ERRORS_KEPT
from zkcontroller.protocol.wire.record_sets import INVALID_RECORD, INVALID_TIMESTAMP

KEYED = b""
"""An empty key: not null."""
MANY = 50_000
KEYLESS = "Compacted topic cannot accept message without key in topic partition orders-0."
REJECTED = "One or more records have been rejected"
REJECTED_TIMESTAMP = "One or more records have been rejected due to invalid timestamp"


def test_a_compacted_topics_keyless_bomb_keeps_the_first_record_errors() -> None:
    e = refusal(batch([v2_record(i, None) for i in range(MANY)], codec=ZSTD), compacted=True)
    assert (e.error, str(e), e.exception) == (INVALID_RECORD, REJECTED, None)
    assert e.record_errors == tuple((i, KEYLESS) for i in range(RECORD_ERRORS_KEPT))


def test_a_batch_marked_log_append_time_keeps_the_first_record_errors() -> None:
    e = refusal(batch([v2_record(i, KEYED) for i in range(MANY)], attributes=LOG_APPEND_TIME, codec=ZSTD))
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
    keyed_null_value, keyless = v2_record(0, KEYED), v2_record(1, None)
    e = refusal(batch([keyed_null_value, keyless], attributes=LOG_APPEND_TIME, codec=ZSTD if compressed else NONE))
    kind, null = ("PartialDefaultRecord", -1) if compressed else ("DefaultRecord", 0)
    assert [text for _, text in e.record_errors] == [
        f"Invalid timestamp type in message {kind}(offset=0, timestamp={NOW}, key=0 bytes, value={null} bytes). "
        "Producer should not set timestamp type to LogAppendTime.",
        f"Invalid timestamp type in message {kind}(offset=1, timestamp={NOW}, key={null} bytes, value={null} bytes). "
        "Producer should not set timestamp type to LogAppendTime."]


def test_out_of_range_timestamps_keep_the_first_record_errors_in_kafkas_order() -> None:
    """Good and bad records interleaved, keyless ones among them: the kept indexes are the first refused ones, each
    with its own error (the key error first, as ``validateKey(...).orElse(validateTimestamp(...))``)."""
    records = [v2_record(i, KEYED if i % 3 != 1 else None, timestamp_delta=0 if i % 3 == 0 else -10_000)
               for i in range(MANY)]
    e = refusal(batch(records, codec=ZSTD), compacted=True, timestamp_difference_max_ms=1_000)
    assert (e.error, str(e)) == (INVALID_TIMESTAMP, REJECTED_TIMESTAMP)
    refused = [i for i in range(MANY) if i % 3][:RECORD_ERRORS_KEPT]
    assert [i for i, _ in e.record_errors] == refused
    window = f"The timestamp should be within [{NOW - 1_000}, {NOW + 1_000}]"
    assert e.record_errors[:2] == (
        (1, KEYLESS), (2, f"Timestamp {NOW - 10_000} of message with offset 2 is out of range. {window}"))


def test_a_timestamp_error_beyond_the_kept_ones_still_makes_it_invalid_timestamp() -> None:
    """Kafka's code is INVALID_TIMESTAMP if any record error is a timestamp one, listed or not: the last record's
    alone here, after 49,999 keyless ones."""
    records = [v2_record(i, None) for i in range(MANY - 1)] + [v2_record(MANY - 1, KEYED, timestamp_delta=-10_000)]
    e = refusal(batch(records, codec=ZSTD), compacted=True, timestamp_difference_max_ms=1_000)
    assert (e.error, str(e)) == (INVALID_TIMESTAMP, REJECTED_TIMESTAMP)
    assert e.record_errors == tuple((i, KEYLESS) for i in range(RECORD_ERRORS_KEPT))
    e = refusal(batch(records[:-1], codec=ZSTD), compacted=True, timestamp_difference_max_ms=1_000)
    assert e.error == INVALID_RECORD


def test_texts_are_built_for_the_kept_record_errors_only_and_the_walk_stops_once_settled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The records read are counted as the walk hands them out: a settled answer reads no further (a bomb's
    millions of records in error cost no more than its first thousand)."""
    read = count_walked_records(monkeypatch)
    e = refusal(batch([v2_record(i, KEYED) for i in range(MANY)], attributes=LOG_APPEND_TIME, codec=ZSTD))
    assert len(e.record_errors) == RECORD_ERRORS_KEPT and len(read) == RECORD_ERRORS_KEPT
    read.clear()
    e = refusal(batch([v2_record(i, None) for i in range(MANY)], codec=ZSTD), compacted=True,
                timestamp_difference_max_ms=1_000)  # keyless, timestamps fine: no timestamp error to come
    assert e.error == INVALID_RECORD and len(read) == MANY  # walked on to find one: none


def test_a_small_batch_keeps_every_record_error() -> None:
    e = refusal(batch([v2_record(i, KEYED if i % 2 == 0 else None) for i in range(7)], codec=ZSTD), compacted=True)
    assert e.record_errors == ((1, KEYLESS), (3, KEYLESS), (5, KEYLESS))


def test_a_compacted_only_batch_stops_at_the_kept_record_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """A compacted topic with no timestamp check (the default Long.MaxValue difference, CreateTime) and a bomb of
    keyless records: each is a key error, no later record can make it INVALID_TIMESTAMP, so the walk (counted as it
    hands records out) ends at the 1,000th record error, as the LogAppendTime path does (the rest is read for its
    structure alone: `test_malformed_after_settled_errors`). Without the bound it read all 50,000 and built their
    texts."""
    read = count_walked_records(monkeypatch)
    keyless = [v2_record(i, None) for i in range(MANY)]
    for records in (keyless, [v2_record(0, KEYED), *keyless[1:]]):  # a keyed first record: index 1 on
        read.clear()
        e = refusal(batch(records, codec=ZSTD), compacted=True)
        assert (e.error, str(e)) == (INVALID_RECORD, REJECTED)
        first = records is not keyless
        assert e.record_errors == tuple((i, KEYLESS) for i in range(first, first + RECORD_ERRORS_KEPT))
        assert len(read) == first + RECORD_ERRORS_KEPT


def test_a_keyless_bomb_whose_timestamps_are_checked_is_read_to_its_end_as_kafka_reads_it() -> None:
    """Why the walk of a compacted topic's keyless bomb with timestamps checked goes on past its 1,000 key errors:
    the answer still depends on the last record. Kafka's iterator reads every record, so a malformed last one
    answers the reader's exception (no record errors), a keyed one out of range INVALID_TIMESTAMP. Before, the
    malformed one was taken for the end of the records: INVALID_RECORD with the key errors."""
    keyless = [v2_record(i, None) for i in range(MANY - 1)]
    malformed = bytes([0x0C, 0, 0, 0, 0xC8, 0x01, 0x01, 0])  # length 6, a key length of 100 in a 6-byte body
    e = refusal(batch([*keyless, malformed], codec=ZSTD), compacted=True, timestamp_difference_max_ms=1_000)
    assert (e.error, str(e), e.exception, e.record_errors) == (
        INVALID_RECORD, "Invalid record size: expected to read more bytes in record payload",
        "org.apache.kafka.common.InvalidRecordException", ())
    out_of_range = v2_record(MANY - 1, KEYED, timestamp_delta=-10_000)
    e = refusal(batch([*keyless, out_of_range], codec=ZSTD), compacted=True, timestamp_difference_max_ms=1_000)
    assert e.error == INVALID_TIMESTAMP and len(e.record_errors) == RECORD_ERRORS_KEPT
