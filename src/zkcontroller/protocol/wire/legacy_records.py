"""A legacy (magic 0/1) message set as Kafka 2.8's LogValidator reads it (``AbstractLegacyRecordBatch`` and its
deep iterator, then ``validateRecord`` per message) while converting it to one v2 batch, without keeping it.

A legacy message set counts one per uncompressed message. A gzip, snappy or lz4 wrapper is decompressed
(`compression`, at most `MAX_INFLATED` bytes) and counts its inner messages, as Kafka's offset assignment for magic
< 2 does (the wrapper's own offset field does not count them: kafka-python writes 0 there, Java the last inner
offset). As Kafka's ``DataLogInputStream``, the inner messages end at a partial last one (the complete ones before
it count); a wrapper with no complete inner message is INVALID_RECORD, one that cannot be decompressed
UNKNOWN_SERVER_ERROR (Kafka's ``KafkaException``; a gzip, snappy or lz4 stream's, with Java's exception as its
message, once the inner messages it gave before failing are read: `compression.StreamFailure`; lz4's
``BufferUnderflowException`` and snappy's ``NegativeArraySizeException`` as themselves), a zstd wrapper or one with
a null value INVALID_RECORD, a codec id above zstd UNKNOWN_SERVER_ERROR (``CompressionType.forId``), a v1 wrapper
whose offset is neither 0 nor at least its last inner message's INVALID_RECORD, an inner message of another magic
INVALID_RECORD (a record error: "One or more records have been rejected"), a compressed one INVALID_RECORD at once
(the deep iterator's "Inner messages must not be compressed", no record errors), one with a bad CRC
CORRUPT_MESSAGE.

A legacy set's first and max timestamps (for the time index) are read from its messages (a wrapper's inner ones)
in the walk that counts them, as the v2 batch Kafka 2.8 converts the set to carries them (magic 0 has none: -1).
So its timestamps get Kafka's checks in that walk: LogValidator's ``validateTimestamp`` per message (a v1 set
marked LogAppendTime is refused, a CreateTime topic's ``message.timestamp.difference.max.ms`` bounds them) and the
conversion's refusal of a negative timestamp other than -1 (UNKNOWN_SERVER_ERROR, ``MemoryRecordsBuilder``'s
IllegalArgumentException).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import NamedTuple

from zkcontroller.protocol.wire.compression import (
    GZIP,
    LZ4,
    SNAPPY,
    ZSTD,
    CompressionError,
    SnappyContent,
    StreamFailure,
    decompress,
    soft_end,
)
from zkcontroller.protocol.wire.record_errors import (
    RECORD_ERRORS_KEPT,
    keyless_text,
    log_append_time_text,
    negative_timestamp,
    out_of_range_text,
    rejected,
    timestamp_out_of_range,
)
from zkcontroller.protocol.wire.record_sets import (
    CORRUPT_MESSAGE,
    INVALID_RECORD,
    INVALID_RECORD_EXCEPTION,
    INVALID_TIMESTAMP,
    KAFKA_EXCEPTION,
    LOG_APPEND_TIME_FLAG,
    LOG_OVERHEAD,
    LONG_MAX,
    MAX_INFLATED,
    NO_TIMESTAMP,
    UNKNOWN_SERVER_ERROR,
    RecordSetError,
    cancelled_error,
    check_integrity,
    escaped_failure,
    inspect,
    java_long,
)

_LEGACY_HEADER = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
_OFFSET = struct.Struct(">q")
_TIMESTAMP = _OFFSET


def _legacy_read_starts(inner: bytes) -> Iterator[int]:
    """Where ``DataLogInputStream`` starts a read call in a wrapper's inner messages (`compression.soft_end`): each
    message's offset and size (``Utils.readFully`` of 12 bytes), then its body; a read that gets nothing ends the
    messages there, whatever follows."""
    size = len(inner)
    pos = 0
    while True:
        yield pos
        if pos + LOG_OVERHEAD > size:
            return
        yield pos + LOG_OVERHEAD
        pos += LOG_OVERHEAD + max(struct.unpack_from(">i", inner, pos + 8)[0], 0)


def _legacy_has_key(message: memoryview, magic: int) -> bool:
    """A legacy message's key is not null (its length field >= 0); a message too short to say has none."""
    pos = LOG_OVERHEAD + 6 + (8 if magic == 1 else 0)
    return pos + 4 <= len(message) and struct.unpack_from(">i", message, pos)[0] >= 0


