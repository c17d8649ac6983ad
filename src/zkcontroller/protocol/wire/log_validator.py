"""Kafka 2.8's check of a client's record set at the append (``Log.analyzeAndValidateRecords``, then
``LogValidator``): `validate` checks every entry's size, CRC and codec, then reads every record, and gives the
number of offsets the set takes (the logs keep offsets only) and its first and max timestamps for the time index.

The count of a v2 batch is its header's records count (checked against its last offset delta, as Kafka does).
Its records are all read, as LogValidator's iterator reads them (decompressed, at most `record_sets.MAX_INFLATED`
bytes): a malformed one refuses the batch with what Kafka's reader throws there (`v2_records.walk_v2_records`,
`v2_record_errors.structure_error`); a stream that fails after its header (any codec) is read as far as it goes,
then fails where Kafka's reader meets the failure (`v2_record_errors.failed_stream_refusal`). A compressed batch
LogValidator keeps as it is (the topic's ``compression.type`` is ``producer`` or its codec) whose offset deltas
are not 0, 1, 2, ... fails as Kafka 2.8's rebuild of it does (UNKNOWN_SERVER_ERROR, `_skipped_key`). A legacy
(magic 0/1) set's messages are counted and checked by `legacy_records`. A set of more than one entry whose first
is a v2 batch, or where any is compressed, is INVALID_RECORD ("Compressed outer record has more than one batch":
``LogValidator`` takes exactly one batch then, compressed or not). Only Produce v0–v2 carry legacy sets or several
batches (v3+ takes one v2 batch).

An accepted set's first and max record timestamps go to the time index (`validate`'s ``timestamps``): a v2
batch's first record's and its records' largest (the max LogValidator writes in it), a legacy set's read from its
messages (`legacy_records`).

The append's messages are Kafka's, naming the partition (``validate``'s ``topic_partition``) where Kafka's do.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from functools import partial

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
from zkcontroller.protocol.wire.legacy_records import legacy_checks, legacy_count, legacy_value
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
    BATCH_HEADER,
    INVALID_RECORD,
    INVALID_RECORD_EXCEPTION,
    LOG_APPEND_TIME_FLAG,
    LOG_OVERHEAD,
    LONG_MAX,
    LONG_MIN,
    NO_PRODUCER_ID,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    RECORD_OVERHEAD_V0,
    RECORD_TOO_LARGE,
    UNKNOWN_SERVER_ERROR,
    Entry,
    RecordSetError,
    cancelled_error,
    check_integrity,
    entry_codec,
    inspect,
    java_long,
)
from zkcontroller.protocol.wire.v2_record_errors import (
    IN_PLACE,
    REBUILT,
    UNCOMPRESSED,
    failed_stream_refusal,
    structure_error,
)
from zkcontroller.protocol.wire.v2_records import (
    Malformed,
    V2Record,
    first_record_timestamp,
    lz4_empty_block_underflow,
    records_max_timestamp,
    unless_cancelled,
    v2_read_starts,
    v2_record_stream,
    v2_well_formed,
    walk_v2_records,
)

_CONTROL_FLAG = 0x20


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
    counts them (`legacy_count`: its record errors in Kafka's order, with Kafka's texts, and a v1 timestamp below
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
    timestamp (its base plus its delta: `first_record_timestamp`) and the max LogValidator writes in it
    (``batch.setMaxTimestamp``): its records' largest timestamp, each its base plus its delta wrapped as a Java
    long, or -1 (`records_max_timestamp`), whatever its header said. ``compression_type``: the topic's
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
            raise cancelled_error()
        (base_offset,) = struct.unpack_from(">q", buf, e.start)
        if e.magic >= 2 and base_offset != 0:  # a client's v2 batch
            raise RecordSetError(INVALID_RECORD, f"The baseOffset of the record batch in the append to {tp} should "
                                                 f"be 0, but it is {base_offset}", INVALID_RECORD_EXCEPTION)
        if max_batch_size is not None and e.size > max_batch_size:
            raise RecordSetError(RECORD_TOO_LARGE, f"The record batch size in the append to {tp} is {e.size} "
                                                   f"bytes which exceeds the maximum configured value of "
                                                   f"{max_batch_size}.")
        check_integrity(buf[e.start:e.start + e.size], e.magic)
        codec = entry_codec(buf, e)
        if codec > ZSTD:  # CompressionType.forId, reading the source codec
            raise RecordSetError(UNKNOWN_SERVER_ERROR, f"Unknown compression type id: {codec}",
                                 "java.lang.IllegalArgumentException")
        compressed = compressed or codec != 0
    if len(entries) > 1 and (entries[0].magic >= 2 or compressed):
        # LogValidator.getFirstBatchAndMaybeValidateNoMoreBatches, before any batch is validated: a v2 first batch
        # must be the only one, compressed or not; so must a compressed set (Log.analyzeAndValidateRecords' source
        # codec is any entry's)
        raise RecordSetError(INVALID_RECORD, "Compressed outer record has more than one batch",
                             INVALID_RECORD_EXCEPTION)
    source_codec = max((entry_codec(buf, e) for e in entries), default=0)  # the compressed entries' (one, if any)
    target_codec = _target_codec(compression_type, source_codec)
    compressed_path = bool(source_codec or target_codec)  # validateMessagesAndAssignOffsetsCompressed
    negative = NO_TIMESTAMP  # the first negative timestamp the compressed path's conversion refuses at its end
    count = 0
    first_timestamp = max_timestamp = NO_TIMESTAMP
    checks = legacy_checks(tp, compacted, now_ms, create_time, timestamp_difference_max_ms, cancelled)
    for i, e in enumerate(entries):
        if cancelled is not None and not i & 4095 and cancelled():  # a long run of uncompressed messages
            raise cancelled_error()
        if e.magic != entries[0].magic:
            raise RecordSetError(INVALID_RECORD, f"Batch magic {e.magic} is not the same as the first batch'es magic "
                                                 f"byte {entries[0].magic} in topic partition {tp}.",
                                 INVALID_RECORD_EXCEPTION)
        entry = buf[e.start:e.start + e.size]
        if e.magic != 2:  # its messages' checks, in Kafka's order, in the walk that counts them
            legacy = legacy_count(entry, checks, inflated.get(e.start), defer_negative=compressed_path)
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
        path = _v2_path(entry_codec(buf, e), target_codec)
        rebuilt = compressed_path and path != IN_PLACE
        body, failure = v2_record_stream(entry, inflated.get(e.start))  # decompressed once, for both reads
        if body is None:  # a codec id no client can send (refused before)
            continue
        records_count = struct.unpack_from(">i", entry, 57)[0]
        if isinstance(body, SnappyContent):  # a concatenated header of another magic, where a read starts: the end
            end = soft_end(body, partial(v2_read_starts, count=records_count))
            if end is not None:
                body, failure = body[:end], None
        if failure is None and e.start not in inflated and entry[22] & 0x07:  # kept for the append's time index
            inflated[e.start] = body  # type: ignore[assignment]  # a compressed batch's records are bytes
        if isinstance(body, Lz4Content):  # lz4 blocks that inflate to nothing, which a one-byte read fails on
            # (before any failure of the stream after them)
            underflow = lz4_empty_block_underflow(body, records_count, cancelled)
            if underflow is not None:
                raise underflow
        if failure is not None:  # a stream Java's reader fails on, once its records reach the failure
            raise failed_stream_refusal(body, records_count, path, failure, cancelled)
        deltas: list[tuple[bytearray, int, int]] = []
        where: list[int] = []
        if not (compacted or check_timestamps or rebuilt):  # the structure alone is checked (and an in-place
            # batch's offset deltas): no record is kept
            if v2_well_formed(body, records_count, cancelled, in_order=path == IN_PLACE, deltas=deltas, where=where):
                max_timestamp = records_max_timestamp(first_timestamp, body, records_count, *deltas[0])
                first_timestamp = first_record_timestamp(first_timestamp, body, records_count)
                continue
            if where:  # malformed, every record before it in order: what the walk would find, without walking
                raise structure_error(Malformed(where[0], where[1], body, records_count, bool(where[2])), path,
                                      cancelled=cancelled)
        records: Iterator[tuple[int, V2Record | Malformed]] = enumerate(walk_v2_records(body, records_count,
                                                                                        cancelled))
        if cancelled is not None:
            records = unless_cancelled(records, cancelled)
        stamps: list[int] = []
        rejection = _v2_rejection(entry, records, tp, compacted, check_timestamps, now_ms, create_time,
                                  timestamp_difference_max_ms, path, rebuilt=rebuilt,
                                  well_formed=partial(v2_well_formed, body, records_count, cancelled), stamps=stamps,
                                  cancelled=cancelled)
        if rejection is not None:
            raise rejection
        max_timestamp = stamps[0]
        first_timestamp = first_record_timestamp(first_timestamp, body, records_count)
    if negative != NO_TIMESTAMP:  # buildRecordsAndAssignOffsets appends the validated messages
        raise negative_timestamp(negative)
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
    return bool(batch[22] & LOG_APPEND_TIME_FLAG or (create_time and timestamp_difference_max_ms < LONG_MAX))


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
        codec = entry_codec(buf, e)
        if e.magic == 2:  # every record read, as LogValidator's iterator does
            value: bytes | None = bytes(entry[RECORD_BATCH_OVERHEAD:]) if codec else None
        elif codec in (GZIP, SNAPPY, LZ4):
            try:
                value = legacy_value(entry, e.magic)
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


def _v2_rejection(entry: memoryview, records: Iterator[tuple[int, V2Record | Malformed]], tp: str, compacted: bool,
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
    null; else ``DefaultRecord``s, null 0 bytes). A malformed record (`Malformed`) refuses the batch at once with
    what Kafka's reader throws there (`structure_error`), whatever record errors came before it, settled or not.
    With no record error, the
    batch is then built again where LogValidator rebuilds it (``buildRecordsAndAssignOffsets``): ``rebuilt`` (a
    topic's ``compression.type`` names another codec), whose first record timestamp below -1 fails the append
    (UNKNOWN_SERVER_ERROR, "Invalid negative timestamp T"); and an `IN_PLACE` batch whose offset deltas are not 0,
    1, 2, ... (``record.offset != expectedOffset`` gives up the in-place assignment), rebuilt from the
    ``PartialDefaultRecord``s read, whose ``key()`` (asked by the size estimate first) throws
    ``UnsupportedOperationException`` (UNKNOWN_SERVER_ERROR, logged, no message: `_skipped_key`). ``stamps``: once
    accepted, set to the max timestamp LogValidator writes in the batch (as `records_max_timestamp`)."""
    log_append_time = bool(entry[22] & LOG_APPEND_TIME_FLAG)
    first_timestamp, max_timestamp = struct.unpack_from(">qq", entry, 27)
    low, high = java_long(now_ms - max_difference_ms), java_long(now_ms + max_difference_ms)  # as printed
    keyless = keyless_text(tp)
    kept: list[tuple[int, str]] = []
    invalid_timestamp = False
    partial = path == IN_PLACE
    negative = NO_TIMESTAMP
    check_negative = rebuilt and not log_append_time  # a batch marked LogAppendTime is refused all the same
    in_order = True
    settled = False
    top = NO_TIMESTAMP  # the records' largest timestamp
    for i, r in records:
        if isinstance(r, Malformed):
            return structure_error(r, path, cancelled=cancelled)
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
                text = out_of_range_text(timestamp, r.offset_delta, low, high)
            else:
                text = log_append_time_text(_v2_record_text(r, timestamp, partial))
        if len(kept) < RECORD_ERRORS_KEPT:
            kept.append((i, text))
        if len(kept) >= RECORD_ERRORS_KEPT and (invalid_timestamp or not check_timestamps):
            settled = True  # nothing later changes the answer but a malformed record
            break
    if settled and (well_formed is None or not well_formed()):
        for _, r in records:  # on from where the walk stopped, to the malformed record
            if isinstance(r, Malformed):
                return structure_error(r, path, cancelled=cancelled)
    if kept:
        return rejected(kept, invalid_timestamp)
    if not in_order:
        return _skipped_key()
    if negative != NO_TIMESTAMP:  # MemoryRecordsBuilder.appendWithOffset
        return negative_timestamp(negative)
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


