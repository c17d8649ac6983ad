"""What Kafka 2.8's v2 record readers throw at the malformed record a walk found (`v2_records.Malformed`), on
each of LogValidator's ways of reading a batch: from its buffer (`UNCOMPRESSED`, ``DefaultRecord.readFrom``), by
streaming it with keys and values skipped (`IN_PLACE`, ``readPartiallyFrom``) or whole (`REBUILT`). An
``InvalidRecordException`` (INVALID_RECORD: "Found invalid record structure", "Incorrect declared batch size,
premature EOF reached", ...), or what escapes the readers, which ``appendToLocalLog`` answers UNKNOWN_SERVER_ERROR
(`structure_error`). A compressed stream that fails after its header is read as far as it goes, then fails where
Kafka's reader meets the failure (`failed_stream_refusal`).

The readers are modelled only as far as their refusal, on the one record the walk found malformed: a well-formed
batch never gets here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from zkcontroller.protocol.wire.compression import StreamFailure
from zkcontroller.protocol.wire.record_sets import (
    INVALID_RECORD,
    INVALID_RECORD_EXCEPTION,
    KAFKA_EXCEPTION,
    UNKNOWN_SERVER_ERROR,
    RecordSetError,
    cancelled_error,
    escaped_failure,
)
from zkcontroller.protocol.wire.v2_records import Malformed, V2Record, unless_cancelled, walk_v2_records


def failed_stream_refusal(records: bytes | bytearray | memoryview, count: int, path: str, failure: StreamFailure,
                          cancelled: Callable[[], bool] | None) -> RecordSetError:
    """What Kafka's streaming record iterator throws on a compressed batch whose stream fails after
    ``records`` (`compression.StreamFailure`): the records are read as far as they go; a malformed one, or bytes
    left after the last, answer as from a whole stream (`structure_error`), except that a read past ``records``
    meets the failure (an ``EOFException``: "premature EOF reached", INVALID_RECORD, as a stream's end; another
    ``IOException``: ``KafkaException`` "Failed to decompress record stream", UNKNOWN_SERVER_ERROR); every record
    read to exactly its end, ``ensureNoneRemaining``'s read meets it: ``KafkaException`` "Error checking for
    remaining bytes after reading batch", UNKNOWN_SERVER_ERROR (an unchecked exception as itself: `escaped_failure`).
    Either way it escapes before any record error is answered, so none is."""
    walked: Iterator[tuple[int, V2Record | Malformed]] = enumerate(walk_v2_records(records, count, cancelled))
    if cancelled is not None:
        walked = unless_cancelled(walked, cancelled)
    for _, r in walked:
        if isinstance(r, Malformed):
            return structure_error(r, path, failure, cancelled)
    if failure.unchecked:
        return escaped_failure(failure)
    return RecordSetError(UNKNOWN_SERVER_ERROR, "Error checking for remaining bytes after reading batch",
                          KAFKA_EXCEPTION)


UNCOMPRESSED, IN_PLACE, REBUILT = "uncompressed", "in place", "rebuilt"
"""How LogValidator reads a client's v2 batch's records (`structure_error`): an uncompressed batch from its buffer
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
        return escaped_failure(failure)
    return RecordSetError(UNKNOWN_SERVER_ERROR, "Failed to decompress record stream", KAFKA_EXCEPTION)


def structure_error(m: Malformed, path: str, failure: StreamFailure | None = None,
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
    return RecordSetError(INVALID_RECORD, message, INVALID_RECORD_EXCEPTION)


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
                raise cancelled_error()
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
