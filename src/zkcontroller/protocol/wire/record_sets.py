"""How many records a Produce request's record set carries, without keeping them (the logs keep offsets only).

Kafka checks a partition's record set in two places, and so do we, so errors come in Kafka's order:

* `inspect` — ``ProduceRequest.validateRecords`` and the batch iterator (``ByteBufferLogInputStream``), before the
  partition is looked up: an entry shorter than the smallest record is CORRUPT_MESSAGE; from Produce v3, exactly
  one batch of magic 2 (else INVALID_RECORD) and no ZStandard before v7 (UNSUPPORTED_COMPRESSION_TYPE). Before
  v7 that check reads the batch's codec with ``CompressionType.forId``, so a codec id above zstd (5-7) fails the
  whole request (`RequestFailed`: an ``IllegalArgumentException`` ``handleProduceRequest`` does not catch). A
  trailing partial entry ends the iteration, as in Kafka (``Log.trimInvalidBytes`` later drops it).
* `validate` — ``Log.analyzeAndValidateRecords`` and ``LogValidator.validateBatch``, at the append (after the
  leadership and ``min.insync.replicas`` checks): entry by entry, a v2 batch's base offset 0 (else INVALID_RECORD),
  its size, its CRC (CRC-32C over a v2 batch from its attributes, CRC-32 over a legacy message from its magic)
  else CORRUPT_MESSAGE and a known codec id, every entry first; then every entry must
  have the first one's magic, a v2 batch's offset range must match its records count, clients may not write
  control batches, and a batch with a producer id needs a base sequence >= 0 (else INVALID_RECORD). Producer
  epochs and sequences are checked after this, by the leader's `broker.producer_state`.

The count of a v2 batch is its header's records count (checked against its last offset delta, as Kafka does).
Its records are all read, as LogValidator's iterator reads them (decompressed, at most `MAX_INFLATED` bytes): a
malformed one refuses the batch with what Kafka's reader throws there (`walk_v2_records`, `_structure_error`); a
stream that fails after its header (any codec) is read as far as it goes, then fails where Kafka's reader
meets the failure (`_failed_stream_refusal`). A compressed batch LogValidator keeps as it is (the topic's
``compression.type`` is ``producer`` or its codec) whose offset deltas are not 0, 1, 2, ... fails as Kafka 2.8's
rebuild of it does (UNKNOWN_SERVER_ERROR, `_skipped_key`). A legacy (magic 0/1) message set counts one per
uncompressed message. A gzip, snappy or lz4 wrapper is decompressed (`compression`, at most `MAX_INFLATED`
bytes) and counts its inner messages, as Kafka's offset assignment for magic
< 2 does (the wrapper's own offset field does not count them: kafka-python writes 0 there, Java the last inner
offset). As Kafka's ``DataLogInputStream``, the inner messages end at a partial last one (the complete ones before
it count); a wrapper with no complete inner message is INVALID_RECORD, one that cannot be decompressed
UNKNOWN_SERVER_ERROR (Kafka's ``KafkaException``; a gzip, snappy or lz4 stream's, with Java's exception as its
message, once the inner messages it gave before failing are read: `compression.StreamFailure`; lz4's
``BufferUnderflowException`` and snappy's ``NegativeArraySizeException`` as themselves), a zstd wrapper or one with
a null value INVALID_RECORD, a codec id above zstd UNKNOWN_SERVER_ERROR (``CompressionType.forId``), a v1 wrapper
whose offset is neither 0 nor at least its last inner message's INVALID_RECORD, an inner message of another magic
INVALID_RECORD (a record error: "One or more records have been rejected"), a compressed one INVALID_RECORD at once
(the deep iterator's "Inner messages must
not be compressed", no record errors), one with a bad CRC CORRUPT_MESSAGE. A set of more than one entry whose first
is a v2 batch, or where any is compressed, is INVALID_RECORD ("Compressed outer record has more than one batch":
``LogValidator`` takes exactly one batch then, compressed or not). Only Produce v0–v2 carry legacy sets or several
batches (v3+ takes one v2 batch).

An accepted set's first and max record timestamps go to the time index (`validate`'s ``timestamps``): a v2
batch's header's, a legacy set's read from its messages (a wrapper's inner ones) in the walk that counts them, as
the v2 batch Kafka 2.8 converts the set to carries them (magic 0 has none: -1). So a legacy set's timestamps get
Kafka's checks in that walk: LogValidator's ``validateTimestamp`` per message (a v1 set marked LogAppendTime is
refused, a CreateTime topic's ``message.timestamp.difference.max.ms`` bounds them) and the conversion's refusal of
a negative timestamp other than -1 (UNKNOWN_SERVER_ERROR, ``MemoryRecordsBuilder``'s IllegalArgumentException).

The append's messages are Kafka's, naming the partition (``validate``'s ``topic_partition``) where Kafka's do. A
refusal keeps its first `RECORD_ERRORS_KEPT` record errors (a deliberate bound: Kafka lists one per refused record).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

from crc32c import crc32c

from zkcontroller.protocol.wire.compression import (
    GZIP,
    LZ4,
    SNAPPY,
    ZSTD,
    CompressionError,
    InflationLimitExceeded,
    Lz4Content,
    SnappyContent,
    StreamFailure,
    decompress,
    soft_end,
)

CORRUPT_MESSAGE = 2
UNKNOWN_SERVER_ERROR = -1
INVALID_RECORD = 87
RECORD_TOO_LARGE = 10
UNSUPPORTED_COMPRESSION_TYPE = 76
INVALID_TIMESTAMP = 32
NO_TIMESTAMP = -1
LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)
_LOG_APPEND_TIME_FLAG = 0x08
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
LOG_OVERHEAD = 12
"""Offset (int64) and size (int32) before every entry, batch or legacy message."""
HEADER_SIZE_UP_TO_MAGIC = 17
RECORD_OVERHEAD_V0 = 14
"""``LegacyRecord.RECORD_OVERHEAD_V0``: the smallest size an entry may announce."""
RECORD_BATCH_OVERHEAD = 61
"""``DefaultRecordBatch.RECORD_BATCH_OVERHEAD``: a v2 batch header, with its offset and size."""
NO_PRODUCER_ID = -1
MAX_INFLATED = 64 * 1024 * 1024
"""A wrapper inflating beyond this is refused (as one that cannot be read): a small request cannot fill the
memory."""
RECORD_ERRORS_KEPT = 1000
"""The record errors a refusal keeps, in the batch's order: the first ones Kafka lists (its error code and message
are the same beyond them). A deliberate bound: Kafka lists every record in error, but a 64 MiB batch of the
smallest records all in error (keyless on a compacted topic, marked LogAppendTime, out of the timestamp range)
would be 9.6 million texts, about 1 GB, here and in the answer. A v2 batch's record walk stops once its record
errors settle the answer; the rest is read for its structure alone (`v2_well_formed`), as a malformed record
beyond them is the answer in Kafka (its reader's exception, thrown before the record errors are answered).
Produce v8+ answers carry them (a client then fails the records beyond them with its generic "part of a batch which
had one or more invalid records" error rather than their own)."""
_CONTROL_FLAG = 0x20
_TRANSACTIONAL_FLAG = 0x10
_INVALID_RECORD_EXCEPTION = "org.apache.kafka.common.InvalidRecordException"
_KAFKA_EXCEPTION = "org.apache.kafka.common.KafkaException"
_LEGACY_HEADER = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
_OFFSET = struct.Struct(">q")
_TIMESTAMP = _OFFSET
BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")
"""Kafka's v2 record batch header (61 bytes, `RECORD_BATCH_OVERHEAD`): baseOffset, batchLength,
partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta, firstTimestamp, maxTimestamp, producerId,
producerEpoch, baseSequence, recordsCount. The one copy: the fetch codec and `record_offsets` read it too."""
_BATCH_HEADER = BATCH_HEADER


class RecordSetError(Exception):
    """A record set Kafka refuses; ``error`` is the partition's error code. ``exception``: the Java exception Kafka's
    append fails with when it is none of ``appendToLocalLog``'s known ones nor a ``RecordValidationException`` (its
    Throwable branch: logged, answered with the log start offset and no message)."""

    def __init__(self, error: int, message: str, exception: str | None = None,
                 record_errors: tuple[tuple[int, str], ...] = ()) -> None:
        super().__init__(message)
        self.error = error
        self.exception = exception
        self.record_errors = record_errors
        """``RecordValidationException``'s record errors: (index of the record in its batch, message), answered
        in Produce v8+'s ``RecordErrors``; the first `RECORD_ERRORS_KEPT` of them only."""


class RequestFailed(Exception):
    """A record set that fails the whole Produce request (or an admin handler's request: DeleteTopics,
    CreatePartitions, AlterConfigs): an exception the ``handle*Request`` does not catch
    reaches ``KafkaApis.handle``, whose ``handleError`` logs it and answers every partition ``error``, with the
    exception's message where ``ApiError.fromThrowable`` keeps it (``answer_message`` True: never for
    UNKNOWN_SERVER_ERROR), or another text where the request's ``getErrorResponse`` sends one (``answer_message``
    a string: DescribeConfigs sends ``Errors``' own message). ``exception``: the Java exception's class.
    ``logged``: False for the answer ``handleProduceRequest`` sends itself (``sendErrorResponseMaybeThrottle``),
    which logs nothing."""

    def __init__(self, message: str, exception: str, error: int = UNKNOWN_SERVER_ERROR, *,
                 answer_message: bool | str = False, logged: bool = True) -> None:
        super().__init__(message)
        self.exception = exception
        self.error = error
        self.answer_message: str | None = message if answer_message is True else (answer_message or None)
        self.logged = logged


def _corrupt(message: str) -> RequestFailed:
    return RequestFailed(message, "org.apache.kafka.common.errors.CorruptRecordException", CORRUPT_MESSAGE,
                         answer_message=True)


def _signed(byte: int) -> int:
    return byte - 256 if byte > 127 else byte


def _entry_header(buf: memoryview, pos: int, check_magic: bool) -> tuple[int, int] | None:
    """``ByteBufferLogInputStream.nextBatchSize``'s check of the entry at ``pos``: its announced size and magic, or
    None when fewer bytes than the header up to the magic are left; CORRUPT_MESSAGE for a size below the smallest
    record or (``check_magic``) a magic outside 0..2. Without ``check_magic``, a wrapper's inner messages: Kafka's
    ``DataLogInputStream.nextBatch`` makes the same checks in the same order, but its message names no size."""
    if len(buf) - pos < LOG_OVERHEAD:
        return None
    (size,) = struct.unpack_from(">i", buf, pos + 8)
    if size < RECORD_OVERHEAD_V0:
        shown = f" {size}" if check_magic else ""
        raise RecordSetError(CORRUPT_MESSAGE, f"Record size{shown} is less than the minimum record overhead "
                                              f"({RECORD_OVERHEAD_V0})")
    if len(buf) - pos < HEADER_SIZE_UP_TO_MAGIC:
        return None
    magic = buf[pos + 16]
    if check_magic and not 0 <= _signed(magic) <= 2:
        raise RecordSetError(CORRUPT_MESSAGE, f"Invalid magic found in record: {_signed(magic)}")
    return size, magic


def check_first_batches(record_sets: list[bytes | memoryview | None], transactional_id: str | None) -> None:
    """``handleProduceRequest``'s first step, ``RequestUtils.hasTransactionalRecords``: the first batch of every
    partition in request order (known topics or not) until one is transactional. The batch iterator's header
    check throws there, out of any per-partition handling: a first entry announcing fewer than 14 bytes, or whose
    magic is not 0..2, fails the whole request CORRUPT_MESSAGE with its message. A transactional batch in a
    request without a transactional id fails it TRANSACTIONAL_ID_AUTHORIZATION_FAILED (no authorizer: any id is
    authorized)."""
    for data in record_sets:
        if data is None:
            continue
        buf = memoryview(data)
        try:
            header = _entry_header(buf, 0, check_magic=True)
        except RecordSetError as e:
            raise _corrupt(str(e)) from None
        if header is None or len(buf) < header[0] + LOG_OVERHEAD:
            continue  # no first batch, or a partial one: the iterator has none
        magic = header[1]
        if magic == 2 and len(buf) >= _BATCH_HEADER.size and _BATCH_HEADER.unpack_from(buf)[5] & _TRANSACTIONAL_FLAG:
            if transactional_id is None:
                raise RequestFailed("", "org.apache.kafka.common.errors.TransactionalIdAuthorizationException",
                                    TRANSACTIONAL_ID_AUTHORIZATION_FAILED, logged=False)
            return


@dataclass(frozen=True, slots=True)
class Entry:
    """One batch (magic 2) or legacy message (magic 0/1) of a record set, located but not decoded."""

    start: int
    size: int
    """Bytes with the offset and size fields."""
    magic: int


def inspect(data: bytes | bytearray | memoryview, produce_version: int, *, check_magic: bool = True,
            cancelled: Callable[[], bool] | None = None) -> list[Entry]:
    """The entries of ``data`` as Kafka's iterator finds them, with ``validateRecords``' checks for
    ``produce_version``; `RecordSetError` otherwise. ``check_magic``: a magic outside 0..2 is CORRUPT_MESSAGE, as
    ``ByteBufferLogInputStream`` has it (a wrapper's inner messages, read by ``DataLogInputStream``, are not
    checked there). ``cancelled``: asked before the first entry and every 4096 after it, as `validate`'s (a
    wrapper's inflated set of millions of messages is read here on the worker, before its messages are checked)."""
    buf = memoryview(data)
    entries: list[Entry] = []
    pos = 0
    while (header := _entry_header(buf, pos, check_magic)) is not None:
        if cancelled is not None and not len(entries) & 4095 and cancelled():
            raise _cancelled()
        size, magic = header
        if len(buf) - pos < size + LOG_OVERHEAD:
            break  # a partial entry at the end: the iteration stops there
        entries.append(Entry(pos, size + LOG_OVERHEAD, magic))
        pos += size + LOG_OVERHEAD
    if produce_version >= 3:
        if not entries:
            raise RecordSetError(INVALID_RECORD, f"Produce requests with version {produce_version} must have at "
                                                 "least one record batch")
        if entries[0].magic != 2:
            raise RecordSetError(INVALID_RECORD, f"Produce requests with version {produce_version} are only allowed "
                                                 "to contain record batches with magic version 2")
        if produce_version < 7:  # entry.compressionType(): CompressionType.forId, before the zstd comparison
            codec = _codec(buf, entries[0])
            if codec > ZSTD:
                raise RequestFailed(f"Unknown compression type id: {codec}", "java.lang.IllegalArgumentException")
            if codec == ZSTD:
                raise RecordSetError(UNSUPPORTED_COMPRESSION_TYPE, f"Produce requests with version {produce_version} "
                                                                   "are not allowed to use ZStandard compression")
        if len(entries) > 1:
            raise RecordSetError(INVALID_RECORD, f"Produce requests with version {produce_version} are only allowed "
                                                 "to contain exactly one record batch")
    return entries


def validate(data: bytes | memoryview, entries: list[Entry], max_batch_size: int | None = None,
             topic_partition: str = "", *, compacted: bool = False, now_ms: int = 0, create_time: bool = True,
             timestamp_difference_max_ms: int = LONG_MAX, inflated: dict[int, bytes | bytearray] | None = None,
             cancelled: Callable[[], bool] | None = None, timestamps: list[int] | None = None,
             compression_type: str = "producer") -> int:
    """Check each entry as the log's append does; the number of offsets the record set takes. ``max_batch_size``:
    the topic's ``max.message.bytes``, which no entry (offset and size fields included) may exceed;
    ``topic_partition`` (``topic-partition``) is named in the messages, as Kafka's name it. ``compacted``: the
    topic's ``cleanup.policy`` has ``compact``, so every record needs a key (`_v2_rejection`). LogValidator's
    ``validateTimestamp`` per record of a v2 batch (`_v2_rejection`), after the key check: with the topic's
    ``message.timestamp.type`` CreateTime (``create_time``), a timestamp further than
    ``timestamp_difference_max_ms`` from ``now_ms`` is INVALID_TIMESTAMP (in Java's long arithmetic: a record's
    timestamp, its base plus its delta, wraps at int64, and so do the difference and the bounds printed:
    `timestamp_out_of_range`); so is every record of a batch the producer
    marked LogAppendTime, whatever the topic's type. A legacy set gets the same per message, read in the walk that
    counts them (`_legacy_count`: its record errors in Kafka's order, with Kafka's texts, and a v1 timestamp below
    0 other than -1 UNKNOWN_SERVER_ERROR, as the conversion to a v2 batch throws). ``inflated``: compressed values
    `scan_size` already inflated, by entry start (not inflated again); an accepted compressed entry's records are
    left there as the walk read them (a wrapper's inner set cut where Kafka's reader meets its end), for the
    append's time index (`record_timestamps`) to read without decompressing again. ``cancelled``: asked every 4096
    records of a v2 batch, messages of a legacy wrapper (as its inflated set is read, then as they are checked) or
    entries of a set (as their sizes and CRCs are checked, then as they are counted), from the first one of each
    walk; true,
    the walk ends with UNKNOWN_SERVER_ERROR (its requester is gone). ``timestamps``: once the set is accepted, set
    to its first record's timestamp and the largest one: what the time index gets (`broker.partition.TimeIndex`). A
    legacy set, which LogValidator converts to one v2 batch, gives its messages' (a wrapper's inner ones'), as that
    batch carries them (-1 and -1 for magic 0, which has no timestamps). A client's v2 batch gives its first record's
    timestamp (its base plus its delta: `_first_record_timestamp`) and the max LogValidator writes in it
    (``batch.setMaxTimestamp``): its records' largest timestamp, each its base plus its delta wrapped as a Java
    long, or -1 (`_records_max_timestamp`), whatever its header said. ``compression_type``: the topic's
    ``compression.type`` (``producer``, ``uncompressed``, ``gzip``, ...), which picks LogValidator's path: with a
    compressed source or target the compressed path (`_v2_path`), where an uncompressed legacy set's negative
    timestamps fail the conversion only once every message is checked (``buildRecordsAndAssignOffsets``), not at
    the first one's append."""
    tp = topic_partition
    if inflated is None:  # a caller's dict (even empty) is filled: what the walks read, for the append
        inflated = {}
    buf = memoryview(data)
    compressed = False
    for i, e in enumerate(entries):  # Log.analyzeAndValidateRecords, entry by entry, before LogValidator looks at any
        if cancelled is not None and not i & 4095 and cancelled():  # a long set's CRCs
            raise _cancelled()
        (base_offset,) = struct.unpack_from(">q", buf, e.start)
        if e.magic >= 2 and base_offset != 0:  # a client's v2 batch
            raise RecordSetError(INVALID_RECORD, f"The baseOffset of the record batch in the append to {tp} should "
                                                 f"be 0, but it is {base_offset}", _INVALID_RECORD_EXCEPTION)
        if max_batch_size is not None and e.size > max_batch_size:
            raise RecordSetError(RECORD_TOO_LARGE, f"The record batch size in the append to {tp} is {e.size} "
                                                   f"bytes which exceeds the maximum configured value of "
                                                   f"{max_batch_size}.")
        _check_integrity(buf[e.start:e.start + e.size], e.magic)
        codec = _codec(buf, e)
        if codec > ZSTD:  # CompressionType.forId, reading the source codec
            raise RecordSetError(UNKNOWN_SERVER_ERROR, f"Unknown compression type id: {codec}",
                                 "java.lang.IllegalArgumentException")
        compressed = compressed or codec != 0
    if len(entries) > 1 and (entries[0].magic >= 2 or compressed):
        # LogValidator.getFirstBatchAndMaybeValidateNoMoreBatches, before any batch is validated: a v2 first batch
        # must be the only one, compressed or not; so must a compressed set (Log.analyzeAndValidateRecords' source
        # codec is any entry's)
        raise RecordSetError(INVALID_RECORD, "Compressed outer record has more than one batch",
                             _INVALID_RECORD_EXCEPTION)
    source_codec = max((_codec(buf, e) for e in entries), default=0)  # the compressed entries' (one, if any)
    target_codec = _target_codec(compression_type, source_codec)
    compressed_path = bool(source_codec or target_codec)  # validateMessagesAndAssignOffsetsCompressed
    negative = NO_TIMESTAMP  # the first negative timestamp the compressed path's conversion refuses at its end
    count = 0
    first_timestamp = max_timestamp = NO_TIMESTAMP
    legacy_checks = _legacy_checks(tp, compacted, now_ms, create_time, timestamp_difference_max_ms, cancelled)
    for i, e in enumerate(entries):
        if cancelled is not None and not i & 4095 and cancelled():  # a long run of uncompressed messages
            raise _cancelled()
        if e.magic != entries[0].magic:
            raise RecordSetError(INVALID_RECORD, f"Batch magic {e.magic} is not the same as the first batch'es magic "
                                                 f"byte {entries[0].magic} in topic partition {tp}.",
                                 _INVALID_RECORD_EXCEPTION)
        entry = buf[e.start:e.start + e.size]
        if e.magic != 2:  # its messages' checks, in Kafka's order, in the walk that counts them
            legacy = _legacy_count(entry, legacy_checks, inflated.get(e.start), defer_negative=compressed_path)
            if legacy.inner is not None:
                inflated[e.start] = legacy.inner
            if legacy.first_timestamp < NO_TIMESTAMP and negative == NO_TIMESTAMP:  # deferred: uncompressed
                negative = legacy.first_timestamp
            count += legacy.messages
            if i == 0:
                first_timestamp = legacy.first_timestamp
            max_timestamp = max(max_timestamp, legacy.max_timestamp)
            continue
        count += _batch_count(entry, tp)
        first_timestamp, entry_max = struct.unpack_from(">qq", entry, 27)  # the only entry
        max_timestamp = max(max_timestamp, entry_max)
        check_timestamps = _checks_timestamps(entry, create_time, timestamp_difference_max_ms)
        # one pass over the records, as LogValidator's iterator reads every one (a malformed one refuses the batch),
        # for keys and timestamps, after the batch's own checks: the refused ones kept up to RECORD_ERRORS_KEPT (a
        # bomb's millions of good records, or of refused ones beyond them, are not)
        path = _v2_path(_codec(buf, e), target_codec)
        rebuilt = compressed_path and path != IN_PLACE
        body, failure = _v2_record_stream(entry, inflated.get(e.start))  # decompressed once, for both reads
        if body is None:  # a codec id no client can send (refused before)
            continue
        records_count = struct.unpack_from(">i", entry, 57)[0]
        if isinstance(body, SnappyContent):  # a concatenated header of another magic, where a read starts: the end
            end = soft_end(body, partial(_v2_read_starts, count=records_count))
            if end is not None:
                body, failure = body[:end], None
        if failure is None and e.start not in inflated and entry[22] & 0x07:  # kept for the append's time index
            inflated[e.start] = body  # type: ignore[assignment]  # a compressed batch's records are bytes
        if isinstance(body, Lz4Content):  # lz4 blocks that inflate to nothing, which a one-byte read fails on
            # (before any failure of the stream after them)
            underflow = _lz4_empty_block_underflow(body, records_count, cancelled)
            if underflow is not None:
                raise underflow
        if failure is not None:  # a stream Java's reader fails on, once its records reach the failure
            raise _failed_stream_refusal(body, records_count, path, failure, cancelled)
        deltas: list[tuple[bytearray, int, int]] = []
        where: list[int] = []
        if not (compacted or check_timestamps or rebuilt):  # the structure alone is checked (and an in-place
            # batch's offset deltas): no record is kept
            if v2_well_formed(body, records_count, cancelled, in_order=path == IN_PLACE, deltas=deltas, where=where):
                max_timestamp = _records_max_timestamp(first_timestamp, body, records_count, *deltas[0])
                first_timestamp = _first_record_timestamp(first_timestamp, body, records_count)
                continue
            if where:  # malformed, every record before it in order: what the walk would find, without walking
                raise _structure_error(_Malformed(where[0], where[1], body, records_count, bool(where[2])), path,
                                       cancelled=cancelled)
        records: Iterator[tuple[int, V2Record | _Malformed]] = enumerate(walk_v2_records(body, records_count,
                                                                                         cancelled))
        if cancelled is not None:
            records = _unless_cancelled(records, cancelled)
        stamps: list[int] = []
        rejection = _v2_rejection(entry, records, tp, compacted, check_timestamps, now_ms, create_time,
                                  timestamp_difference_max_ms, path, rebuilt=rebuilt,
                                  well_formed=partial(v2_well_formed, body, records_count, cancelled), stamps=stamps,
                                  cancelled=cancelled)
        if rejection is not None:
            raise rejection
        max_timestamp = stamps[0]
        first_timestamp = _first_record_timestamp(first_timestamp, body, records_count)
    if negative != NO_TIMESTAMP:  # buildRecordsAndAssignOffsets appends the validated messages
        raise _negative_timestamp(negative)
    if timestamps is not None:
        timestamps[:] = (first_timestamp, max_timestamp)
    return count


_CODECS = {"uncompressed": 0, "gzip": GZIP, "snappy": SNAPPY, "lz4": LZ4, "zstd": ZSTD}
"""``BrokerCompressionCodec``'s names of a topic's ``compression.type`` (``producer``: the source's codec)."""


def _target_codec(compression_type: str, source_codec: int) -> int:
    """``BrokerCompressionCodec.getTargetCompressionCodec``: the codec the log writes a record set with."""
    return _CODECS.get(compression_type, source_codec)


def _v2_path(codec: int, target_codec: int) -> str:
    """How LogValidator reads a client's v2 batch of ``codec`` for a log written with ``target_codec``: an
    uncompressed one from its buffer, whichever path (`UNCOMPRESSED`); a compressed one kept as it is when the
    codecs agree (`IN_PLACE`, ``skipKeyValueIterator``), else rebuilt (`REBUILT`, ``streamingIterator``:
    ``DefaultRecord``s)."""
    if codec == 0:
        return UNCOMPRESSED
    return IN_PLACE if codec == target_codec else REBUILT


def _checks_timestamps(batch: memoryview, create_time: bool, timestamp_difference_max_ms: int) -> bool:
    """LogValidator reads a v2 batch's records' timestamps: the producer marked it LogAppendTime, or the topic's
    CreateTime timestamps are bounded."""
    return bool(batch[22] & _LOG_APPEND_TIME_FLAG or (create_time and timestamp_difference_max_ms < LONG_MAX))


def scan_size(data: bytes | memoryview, entries: list[Entry], limit: int, inflated: dict[int, bytes | bytearray], *,
              compacted: bool, create_time: bool, timestamp_difference_max_ms: int) -> int:
    """How many bytes `validate` walks record by record in Python (the cost that matters: about 3 µs per record
    of at least 7 bytes): a legacy wrapper's inner messages, a legacy set's messages, a v2 batch's records (every
    one is read, as LogValidator reads them; ``compacted`` and the timestamp checks add no walk of their own);
    counted up to just past ``limit`` only. A compressed entry is inflated
    at most to ``limit`` to tell (a zip bomb's compressed size says nothing: 64 MiB of zstd records fit in 6 KB);
    the ones that fit are left in ``inflated``, for `validate`. Entries `validate` would refuse first are not its
    concern: they cost no more than they weigh."""
    buf = memoryview(data)
    total = 0
    for e in entries:
        if total > limit:
            break
        entry = buf[e.start:e.start + e.size]
        if len(entry) < (RECORD_BATCH_OVERHEAD if e.magic == 2 else LOG_OVERHEAD + RECORD_OVERHEAD_V0):
            continue  # refused by validate's integrity check
        codec = _codec(buf, e)
        if e.magic == 2:  # every record read, as LogValidator's iterator does
            value: bytes | None = bytes(entry[RECORD_BATCH_OVERHEAD:]) if codec else None
        elif codec in (GZIP, SNAPPY, LZ4):
            try:
                value = _legacy_value(entry, e.magic)
            except RecordSetError:
                continue
        else:
            total += len(entry)  # an uncompressed legacy message: one record, but a set may hold thousands
            continue
        if value is None or codec not in (GZIP, SNAPPY, LZ4, ZSTD):
            total += len(entry)
            continue
        try:
            inflated[e.start] = decompress(codec, value, e.magic, limit - total)
        except InflationLimitExceeded:
            return limit + 1
        except StreamFailure as failure:  # walked as far as the stream gives (v2) or its messages read (legacy)
            total += len(failure.data)
            continue
        except CompressionError:
            continue  # refused (legacy) or not walked (v2) at once
        total += len(inflated[e.start])
    return total


_MIN_RECORD_BODY = 6
"""A DefaultRecord's smallest body: attributes, then timestamp delta, offset delta, key length, value length and
header count, one byte each at least. A shorter length cannot be a record, so the walk stops there: one record per
7 bytes at most, whatever the header's count says."""
SMALLEST_RECORD = _MIN_RECORD_BODY + 1
"""A whole record's fewest bytes: its length varint and the smallest body."""


class V2Record(NamedTuple):
    """A well-formed record `walk_v2_records` read (`record_offsets` reads their offsets)."""

    timestamp_delta: int
    offset_delta: int
    key_length: int
    value_length: int


def _unless_cancelled(records: Iterator[tuple[int, V2Record | _Malformed]],
                      cancelled: Callable[[], bool]) -> Iterator[tuple[int, V2Record | _Malformed]]:
    """``records``, ``cancelled`` asked every 4096 of them (the walk of a check no one waits for any more)."""
    for i, r in records:
        if not i & 4095 and cancelled():
            raise _cancelled()
        yield i, r


def _v2_record_stream(entry: memoryview, inflated: bytes | bytearray | None
                      ) -> tuple[bytes | bytearray | memoryview | None, StreamFailure | None]:
    """The records part of a v2 batch, decompressed (``inflated`` when it already was); None for a codec id no
    client can send (`inspect` refused it before). UNKNOWN_SERVER_ERROR where it cannot be decompressed; but a
    stream Kafka's reader fails on only after its header gives what it inflated before the failure,
    with the failure, for `_failed_stream_refusal` (one whose header fails is refused here: ``wrapForInput``'s
    ``KafkaException`` of it, "java.util.zip.ZipException: Not in GZIP format", whatever the records)."""
    codec = entry[22] & 0x07
    if inflated is not None:
        return inflated, None
    if codec in (GZIP, SNAPPY, LZ4, ZSTD):
        try:
            return decompress(codec, bytes(entry[RECORD_BATCH_OVERHEAD:]), 2, MAX_INFLATED), None
        except StreamFailure as failure:
            if failure.at_open:
                raise RecordSetError(UNKNOWN_SERVER_ERROR, failure.java, _KAFKA_EXCEPTION) from None
            return failure.data, failure
        except CompressionError as failure:  # DefaultRecordBatch's IOException, as KafkaException (and, a
            # deliberate deviation, beyond MAX_INFLATED: refused rather than walked)
            raise RecordSetError(UNKNOWN_SERVER_ERROR, f"Failed to decompress record stream: {failure}",
                                 _KAFKA_EXCEPTION) from None
    return (None if codec else entry[RECORD_BATCH_OVERHEAD:]), None


def _v2_read_starts(records: bytes, count: int) -> Iterator[int]:
    """Where Kafka's streaming record readers start a read call in a v2 batch's ``records`` (`compression.soft_end`):
    each byte of a record's length varint (``readByte``), its body (``readFully``; ``readPartiallyFrom``'s first
    ``readMore``, whose later refills of a body over 2 KiB are not modelled), and ``ensureNoneRemaining``'s read after
    the ``count``-th record. Ends where a record cannot be read (the walk's answer)."""
    size = len(records)
    pos = 0
    for _ in range(max(count, 0)):
        start = pos
        while True:
            yield pos
            if pos >= size or pos - start >= 4:
                return
            pos += 1
            if records[pos - 1] < 0x80:
                break
        length = _varint(records, start)[0]
        yield pos
        if length <= 0 or pos + length > size:
            return
        pos += length
    yield pos


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


def _failed_stream_refusal(records: bytes | bytearray | memoryview, count: int, path: str, failure: StreamFailure,
                           cancelled: Callable[[], bool] | None) -> RecordSetError:
    """What Kafka's streaming record iterator throws on a compressed batch whose stream fails after
    ``records`` (`compression.StreamFailure`): the records are read as far as they go; a malformed one, or bytes
    left after the last, answer as from a whole stream (`_structure_error`), except that a read past ``records``
    meets the failure (an ``EOFException``: "premature EOF reached", INVALID_RECORD, as a stream's end; another
    ``IOException``: ``KafkaException`` "Failed to decompress record stream", UNKNOWN_SERVER_ERROR); every record
    read to exactly its end, ``ensureNoneRemaining``'s read meets it: ``KafkaException`` "Error checking for
    remaining bytes after reading batch", UNKNOWN_SERVER_ERROR (an unchecked exception as itself: `_escaped`).
    Either way it escapes before any record error is answered, so none is."""
    walked: Iterator[tuple[int, V2Record | _Malformed]] = enumerate(walk_v2_records(records, count, cancelled))
    if cancelled is not None:
        walked = _unless_cancelled(walked, cancelled)
    for _, r in walked:
        if isinstance(r, _Malformed):
            return _structure_error(r, path, failure, cancelled)
    if failure.unchecked:
        return _escaped(failure)
    return RecordSetError(UNKNOWN_SERVER_ERROR, "Error checking for remaining bytes after reading batch",
                          _KAFKA_EXCEPTION)


def _escaped(failure: StreamFailure) -> RecordSetError:
    """A stream's unchecked exception (``StreamFailure.unchecked``: lz4's ``BufferUnderflowException``) as it
    escapes the record readers: ``appendToLocalLog``'s Throwable branch answers UNKNOWN_SERVER_ERROR and logs it."""
    exception, _, message = failure.java.partition(": ")
    return RecordSetError(UNKNOWN_SERVER_ERROR, message, exception)


def _lz4_empty_block_underflow(records: Lz4Content, count: int, cancelled: Callable[[], bool] | None
                               ) -> RecordSetError | None:
    """Where Kafka's record iterator reads one byte at a time from an lz4 stream (``DataInputStream.readByte`` for
    each byte of a record's length varint, ``ensureNoneRemaining``'s ``read()`` after the last record) and meets
    blocks that inflate to nothing (`Lz4Content.empty_at`), ``KafkaLZ4BlockInputStream.read()`` throws
    ``BufferUnderflowException``: not an ``IOException``, so it escapes the iterator, before any record error is
    answered, and ``appendToLocalLog``'s Throwable branch answers UNKNOWN_SERVER_ERROR. The record bodies are read
    with ``readFully``, which reads on past such blocks. None when no one-byte read meets one before the walk's own
    answer (a record cut short or malformed before it, a varint too long): `walk_v2_records` gives that."""
    traps = frozenset(records.empty_at)
    last = records.empty_at[-1]
    size = len(records)
    pos = 0
    for index in range(count):
        if cancelled is not None and not index & 4095 and cancelled():
            raise _cancelled()
        if pos > last:
            return None  # no empty block after here: the walk answers
        at = pos
        for _ in range(5):  # ByteUtils.readVarint: a byte at a time, at most five
            if at in traps:
                return _underflow_unless_malformed_before(records, index, pos, cancelled)
            if at >= size:
                return None  # EOF: premature EOF, the walk's answer
            at += 1
            if records[at - 1] < 0x80:
                break
        else:
            return None  # a varint too long: the walk's answer
        length = _varint(records, pos)[0]
        if length < _MIN_RECORD_BODY or at + length > size:
            return None  # the walk's answer
        pos = at + length
    if count > 0 and pos in traps:  # ensureNoneRemaining, once the count-th record is read
        return _underflow_unless_malformed_before(records, count, pos, cancelled)
    return None


def _underflow_unless_malformed_before(records: Lz4Content, index: int, pos: int,
                                       cancelled: Callable[[], bool] | None) -> RecordSetError | None:
    """The underflow met at ``pos``, reading record ``index`` (or the end check): unless one of the records before
    it is malformed, which the iterator throws on first (the walk's answer)."""
    if index and not v2_well_formed(memoryview(records)[:pos], index, cancelled):  # the structure walk alone
        return None
    return RecordSetError(UNKNOWN_SERVER_ERROR, "", "java.nio.BufferUnderflowException")


def walk_v2_records(records: bytes | bytearray | memoryview, count: int,
                    cancelled: Callable[[], bool] | None = None) -> Iterator[V2Record | _Malformed]:
    """The records of a v2 batch's (decompressed) ``records`` part, of which its header counts ``count``, read
    lazily as Kafka's record iterator reads them: exactly ``count`` records, each of its declared length, whose
    fields (varints of at most 5 bytes, varlongs of 10, as ``ByteUtils``) fill that length exactly, headers
    included; then no byte may be left. The first record that fails this (cut short, a field past its end or short
    of it, a negative header count or header key length, a record missing) or the bytes left after the last one
    are yielded as a `_Malformed` in its place, and the walk ends there (`_structure_error` says what Kafka throws).
    A record takes 7 bytes at least, so the work is linear in the bytes, whatever the header says: `validate` and
    `record_offsets` both walk here."""
    size = len(records)
    pos = 0
    index = 0
    total = max(count, 0)
    while index < total:
        start = pos
        try:
            length, at = _varint(records, pos)
            end = at + length
            if length < _MIN_RECORD_BODY or end > size:
                raise _Bad
            delta, field = _varlong(records, at + 1)  # DefaultRecord: length, attributes, timestamp delta, ...
            offset_delta, field = _varint(records, field)
            key_length, field = _varint(records, field)
            if key_length > 0:
                field += key_length
            value_length, field = _varint(records, field)
            if value_length > 0:
                field += value_length
            if _TOO_LONG in (offset_delta, key_length, value_length):
                raise _Bad
            headers, field = _varint(records, field)
            if headers < 0 or headers > end - field:
                raise _Bad
            if headers:
                field = _headers_end(records, field, headers, cancelled)
            if field != end:
                raise _Bad
        except (IndexError, _Bad):  # cut short, or not a record
            yield _Malformed(index, start, records, total, False)
            return
        pos = end
        index += 1
        if index == total and pos != size:  # RecordIterator.next's ensureNoneRemaining, before the last record
            yield _Malformed(index - 1, pos, records, total, True)
            return
        yield V2Record(delta, offset_delta, key_length, value_length)


def v2_well_formed(records: bytes | bytearray | memoryview, count: int,
                   cancelled: Callable[[], bool] | None = None, *, in_order: bool = False,
                   deltas: list[tuple[bytearray, int, int]] | None = None, where: list[int] | None = None) -> bool:
    """True when `walk_v2_records` reads ``count`` records from ``records`` and finds none malformed: the same
    checks (each varint read as `_varint`/`_varlong` read it, one-byte ones inline), with no record kept. A batch
    whose records nothing but their structure is checked for (the default topic configs) is read here, about three
    times faster; False sends the caller to `walk_v2_records` for what is malformed and where. ``cancelled`` is
    asked every 4096 records, as `_unless_cancelled` asks it. ``in_order``: also False at the first record whose
    offset delta is not its index (a batch kept in place, which Kafka cannot renumber: `_v2_rejection`).
    ``deltas``: once well formed, set to the records' timestamp deltas as `_records_max_timestamp` takes them
    (which one-byte ones, by byte; the least and largest longer one), gathered in the same walk. ``where``: when
    False for a malformed record (not for an offset delta out of order), set to the `_Malformed` fields
    `walk_v2_records` would give (its index, its start, 1 for bytes left after the last record), so the caller
    need not walk the records again to find it (a record of millions of headers is read once here)."""

    def malformed(index: int, start: int, trailing: bool = False) -> bool:
        if where is not None:
            where[:] = (index, start, int(trailing))
        return False

    size = len(records)
    pos = 0
    varint = _varint
    seen = bytearray(0x80)  # seen[b]: a one-byte timestamp delta b (zig-zag) was read
    lo, hi = LONG_MAX, LONG_MIN  # the longer ones' range
    try:
        for index in range(count):
            if not index & 4095 and cancelled is not None and cancelled():
                raise _cancelled()
            b = records[pos]
            if b < 0x80:
                length, field = (b >> 1) ^ -(b & 1), pos + 1
            else:
                length, field = varint(records, pos)
            end = field + length
            if length < _MIN_RECORD_BODY or end > size:
                return malformed(index, pos)
            field += 1  # attributes
            b = records[field]  # timestamp delta
            if b < 0x80:
                seen[b] = 1
                field += 1
            else:
                delta, field = _varlong(records, field)
                if delta < lo:
                    lo = delta
                if delta > hi:
                    hi = delta
            b = records[field]  # offset delta
            if b < 0x80:
                if in_order and b != index << 1:  # zig-zag: one byte holds 0..63, as 0, 2, 4, ...
                    return False
                field += 1
            else:
                offset_delta, field = varint(records, field)
                if offset_delta == _TOO_LONG:
                    return malformed(index, pos)
                if in_order and offset_delta != index:
                    return False
            for _ in (0, 1):  # key length, then value length
                b = records[field]
                if b < 0x80:
                    length, field = (b >> 1) ^ -(b & 1), field + 1
                else:
                    length, field = varint(records, field)
                    if length == _TOO_LONG:
                        return malformed(index, pos)
                if length > 0:
                    field += length
            b = records[field]
            if b < 0x80:
                headers, field = (b >> 1) ^ -(b & 1), field + 1
            else:
                headers, field = varint(records, field)
            if headers < 0 or headers > end - field:
                return malformed(index, pos)
            if headers:
                field = _headers_end(records, field, headers, cancelled)
            if field != end:
                return malformed(index, pos)
            pos = end
    except (IndexError, _Bad):
        return malformed(index, pos)
    if count > 0 and pos != size:
        return malformed(count - 1, pos, trailing=True)
    if deltas is not None:
        deltas[:] = [(seen, lo, hi)]
    return True


def _first_record_timestamp(base_timestamp: int, records: bytes | bytearray | memoryview, count: int) -> int:
    """The first record's timestamp in a well-formed v2 batch's ``records``: the header's base timestamp plus the
    record's delta, wrapped as a Java long (a producer writes delta 0, but need not): what Kafka's
    ``searchForTimestamp`` answers for a target it reaches. The base timestamp for a batch of no record."""
    if count <= 0 or not records:
        return base_timestamp
    at = _varint(records, 0)[1]  # past the record's length
    return java_long(base_timestamp + _varlong(records, at + 1)[0])  # the delta, after the attributes


def _records_max_timestamp(first_timestamp: int, records: bytes | bytearray | memoryview, count: int,
                           seen: bytearray, lo: int, hi: int) -> int:
    """The max timestamp Kafka's LogValidator writes in a CreateTime batch (``batch.setMaxTimestamp``): the largest
    of its records' timestamps, each ``first_timestamp`` + its delta in long arithmetic (wrapping), and -1. From
    the deltas `v2_well_formed` gathered (``seen``: which one-byte ones, by byte; ``lo``, ``hi``: the longer ones'
    range); when some sum may wrap (a timestamp within a delta of the int64 ends), the records are read again,
    each sum wrapped."""
    # zig-zag: an even byte b is b // 2 (0..63), an odd one -(b // 2) - 1 (-1..-64); found in C, not a loop of 128
    evens, odds = seen[0::2], seen[1::2]
    top, bottom = evens.rfind(1), odds.rfind(1)
    largest = max(hi, top if top >= 0 else -odds.find(1) - 1 if 1 in odds else LONG_MIN)
    least = min(lo, -bottom - 1 if bottom >= 0 else evens.find(1) if 1 in evens else LONG_MAX)
    if largest < least:  # no record
        return NO_TIMESTAMP
    if first_timestamp + least >= LONG_MIN and first_timestamp + largest <= LONG_MAX:  # no sum wraps
        return max(NO_TIMESTAMP, first_timestamp + largest)
    top = NO_TIMESTAMP
    for r in walk_v2_records(records, count):
        if isinstance(r, V2Record):
            top = max(top, java_long(first_timestamp + r.timestamp_delta))
    return top


class _Bad(Exception):
    """A structure `walk_v2_records` cannot read as a record."""


def _headers_end(records: bytes | bytearray | memoryview, field: int, headers: int,
                 cancelled: Callable[[], bool] | None = None) -> int:
    """Where a record's ``headers`` headers (``headers`` > 0) starting at ``field`` end, each a key length, the key,
    a value length and the value (null: -1), as ``ByteUtils`` reads them (one-byte lengths inline); `_Bad` for a
    negative key length or a value length too long, IndexError past the bytes. The one copy for both readers
    (`walk_v2_records`, `v2_well_formed`), called only for a record with headers: most have none, and pay no call.
    ``cancelled`` is asked every 65,536 headers past the first (one record may hold 32 million)."""
    varint = _varint
    for i in range(headers):
        if i and not i & 0xFFFF and cancelled is not None and cancelled():
            raise _cancelled()
        b = records[field]
        if b < 0x80:
            header_key, field = (b >> 1) ^ -(b & 1), field + 1
        else:
            header_key, field = varint(records, field)
        if header_key < 0:
            raise _Bad
        field += header_key
        b = records[field]
        if b < 0x80:
            header_value, field = (b >> 1) ^ -(b & 1), field + 1
        else:
            header_value, field = varint(records, field)
            if header_value == _TOO_LONG:
                raise _Bad
        if header_value > 0:
            field += header_value
    return field


_TOO_LONG = -(1 << 40)
"""What `_varint` reads for a varint longer than 5 bytes (no int32 is): ``ByteUtils`` throws there."""


def _varint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """``ByteUtils.readVarint``: a zig-zag varint of at most 5 bytes (`_TOO_LONG` beyond, its 5 bytes read),
    wrapped to an int32 as Java does; its value and where the next field starts."""
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    raw, shift = b & 0x7F, 7
    while True:
        pos += 1
        b = buf[pos]
        if not b & 0x80:
            raw = (raw | b << shift) & 0xFFFFFFFF
            return (raw >> 1) ^ -(raw & 1), pos + 1
        raw |= (b & 0x7F) << shift
        shift += 7
        if shift > 28:
            return _TOO_LONG, pos + 1


def _varlong(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """``ByteUtils.readVarlong``: as `_varint`, at most 10 bytes, wrapped to an int64."""
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    raw, shift = b & 0x7F, 7
    while True:
        pos += 1
        b = buf[pos]
        if not b & 0x80:
            raw = (raw | b << shift) & 0xFFFFFFFFFFFFFFFF
            return (raw >> 1) ^ -(raw & 1), pos + 1
        raw |= (b & 0x7F) << shift
        shift += 7
        if shift > 63:
            raise _Bad


class _Malformed(NamedTuple):
    """Where `walk_v2_records` found a batch's records malformed: the record's index (``record``) and the offset of
    its length
    (``trailing``: bytes left after the last record, at ``start``) in ``records``, the batch's count."""

    record: int
    start: int
    records: bytes | bytearray | memoryview
    records_count: int
    trailing: bool


UNCOMPRESSED, IN_PLACE, REBUILT = "uncompressed", "in place", "rebuilt"
"""How LogValidator reads a client's v2 batch's records (`_structure_error`): an uncompressed batch from its buffer
(``uncompressedIterator``, ``DefaultRecord.readFrom(ByteBuffer)``), a compressed one it keeps as it is by streaming
them with keys and values skipped (``skipKeyValueIterator``, ``readPartiallyFrom``), one it recompresses by
streaming them whole (``streamingIterator``, ``DefaultRecord.readFrom(DataInput)``)."""
_SKIP_BUFFER = 2048
"""``DefaultRecordBatch.MAX_SKIP_BUFFER_SIZE``: how much ``readPartiallyFrom`` reads ahead at a time."""


class _Underflow(Exception):
    """Java's ``BufferUnderflowException``."""


class _Eof(Exception):
    """Java's ``EOFException``, from a stream."""


class _Illegal(Exception):
    """Java's ``IllegalArgumentException`` (a varint too long, a slice or position beyond the buffer)."""


class _Invalid(Exception):
    """``InvalidRecordException`` thrown as it is."""


def _java_varint(buf: bytes | bytearray | memoryview, pos: int, limit: int, long: bool = False,
                 eof: type[Exception] = _Underflow) -> tuple[int, int]:
    """``ByteUtils.readVarint``/``readVarlong`` reading ``buf`` up to ``limit``: ``eof`` at the limit,
    `_Illegal` with Java's message for one too long."""
    bits, most = (64, 63) if long else (32, 28)
    value, shift = 0, 0
    while True:
        if pos >= limit:
            raise eof()
        b = buf[pos]
        pos += 1
        if not b & 0x80:
            break
        value = (value | (b & 0x7F) << shift) & ((1 << bits) - 1)
        shift += 7
        if shift > most:
            what = ("Varlong is too long, most significant bit in the 10th byte is set" if long else
                    "Varint is too long, the most significant bit in the 5th byte is set")
            raise _Illegal(f"{what}, converted value: {value:x}")
    value = (value | b << shift) & ((1 << bits) - 1)
    return (value >> 1) ^ -(value & 1), pos


def _premature_eof(failure: StreamFailure | None) -> RecordSetError:
    """A stream read past the records' end: ``StreamRecordIterator.readNext``'s ``EOFException`` as "premature
    EOF", or, a stream failing there (``failure``) with another ``IOException``, its ``KafkaException``; an
    unchecked exception (lz4's ``BufferUnderflowException``) as itself."""
    if failure is None or failure.eof:
        return _invalid_record("Incorrect declared batch size, premature EOF reached")
    if failure.unchecked:
        return _escaped(failure)
    return RecordSetError(UNKNOWN_SERVER_ERROR, "Failed to decompress record stream", _KAFKA_EXCEPTION)


def _structure_error(m: _Malformed, path: str, failure: StreamFailure | None = None,
                     cancelled: Callable[[], bool] | None = None) -> RecordSetError:
    """What Kafka 2.8 throws reading the malformed record `walk_v2_records` found, on LogValidator's ``path``
    (`UNCOMPRESSED`, `IN_PLACE`, `REBUILT`): an ``InvalidRecordException`` (INVALID_RECORD: "Found invalid record
    structure", "Incorrect declared batch size, premature EOF reached", "Invalid record size: ...", ...), or what
    escapes the readers (a size varint too long, a negative size to allocate: ``IllegalArgumentException``; an
    uncompressed record longer than the bytes left: read as null, then ``NullPointerException``), which
    ``appendToLocalLog`` answers UNKNOWN_SERVER_ERROR. Either way logged, with the log start offset, no message.
    ``failure``: the stream's, met by a read past ``m.records`` (`_premature_eof`; inside ``readPartiallyFrom``'s
    body an unchecked one is "Found invalid record structure", its catch being around that read)."""
    if m.trailing:
        return _invalid_record("Incorrect declared batch size, records still remaining in file")
    buf, limit = m.records, len(m.records)
    try:
        try:
            size, at = _java_varint(buf, m.start, limit, eof=_Underflow if path == UNCOMPRESSED else _Eof)
        except _Underflow:
            return _invalid_record("Incorrect declared batch size, premature EOF reached")
        except _Eof:
            return _premature_eof(failure)
        if path == UNCOMPRESSED:
            if limit - at < size:  # readFrom gives null: next() checks what remains first, then LogValidator reads it
                if m.record == m.records_count - 1 and limit > at:
                    return _invalid_record("Incorrect declared batch size, records still remaining in file")
                return RecordSetError(UNKNOWN_SERVER_ERROR, "", "java.lang.NullPointerException")
            return _read_record(buf, at, limit, size)  # reads past the record, to the buffer's end
        if path == REBUILT:
            if size < 0:
                raise _Illegal(f"capacity < 0: ({size} < 0)")
            if limit - at < size:
                return _premature_eof(failure)
            return _read_record(buf, at, at + size, size)
        return _read_partially(buf, at, limit, size, failure, cancelled)
    except _Illegal as escaped:
        return RecordSetError(UNKNOWN_SERVER_ERROR, str(escaped), "java.lang.IllegalArgumentException")


def _invalid_record(message: str) -> RecordSetError:
    return RecordSetError(INVALID_RECORD, message, _INVALID_RECORD_EXCEPTION)


_FOUND_INVALID = "Found invalid record structure"
_UNDERFLOW = "java.nio.BufferUnderflowException"


def _read_record(buf: bytes | bytearray | memoryview, at: int, limit: int, size: int) -> RecordSetError:
    """``DefaultRecord.readFrom(ByteBuffer)``'s refusal of a record body at ``at`` of ``size`` bytes, reading up to
    ``limit``."""
    try:
        pos = at
        if pos >= limit:
            raise _Underflow
        pos += 1  # attributes
        _, pos = _java_varint(buf, pos, limit, long=True)
        _, pos = _java_varint(buf, pos, limit)
        for _field in ("key", "value"):
            n, pos = _java_varint(buf, pos, limit)
            if n >= 0:
                if n > limit - pos:  # slice().limit(n), then position(+n)
                    raise _Illegal
                pos += n
        headers, pos = _java_varint(buf, pos, limit)
        if headers < 0:
            return _invalid_record(f"Found invalid number of record headers {headers}")
        if headers > limit - pos:
            return _invalid_record(f"Found invalid number of record headers. {headers} is larger than the remaining "
                                   "size of the buffer")
        for _ in range(headers):
            key, pos = _java_varint(buf, pos, limit)
            if key < 0:
                return _invalid_record(f"Invalid negative header key size {key}")
            if key > limit - pos:
                raise _Illegal
            value, pos = _java_varint(buf, pos + key, limit)
            if value >= 0:
                if value > limit - pos:
                    raise _Illegal
                pos += value
        if pos - at != size:
            return _invalid_record(f"Invalid record size: expected to read {size} bytes in record payload, but instead "
                                   f"read {pos - at}")
    except (_Underflow, _Illegal):
        return _invalid_record(_FOUND_INVALID)
    return _invalid_record(_FOUND_INVALID)  # not reached: the walk found it malformed


def _read_partially(buf: bytes | bytearray | memoryview, at: int, limit: int, size: int,
                    failure: StreamFailure | None = None, cancelled: Callable[[], bool] | None = None
                    ) -> RecordSetError:
    """``DefaultRecord.readPartiallyFrom``'s refusal of a record body at ``at`` of ``size`` bytes of a stream
    ending at ``limit``: read ahead `_SKIP_BUFFER` bytes at a time (at most the body's), key, value and headers
    skipped. The skip buffer's readable bytes are always the last ones read from the stream (``readMore`` moves the
    unread ones to its front), so they are tracked as ``buf[w:stream]``, never copied; a one-byte length with at
    least 5 bytes readable (no ``readMore`` then, as in Java) is read inline. ``cancelled`` is asked every 65,536
    headers (a single record may hold 32 million)."""
    w = at  # the skip buffer's readable bytes: buf[w:stream]
    stream = at
    remaining = size

    def more() -> None:  # readMore
        nonlocal stream, remaining
        if remaining <= 0:
            raise _Invalid("Invalid record size: expected to read more bytes in record payload")
        n = min(remaining, _SKIP_BUFFER - (stream - w))
        if limit - stream < n:
            raise _Eof
        stream += n
        remaining -= n

    def varint(long: bool = False) -> int:
        nonlocal w
        if stream - w < (10 if long else 5) and remaining > 0:
            more()
        value, w = _java_varint(buf, w, stream, long)
        return value

    def skip(left: int) -> None:  # skipLengthDelimitedField's skipping of ``left`` > 0 bytes
        nonlocal w
        while left > stream - w:
            left -= stream - w
            w = stream
            more()
        w += left

    def skip_field() -> int:  # skipLengthDelimitedField
        if stream - w < 5 and remaining > 0:
            more()
        n = varint()
        if n > 0:
            skip(n)
        return n

    try:
        if w == stream and remaining > 0:
            more()
        if w == stream:
            raise _Underflow
        w += 1  # attributes
        varint(long=True)
        varint()
        skip_field()
        skip_field()
        headers = varint()
        if headers < 0:
            raise _Invalid(f"Found invalid number of record headers {headers}")
        for i in range(headers):
            if i and not i & 0xFFFF and cancelled is not None and cancelled():
                raise _cancelled()
            b = buf[w] if stream - w >= 5 else 0x80
            if b < 0x80:  # the key's length in one byte, 5 readable: read in place
                w += 1
                key = (b >> 1) ^ -(b & 1)
                if key > 0:
                    if key <= stream - w:
                        w += key
                    else:
                        skip(key)
            else:
                key = skip_field()
            if key < 0:
                raise _Invalid(f"Invalid negative header key size {key}")
            b = buf[w] if stream - w >= 5 else 0x80
            if b < 0x80:  # the value's length, likewise
                w += 1
                value = (b >> 1) ^ -(b & 1)
                if value > 0:
                    if value <= stream - w:
                        w += value
                    else:
                        skip(value)
            else:
                skip_field()
        if remaining > 0 or stream > w:
            raise _Invalid(f"Invalid record size: expected to read {size} bytes in record payload, but there are "
                           "still bytes remaining")
    except (_Underflow, _Illegal):
        return _invalid_record(_FOUND_INVALID)
    except _Eof:
        if failure is not None and failure.java == _UNDERFLOW:  # the stream's, inside the try that catches the
            return _invalid_record(_FOUND_INVALID)  # skip buffer's own BufferUnderflowException
        return _premature_eof(failure)
    except _Invalid as thrown:
        return _invalid_record(str(thrown))
    return _invalid_record(_FOUND_INVALID)  # not reached: the walk found it malformed


def _v2_rejection(entry: memoryview, records: Iterator[tuple[int, V2Record | _Malformed]], tp: str, compacted: bool,
                  check_timestamps: bool, now_ms: int, create_time: bool,
                  max_difference_ms: int, path: str = UNCOMPRESSED, *, rebuilt: bool = False,
                  well_formed: Callable[[], bool] | None = None,
                  stamps: list[int] | None = None,
                  cancelled: Callable[[], bool] | None = None) -> RecordSetError | None:
    """LogValidator's ``validateKey(...).orElse(validateTimestamp(...))`` for each record of a v2 batch, in its
    order (``records``: `walk_v2_records`', with their indexes), then ``processRecordErrors``: the refusal, or None.
    A keyless record of a ``compacted`` topic; else, with ``check_timestamps`` (`_checks_timestamps`), a record of a
    CreateTime topic whose timestamp (-1 exempt) is more than ``max_difference_ms`` from ``now_ms``, else any record
    of a batch marked LogAppendTime (a producer may not set it). Only the first `RECORD_ERRORS_KEPT` record errors
    get their text; once that many are found the walk ends as soon as the answer is settled: at once when one of
    them is a timestamp error or no timestamp is checked (INVALID_RECORD or INVALID_TIMESTAMP whatever follows), else
    at the first timestamp error beyond them (which makes it INVALID_TIMESTAMP). The rest is then read for its
    structure alone (``well_formed``: `v2_well_formed` over every record, faster than the walk; the walk goes on
    only to find where it is malformed), as Kafka's iterator still reads every record and a malformed one's
    exception escapes before the record errors are answered. That walk past the settled errors is Kafka's: a
    keyless record gets the key error alone (``validateKey(...).orElse(...)``), so a compacted topic's keyless
    bomb whose timestamps are checked is read to its end, as Kafka's iterator reads every record, for a later keyed
    record out of range (INVALID_TIMESTAMP) or a malformed one (the reader's exception). ``path``: how LogValidator
    reads the records (`IN_PLACE`: ``PartialDefaultRecord``s, whose text gives the raw key and value lengths, -1 for
    null; else ``DefaultRecord``s, null 0 bytes). A malformed record (`_Malformed`) refuses the batch at once with
    what Kafka's reader throws there (`_structure_error`), whatever record errors came before it, settled or not.
    With no record error, the
    batch is then built again where LogValidator rebuilds it (``buildRecordsAndAssignOffsets``): ``rebuilt`` (a
    topic's ``compression.type`` names another codec), whose first record timestamp below -1 fails the append
    (UNKNOWN_SERVER_ERROR, "Invalid negative timestamp T"); and an `IN_PLACE` batch whose offset deltas are not 0,
    1, 2, ... (``record.offset != expectedOffset`` gives up the in-place assignment), rebuilt from the
    ``PartialDefaultRecord``s read, whose ``key()`` (asked by the size estimate first) throws
    ``UnsupportedOperationException`` (UNKNOWN_SERVER_ERROR, logged, no message: `_skipped_key`). ``stamps``: once
    accepted, set to the max timestamp LogValidator writes in the batch (as `_records_max_timestamp`)."""
    log_append_time = bool(entry[22] & _LOG_APPEND_TIME_FLAG)
    first_timestamp, max_timestamp = struct.unpack_from(">qq", entry, 27)
    low, high = java_long(now_ms - max_difference_ms), java_long(now_ms + max_difference_ms)  # as printed
    keyless = _keyless_text(tp)
    kept: list[tuple[int, str]] = []
    invalid_timestamp = False
    partial = path == IN_PLACE
    negative = NO_TIMESTAMP
    check_negative = rebuilt and not log_append_time  # a batch marked LogAppendTime is refused all the same
    in_order = True
    settled = False
    top = NO_TIMESTAMP  # the records' largest timestamp
    for i, r in records:
        if isinstance(r, _Malformed):
            return _structure_error(r, path, cancelled=cancelled)
        if partial and r.offset_delta != i:  # a record in error is not compared, but refuses the batch anyway
            in_order = False
        record_timestamp = first_timestamp + r.timestamp_delta  # DefaultRecord.readFrom's long sum: wraps
        if not LONG_MIN <= record_timestamp <= LONG_MAX:
            record_timestamp = java_long(record_timestamp)
        if record_timestamp > top:
            top = record_timestamp
        if check_negative and negative == NO_TIMESTAMP and record_timestamp < NO_TIMESTAMP:
            negative = record_timestamp
        if compacted and r.key_length < 0:
            text = keyless
        elif not check_timestamps:
            continue
        else:
            timestamp = max_timestamp if log_append_time else record_timestamp
            if (create_time and timestamp != NO_TIMESTAMP
                    and timestamp_out_of_range(timestamp, now_ms, max_difference_ms)):
                out_of_range = True
            elif log_append_time:
                out_of_range = False
            else:
                continue
            invalid_timestamp = True
            if len(kept) >= RECORD_ERRORS_KEPT:
                settled = True  # INVALID_TIMESTAMP with the record errors kept, unless a record is malformed
                break
            if out_of_range:
                text = _out_of_range_text(timestamp, r.offset_delta, low, high)
            else:
                text = _log_append_time_text(_v2_record_text(r, timestamp, partial))
        if len(kept) < RECORD_ERRORS_KEPT:
            kept.append((i, text))
        if len(kept) >= RECORD_ERRORS_KEPT and (invalid_timestamp or not check_timestamps):
            settled = True  # nothing later changes the answer but a malformed record
            break
    if settled and (well_formed is None or not well_formed()):
        for _, r in records:  # on from where the walk stopped, to the malformed record
            if isinstance(r, _Malformed):
                return _structure_error(r, path, cancelled=cancelled)
    if kept:
        return _rejected(kept, invalid_timestamp)
    if not in_order:
        return _skipped_key()
    if negative != NO_TIMESTAMP:  # MemoryRecordsBuilder.appendWithOffset
        return _negative_timestamp(negative)
    if stamps is not None:
        stamps[:] = (top,)
    return None


def _skipped_key() -> RecordSetError:
    """LogValidator's rebuild of a compressed batch it meant to keep in place, whose offset deltas were not 0, 1, 2,
    ...: ``PartialDefaultRecord.key()`` throws (Kafka 2.8's ``AbstractRecords.estimateSizeInBytes`` asks it), an
    exception ``appendToLocalLog`` answers UNKNOWN_SERVER_ERROR (its Throwable branch)."""
    return RecordSetError(UNKNOWN_SERVER_ERROR, "key is skipped in PartialDefaultRecord",
                          "java.lang.UnsupportedOperationException")


def _v2_record_text(r: V2Record, timestamp: int, partial: bool) -> str:
    """The ``toString`` of a client's v2 record (base offset 0: its offset is its delta) as LogValidator reads it:
    a ``PartialDefaultRecord`` (``partial``: a compressed batch kept as it is) prints the key and value lengths as
    read (-1 for null), a ``DefaultRecord`` its key and value buffers' sizes (0 for null)."""
    if partial:
        return (f"PartialDefaultRecord(offset={r.offset_delta}, timestamp={timestamp}, key={r.key_length} bytes, "
                f"value={r.value_length} bytes)")
    return (f"DefaultRecord(offset={r.offset_delta}, timestamp={timestamp}, key={max(r.key_length, 0)} bytes, "
            f"value={max(r.value_length, 0)} bytes)")


def _legacy_has_key(message: memoryview, magic: int) -> bool:
    """A legacy message's key is not null (its length field >= 0); a message too short to say has none."""
    pos = LOG_OVERHEAD + 6 + (8 if magic == 1 else 0)
    return pos + 4 <= len(message) and struct.unpack_from(">i", message, pos)[0] >= 0


def _codec(buf: memoryview, e: Entry) -> int:
    """The entry's compression codec id (its attributes' low three bits; 0 none); every entry `inspect` found
    holds its attributes byte."""
    return buf[e.start + (22 if e.magic >= 2 else 17)] & 0x07


def _check_integrity(entry: memoryview, magic: int) -> None:
    """``RecordBatch.ensureValid``: CORRUPT_MESSAGE for an entry too short for its header or whose CRC differs."""
    if magic == 2:
        if len(entry) < RECORD_BATCH_OVERHEAD:
            raise RecordSetError(CORRUPT_MESSAGE, f"Record batch is corrupt (the size {len(entry)} is smaller than "
                                                  f"the minimum allowed overhead {RECORD_BATCH_OVERHEAD})")
        (crc,) = struct.unpack_from(">I", entry, 17)
        if crc32c(entry[21:]) != crc:
            raise RecordSetError(CORRUPT_MESSAGE, "Record batch is corrupt (stored crc does not match computed crc)")
    elif magic in (0, 1):
        minimum = RECORD_OVERHEAD_V0 + LOG_OVERHEAD + (8 if magic == 1 else 0)
        if len(entry) < minimum:
            raise RecordSetError(CORRUPT_MESSAGE, f"Message size {len(entry)} is less than the minimum {minimum}")
        (crc,) = struct.unpack_from(">I", entry, 12)
        if zlib.crc32(entry[16:]) != crc:
            raise RecordSetError(CORRUPT_MESSAGE, "Message is corrupt (stored crc does not match computed crc)")
    else:
        raise RecordSetError(CORRUPT_MESSAGE, f"Invalid magic {magic}")


def count_records(data: bytes | memoryview, produce_version: int = 3) -> int:
    """`inspect` then `validate`: the records in ``data``, or `RecordSetError`."""
    return validate(data, inspect(data, produce_version))


def _batch_count(batch: memoryview, tp: str) -> int:
    """``LogValidator.validateBatch`` for a client's v2 batch: its records count; its errors name ``tp``."""
    (base_offset, _length, _epoch, _magic, _crc, attributes, last_offset_delta, _first_ts, _max_ts, producer_id,
     _producer_epoch, base_sequence, count) = _BATCH_HEADER.unpack_from(batch, 0)
    last_offset = base_offset + last_offset_delta
    if last_offset_delta + 1 <= 0:
        raise RecordSetError(INVALID_RECORD, f"Batch has an invalid offset range: [{base_offset}, {last_offset}] in "
                                             f"topic partition {tp}.",
                             _INVALID_RECORD_EXCEPTION)
    if count <= 0:
        raise RecordSetError(INVALID_RECORD, f"Invalid reported count for record batch: {count} in topic partition "
                                             f"{tp}.",
                             _INVALID_RECORD_EXCEPTION)
    if last_offset_delta + 1 != count:
        raise RecordSetError(INVALID_RECORD, f"Inconsistent batch offset range [{base_offset}, {last_offset}] and "
                                             f"count of records {count} in topic partition {tp}.",
                             _INVALID_RECORD_EXCEPTION)
    if attributes & _CONTROL_FLAG:
        raise RecordSetError(INVALID_RECORD, f"Clients are not allowed to write control records in topic partition "
                                             f"{tp}.",
                             _INVALID_RECORD_EXCEPTION)
    if producer_id > NO_PRODUCER_ID and base_sequence < 0:
        raise RecordSetError(INVALID_RECORD, f"Invalid sequence number {base_sequence} in record batch with "
                                             f"producerId {producer_id} in topic partition {tp}.",
                             _INVALID_RECORD_EXCEPTION)
    return count


class _Legacy(NamedTuple):
    """A legacy entry LogValidator accepts (`_legacy_count`)."""

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
    """What LogValidator's ``validateRecord`` checks a legacy entry's messages against (`validate`'s arguments)."""

    tp: str
    compacted: bool
    low: int
    """The smallest timestamp a message may carry (``now - message.timestamp.difference.max.ms``), or below any
    int64 when nothing is checked (a LogAppendTime topic or the default Long.MaxValue, as `_checks_timestamps`)."""
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


def _legacy_checks(tp: str, compacted: bool, now_ms: int, create_time: bool, timestamp_difference_max_ms: int,
                   cancelled: Callable[[], bool] | None) -> _LegacyChecks:
    """`_LegacyChecks` for `validate`'s arguments: the bounds computed once, so each message costs two
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
            kind, timestamp = ("LogAppendTime" if attributes & _LOG_APPEND_TIME_FLAG else "CreateTime"), own
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
        return INVALID_RECORD, _keyless_text(checks.tp) if describe else ""
    if (timestamp != NO_TIMESTAMP and not checks.low <= timestamp <= checks.high
            and timestamp_out_of_range(timestamp, checks.now_ms, checks.max_difference_ms)):
        return INVALID_TIMESTAMP, _out_of_range_text(timestamp, offset, java_long(checks.low),
                                                     java_long(checks.high)) if describe else ""
    if log_append_time:
        return INVALID_TIMESTAMP, _log_append_time_text(_legacy_text(message, offset, wrapper)) if describe else ""
    return None


def _keyless_text(tp: str) -> str:
    """LogValidator's ``validateKey`` refusal (any magic)."""
    return f"Compacted topic cannot accept message without key in topic partition {tp}."


def java_long(value: int) -> int:
    """``value`` wrapped to an int64, as Java's long arithmetic wraps it."""
    return ((value - LONG_MIN) & 0xFFFFFFFFFFFFFFFF) + LONG_MIN


def timestamp_out_of_range(timestamp: int, now_ms: int, max_difference_ms: int) -> bool:
    """LogValidator's ``math.abs(record.timestamp - now) > timestampDiffMaxMs`` in Java's long arithmetic: the
    difference wraps (a timestamp near Long.MIN_VALUE is "close" to a positive clock), and ``abs`` of
    Long.MIN_VALUE is itself, negative, so never beyond the (non-negative) maximum."""
    difference = timestamp - now_ms
    if not LONG_MIN <= difference <= LONG_MAX:
        difference = java_long(difference)
    return difference != LONG_MIN and abs(difference) > max_difference_ms


def _out_of_range_text(timestamp: int, offset: int, low: int, high: int) -> str:
    """LogValidator's ``validateTimestamp`` refusal of a CreateTime timestamp outside [``low``, ``high``]."""
    return (f"Timestamp {timestamp} of message with offset {offset} is out of range. The timestamp should be within "
            f"[{low}, {high}]")


def _log_append_time_text(record: str) -> str:
    """LogValidator's ``validateTimestamp`` refusal of a batch a producer marked LogAppendTime; ``record``: the
    record's ``toString``."""
    return f"Invalid timestamp type in message {record}. Producer should not set timestamp type to LogAppendTime."


def _rejected(record_errors: Iterable[tuple[int, str]], invalid_timestamp: bool) -> RecordSetError:
    """LogValidator's ``processRecordErrors``: a ``RecordValidationException`` of ``record_errors`` (index in the
    batch, message), an ``InvalidTimestampException`` if any of them is INVALID_TIMESTAMP."""
    if invalid_timestamp:
        return RecordSetError(INVALID_TIMESTAMP, "One or more records have been rejected due to invalid timestamp",
                              record_errors=tuple(record_errors))
    return RecordSetError(INVALID_RECORD, "One or more records have been rejected", record_errors=tuple(record_errors))


def _negative_timestamp(timestamp: int) -> RecordSetError:
    """``MemoryRecordsBuilder.appendWithOffset`` refusing a timestamp below 0 other than -1 while LogValidator
    converts a legacy message to the v2 batch: an ``IllegalArgumentException``, which ``appendToLocalLog``
    answers UNKNOWN_SERVER_ERROR (its Throwable branch)."""
    return RecordSetError(UNKNOWN_SERVER_ERROR, f"Invalid negative timestamp {timestamp}",
                          "java.lang.IllegalArgumentException")


def _cancelled() -> RecordSetError:
    """A walk on the worker that no one waits for any more (`validate`'s ``cancelled``)."""
    return RecordSetError(UNKNOWN_SERVER_ERROR, "The record check was cancelled", "java.lang.InterruptedException")


def _legacy_timestamp(message: memoryview | bytes, start: int, magic: int) -> int:
    """A legacy message's timestamp field (magic 1, just after its attributes), -1 for magic 0 (none); the
    message's size was checked (`_check_integrity`)."""
    return struct.unpack_from(">q", message, start + _LEGACY_HEADER.size)[0] if magic == 1 else NO_TIMESTAMP


def _legacy_count(message: memoryview, checks: _LegacyChecks, inflated: bytes | bytearray | None = None, *,
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
    an uncompressed message's negative timestamp is returned (`validate` refuses it then), not raised."""
    wrapper_offset, _size, _crc, magic, attributes = _LEGACY_HEADER.unpack_from(message, 0)
    log_append_time = magic == 1 and bool(attributes & _LOG_APPEND_TIME_FLAG)
    codec = attributes & 0x07
    if codec == ZSTD:  # AbstractLegacyRecordBatch.DeepRecordsIterator
        raise RecordSetError(INVALID_RECORD, f"Invalid wrapper compressionType found in legacy deep record iterator "
                                             f"{magic}", _INVALID_RECORD_EXCEPTION)
    if codec not in (GZIP, SNAPPY, LZ4):  # uncompressed (ids above zstd were refused by validate)
        timestamp = _legacy_timestamp(message, 0, magic)
        if checks.compacted or log_append_time or (timestamp != NO_TIMESTAMP
                                                   and not checks.low <= timestamp <= checks.high):
            error = _legacy_record_error(message, magic, wrapper_offset, timestamp, log_append_time, checks)
            if error is not None:
                raise _rejected([(0, error[1])], error[0] == INVALID_TIMESTAMP)
        if timestamp < NO_TIMESTAMP and not defer_negative:
            raise _negative_timestamp(timestamp)
        return _Legacy(1, timestamp, timestamp)
    value = _legacy_value(message, magic)
    if value is None:  # AbstractLegacyRecordBatch.DeepRecordsIterator
        raise RecordSetError(INVALID_RECORD, f"Found invalid compressed record set with null value (magic = {magic})",
                             _INVALID_RECORD_EXCEPTION)
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
            return _legacy_count(message, checks, failure.data[:end], defer_negative=defer_negative)
        inspect(failure.data, 0, check_magic=False, cancelled=checks.cancelled)
        if failure.unchecked and not failure.at_open:  # not an IOException: it escapes as itself
            raise _escaped(failure) from None
        raise RecordSetError(UNKNOWN_SERVER_ERROR, failure.java, _KAFKA_EXCEPTION) from None
    except CompressionError as failure:  # CompressionType.wrapForInput / the stream's IOException, as KafkaException
        raise RecordSetError(UNKNOWN_SERVER_ERROR, f"java.io.IOException: {failure}",
                             "org.apache.kafka.common.KafkaException") from None
    # as DataLogInputStream, which stops at a partial last message (the ones before count)
    entries = inspect(inner, 0, check_magic=False, cancelled=checks.cancelled)
    if not entries:  # AbstractLegacyRecordBatch.DeepRecordsIterator
        raise RecordSetError(INVALID_RECORD, "Found invalid compressed record set with no inner records",
                             _INVALID_RECORD_EXCEPTION)
    last_inner_offset = _LEGACY_HEADER.unpack_from(inner, entries[-1].start)[0]
    if magic == 1 and wrapper_offset != 0 and wrapper_offset < last_inner_offset:
        raise RecordSetError(INVALID_RECORD, f"Found invalid wrapper offset in compressed v1 message set, wrapper "
                                             f"offset '{wrapper_offset}' is less than the last inner message offset "
                                             f"'{last_inner_offset}' and it is not zero.",
                             _INVALID_RECORD_EXCEPTION)
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
            raise _cancelled()
        record = inner_view[inner_entry.start:inner_entry.start + inner_entry.size]
        inner_codec = record[17] & 0x07
        if inner_codec:  # the deep iterator's isCompressed (CompressionType.forId), before LogValidator sees it
            if inner_codec > ZSTD:
                raise RecordSetError(UNKNOWN_SERVER_ERROR, f"Unknown compression type id: {inner_codec}",
                                     "java.lang.IllegalArgumentException")
            raise RecordSetError(INVALID_RECORD, "Inner messages must not be compressed", _INVALID_RECORD_EXCEPTION)
        if inner_entry.magic != magic:
            if len(record_errors) < LEGACY_RECORD_ERRORS_KEPT:
                text = _legacy_text(record, base_offset + offset_of(record)[0],
                                    wrapper if inner_entry.magic == 1 else None)
                record_errors.append((i, f"Record {text}'s magic does not match outer magic {magic} in topic "
                                         f"partition {checks.tp}."))
            continue
        _check_integrity(record, magic)
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
        raise _rejected(record_errors, invalid_timestamp)
    if negative != NO_TIMESTAMP:  # buildRecordsAndAssignOffsets appends the validated messages
        raise _negative_timestamp(negative)
    return _Legacy(len(entries), first_timestamp, max_timestamp, inner)


def _legacy_value(message: memoryview, magic: int) -> bytes | None:
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
