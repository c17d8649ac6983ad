"""The first and max record timestamps `log_validator.validate` reports for the time index: the batch header's for v2
(any codec), a legacy set's messages' (a wrapper's inner ones) as LogValidator's conversion to one v2 batch carries
them, none (-1) for magic 0, and nothing for a set it refuses.

A legacy set's timestamps get Kafka 2.8's checks too, as they reach the index: LogValidator's ``validateTimestamp``
(a v1 wrapper or message marked LogAppendTime is INVALID_TIMESTAMP, "Producer should not set timestamp type to
LogAppendTime", one record error per message after the key check; a CreateTime topic's
``message.timestamp.difference.max.ms`` bounds magic 1 timestamps, -1 and so magic 0 exempt) and the conversion's
``MemoryRecordsBuilder.appendWithOffset`` (a timestamp below 0 other than -1: UNKNOWN_SERVER_ERROR, "Invalid negative
timestamp", at the first such message of an uncompressed set, after a wrapper's record errors). Before, a flagged
set was taken (its wrapper's timestamp indexed), and neither bound nor sign was checked: one message at 2**62 hid
every later batch from lookups."""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Callable
from typing import Any

import cramjam
import pytest
from kafka.record.memory_records import MemoryRecordsBuilder

from zkcontroller.broker.partition import TimeIndex
from zkcontroller.protocol.wire import legacy_records, log_validator, record_sets
from zkcontroller.protocol.wire.compression import GZIP, ZSTD
from zkcontroller.protocol.wire.legacy_records import LEGACY_RECORD_ERRORS_KEPT
from zkcontroller.protocol.wire.log_validator import validate
from zkcontroller.protocol.wire.record_sets import (
    CORRUPT_MESSAGE,
    INVALID_RECORD,
    INVALID_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    UNKNOWN_SERVER_ERROR,
    RecordSetError,
    crc32c,
    inspect,
)

NOW = 1_700_000_000_000
REJECTED = "One or more records have been rejected due to invalid timestamp"
KEYLESS = "Compacted topic cannot accept message without key in topic partition orders-0."
LOG_APPEND_TIME = "Producer should not set timestamp type to LogAppendTime."


def built(timestamps: list[int | None], magic: int, compression: int = 0) -> bytes:
    """One message or record per timestamp, as kafka-python's producer builds them (zstd: its uncompressed v2
    batch's records compressed here, as kafka-python has no zstd library in this environment)."""
    b = MemoryRecordsBuilder(magic=magic, compression_type=0 if compression == ZSTD else compression,
                             batch_size=1 << 20)
    for ts in timestamps:
        b.append(timestamp=ts, key=b"k", value=b"v" * 30)
    b.close()
    data = bytes(b.buffer())
    if compression != ZSTD:
        return data
    out = bytearray(data[:RECORD_BATCH_OVERHEAD] + bytes(cramjam.zstd.compress(data[RECORD_BATCH_OVERHEAD:])))
    out[22] |= ZSTD
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


def timestamps_of(data: bytes, version: int = 2, **checks: object) -> list[int]:
    found: list[int] = []
    validate(data, inspect(data, version), timestamps=found, **checks)  # type: ignore[arg-type]
    return found


@pytest.mark.parametrize("compression", [0, GZIP])
def test_a_magic_1_set_gives_its_first_and_largest_messages_timestamps(compression: int) -> None:
    assert timestamps_of(built([1_000, 3_000, 2_000, -1], 1, compression)) == [1_000, 3_000]


@pytest.mark.parametrize("compression", [0, GZIP])
def test_magic_0_has_no_timestamps(compression: int) -> None:
    assert timestamps_of(built([None, None], 0, compression)) == [-1, -1]


def test_a_first_message_without_timestamp_is_the_first_timestamp() -> None:
    """The converted batch's ``firstTimestamp`` is its first record's, -1 included."""
    assert timestamps_of(built([-1, 2_000], 1)) == [-1, 2_000]


def flagged(data: bytes, timestamp: int | None = None) -> bytes:
    """The first legacy message (a wrapper, or the first of an uncompressed set) marked LogAppendTime, its
    timestamp set to ``timestamp`` if given, its CRC right."""
    out = bytearray(data)
    out[17] |= 0x08
    if timestamp is not None:
        struct.pack_into(">q", out, 18, timestamp)
    (size,) = struct.unpack_from(">i", out, 8)
    struct.pack_into(">I", out, 12, zlib.crc32(out[16:12 + size]))
    return bytes(out)


