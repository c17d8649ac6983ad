"""Gzip as Kafka 2.8 reads it: ``CompressionType.GZIP.wrapForInput`` is ``java.util.zip.GZIPInputStream`` (an 8 KiB
input buffer over Kafka's ``ByteBufferInputStream``), not zlib's auto-detecting reader. So a raw zlib stream is not
gzip, a stream cut short or with a bad trailer fails (and where it fails matters: the records read before it
decide the answer), every concatenated member is read, and bytes after a member that are not a gzip header are
ignored. The expectations below are what JDK 17's ``GZIPInputStream`` gives for these bytes (checked against it
when written: bytes read before the exception, and its ``toString``).

Then the Produce answers: a v2 batch (``DefaultRecordBatch``'s streaming iterators, ``LogValidator``) and a legacy
wrapper (``DeepRecordsIterator``), with ``ReplicaManager.appendToLocalLog``'s Throwable branch for what escapes:
UNKNOWN_SERVER_ERROR for a ``KafkaException``, INVALID_RECORD for an ``InvalidRecordException``, logged."""

from __future__ import annotations

import logging
import random
import struct
import zlib

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder
from tests.helpers import ManualRuntime
from tests.unit.broker.v2_batches import INVALID, KAFKA_EXCEPTION, accepted, refused, stream_batch, v2_record

from zkcontroller.broker.delayed_produce import ProduceWaiters
from zkcontroller.broker.partition import Partition
from zkcontroller.broker.produce import ProducePartition, ProduceTarget, produce
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire.compression import GZIP, InflationLimitExceeded, StreamFailure, decompress
from zkcontroller.protocol.wire.record_sets import (
    CORRUPT_MESSAGE,
    INVALID_RECORD,
    UNKNOWN_SERVER_ERROR,
)

LIMIT = 1 << 26
NOT_GZIP = "java.util.zip.ZipException: Not in GZIP format"
ZLIB_EOF = "java.io.EOFException: Unexpected end of ZLIB input stream"
EOF = "java.io.EOFException"
BAD_TRAILER = "java.util.zip.ZipException: Corrupt GZIP trailer"


def deflated(data: bytes, level: int = 6) -> bytes:
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def member(data: bytes, *, level: int = 6, flags: int = 0) -> bytes:
    """One gzip member (a 10-byte header with ``flags``, no optional fields), its trailer right."""
    return (bytes([0x1F, 0x8B, 8, flags]) + bytes(6) + deflated(data, level)
            + struct.pack("<II", zlib.crc32(data), len(data)))


def read(value: bytes) -> tuple[str, int, str]:
    """What ``GZIPInputStream`` does with ``value``: ("ok", bytes, "") or ("open"/"read", bytes before, the
    exception)."""
    try:
        return "ok", len(decompress(GZIP, value, 2, LIMIT)), ""
    except StreamFailure as e:
        return ("open" if e.at_open else "read"), len(e.data), e.java


TEXT = b"hello world " * 50  # 600 bytes
NOISE = random.Random(1).randbytes(2000)
"""Incompressible: deflated as it comes, so a cut stream has inflated a known prefix."""


# -- the stream, as GZIPInputStream reads it --------------------------------------------------------------------

def test_a_zlib_stream_is_not_gzip() -> None:
    assert read(zlib.compress(TEXT)) == ("open", 0, NOT_GZIP)  # before: inflated (zlib's auto-detection)


@pytest.mark.parametrize("value, expected", [
    (b"", ("open", 0, EOF)),
    (b"\x1f", ("open", 0, EOF)),
    (b"\x1f\x8b\x09" + bytes(20), ("open", 0, "java.util.zip.ZipException: Unsupported compression method")),
])
def test_a_header_that_fails(value: bytes, expected: tuple[str, int, str]) -> None:
    assert read(value) == expected


def test_a_stream_cut_short_fails_after_what_it_inflated() -> None:
    whole = member(NOISE)
    assert read(whole[:100]) == ("read", CUT_100, ZLIB_EOF)  # inside the deflate stream (before: accepted, a prefix)
    assert read(whole[:-3]) == ("read", 2000, EOF)  # inside the trailer (before: accepted, whole)
    assert read(whole[:-8]) == ("read", 2000, EOF)


CUT_100 = 85
"""What ``GZIPInputStream`` gives of `NOISE`'s member cut to 100 bytes before its EOFException (JDK 17)."""


def test_a_bad_trailer_fails_after_the_member() -> None:
    for at in (-8, -2):  # the CRC, the size
        bad = bytearray(member(TEXT))
        bad[at] ^= 1
        assert read(bytes(bad)) == ("read", 600, BAD_TRAILER)


def test_every_member_is_read_and_garbage_after_one_ignored() -> None:
    assert read(member(TEXT) + member(b"second") + member(b"y" * 100)) == ("ok", 706, "")  # before: 600
    assert read(member(TEXT) + b"garbage, not gzip at all!!!") == ("ok", 600, "")
    assert read(member(TEXT) + b"\x1f\x8b\x09" + bytes(40)) == ("ok", 600, "")  # not a header: ignored


