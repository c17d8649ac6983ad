"""LogValidator's record errors, the same for a v2 batch's records and a legacy set's messages: ``validateKey``'s
refusal of a keyless record on a compacted topic, ``validateTimestamp``'s of a timestamp out of range (in Java's
long arithmetic) or of a batch a producer marked LogAppendTime, ``processRecordErrors``' exception gathering them,
and the refusal of a negative timestamp as LogValidator builds the batch it writes (``MemoryRecordsBuilder``).

A refusal keeps its first `RECORD_ERRORS_KEPT` record errors (a deliberate bound: Kafka lists one per refused
record).
"""

from __future__ import annotations

from collections.abc import Iterable

from zkcontroller.protocol.wire.record_sets import (
    INVALID_RECORD,
    INVALID_TIMESTAMP,
    LONG_MAX,
    LONG_MIN,
    UNKNOWN_SERVER_ERROR,
    RecordSetError,
    java_long,
)

RECORD_ERRORS_KEPT = 1000
"""The record errors a refusal keeps, in the batch's order: the first ones Kafka lists (its error code and message
are the same beyond them). A deliberate bound: Kafka lists every record in error, but a 64 MiB batch of the
smallest records all in error (keyless on a compacted topic, marked LogAppendTime, out of the timestamp range)
would be 9.6 million texts, about 1 GB, here and in the answer. A v2 batch's record walk stops once its record
errors settle the answer; the rest is read for its structure alone (`v2_records.v2_well_formed`), as a malformed record
beyond them is the answer in Kafka (its reader's exception, thrown before the record errors are answered).
Produce v8+ answers carry them (a client then fails the records beyond them with its generic "part of a batch which
had one or more invalid records" error rather than their own)."""


def keyless_text(tp: str) -> str:
    """LogValidator's ``validateKey`` refusal (any magic)."""
    return f"Compacted topic cannot accept message without key in topic partition {tp}."


def timestamp_out_of_range(timestamp: int, now_ms: int, max_difference_ms: int) -> bool:
    """LogValidator's ``math.abs(record.timestamp - now) > timestampDiffMaxMs`` in Java's long arithmetic: the
    difference wraps (a timestamp near Long.MIN_VALUE is "close" to a positive clock), and ``abs`` of
    Long.MIN_VALUE is itself, negative, so never beyond the (non-negative) maximum."""
    difference = timestamp - now_ms
    if not LONG_MIN <= difference <= LONG_MAX:
        difference = java_long(difference)
    return difference != LONG_MIN and abs(difference) > max_difference_ms


def out_of_range_text(timestamp: int, offset: int, low: int, high: int) -> str:
    """LogValidator's ``validateTimestamp`` refusal of a CreateTime timestamp outside [``low``, ``high``]."""
    return (f"Timestamp {timestamp} of message with offset {offset} is out of range. The timestamp should be within "
            f"[{low}, {high}]")


def log_append_time_text(record: str) -> str:
    """LogValidator's ``validateTimestamp`` refusal of a batch a producer marked LogAppendTime; ``record``: the
    record's ``toString``."""
    return f"Invalid timestamp type in message {record}. Producer should not set timestamp type to LogAppendTime."


def rejected(record_errors: Iterable[tuple[int, str]], invalid_timestamp: bool) -> RecordSetError:
    """LogValidator's ``processRecordErrors``: a ``RecordValidationException`` of ``record_errors`` (index in the
    batch, message), an ``InvalidTimestampException`` if any of them is INVALID_TIMESTAMP."""
    if invalid_timestamp:
        return RecordSetError(INVALID_TIMESTAMP, "One or more records have been rejected due to invalid timestamp",
                              record_errors=tuple(record_errors))
    return RecordSetError(INVALID_RECORD, "One or more records have been rejected", record_errors=tuple(record_errors))


def negative_timestamp(timestamp: int) -> RecordSetError:
    """``MemoryRecordsBuilder.appendWithOffset`` refusing a timestamp below 0 other than -1 while LogValidator
    converts a legacy message to the v2 batch: an ``IllegalArgumentException``, which ``appendToLocalLog``
    answers UNKNOWN_SERVER_ERROR (its Throwable branch)."""
    return RecordSetError(UNKNOWN_SERVER_ERROR, f"Invalid negative timestamp {timestamp}",
                          "java.lang.IllegalArgumentException")