def refusal(data: bytes, **checks: object) -> RecordSetError:
    found: list[int] = []
    with pytest.raises(RecordSetError) as e:
        validate(data, inspect(data, 2), None, "orders-0", timestamps=found, **checks)  # type: ignore[arg-type]
    assert found == []
    return e.value


def crc_at(data: bytes, message_start: int) -> int:
    return int(struct.unpack_from(">I", data, message_start + 12)[0])


def inner_messages(wrapper: bytes) -> bytes:
    """A gzip wrapper's inner messages (its value: after a null key, as kafka-python writes it)."""
    (length,) = struct.unpack_from(">i", wrapper, 30)
    return zlib.decompress(wrapper[34:34 + length], 16 + zlib.MAX_WBITS)


@pytest.mark.parametrize("create_time", [True, False])
def test_an_uncompressed_v1_message_marked_log_append_time_is_refused(create_time: bool) -> None:
    """Each uncompressed legacy message is a batch of its own: the marked one is refused at index 0, whatever the
    topic's timestamp type, its text Kafka's ``LegacyRecordBatch.toString``."""
    data = flagged(built([1_000], 1), 9_999)
    e = refusal(data, create_time=create_time)
    assert (e.error, str(e), e.exception) == (INVALID_TIMESTAMP, REJECTED, None)
    assert e.record_errors == ((0, f"Invalid timestamp type in message LegacyRecordBatch(offset=0, Record(magic=1, "
                                   f"attributes=8, compression=NONE, crc={crc_at(data, 0)}, LogAppendTime=9999, "
                                   f"key=1 bytes, value=30 bytes)). {LOG_APPEND_TIME}"),)
    later = built([1_000, 2_000], 1)
    assert refusal(later[:later.index(b"v" * 30) + 30] + flagged(later[later.index(b"v" * 30) + 30:])
                   ).error == INVALID_TIMESTAMP  # a marked second message too


@pytest.mark.parametrize("create_time", [True, False])
def test_a_v1_wrapper_marked_log_append_time_is_refused_one_error_per_inner_message(create_time: bool) -> None:
    """LogValidator's ``validateTimestamp`` reads the wrapper's type for every inner message, which the deep
    iterator gives the wrapper's timestamp (its absolute offset, attributes and CRC its own)."""
    data = flagged(built([1_000, 3_000], 1, GZIP), 9_999)
    e = refusal(data, create_time=create_time)
    assert (e.error, str(e)) == (INVALID_TIMESTAMP, REJECTED)
    inner = inner_messages(data)
    second = len(inner) // 2
    assert e.record_errors == tuple(
        (i, f"Invalid timestamp type in message LegacyRecordBatch(offset={i}, Record(magic=1, attributes=0, "
            f"compression=NONE, crc={crc_at(inner, start)}, LogAppendTime=9999, key=1 bytes, value=30 bytes)). "
            f"{LOG_APPEND_TIME}") for i, start in ((0, 0), (1, second)))


def test_a_marked_wrappers_keyless_message_gets_the_key_error_and_its_bound_comes_first() -> None:
    """``validateKey(...).orElse(validateTimestamp(...))``: a compacted topic's keyless message gets the key
    error; with the topic's CreateTime bounded, the wrapper's timestamp out of range gets that message instead."""
    b = MemoryRecordsBuilder(magic=1, compression_type=GZIP, batch_size=1 << 20)
    b.append(timestamp=1_000, key=None, value=b"v")
    b.append(timestamp=1_000, key=b"k", value=b"v")
    b.close()
    data = flagged(bytes(b.buffer()), 9_999)
    e = refusal(data, compacted=True)
    assert e.error == INVALID_TIMESTAMP and e.record_errors[0] == (0, KEYLESS)
    assert e.record_errors[1][1].endswith(LOG_APPEND_TIME)
    e = refusal(data, now_ms=NOW, timestamp_difference_max_ms=1_000)
    assert [m for _, m in e.record_errors] == [
        f"Timestamp 9999 of message with offset {i} is out of range. The timestamp should be within "
        f"[{NOW - 1_000}, {NOW + 1_000}]" for i in (0, 1)]


@pytest.mark.parametrize("compression", [0, GZIP])
def test_magic_0_has_no_timestamp_type_to_mark(compression: int) -> None:
    """A magic 0 message's attribute bit 3 is no timestamp type (``NoTimestampType``): taken, no timestamps."""
    assert timestamps_of(flagged(built([None, None], 0, compression))) == [-1, -1]