def test_a_next_member_cut_short_fails() -> None:
    assert read(member(TEXT) + member(NOISE)[:100]) == ("read", 600 + CUT_100, ZLIB_EOF)


def test_reserved_header_flags_are_ignored_as_java_does() -> None:
    assert read(member(TEXT, flags=0xE0)) == ("ok", 600, "")  # zlib refuses them


def stored_member(deflate_end: int) -> bytes:
    """A member of stored (level 0) random-ish bytes whose deflate stream ends at ``deflate_end``."""
    data = bytes(range(256)) * 40
    first = member(data[:deflate_end - 15], level=0)
    assert len(first) - 8 == deflate_end
    return first


@pytest.mark.parametrize("left_in_chunk, read_on", [(20, False), (26, False), (27, True), (30, True)])
def test_a_next_member_is_looked_for_only_past_26_bytes_left_in_the_input_chunk(left_in_chunk: int,
                                                                               read_on: bool) -> None:
    """``readTrailer`` tries a next header only when its 8 KiB buffer holds more than 26 bytes past the deflate
    stream (the trailer's 8 included): ``ByteBufferInputStream`` says none are available beyond it."""
    chunk_end = 10 + 8 * 1024  # the first fill starts after the header
    first = stored_member(chunk_end - left_in_chunk)
    expected = len(first) - 23 + (5 if read_on else 0)
    assert read(first + member(b"z" * 5)) == ("ok", expected, "")


