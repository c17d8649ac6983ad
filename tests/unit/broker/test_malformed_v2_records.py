"""A v2 batch whose CRC is right but whose records are not records: Kafka 2.8's LogValidator reads every record of a
client's batch (``uncompressedIterator``, or for a compressed one ``skipKeyValueIterator`` as it keeps it as it is),
and its reader throws ``InvalidRecordException`` (INVALID_RECORD, through ``appendToLocalLog``'s Throwable branch:
logged, no message) at the first malformed one, whatever record errors came before; a record longer than what is
left of an uncompressed batch reads as null, a NullPointerException (UNKNOWN_SERVER_ERROR). Before, the records were
not read unless keys or timestamps were checked, and a malformed one then ended the walk: the batch was appended."""

from __future__ import annotations

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder
from tests.unit.broker.v2_batches import GZIP, NONE, ZSTD, refusal, v2_batch, varint
from tests.unit.broker.v2_batches import v2_record as record

from zkcontroller.protocol.wire.log_validator import validate
from zkcontroller.protocol.wire.record_sets import (
    INVALID_RECORD,
    UNKNOWN_SERVER_ERROR,
    RecordSetError,
    inspect,
)

INVALID_RECORD_EXCEPTION = "org.apache.kafka.common.InvalidRecordException"


def codec(compressed: bool) -> int:
    return ZSTD if compressed else NONE


def invalid(message: str) -> tuple[int, str, str | None, tuple[tuple[int, str], ...]]:
    return INVALID_RECORD, message, INVALID_RECORD_EXCEPTION, ()


def outcome(e: RecordSetError) -> tuple[int, str, str | None, tuple[tuple[int, str], ...]]:
    return e.error, str(e), e.exception, e.record_errors


@pytest.mark.parametrize("compressed", [False, True])
def test_well_formed_records_with_keys_values_and_headers_are_read_whole(compressed: bool) -> None:
    builder = MemoryRecordsBuilder(magic=2, compression_type=GZIP if compressed else 0, batch_size=1 << 20)
    for i in range(50):
        builder.append(timestamp=1_000 + i, key=None if i % 3 else b"key%d" % i, value=b"v" * i,
                       headers=[("h", b"x" * (i % 4)), ("empty", None)] if i % 2 else [])
    builder.close()
    data = bytes(builder.buffer())
    assert validate(data, inspect(data, 9), None, "orders-0") == 50


@pytest.mark.parametrize(("compressed", "message"), [
    (False, "Found invalid record structure"),  # the key's slice runs past the buffer: IllegalArgumentException
    (True, "Invalid record size: expected to read more bytes in record payload"),  # the skip runs past the record
])
def test_a_key_longer_than_its_record_refuses_the_batch(compressed: bool, message: str) -> None:
    data = v2_batch(record(0) + record(1, key_length=100), 2, codec=codec(compressed))
    assert outcome(refusal(data)) == invalid(message)  # no key nor timestamp checked: read all the same


@pytest.mark.parametrize("compressed", [False, True])
def test_fewer_records_than_counted_is_a_premature_eof(compressed: bool) -> None:
    e = refusal(v2_batch(record(0) + record(1), 3, codec=codec(compressed)))
    assert outcome(e) == invalid("Incorrect declared batch size, premature EOF reached")


@pytest.mark.parametrize("compressed", [False, True])
def test_bytes_after_the_last_record_are_records_still_remaining(compressed: bool) -> None:
    e = refusal(v2_batch(record(0) + record(1) + b"\x00", 2, codec=codec(compressed)))
    assert outcome(e) == invalid("Incorrect declared batch size, records still remaining in file")


@pytest.mark.parametrize(("compressed", "message"), [
    (False, "Invalid record size: expected to read 6 bytes in record payload, but instead read 7"),
    (True, "Invalid record size: expected to read 8 bytes in record payload, but there are still bytes remaining"),
])
def test_a_record_length_that_disagrees_with_its_fields(compressed: bool, message: str) -> None:
    """One byte short (an uncompressed record reads on into the next one) or one byte too long (a compressed one
    ends before its length)."""
    bad = record(0, length_delta=-1 if not compressed else 1) + (b"" if not compressed else b"\x00")
    assert outcome(refusal(v2_batch(bad + record(1), 2, codec=codec(compressed)))) == invalid(message)


@pytest.mark.parametrize("compressed", [False, True])
def test_the_readers_exception_wins_over_the_record_errors_before_it(compressed: bool) -> None:
    """Two keyless records of a compacted topic, then a malformed one: Kafka's iterator throws before
    ``processRecordErrors`` is reached, so no record error is answered."""
    data = v2_batch(record(0, None) + record(1, None) + record(2, key_length=100), 3, codec=codec(compressed))
    assert refusal(data, compacted=True).record_errors == ()
    assert refusal(data, compacted=True).error == INVALID_RECORD
    good = v2_batch(record(0, None) + record(1, None), 2, codec=codec(compressed))
    assert len(refusal(good, compacted=True).record_errors) == 2


def test_a_negative_header_count() -> None:
    body = bytes([0]) + varint(0) + varint(0) + varint(-1) + varint(-1) + varint(-3)
    e = refusal(v2_batch(varint(len(body)) + body, 1))
    assert outcome(e) == invalid("Found invalid number of record headers -3")


def test_an_uncompressed_record_longer_than_what_is_left_reads_as_null() -> None:
    """``DefaultRecord.readFrom(ByteBuffer)`` returns null; LogValidator's ``record.hasMagic`` then throws."""
    e = refusal(v2_batch(record(0) + varint(100) + b"\x00" * 8, 3))
    assert (e.error, str(e), e.exception) == (UNKNOWN_SERVER_ERROR, "", "java.lang.NullPointerException")
    e = refusal(v2_batch(record(0) + varint(100) + b"\x00" * 8, 2))  # the last one: what remains is checked first
    assert outcome(e) == invalid("Incorrect declared batch size, records still remaining in file")


@pytest.mark.parametrize("compressed", [False, True])
def test_a_record_length_varint_too_long_escapes_as_illegal_argument(compressed: bool) -> None:
    e = refusal(v2_batch(record(0) + b"\xff" * 5 + b"\x01", 2, codec=codec(compressed)))
    assert (e.error, e.exception) == (UNKNOWN_SERVER_ERROR, "java.lang.IllegalArgumentException")
    assert str(e) == "Varint is too long, the most significant bit in the 5th byte is set, converted value: ffffffff"
