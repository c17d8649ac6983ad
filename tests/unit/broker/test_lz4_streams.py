"""Lz4 as Kafka 2.8 reads it: ``KafkaLZ4BlockInputStream`` reads its frame's header when it is opened
(``CompressionType.wrapForInput``, which wraps a failure there in a ``KafkaException``) and a block only when a
read needs bytes past the ones before; so a frame that fails (no end mark, a block too large or corrupt, a wrong
block checksum) fails where the record reader meets it, and the records read before decide the answer, as for gzip
(`test_gzip_streams`). Its ``getInt`` of a flagged checksum with fewer than 4 bytes left (the content checksum after
the end mark, a block's) throws ``BufferUnderflowException``, which no reader wraps: it escapes as itself, except
inside ``readPartiallyFrom``'s body read, which makes it "Found invalid record structure".

The expectations are what Kafka 2.8.2's readers (``DefaultRecordBatch``'s ``skipKeyValueIterator`` and
``streamingIterator``, ``AbstractLegacyRecordBatch``'s deep iterator, compiled from its source) gave with lz4-java
for these bytes when written. One known difference: the offset in an ``LZ4Exception``'s "Error decoding offset N"
counts in the request's receive buffer, where lz4's decoder stopped; here N is the block's offset in the value."""

from __future__ import annotations

import logging
import struct
import zlib

import cramjam
import pytest
from kafka.record.memory_records import MemoryRecordsBuilder
from tests.helpers import ManualRuntime
from tests.unit.broker.test_gzip_streams import inner_set
from tests.unit.broker.v2_batches import INVALID, KAFKA_EXCEPTION, refused, stream_batch, v2_record

from zkcontroller.broker.delayed_produce import ProduceWaiters
from zkcontroller.broker.partition import Partition
from zkcontroller.broker.produce import ProducePartition, ProduceTarget, produce
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire.compression import LZ4, LZ4_FRAME_MAGIC, StreamFailure, decompress, xxh32
from zkcontroller.protocol.wire.log_validator import validate
from zkcontroller.protocol.wire.record_sets import (
    INVALID_RECORD,
    UNKNOWN_SERVER_ERROR,
    inspect,
)

UNDERFLOW = "java.nio.BufferUnderflowException"
PREMATURE = "java.io.IOException: Stream ended prematurely"
END = b"\0\0\0\0"
CONTENT_CHECKSUM, BLOCK_CHECKSUMS = 0x04, 0x10


def frame(*blocks: bytes, flg: int = 0x60, bd: int = 0x40, end: bytes = END, hc: int | None = None) -> bytes:
    """An lz4 frame (64 KiB blocks unless ``bd`` says otherwise) of one compressed block per piece, its header
    checksum right unless ``hc``, ``end`` after the last block (the end mark, and what follows it)."""
    descriptor = bytes([flg, bd])
    out = [struct.pack("<I", LZ4_FRAME_MAGIC), descriptor, bytes([(xxh32(descriptor) >> 8) & 0xFF if hc is None
                                                                   else hc])]
    for piece in blocks:
        block = bytes(cramjam.lz4.compress_block(piece, store_size=False))
        out.append(struct.pack("<I", len(block)) + block)
        if flg & BLOCK_CHECKSUMS:
            out.append(struct.pack("<I", xxh32(block)))
    return b"".join(out) + end


def raw_block(size_word: int, data: bytes = b"") -> bytes:
    return struct.pack("<I", size_word) + data


def read(value: bytes, magic: int = 2) -> tuple[str, int, str]:
    """What ``KafkaLZ4BlockInputStream`` does with ``value``: ("ok", bytes, "") or ("open"/"read", bytes before,
    the exception)."""
    try:
        return "ok", len(decompress(LZ4, value, magic, 1 << 20)), ""
    except StreamFailure as e:
        return ("open" if e.at_open else "read"), len(e.data), e.java


R = b"".join(v2_record(i) for i in range(3))


# -- the stream ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, java", [
    (frame()[:5], PREMATURE),
    (b"\x05" + frame(R)[1:], "java.io.IOException: Stream unsupported (invalid magic bytes)"),
    (frame(R, flg=0x61), "java.lang.RuntimeException: Reserved bits must be 0"),
    (frame(R, flg=0x40), "java.lang.RuntimeException: Dependent block stream is unsupported"),  # before: accepted
    (frame(R, flg=0xA0), "java.lang.RuntimeException: Version 2 is unsupported"),
    (frame(R, bd=0x41), "java.lang.RuntimeException: Reserved2 field must be 0"),
    (frame(R, bd=0x30), "java.lang.RuntimeException: Block size value must be between 4 and 7"),
    (frame(R, bd=0xC0), "java.lang.RuntimeException: Reserved3 field must be 0"),
    (frame(flg=0x68)[:10], PREMATURE),  # a content size cut short
    (frame()[:6], UNDERFLOW),  # no header checksum byte
    (frame(R, hc=0), "java.io.IOException: Stream frame descriptor corrupted"),
])
def test_a_header_that_fails_fails_the_opening(value: bytes, java: str) -> None:
    assert read(value) == ("open", 0, java)