@pytest.mark.parametrize("compression", [0, GZIP])
def test_a_v1_timestamp_out_of_the_difference_is_refused(compression: int) -> None:
    """A CreateTime topic with ``message.timestamp.difference.max.ms``: an uncompressed set is refused at its first
    message out of range (a batch of its own: index 0, the message's offset); a wrapper names each such inner
    message. -1 is exempt."""
    data = built([NOW, NOW - 1_001, -1, NOW + 5_000], 1, compression)
    e = refusal(data, now_ms=NOW, timestamp_difference_max_ms=1_000)
    window = f"The timestamp should be within [{NOW - 1_000}, {NOW + 1_000}]"
    assert (e.error, str(e)) == (INVALID_TIMESTAMP, REJECTED)
    expected = [(1, f"Timestamp {NOW - 1_001} of message with offset 1 is out of range. {window}")]
    if compression:
        expected.append((3, f"Timestamp {NOW + 5_000} of message with offset 3 is out of range. {window}"))
    else:
        expected = [(0, expected[0][1])]
    assert list(e.record_errors) == expected
    inside = built([NOW - 1_000, -1, NOW + 1_000], 1, compression)
    assert timestamps_of(inside, now_ms=NOW, timestamp_difference_max_ms=1_000) == [NOW - 1_000, NOW + 1_000]


def test_an_out_of_range_timestamp_no_longer_reaches_the_time_index() -> None:
    """The review's case: one message at 2**62 would have hidden every later batch from lookups."""
    assert refusal(built([2**62], 1), now_ms=NOW, timestamp_difference_max_ms=1_000).error == INVALID_TIMESTAMP
    index = TimeIndex()
    index.append(0, *timestamps_of(built([NOW], 1), now_ms=NOW, timestamp_difference_max_ms=1_000))
    assert index.lookup(NOW) == (NOW, 0)


@pytest.mark.parametrize("compression", [0, GZIP])
def test_the_difference_is_not_checked_without_create_time_or_for_magic_0(compression: int) -> None:
    """A LogAppendTime topic checks no difference, nor does the default (Long.MaxValue); magic 0's timestamps are
    -1, which ``validateTimestamp`` exempts."""
    far = built([2**62], 1, compression)
    assert timestamps_of(far, now_ms=NOW, create_time=False, timestamp_difference_max_ms=1_000) == [2**62] * 2
    assert timestamps_of(far, now_ms=NOW) == [2**62] * 2
    assert timestamps_of(built([None], 0, compression), now_ms=NOW, timestamp_difference_max_ms=1) == [-1, -1]


@pytest.mark.parametrize("compression", [0, GZIP])
@pytest.mark.parametrize("create_time", [True, False])
def test_a_negative_v1_timestamp_fails_the_conversion(compression: int, create_time: bool) -> None:
    """``MemoryRecordsBuilder.appendWithOffset``: "Invalid negative timestamp", an IllegalArgumentException
    (UNKNOWN_SERVER_ERROR), whatever the topic's timestamp type; the first such message's."""
    e = refusal(built([100, -5, -7], 1, compression), create_time=create_time)
    assert (e.error, str(e), e.exception, e.record_errors) == (
        UNKNOWN_SERVER_ERROR, "Invalid negative timestamp -5", "java.lang.IllegalArgumentException", ())


def keyed_or_not(timestamps: list[int], keys: list[bytes | None], compression: int) -> bytes:
    b = MemoryRecordsBuilder(magic=1, compression_type=compression, batch_size=1 << 20)
    for timestamp, key in zip(timestamps, keys, strict=True):
        b.append(timestamp=timestamp, key=key, value=b"v")
    b.close()
    return bytes(b.buffer())


def test_an_uncompressed_sets_negative_timestamp_and_record_errors_come_in_message_order() -> None:
    """convertAndAssignOffsetsNonCompressed: each message is a batch, its record errors thrown after it, its
    append (the negative check) only without one: the first message in error decides."""
    first_negative = keyed_or_not([-5, 100], [b"k", None], 0)
    assert refusal(first_negative, compacted=True).error == UNKNOWN_SERVER_ERROR
    keyless_first = keyed_or_not([100, -5], [None, b"k"], 0)
    e = refusal(keyless_first, compacted=True)
    assert (e.error, e.record_errors) == (INVALID_RECORD, ((0, KEYLESS),))
    assert refusal(keyed_or_not([-5, 100], [b"k", b"k"], 0), now_ms=NOW,
                   timestamp_difference_max_ms=1_000).error == INVALID_TIMESTAMP  # out of range before negative


