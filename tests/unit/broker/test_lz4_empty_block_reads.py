"""A v2 lz4 batch whose frame holds blocks that inflate to nothing: Kafka 2.8's ``KafkaLZ4BlockInputStream.read()``
(one byte) throws ``BufferUnderflowException`` when the block it reads is empty, and the record iterator reads one
byte at a time for each byte of a record's length varint and for its end check (``ensureNoneRemaining``); its
``readFully`` of a record's body reads on past them. So an empty block where a record (or a varint byte, or the end)
begins fails the batch, UNKNOWN_SERVER_ERROR with the exception logged, and one inside a body does not. They were
all read as adding nothing."""

from __future__ import annotations

import pytest
from tests.unit.broker.test_compression_empty_blocks import EMPTY_BLOCK, lz4_frame
from tests.unit.broker.v2_batches import LOG_APPEND_TIME, accepted, refusal, v2_batch, v2_record

from zkcontroller.protocol.wire.compression import LZ4, Lz4Content, decompress
from zkcontroller.protocol.wire.record_sets import INVALID_RECORD, UNKNOWN_SERVER_ERROR

UNDERFLOW = (UNKNOWN_SERVER_ERROR, "java.nio.BufferUnderflowException")
R0, R1, R2 = v2_record(0), v2_record(1), v2_record(2)
LONG = v2_record(1, b"k" * 70)
"""A record whose length varint takes two bytes (a body of 76 bytes)."""


def batch(*pieces: bytes, count: int = 3, checksums: bool = False, attributes: int = 0) -> bytes:
    """A v2 batch of ``count`` records whose lz4 frame has one block per piece (`EMPTY_BLOCK` an empty one)."""
    return v2_batch(lz4_frame(list(pieces), block_checksums=checksums), count, codec=LZ4, attributes=attributes)


def answer(data: bytes, **checks: object) -> tuple[int, str | None]:
    e = refusal(data, **checks)
    return e.error, e.exception


def test_the_content_says_where_empty_blocks_are_met() -> None:
    frame = lz4_frame([EMPTY_BLOCK, R0, EMPTY_BLOCK, EMPTY_BLOCK, R1 + R2, EMPTY_BLOCK], block_checksums=False)
    content = decompress(LZ4, frame, 2, 1 << 20)
    assert isinstance(content, Lz4Content) and content == R0 + R1 + R2
    assert content.empty_at == (0, len(R0), len(R0 + R1 + R2))
    plain = decompress(LZ4, lz4_frame([R0 + R1, R2], block_checksums=False), 2, 1 << 20)
    assert type(plain) is bytes  # every real producer's frame: no wrapper


@pytest.mark.parametrize("checksums", [False, True])
@pytest.mark.parametrize("pieces", [
    (EMPTY_BLOCK, R0 + R1 + R2),  # the first record's length: the iterator's first read
    (R0, EMPTY_BLOCK, R1 + R2),  # a later record's length
    (R0 + R1, EMPTY_BLOCK, EMPTY_BLOCK, R2),  # a run of them, one read
    (R0 + R1 + R2, EMPTY_BLOCK),  # ensureNoneRemaining's read, before the end mark
])
def test_an_empty_block_where_a_one_byte_read_meets_it_fails_the_batch(
        pieces: tuple[bytes, ...], checksums: bool) -> None:
    assert answer(batch(*pieces, checksums=checksums)) == UNDERFLOW


def test_inside_a_length_varint_too() -> None:
    data = batch(R0, LONG[:1], EMPTY_BLOCK, LONG[1:], count=2)
    assert answer(data) == UNDERFLOW
    assert accepted(batch(R0, LONG[:2], EMPTY_BLOCK, LONG[2:], count=2)) == 2  # past the varint: the body's read


def test_inside_a_body_the_array_read_reads_on() -> None:
    assert accepted(batch(R0[:3], EMPTY_BLOCK, R0[3:] + R1 + R2[:5], EMPTY_BLOCK, EMPTY_BLOCK, R2[5:])) == 3


def test_it_escapes_before_record_errors_but_after_a_malformed_record() -> None:
    """The iterator throws as it reads: before LogValidator answers the record errors it collected (a LogAppendTime
    batch's records all refused here), after a malformed record read before it."""
    assert answer(batch(R0, R1, EMPTY_BLOCK, R2, attributes=LOG_APPEND_TIME)) == UNDERFLOW
    malformed = v2_record(1, key_length=5)  # its key runs past its declared length, which stays right: the
    # empty block is where the next record's length is read, after this record fails
    e = refusal(batch(R0, malformed, EMPTY_BLOCK, R2))
    assert e.error == INVALID_RECORD and e.exception != UNDERFLOW[1]
    assert answer(batch(R0, v2_record(1), EMPTY_BLOCK, R2)) == UNDERFLOW  # the same place, well formed before it