def count_records(data: bytes | memoryview, produce_version: int = 3) -> int:
    """`inspect` then `validate`: the records in ``data``, or `RecordSetError`."""
    return validate(data, inspect(data, produce_version))


def _batch_count(batch: memoryview, tp: str) -> int:
    """``LogValidator.validateBatch`` for a client's v2 batch: its records count; its errors name ``tp``."""
    (base_offset, _length, _epoch, _magic, _crc, attributes, last_offset_delta, _first_ts, _max_ts, producer_id,
     _producer_epoch, base_sequence, count) = BATCH_HEADER.unpack_from(batch, 0)
    last_offset = base_offset + last_offset_delta
    if last_offset_delta + 1 <= 0:
        raise RecordSetError(INVALID_RECORD, f"Batch has an invalid offset range: [{base_offset}, {last_offset}] in "
                                             f"topic partition {tp}.",
                             INVALID_RECORD_EXCEPTION)
    if count <= 0:
        raise RecordSetError(INVALID_RECORD, f"Invalid reported count for record batch: {count} in topic partition "
                                             f"{tp}.",
                             INVALID_RECORD_EXCEPTION)
    if last_offset_delta + 1 != count:
        raise RecordSetError(INVALID_RECORD, f"Inconsistent batch offset range [{base_offset}, {last_offset}] and "
                                             f"count of records {count} in topic partition {tp}.",
                             INVALID_RECORD_EXCEPTION)
    if attributes & _CONTROL_FLAG:
        raise RecordSetError(INVALID_RECORD, f"Clients are not allowed to write control records in topic partition "
                                             f"{tp}.",
                             INVALID_RECORD_EXCEPTION)
    if producer_id > NO_PRODUCER_ID and base_sequence < 0:
        raise RecordSetError(INVALID_RECORD, f"Invalid sequence number {base_sequence} in record batch with "
                                             f"producerId {producer_id} in topic partition {tp}.",
                             INVALID_RECORD_EXCEPTION)
    return count