def many_tiny_members(total: int) -> tuple[bytes, int, int]:
    """Empty members (20 bytes each) for about ``total`` bytes, with a stored one across each 8 KiB input chunk's
    end so that Java's 26-byte rule keeps reading them all; the value, its member count and the bytes they hold."""
    out = bytearray()
    chunk_end = 10 + 8 * 1024
    empty = member(b"")
    n = held = 0
    while len(out) < total:
        start = len(out)
        deflate_end = start + len(empty) - 8
        if start == 0 or chunk_end - deflate_end > 26:
            out += empty
        else:  # across the chunk's end: a stored member ending 100 bytes into the next chunk
            bridge = member(bytes(chunk_end + 100 - (start + 15)), level=0)
            out += bridge
            held += chunk_end + 100 - (start + 15)
            deflate_end = start + len(bridge) - 8
        n += 1
        if deflate_end > chunk_end:
            chunk_end += -(-(deflate_end - chunk_end) // 8192) * 8192
    return bytes(out), n, held


def test_many_tiny_members_cost_linear_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """zlib copies the input past a member's end into ``unused_data``: handed the whole rest of the value for each
    member, a value of many tiny ones was read in quadratic time on the event loop (3.2 MB: 29 s; Java: 0.4 s).
    Counted as the bytes handed to the inflater: a few times the value, not members times the value."""
    from zkcontroller.protocol.wire import compression
    fed: list[int] = []
    real = compression.zlib.decompressobj

    class Counting:
        def __init__(self, *args: object, **kwargs: object) -> None:
            self.inner = real(*args, **kwargs)  # type: ignore[arg-type]

        def decompress(self, data: memoryview, max_length: int = 0) -> bytes:
            fed.append(len(data))
            return self.inner.decompress(data, max_length)

        def __getattr__(self, name: str) -> object:
            return getattr(self.inner, name)

    monkeypatch.setattr(compression.zlib, "decompressobj", Counting)
    value, members, held = many_tiny_members(200_000)
    assert decompress(GZIP, value, 2, 1 << 20) == bytes(held)  # every member read, to the last
    assert members > 9_000 and sum(fed) < 8 * len(value)


def test_a_large_value_keeps_the_limit() -> None:
    with pytest.raises(InflationLimitExceeded, match="inflates beyond"):
        decompress(GZIP, member(TEXT), 2, 100)
    assert len(decompress(GZIP, member(TEXT) + member(TEXT), 2, 700, partial=True)) == 700


# -- v2 batches ----------------------------------------------------------------------------------------------------

def records(n: int) -> bytes:
    return b"".join(v2_record(i) for i in range(n))


def gzip_batch(value: bytes, count: int) -> bytes:
    """A client's v2 batch of ``count`` records whose records part is ``value`` as given (gzip codec)."""
    return stream_batch(value, count, GZIP)


def test_a_v2_batch_of_zlib_is_refused_at_its_stream_opening() -> None:
    data = gzip_batch(zlib.compress(records(3)), 3)
    assert refused(data) == (UNKNOWN_SERVER_ERROR, NOT_GZIP, KAFKA_EXCEPTION)  # before: accepted


@pytest.mark.parametrize("compression_type", ["producer", "zstd"])  # kept in place, or rebuilt
def test_a_v2_batch_read_whole_before_its_stream_fails(compression_type: str) -> None:
    """Every record read; ``ensureNoneRemaining``'s read meets the failure (a cut trailer, a bad one)."""
    whole = member(records(3))
    bad = bytearray(whole)
    bad[-8] ^= 1
    for value in (whole[:-3], bytes(bad)):
        assert refused(gzip_batch(value, 3), compression_type=compression_type) == (
            UNKNOWN_SERVER_ERROR, "Error checking for remaining bytes after reading batch", KAFKA_EXCEPTION)
        # before: accepted (cut) or "Failed to decompress record stream: cannot be inflated: ..." (bad)


@pytest.mark.parametrize("compression_type", ["producer", "zstd"])
def test_a_record_cut_by_the_streams_failure(compression_type: str) -> None:
    """A record read past what the stream gives: an EOFException is "premature EOF" (INVALID_RECORD), another
    IOException the iterator's "Failed to decompress record stream"."""
    body = records(3)
    cut = member(body)
    cut = cut[:len(cut) - 8]  # no trailer: EOFException
    # the count says 4: the fourth record's read meets the failure
    assert refused(gzip_batch(cut, 4), compression_type=compression_type) == (
        INVALID_RECORD, "Incorrect declared batch size, premature EOF reached", INVALID)
    bad = bytearray(member(body))
    bad[-8] ^= 1  # a bad CRC: ZipException
    assert refused(gzip_batch(bytes(bad), 4), compression_type=compression_type) == (
        UNKNOWN_SERVER_ERROR, "Failed to decompress record stream", KAFKA_EXCEPTION)


def test_a_malformed_record_before_the_failure_answers_first() -> None:
    body = records(2) + v2_record(2, length_delta=-1)  # its length one short of its fields
    bad = bytearray(member(body))
    bad[-8] ^= 1
    error, _, exception = refused(gzip_batch(bytes(bad), 3))
    assert error == INVALID_RECORD and exception == INVALID


def test_a_v2_batch_over_concatenated_members_is_read_whole() -> None:
    body = records(5)
    value = member(body[:10]) + member(body[10:])  # a record split across the two
    assert accepted(gzip_batch(value, 5)) == 5  # before: "premature EOF reached" (the second member unread)
    assert accepted(gzip_batch(member(body) + b"trailing garbage bytes, ignored", 5)) == 5


# -- legacy wrappers -----------------------------------------------------------------------------------------------

def inner_set(n: int) -> bytes:
    b = MemoryRecordsBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    for i in range(n):
        b.append(timestamp=1_000 + i, key=b"k", value=b"value %d" % i)
    b.close()
    return bytes(b.buffer())


def wrapper(value: bytes) -> bytes:
    """A v1 gzip wrapper (offset 0, null key) whose value is ``value`` as given."""
    body = struct.pack(">bbq", 1, GZIP, 1_000) + struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    return struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body


@pytest.mark.parametrize("value, java", [
    (zlib.compress(inner_set(3)), NOT_GZIP),
    (member(inner_set(3))[:40], ZLIB_EOF),
    (member(inner_set(3))[:-4], EOF),
])
def test_a_legacy_wrapper_whose_stream_fails(value: bytes, java: str) -> None:
    """``DeepRecordsIterator`` reads every inner message first: the stream's failure escapes as
    ``KafkaException(e)``, whose message is the cause's ``toString``. Before: accepted (counted)."""
    assert refused(wrapper(value), 2) == (UNKNOWN_SERVER_ERROR, java, KAFKA_EXCEPTION)


def test_a_legacy_wrappers_corrupt_inner_size_before_the_failure_answers_first() -> None:
    inner = inner_set(2) + struct.pack(">qi", 2, 5) + bytes(20)  # a third message announcing 5 bytes
    assert refused(wrapper(member(inner)[:-4]), 2) == (  # DataLogInputStream's words: no size named
        CORRUPT_MESSAGE, "Record size is less than the minimum record overhead (14)", None)


def test_a_legacy_wrapper_over_concatenated_members() -> None:
    inner = inner_set(4)
    assert accepted(wrapper(member(inner[:50]) + member(inner[50:])), 2) == 4


# -- the answer and the log line -------------------------------------------------------------------------------------

async def test_the_append_answers_and_logs_the_streams_failure(caplog: pytest.LogCaptureFixture) -> None:
    part = Partition(TopicPartition("t", 0), 1)
    part.make_leader(4, (1,), (1,), 0, 1, now_ms=0)
    target = ProduceTarget(partition={TopicPartition("t", 0): part}.get, runtime=ManualRuntime(),  # type: ignore[arg-type]
                           offline=lambda: (), waiters=ProduceWaiters(), broker_id=1, offload_scans=False)
    known = type("Known", (), {"contains": staticmethod(lambda _tp: True)})()
    with caplog.at_level(logging.ERROR, "kafka.server.ReplicaManager"):
        [got] = await produce(9, 1, 30_000, "c", [ProducePartition("t", 0, gzip_batch(zlib.compress(records(2)), 2))],
                              cache=known, target=target)
    assert (got.error, got.log_start_offset, got.error_message) == (UNKNOWN_SERVER_ERROR, 0, None)
    assert part.log_end_offset == 0
    [line] = [r.getMessage() for r in caplog.records if r.name == "kafka.server.ReplicaManager"]
    assert line == ("[ReplicaManager broker=1] Error processing append operation on partition t-0\n"
                    f"{KAFKA_EXCEPTION}: {NOT_GZIP}")