class _Legacy(NamedTuple):
    """A legacy entry LogValidator accepts (`legacy_count`)."""

    messages: int
    """How many messages it holds."""
    first_timestamp: int
    """Its first message's timestamp (-1 for magic 0, which has none)."""
    max_timestamp: int
    """Its messages' largest timestamp (-1 for magic 0)."""
    inner: bytes | bytearray | None = None
    """A wrapper's inner set as Kafka's reader reads it (cut where a read meets its end), for the append's time
    index to read again without decompressing it (or reading past that end) a second time."""


class _LegacyChecks(NamedTuple):
    """What LogValidator's ``validateRecord`` checks a legacy entry's messages against (`log_validator.validate`'s
    arguments)."""

    tp: str
    compacted: bool
    low: int
    """The smallest timestamp a message may carry (``now - message.timestamp.difference.max.ms``), or below any
    int64 when nothing is checked (a LogAppendTime topic or the default Long.MaxValue, as
    `log_validator._checks_timestamps`)."""
    high: int
    """The largest (``now + difference``), or above any int64."""
    cancelled: Callable[[], bool] | None
    now_ms: int = 0
    max_difference_ms: int = LONG_MAX
    """The broker's clock and the topic's ``message.timestamp.difference.max.ms``: a timestamp outside [``low``,
    ``high``] is out of range only if it is in Java's long arithmetic (`timestamp_out_of_range`), which these bounds
    (exact integers, the cheap test for every message) do not wrap."""


LEGACY_RECORD_ERRORS_KEPT = RECORD_ERRORS_KEPT
"""The record errors a legacy wrapper's refusal keeps (the first ones; the refusal is the same beyond them), as a v2
batch's: invisible on the wire, as only Produce v0-v2 carry legacy sets and their answers carry no record errors (a
64 MiB wrapper of 26-byte messages all in error would hold 2.5 million texts). Its walk goes on to the end all the
same: a later inner message's bad CRC or compression still fails it at once."""
_COMPRESSION_NAMES = ("NONE", "GZIP", "SNAPPY", "LZ4", "ZSTD", "5", "6", "7")
"""``CompressionType``'s enum names as ``LegacyRecord.toString`` prints them (ids above zstd never get there)."""
_UNCHECKED = 1 << 64
"""Beyond any int64: the bounds of a timestamp that is not checked (`_LegacyChecks`)."""


def legacy_checks(tp: str, compacted: bool, now_ms: int, create_time: bool, timestamp_difference_max_ms: int,
                  cancelled: Callable[[], bool] | None) -> _LegacyChecks:
    """`_LegacyChecks` for `log_validator.validate`'s arguments: the bounds computed once, so each message costs two
    comparisons."""
    if create_time and timestamp_difference_max_ms < LONG_MAX:
        low, high = now_ms - timestamp_difference_max_ms, now_ms + timestamp_difference_max_ms
    else:
        low, high = -_UNCHECKED, _UNCHECKED
    return _LegacyChecks(tp, compacted, low, high, cancelled, now_ms, timestamp_difference_max_ms)


def _int32_at(message: memoryview, pos: int) -> int:
    """The int32 at ``pos``, -1 (Kafka's null length) when the message is too short to hold it."""
    return struct.unpack_from(">i", message, pos)[0] if 0 <= pos <= len(message) - 4 else -1


