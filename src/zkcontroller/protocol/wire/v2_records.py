"""The records of a client's v2 batch as Kafka 2.8's record iterator reads them (``DefaultRecordBatch``'s
iterators over ``DefaultRecord``s, their varints read as ``ByteUtils`` reads them), without keeping them.

`walk_v2_records` reads each record's structure lazily, as LogValidator's iterator reads every record, and stops
at the first malformed one (a `Malformed` in its place: what Kafka throws there is `v2_record_errors`'); it is
also the fetch path's walk (`record_offsets`). `v2_well_formed` makes the same checks keeping no record, about
three times faster: the read of a batch whose records nothing but their structure is checked for (the default
topic configs), which also gathers the timestamp deltas the batch's max timestamp comes from
(`records_max_timestamp`). A record takes 7 bytes at least, so every walk here is linear in the bytes, whatever
the header's count says.

A compressed batch's records are decompressed once (`v2_record_stream`, at most `MAX_INFLATED` bytes); where
Kafka's streaming readers read a byte at a time matters to a stream that ends or fails there: `v2_read_starts`
(a snappy stream's concatenated header) and `lz4_empty_block_underflow` (lz4 blocks that inflate to nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

from zkcontroller.protocol.wire.compression import (
    GZIP,
    LZ4,
    SNAPPY,
    ZSTD,
    CompressionError,
    Lz4Content,
    StreamFailure,
    decompress,
)
from zkcontroller.protocol.wire.record_sets import (
    KAFKA_EXCEPTION,
    LONG_MAX,
    LONG_MIN,
    MAX_INFLATED,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    UNKNOWN_SERVER_ERROR,
    RecordSetError,
    cancelled_error,
    java_long,
)

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


def unless_cancelled(records: Iterator[tuple[int, V2Record | Malformed]],
                     cancelled: Callable[[], bool]) -> Iterator[tuple[int, V2Record | Malformed]]:
    """``records``, ``cancelled`` asked every 4096 of them (the walk of a check no one waits for any more)."""
    for i, r in records:
        if not i & 4095 and cancelled():
            raise cancelled_error()
        yield i, r


def v2_record_stream(entry: memoryview, inflated: bytes | bytearray | None
                     ) -> tuple[bytes | bytearray | memoryview | None, StreamFailure | None]:
    """The records part of a v2 batch, decompressed (``inflated`` when it already was); None for a codec id no
    client can send (`record_sets.inspect` refused it before). UNKNOWN_SERVER_ERROR where it cannot be
    decompressed; but a stream Kafka's reader fails on only after its header gives what it inflated before the
    failure, with the failure, for `v2_record_errors.failed_stream_refusal` (one whose header fails is refused here:
    ``wrapForInput``'s ``KafkaException`` of it, "java.util.zip.ZipException: Not in GZIP format", whatever the
    records)."""
    codec = entry[22] & 0x07
    if inflated is not None:
        return inflated, None
    if codec in (GZIP, SNAPPY, LZ4, ZSTD):
        try:
            return decompress(codec, bytes(entry[RECORD_BATCH_OVERHEAD:]), 2, MAX_INFLATED), None
        except StreamFailure as failure:
            if failure.at_open:
                raise RecordSetError(UNKNOWN_SERVER_ERROR, failure.java, KAFKA_EXCEPTION) from None
            return failure.data, failure
        except CompressionError as failure:  # DefaultRecordBatch's IOException, as KafkaException (and, a
            # deliberate deviation, beyond MAX_INFLATED: refused rather than walked)
            raise RecordSetError(UNKNOWN_SERVER_ERROR, f"Failed to decompress record stream: {failure}",
                                 KAFKA_EXCEPTION) from None
    return (None if codec else entry[RECORD_BATCH_OVERHEAD:]), None


def v2_read_starts(records: bytes, count: int) -> Iterator[int]:
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


def lz4_empty_block_underflow(records: Lz4Content, count: int, cancelled: Callable[[], bool] | None
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
            raise cancelled_error()
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
                    cancelled: Callable[[], bool] | None = None) -> Iterator[V2Record | Malformed]:
    """The records of a v2 batch's (decompressed) ``records`` part, of which its header counts ``count``, read
    lazily as Kafka's record iterator reads them: exactly ``count`` records, each of its declared length, whose
    fields (varints of at most 5 bytes, varlongs of 10, as ``ByteUtils``) fill that length exactly, headers
    included; then no byte may be left. The first record that fails this (cut short, a field past its end or short
    of it, a negative header count or header key length, a record missing) or the bytes left after the last one
    are yielded as a `Malformed` in its place, and the walk ends there (`v2_record_errors.structure_error` says what
    Kafka throws). A record takes 7 bytes at least, so the work is linear in the bytes, whatever the header says:
    `log_validator.validate` and `record_offsets` both walk here."""
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
            yield Malformed(index, start, records, total, False)
            return
        pos = end
        index += 1
        if index == total and pos != size:  # RecordIterator.next's ensureNoneRemaining, before the last record
            yield Malformed(index - 1, pos, records, total, True)
            return
        yield V2Record(delta, offset_delta, key_length, value_length)


def v2_well_formed(records: bytes | bytearray | memoryview, count: int,
                   cancelled: Callable[[], bool] | None = None, *, in_order: bool = False,
                   deltas: list[tuple[bytearray, int, int]] | None = None, where: list[int] | None = None) -> bool:
    """True when `walk_v2_records` reads ``count`` records from ``records`` and finds none malformed: the same
    checks (each varint read as `_varint`/`_varlong` read it, one-byte ones inline), with no record kept. A batch
    whose records nothing but their structure is checked for (the default topic configs) is read here, about three
    times faster; False sends the caller to `walk_v2_records` for what is malformed and where. ``cancelled`` is
    asked every 4096 records, as `unless_cancelled` asks it. ``in_order``: also False at the first record whose
    offset delta is not its index (a batch kept in place, which Kafka cannot renumber: `log_validator._v2_rejection`).
    ``deltas``: once well formed, set to the records' timestamp deltas as `records_max_timestamp` takes them
    (which one-byte ones, by byte; the least and largest longer one), gathered in the same walk. ``where``: when
    False for a malformed record (not for an offset delta out of order), set to the `Malformed` fields
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
                raise cancelled_error()
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


def first_record_timestamp(base_timestamp: int, records: bytes | bytearray | memoryview, count: int) -> int:
    """The first record's timestamp in a well-formed v2 batch's ``records``: the header's base timestamp plus the
    record's delta, wrapped as a Java long (a producer writes delta 0, but need not): what Kafka's
    ``searchForTimestamp`` answers for a target it reaches. The base timestamp for a batch of no record."""
    if count <= 0 or not records:
        return base_timestamp
    at = _varint(records, 0)[1]  # past the record's length
    return java_long(base_timestamp + _varlong(records, at + 1)[0])  # the delta, after the attributes


def records_max_timestamp(first_timestamp: int, records: bytes | bytearray | memoryview, count: int,
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
            raise cancelled_error()
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


class Malformed(NamedTuple):
    """Where `walk_v2_records` found a batch's records malformed: the record's index (``record``) and the offset of
    its length
    (``trailing``: bytes left after the last record, at ``start``) in ``records``, the batch's count."""

    record: int
    start: int
    records: bytes | bytearray | memoryview
    records_count: int
    trailing: bool
