"""A Produce request's record set as Kafka's batch iterator finds it, without keeping it (the logs keep offsets
only): its entries located, not decoded, and the constants, errors and checks every reading of it shares.

Kafka checks a partition's record set in two places, and so do we, so errors come in Kafka's order:

* `inspect` — ``ProduceRequest.validateRecords`` and the batch iterator (``ByteBufferLogInputStream``), before the
  partition is looked up: an entry shorter than the smallest record is CORRUPT_MESSAGE; from Produce v3, exactly
  one batch of magic 2 (else INVALID_RECORD) and no ZStandard before v7 (UNSUPPORTED_COMPRESSION_TYPE). Before
  v7 that check reads the batch's codec with ``CompressionType.forId``, so a codec id above zstd (5-7) fails the
  whole request (`RequestFailed`: an ``IllegalArgumentException`` ``handleProduceRequest`` does not catch). A
  trailing partial entry ends the iteration, as in Kafka (``Log.trimInvalidBytes`` later drops it).
* `log_validator.validate` — ``Log.analyzeAndValidateRecords`` and ``LogValidator.validateBatch``, at the append
  (after the leadership and ``min.insync.replicas`` checks): entry by entry, a v2 batch's base offset 0 (else
  INVALID_RECORD), its size, its CRC (`check_integrity`: CRC-32C over a v2 batch from its attributes, CRC-32 over
  a legacy message from its magic) else CORRUPT_MESSAGE and a known codec id, every entry first; then every entry
  must have the first one's magic, a v2 batch's offset range must match its records count, clients may not write
  control batches, and a batch with a producer id needs a base sequence >= 0 (else INVALID_RECORD). Producer
  epochs and sequences are checked after this, by the leader's `broker.producer_state`.

The records are read by the modules that import this one: a v2 batch's by `v2_records` (what Kafka's readers
throw at a malformed one: `v2_record_errors`), a legacy set's messages by `legacy_records` (a wrapper's inner
messages located by `inspect`, as ``DataLogInputStream`` finds them), LogValidator's record errors, the same for
both, by `record_errors`; `log_validator` puts them together.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from crc32c import crc32c

from zkcontroller.protocol.wire.compression import ZSTD, StreamFailure

CORRUPT_MESSAGE = 2
UNKNOWN_SERVER_ERROR = -1
INVALID_RECORD = 87
RECORD_TOO_LARGE = 10
UNSUPPORTED_COMPRESSION_TYPE = 76
INVALID_TIMESTAMP = 32
NO_TIMESTAMP = -1
LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)
LOG_APPEND_TIME_FLAG = 0x08
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
_TRANSACTIONAL_FLAG = 0x10
INVALID_RECORD_EXCEPTION = "org.apache.kafka.common.InvalidRecordException"
KAFKA_EXCEPTION = "org.apache.kafka.common.KafkaException"
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
        in Produce v8+'s ``RecordErrors``; the first `record_errors.RECORD_ERRORS_KEPT` of them only."""


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
    checked there). ``cancelled``: asked before the first entry and every 4096 after it, as
    `log_validator.validate`'s (a wrapper's inflated set of millions of messages is read here on the worker, before
    its messages are checked)."""
    buf = memoryview(data)
    entries: list[Entry] = []
    pos = 0
    while (header := _entry_header(buf, pos, check_magic)) is not None:
        if cancelled is not None and not len(entries) & 4095 and cancelled():
            raise cancelled_error()
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
            codec = entry_codec(buf, entries[0])
            if codec > ZSTD:
                raise RequestFailed(f"Unknown compression type id: {codec}", "java.lang.IllegalArgumentException")
            if codec == ZSTD:
                raise RecordSetError(UNSUPPORTED_COMPRESSION_TYPE, f"Produce requests with version {produce_version} "
                                                                   "are not allowed to use ZStandard compression")
        if len(entries) > 1:
            raise RecordSetError(INVALID_RECORD, f"Produce requests with version {produce_version} are only allowed "
                                                 "to contain exactly one record batch")
    return entries


def entry_codec(buf: memoryview, e: Entry) -> int:
    """The entry's compression codec id (its attributes' low three bits; 0 none); every entry `inspect` found
    holds its attributes byte."""
    return buf[e.start + (22 if e.magic >= 2 else 17)] & 0x07


def check_integrity(entry: memoryview, magic: int) -> None:
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


def java_long(value: int) -> int:
    """``value`` wrapped to an int64, as Java's long arithmetic wraps it."""
    return ((value - LONG_MIN) & 0xFFFFFFFFFFFFFFFF) + LONG_MIN


def cancelled_error() -> RecordSetError:
    """A walk on the worker that no one waits for any more (`log_validator.validate`'s ``cancelled``)."""
    return RecordSetError(UNKNOWN_SERVER_ERROR, "The record check was cancelled", "java.lang.InterruptedException")


def escaped_failure(failure: StreamFailure) -> RecordSetError:
    """A stream's unchecked exception (``StreamFailure.unchecked``: lz4's ``BufferUnderflowException``) as it
    escapes the record readers: ``appendToLocalLog``'s Throwable branch answers UNKNOWN_SERVER_ERROR and logs it."""
    exception, _, message = failure.java.partition(": ")
    return RecordSetError(UNKNOWN_SERVER_ERROR, message, exception)