def _legacy_text(message: memoryview, offset: int, wrapper: tuple[str, int] | None = None) -> str:
    """``LegacyRecordBatch.toString`` of the message that starts ``message`` (its offset and size fields first),
    as LogValidator's record errors name it: ``offset`` is the record's (a v1 wrapper's inner message: its
    absolute one); ``wrapper``: the timestamp type and timestamp a compressed wrapper gives an inner magic-1
    message (Kafka's deep iterator: the wrapper's type, its timestamp if LogAppendTime)."""
    _offset, _size, crc, magic, attributes = _LEGACY_HEADER.unpack_from(message, 0)
    key_at = LOG_OVERHEAD + (6 if magic == 0 else 14)
    key_size = _int32_at(message, key_at)
    value_size = _int32_at(message, key_at + 4 + max(key_size, 0))
    fields = f"magic={magic}, attributes={attributes}, compression={_COMPRESSION_NAMES[attributes & 0x07]}, crc={crc}"
    if magic > 0:
        own = struct.unpack_from(">q", message, LOG_OVERHEAD + 6)[0] if len(message) >= LOG_OVERHEAD + 14 else -1
        if wrapper is not None:
            kind, timestamp = wrapper[0], wrapper[1] if wrapper[0] == "LogAppendTime" else own
        else:
            kind, timestamp = ("LogAppendTime" if attributes & LOG_APPEND_TIME_FLAG else "CreateTime"), own
        fields += f", {kind}={timestamp}"
    return (f"LegacyRecordBatch(offset={offset}, Record({fields}, key={max(key_size, 0)} bytes, "
            f"value={max(value_size, 0)} bytes))")


def _legacy_record_error(message: memoryview, magic: int, offset: int, timestamp: int, log_append_time: bool,
                         checks: _LegacyChecks, wrapper: tuple[str, int] | None = None, *,
                         describe: bool = True) -> tuple[int, str] | None:
    """LogValidator's ``validateKey(...).orElse(validateTimestamp(...))`` for a legacy message of ``magic`` (the
    batch's: a wrapper's inner message has its wrapper's) read at ``timestamp``: its error code and message, or
    None. A keyless message of a compacted topic; else, with the topic's CreateTime bounded, a timestamp (-1
    exempt, so magic 0 always) out of range; else any message of a batch marked LogAppendTime (a v1 wrapper or
    uncompressed v1 message: ``log_append_time``), which a producer may not set. ``describe`` False: the code
    alone, its message left empty, whichever the error (a record error not kept: `LEGACY_RECORD_ERRORS_KEPT`)."""
    if checks.compacted and not _legacy_has_key(message, magic):
        return INVALID_RECORD, keyless_text(checks.tp) if describe else ""
    if (timestamp != NO_TIMESTAMP and not checks.low <= timestamp <= checks.high
            and timestamp_out_of_range(timestamp, checks.now_ms, checks.max_difference_ms)):
        return INVALID_TIMESTAMP, out_of_range_text(timestamp, offset, java_long(checks.low),
                                                    java_long(checks.high)) if describe else ""
    if log_append_time:
        return INVALID_TIMESTAMP, log_append_time_text(_legacy_text(message, offset, wrapper)) if describe else ""
    return None


def _legacy_timestamp(message: memoryview | bytes, start: int, magic: int) -> int:
    """A legacy message's timestamp field (magic 1, just after its attributes), -1 for magic 0 (none); the
    message's size was checked (`check_integrity`)."""
    return struct.unpack_from(">q", message, start + _LEGACY_HEADER.size)[0] if magic == 1 else NO_TIMESTAMP