def test_magic_0_skips_the_header_checksum_byte_with_a_position_past_the_end() -> None:
    assert read(frame(R, hc=0), magic=0) == ("ok", len(R), "")
    assert read(frame()[:6], magic=0) == ("open", 0, "java.lang.IllegalArgumentException: newPosition > limit: "
                                                     "(7 > 6)")


def test_blocks_fail_where_they_are_read_after_the_content_before() -> None:
    assert read(frame(R[:10], R[10:], end=b"")) == ("read", len(R), PREMATURE)  # no end mark (before: refused
    # at decompression, "lz4 frame cut short")
    assert read(frame(R[:10], end=raw_block(50, b"x" * 10))) == ("read", 10, PREMATURE)  # a block cut short
    assert read(frame(R[:10], end=raw_block(70_000))) == ("read", 10, "java.io.IOException: Block size 70000 "
                                                                      "exceeded max: 65536")
    corrupt = frame(R[:10], end=raw_block(5, b"\xf0\xff\xff\xff\xff") + END)
    assert read(corrupt) == ("read", 10, "java.io.IOException: net.jpountz.lz4.LZ4Exception: Error decoding offset "
                                         f"{len(corrupt) - 9} of input buffer")
    wrong = bytearray(frame(R[:10], R[10:], flg=0x60 | BLOCK_CHECKSUMS))
    wrong[-5] ^= 1
    assert read(bytes(wrong)) == ("read", 10, "java.io.IOException: Block checksum mismatch")


@pytest.mark.parametrize("left", [0, 1, 2, 3])
def test_a_flagged_checksum_cut_short_underflows(left: int) -> None:
    """``readBlock`` reads the content checksum after the end mark with ``getInt`` (unverified); a block's too.
    Before: accepted (the content checksum was not read at all)."""
    assert read(frame(R, flg=0x60 | CONTENT_CHECKSUM, end=END + b"\x11" * left)) == ("read", len(R), UNDERFLOW)
    assert read(frame(R, flg=0x60 | CONTENT_CHECKSUM, end=END + b"\x11" * 4)) == ("ok", len(R), "")
    cut = frame(R[:10], R[10:], flg=0x60 | BLOCK_CHECKSUMS, end=b"")[:-4 + left]
    assert read(cut) == ("read", 10, UNDERFLOW)


# -- v2 batches ----------------------------------------------------------------------------------------------------

def lz4_batch(value: bytes, count: int = 3) -> bytes:
    """A client's v2 batch of ``count`` records whose records part is ``value`` as given (lz4 codec)."""
    return stream_batch(value, count, LZ4)


BOTH_PATHS = pytest.mark.parametrize("compression_type", ["producer", "gzip"])  # kept in place, or rebuilt
REMAINING = (UNKNOWN_SERVER_ERROR, "Error checking for remaining bytes after reading batch", KAFKA_EXCEPTION)
FAILED = (UNKNOWN_SERVER_ERROR, "Failed to decompress record stream", KAFKA_EXCEPTION)
RAW_UNDERFLOW = (UNKNOWN_SERVER_ERROR, "", UNDERFLOW)


@BOTH_PATHS
def test_a_content_checksum_cut_short_fails_the_read_that_reaches_the_end(compression_type: str) -> None:
    for count in (3, 4):  # ensureNoneRemaining's read, or the fourth record's length
        data = lz4_batch(frame(R, flg=0x60 | CONTENT_CHECKSUM, end=END + b"\1\2"), count)
        assert refused(data, compression_type=compression_type) == RAW_UNDERFLOW  # before: accepted (3)


@BOTH_PATHS
def test_a_frame_without_its_end_mark_fails_where_the_reader_runs_out(compression_type: str) -> None:
    value = frame(R[:10], R[10:], end=b"")
    assert refused(lz4_batch(value, 3), compression_type=compression_type) == REMAINING
    assert refused(lz4_batch(value, 4), compression_type=compression_type) == FAILED
    # fewer records than the content holds: the bytes left answer before the stream's end is reached
    assert refused(lz4_batch(value, 2), compression_type=compression_type) == (
        INVALID_RECORD, "Incorrect declared batch size, records still remaining in file", INVALID)
    # before: all three "Failed to decompress record stream: lz4 frame cut short"