def test_a_wrappers_record_errors_come_before_its_negative_timestamp() -> None:
    """validateMessagesAndAssignOffsetsCompressed: every inner message's record errors first (the set refused
    with them), only then the converted batch's appends."""
    data = keyed_or_not([-5, 100], [b"k", None], GZIP)
    e = refusal(data, compacted=True)
    assert (e.error, e.record_errors) == (INVALID_RECORD, ((1, KEYLESS),))
    assert refusal(keyed_or_not([100, -5], [b"k", b"k"], GZIP), compacted=True).error == UNKNOWN_SERVER_ERROR


@pytest.mark.parametrize(("compression", "read_after_first_check"), [(0, 8192), (GZIP, 1)])
def test_a_long_legacy_walk_stops_when_cancelled(monkeypatch: pytest.MonkeyPatch, compression: int,
                                                 read_after_first_check: int) -> None:
    """The worker's walk asks ``cancelled`` from its first step and every 4096 entries, as a v2 batch's does: an
    uncompressed set's third check comes after 8192 CRCs (its first before any); a wrapper's after its own CRC
    (second check) and before any of its inflated messages is read into an entry (third). Before, the 10,000 CRCs
    of the set, or the wrapper's 10,000 inner entries, came before any check stopped them."""
    data = built([1_000] * 10_000, 1, compression)
    entries = inspect(data, 2)  # on the event loop, before the worker's walk
    read: list[int] = []
    asked: list[int] = []

    def counting(real: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any) -> Any:
            read.append(1)
            return real(*args)
        return counted
    monkeypatch.setattr(record_sets, "Entry", counting(record_sets.Entry))
    for module in (log_validator, legacy_records):  # every caller of the CRC check
        monkeypatch.setattr(module, "check_integrity", counting(module.check_integrity))

    def cancelled() -> bool:
        asked.append(len(read))
        return len(asked) == 3
    with pytest.raises(RecordSetError) as e:
        validate(data, entries, None, "orders-0", cancelled=cancelled)
    assert (e.value.error, e.value.exception) == (UNKNOWN_SERVER_ERROR, "java.lang.InterruptedException")
    assert (len(asked), asked[0], len(read) - asked[0]) == (3, 0, read_after_first_check)


@pytest.mark.parametrize("compression", [0, GZIP, ZSTD])
def test_a_v2_batch_gives_its_headers_timestamps(compression: int) -> None:
    data = built([5_000, 1_000, 7_000], 2, compression)
    assert (data[22] & 0x07, timestamps_of(data, 7)) == (compression, [5_000, 7_000])
    assert timestamps_of(data, 7, compacted=True) == [5_000, 7_000]  # the same when its records are walked


def test_a_refused_set_reports_nothing() -> None:
    data = bytearray(built([1_000, 2_000], 1, GZIP))
    data[-1] ^= 0xFF  # the wrapper's CRC no longer matches
    found: list[int] = []
    with pytest.raises(RecordSetError):
        validate(bytes(data), inspect(bytes(data), 2), timestamps=found)
    assert found == []


def test_a_wrapper_all_in_error_keeps_a_bounded_number_of_record_errors() -> None:
    """A wrapper of many messages each in error (here marked LogAppendTime): refused as Kafka refuses it, its
    first `LEGACY_RECORD_ERRORS_KEPT` record errors kept (Produce v0-v2 answers carry none), so a bomb of
    millions cannot hold a text per message; a later message's bad CRC still fails it at once."""
    n = LEGACY_RECORD_ERRORS_KEPT + 500
    data = flagged(built([1_000] * n, 1, GZIP), 9_999)
    e = refusal(data)
    assert (e.error, len(e.record_errors)) == (INVALID_TIMESTAMP, LEGACY_RECORD_ERRORS_KEPT)
    assert [i for i, _ in e.record_errors] == list(range(LEGACY_RECORD_ERRORS_KEPT))
    inner = bytearray(inner_messages(data))
    inner[-1] ^= 1  # the last inner message's value: its CRC no longer matches
    value = gzip.compress(bytes(inner))
    body = bytes(data[16:26]) + struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    corrupt = struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body
    assert refusal(corrupt).error == CORRUPT_MESSAGE
