"""Zstd as Kafka 2.8 reads a v2 batch's records: zstd-jni's ``ZstdInputStreamNoFinalizer`` (under a 16 KiB
``BufferedInputStream``), whose constructor reads nothing, so every failure is met by a read: the frames that
decode are given first, then a frame that does not decode fails (its ``IOException`` is the record iterator's
"Failed to decompress record stream", or "Error checking for remaining bytes after reading batch" at the end
check), and a frame the value ends inside gives its whole blocks (and a cut raw block's bytes) before the end:
"Truncated source" when no frame ended since the source was read, else a clean end of stream (``frameFinished``),
which the record reader sees as "premature EOF". zstd-jni's own text is the ``KafkaException``'s cause: neither
answered nor in the logged ``toString``. (A legacy zstd wrapper is refused before it is opened.)

The expectations are what Kafka 2.8.2's readers (compiled from its source) gave with zstd-jni for these bytes when
written. Before, every failure answered at decompression, "Failed to decompress record stream: zstd: <cramjam's
text>"."""

from __future__ import annotations

import struct

import cramjam
import pytest
from tests.unit.broker.v2_batches import INVALID, KAFKA_EXCEPTION, accepted, refused, stream_batch, v2_record

from zkcontroller.protocol.wire.compression import ZSTD, StreamFailure, decompress
from zkcontroller.protocol.wire.record_sets import INVALID_RECORD, UNKNOWN_SERVER_ERROR

R = b"".join(v2_record(i) for i in range(3))
BIG = b"".join(v2_record(i, b"k" * 200) for i in range(200))
"""About 41 KB of compressible records."""


def frame(data: bytes, flushes: tuple[int, ...] = ()) -> bytes:
    """A zstd frame as a streaming writer makes it (no content size), a block ending at each of ``flushes``."""
    c = cramjam.zstd.Compressor()
    out = b""
    last = 0
    for at in flushes:
        c.compress(data[last:at])
        out += bytes(c.flush())
        last = at
    c.compress(data[last:])
    return out + bytes(c.finish())


def zstd_batch(value: bytes, count: int = 3) -> bytes:
    """A client's v2 batch of ``count`` records whose records part is ``value`` as given (zstd codec)."""
    return stream_batch(value, count, ZSTD)


FAILED = (UNKNOWN_SERVER_ERROR, "Failed to decompress record stream", KAFKA_EXCEPTION)
REMAINING = (UNKNOWN_SERVER_ERROR, "Error checking for remaining bytes after reading batch", KAFKA_EXCEPTION)
PREMATURE = (INVALID_RECORD, "Incorrect declared batch size, premature EOF reached", INVALID)
BOTH_PATHS = pytest.mark.parametrize("compression_type", ["producer", "gzip"])  # kept in place, or rebuilt


def test_the_stream_gives_the_frames_before_a_failure() -> None:
    value = frame(R[:10]) + b"garbage!"
    with pytest.raises(StreamFailure) as e:
        decompress(ZSTD, value, 2, 1 << 20)
    assert (bytes(e.value.data), e.value.at_open) == (R[:10], False)
    # a second frame cut short: what its raw block holds, then a clean end
    assert decompress(ZSTD, frame(R[:10]) + frame(R[10:])[:-2], 2, 1 << 20) == R[:-2]


@BOTH_PATHS
def test_a_failure_after_the_records_fails_the_end_check(compression_type: str) -> None:
    assert refused(zstd_batch(frame(R) + b"garbage!"), compression_type=compression_type) == REMAINING
    assert refused(zstd_batch(frame(R) + b"garbage!", 4), compression_type=compression_type) == FAILED


@BOTH_PATHS
def test_a_frame_cut_short(compression_type: str) -> None:
    whole = frame(R)
    assert refused(zstd_batch(whole[:len(whole) // 2]), compression_type=compression_type) == FAILED
    assert refused(zstd_batch(b""), compression_type=compression_type) == PREMATURE  # no frame at all: a clean end
    # a second frame cut short, in the source read with the first: frameFinished is still set
    assert refused(zstd_batch(frame(R[:10]) + frame(R[10:])[:-2]), compression_type=compression_type) == PREMATURE


@BOTH_PATHS
def test_a_cut_frames_whole_blocks_are_read_first(compression_type: str) -> None:
    """A malformed record in the second of three blocks, the frame cut in the third: the record answers (before:
    "Failed to decompress record stream: zstd: ...")."""
    records = (b"".join(v2_record(i, b"k" * 200) for i in range(150)) + v2_record(150, b"k" * 200, key_length=500)
               + b"".join(v2_record(i, b"k" * 200) for i in range(151, 200)))
    value = frame(records, flushes=(20_000, 40_000))[:-3]
    error, _, exception = refused(zstd_batch(value, 200), compression_type=compression_type)
    assert (error, exception) == (INVALID_RECORD, INVALID)
    assert refused(zstd_batch(value, 150), compression_type=compression_type) == (
        INVALID_RECORD, "Incorrect declared batch size, records still remaining in file", INVALID)


def test_a_malformed_record_before_the_failure_answers_first() -> None:
    malformed = v2_record(0) + v2_record(1, key_length=5) + v2_record(2)
    error, _, exception = refused(zstd_batch(frame(malformed) + b"garbage!"))
    assert (error, exception) == (INVALID_RECORD, INVALID)


def test_whole_values_are_read_as_before() -> None:
    assert accepted(zstd_batch(frame(R))) == 3
    assert accepted(zstd_batch(frame(BIG, flushes=(20_000,)), 200)) == 200
    skippable = struct.pack("<II", 0x184D2A50, 4) + b"abcd"
    assert accepted(zstd_batch(skippable + frame(R))) == 3


def test_a_magic_cut_short_after_the_frames_is_checked_against_the_magics() -> None:
    """zstd checks the few bytes it has of a next frame's magic: another prefix is "Unknown frame descriptor"
    (before: accepted, cramjam giving the frames before), the magic's own a clean end."""
    assert refused(zstd_batch(frame(R) + b"\x01\x02")) == REMAINING
    assert accepted(zstd_batch(frame(R) + b"\x28\xb5\x2f")) == 3