@BOTH_PATHS
def test_a_malformed_record_before_the_failure_answers_first(compression_type: str) -> None:
    malformed = v2_record(0) + v2_record(1, key_length=5) + v2_record(2)
    error, _, exception = refused(lz4_batch(frame(malformed, end=b"")), compression_type=compression_type)
    assert (error, exception) == (INVALID_RECORD, INVALID)


@BOTH_PATHS
def test_a_bad_block_after_the_records_fails_the_end_check(compression_type: str) -> None:
    for tail in (raw_block(70_000), raw_block(5, b"\xf0\xff\xff\xff\xff") + END):
        assert refused(lz4_batch(frame(R, end=tail)), compression_type=compression_type) == REMAINING


def test_a_cut_block_checksum_inside_a_record_body() -> None:
    """The in-place reader's ``readPartiallyFrom`` catches ``BufferUnderflowException`` around its body read: the
    stream's own becomes "Found invalid record structure"; the rebuilding reader's ``readFully`` lets it escape."""
    value = frame(R[:10], R[10:], flg=0x60 | BLOCK_CHECKSUMS, end=b"")[:-2]  # the second record straddles
    assert refused(lz4_batch(value), compression_type="producer") == (
        INVALID_RECORD, "Found invalid record structure", INVALID)
    assert refused(lz4_batch(value), compression_type="gzip") == RAW_UNDERFLOW


def test_a_header_failure_is_the_openings_kafka_exception() -> None:
    assert refused(lz4_batch(frame(R, flg=0x40))) == (
        UNKNOWN_SERVER_ERROR, "java.lang.RuntimeException: Dependent block stream is unsupported", KAFKA_EXCEPTION)


# -- legacy wrappers -----------------------------------------------------------------------------------------------

def wrapper(value: bytes, magic: int = 1) -> bytes:
    """A legacy lz4 wrapper (offset 0, null key) whose value is ``value`` as given."""
    timestamp = struct.pack(">q", 1_000) if magic else b""
    body = struct.pack(">bb", magic, LZ4) + timestamp + struct.pack(">ii", -1, len(value)) + value
    return struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body


@pytest.mark.parametrize("magic", [0, 1])
def test_a_legacy_wrapper_reads_to_its_end(magic: int) -> None:
    """``DeepRecordsIterator`` reads every inner message and then one more header: the end always meets the
    failure; an ``IOException`` as ``KafkaException(e)``, a ``BufferUnderflowException`` as itself."""
    inner = inner_set(3) if magic else _inner_v0(3)
    assert refused(wrapper(frame(inner, end=b""), magic), 2) == (UNKNOWN_SERVER_ERROR, PREMATURE, KAFKA_EXCEPTION)
    cut = frame(inner, flg=0x60 | CONTENT_CHECKSUM, end=END + b"\1\2")
    assert refused(wrapper(cut, magic), 2) == RAW_UNDERFLOW  # before: accepted
    whole = frame(inner, flg=0x60 | CONTENT_CHECKSUM, end=END + b"\1\2\3\4")
    assert validate(wrapper(whole, magic), inspect(wrapper(whole, magic), 2), None, "t-0") == 3


def _inner_v0(n: int) -> bytes:
    b = MemoryRecordsBuilder(magic=0, compression_type=0, batch_size=1 << 20)
    for i in range(n):
        b.append(timestamp=None, key=b"k", value=b"value %d" % i)
    b.close()
    return bytes(b.buffer())


# -- the answer and the log line -------------------------------------------------------------------------------------

async def test_the_append_answers_and_logs_the_underflow(caplog: pytest.LogCaptureFixture) -> None:
    part = Partition(TopicPartition("t", 0), 1)
    part.make_leader(4, (1,), (1,), 0, 1, now_ms=0)
    target = ProduceTarget(partition={TopicPartition("t", 0): part}.get, runtime=ManualRuntime(),  # type: ignore[arg-type]
                           offline=lambda: (), waiters=ProduceWaiters(), broker_id=1, offload_scans=False)
    known = type("Known", (), {"contains": staticmethod(lambda _tp: True)})()
    batch = lz4_batch(frame(R, flg=0x60 | CONTENT_CHECKSUM))  # the end mark, then nothing
    with caplog.at_level(logging.ERROR, "kafka.server.ReplicaManager"):
        [got] = await produce(9, 1, 30_000, "c", [ProducePartition("t", 0, batch)], cache=known, target=target)
    assert (got.error, got.log_start_offset, got.error_message) == (UNKNOWN_SERVER_ERROR, 0, None)
    assert part.log_end_offset == 0
    [line] = [r.getMessage() for r in caplog.records if r.name == "kafka.server.ReplicaManager"]
    assert line == ("[ReplicaManager broker=1] Error processing append operation on partition t-0\n"
                    f"{UNDERFLOW}")