def legacy_count(message: memoryview, checks: _LegacyChecks, inflated: bytes | bytearray | None = None, *,
                 defer_negative: bool = False) -> _Legacy:
    """LogValidator's validation and offset assignment for a legacy entry (it converts the set to one v2 batch):
    how many messages it holds, a wrapper's inner ones decompressed here (or given: ``inflated``); and the first
    and largest of their timestamps, read in the same walk (what the v2 batch carries in its header, so what the
    time index gets). Each message gets ``validateRecord``'s checks (`_legacy_record_error`), in Kafka's order:
    an uncompressed message is a batch of its own, refused at once (its record error at index 0, else a negative
    timestamp as the conversion appends it); a wrapper's inner messages are all checked (a compressed one fails at
    once, as the deep iterator; another magic is a record error; a bad CRC fails at once), their record errors
    refuse it, then a negative timestamp does as the converted batch is built. ``defer_negative``: LogValidator's
    compressed path (a topic ``compression.type``), which builds the converted batch once every entry is checked:
    an uncompressed message's negative timestamp is returned (`log_validator.validate` refuses it then), not raised."""
    wrapper_offset, _size, _crc, magic, attributes = _LEGACY_HEADER.unpack_from(message, 0)
    log_append_time = magic == 1 and bool(attributes & LOG_APPEND_TIME_FLAG)
    codec = attributes & 0x07
    if codec == ZSTD:  # AbstractLegacyRecordBatch.DeepRecordsIterator
        raise RecordSetError(INVALID_RECORD, f"Invalid wrapper compressionType found in legacy deep record iterator "
                                             f"{magic}", INVALID_RECORD_EXCEPTION)
    if codec not in (GZIP, SNAPPY, LZ4):  # uncompressed (ids above zstd were refused by validate)
        timestamp = _legacy_timestamp(message, 0, magic)
        if checks.compacted or log_append_time or (timestamp != NO_TIMESTAMP
                                                   and not checks.low <= timestamp <= checks.high):
            error = _legacy_record_error(message, magic, wrapper_offset, timestamp, log_append_time, checks)
            if error is not None:
                raise rejected([(0, error[1])], error[0] == INVALID_TIMESTAMP)
        if timestamp < NO_TIMESTAMP and not defer_negative:
            raise negative_timestamp(timestamp)
        return _Legacy(1, timestamp, timestamp)
    value = legacy_value(message, magic)
    if value is None:  # AbstractLegacyRecordBatch.DeepRecordsIterator
        raise RecordSetError(INVALID_RECORD, f"Found invalid compressed record set with null value (magic = {magic})",
                             INVALID_RECORD_EXCEPTION)
    try:
        inner = inflated if inflated is not None else decompress(codec, value, magic, MAX_INFLATED)
        if isinstance(inner, SnappyContent):  # a read meeting a concatenated header of another magic ends them
            end = soft_end(inner, _legacy_read_starts)
            if end is not None:
                inner = inner[:end]
    except StreamFailure as failure:  # DeepRecordsIterator reads every inner message first: a
        # CorruptRecordException among those the stream gave before failing comes first (DataLogInputStream), else
        # the failure, as KafkaException(e) (the constructor's wrapForInput or the loop's IOException alike)
        end = soft_end(failure.data, _legacy_read_starts) if isinstance(failure.data, SnappyContent) else None
        if end is not None:  # a read ends the messages before the failure
            return legacy_count(message, checks, failure.data[:end], defer_negative=defer_negative)
        inspect(failure.data, 0, check_magic=False, cancelled=checks.cancelled)
        if failure.unchecked and not failure.at_open:  # not an IOException: it escapes as itself
            raise escaped_failure(failure) from None
        raise RecordSetError(UNKNOWN_SERVER_ERROR, failure.java, KAFKA_EXCEPTION) from None
    except CompressionError as failure:  # CompressionType.wrapForInput / the stream's IOException, as KafkaException
        raise RecordSetError(UNKNOWN_SERVER_ERROR, f"java.io.IOException: {failure}",
                             "org.apache.kafka.common.KafkaException") from None
    # as DataLogInputStream, which stops at a partial last message (the ones before count)
    entries = inspect(inner, 0, check_magic=False, cancelled=checks.cancelled)
    if not entries:  # AbstractLegacyRecordBatch.DeepRecordsIterator
        raise RecordSetError(INVALID_RECORD, "Found invalid compressed record set with no inner records",
                             INVALID_RECORD_EXCEPTION)
    last_inner_offset = _LEGACY_HEADER.unpack_from(inner, entries[-1].start)[0]
    if magic == 1 and wrapper_offset != 0 and wrapper_offset < last_inner_offset:
        raise RecordSetError(INVALID_RECORD, f"Found invalid wrapper offset in compressed v1 message set, wrapper "
                                             f"offset '{wrapper_offset}' is less than the last inner message offset "
                                             f"'{last_inner_offset}' and it is not zero.",
                             INVALID_RECORD_EXCEPTION)
    # the deep iterator's absolute offsets (v1: from the wrapper's, 0 meaning the inner ones as they are; v0: the
    # inner ones) and the type and timestamp it gives inner v1 messages
    base_offset = wrapper_offset - last_inner_offset if magic == 1 and wrapper_offset else 0
    offset_of = _OFFSET.unpack_from  # bound once: read for a record error only
    timestamp_at = _TIMESTAMP.unpack_from
    wrapper_timestamp = _legacy_timestamp(message, 0, magic)
    wrapper = ("LogAppendTime" if log_append_time else "CreateTime" if magic == 1 else "NoTimestampType",
               wrapper_timestamp)
    inner_view = memoryview(inner)
    cancelled = checks.cancelled
    record_errors: list[tuple[int, str]] = []
    invalid_timestamp = False
    negative = NO_TIMESTAMP
    first_timestamp = max_timestamp = NO_TIMESTAMP
    low, high = checks.low, checks.high
    checked = checks.compacted or log_append_time
    for i, inner_entry in enumerate(entries):  # LogValidator, record by record; the record errors refuse the set
        # after the last record
        if cancelled is not None and not i & 4095 and cancelled():
            raise cancelled_error()
        record = inner_view[inner_entry.start:inner_entry.start + inner_entry.size]
        inner_codec = record[17] & 0x07
        if inner_codec:  # the deep iterator's isCompressed (CompressionType.forId), before LogValidator sees it
            if inner_codec > ZSTD:
                raise RecordSetError(UNKNOWN_SERVER_ERROR, f"Unknown compression type id: {inner_codec}",
                                     "java.lang.IllegalArgumentException")
            raise RecordSetError(INVALID_RECORD, "Inner messages must not be compressed", INVALID_RECORD_EXCEPTION)
        if inner_entry.magic != magic:
            if len(record_errors) < LEGACY_RECORD_ERRORS_KEPT:
                text = _legacy_text(record, base_offset + offset_of(record)[0],
                                    wrapper if inner_entry.magic == 1 else None)
                record_errors.append((i, f"Record {text}'s magic does not match outer magic {magic} in topic "
                                         f"partition {checks.tp}."))
            continue
        check_integrity(record, magic)
        timestamp = wrapper_timestamp if log_append_time or magic == 0 else timestamp_at(record, LOG_OVERHEAD + 6)[0]
        if checked or (timestamp != NO_TIMESTAMP and not low <= timestamp <= high):  # the rare case (magic 0's -1
            # is exempt): a few comparisons for every other message
            kept = len(record_errors) < LEGACY_RECORD_ERRORS_KEPT
            error = _legacy_record_error(record, magic, base_offset + offset_of(record)[0], timestamp, log_append_time,
                                         checks, wrapper, describe=kept)
            if error is not None:
                if kept:  # beyond them, the ones kept refuse the set all the same
                    record_errors.append((i, error[1]))
                invalid_timestamp = invalid_timestamp or error[0] == INVALID_TIMESTAMP
                continue
        if timestamp < NO_TIMESTAMP and negative == NO_TIMESTAMP:
            negative = timestamp
        if i == 0:
            first_timestamp = timestamp
        if timestamp > max_timestamp:
            max_timestamp = timestamp
    if record_errors:  # processRecordErrors' RecordValidationException
        raise rejected(record_errors, invalid_timestamp)
    if negative != NO_TIMESTAMP:  # buildRecordsAndAssignOffsets appends the validated messages
        raise negative_timestamp(negative)
    return _Legacy(len(entries), first_timestamp, max_timestamp, inner)


def legacy_value(message: memoryview, magic: int) -> bytes | None:
    """The value of a legacy message (its key skipped; None for a negative length, Kafka's null); CORRUPT_MESSAGE
    when the lengths overrun it."""
    pos = LOG_OVERHEAD + 6 + (8 if magic == 1 else 0)
    for what in ("key", "value"):
        if pos + 4 > len(message):
            raise RecordSetError(CORRUPT_MESSAGE, f"Message {what} size overruns the message")
        (n,) = struct.unpack_from(">i", message, pos)
        pos += 4
        if n > len(message) - pos:
            raise RecordSetError(CORRUPT_MESSAGE, f"Message {what} size {n} overruns the message")
        if what == "value":
            return None if n < 0 else bytes(message[pos:pos + n])
        pos += max(n, 0)
    raise AssertionError("unreachable")
