"""Snappy as Kafka 2.8 reads it: snappy-java 1.1.8.1's ``SnappyInputStream``. Its constructor reads the 16-byte
header (``CompressionType.wrapForInput`` wraps a failure there in a ``KafkaException``): an empty value fails, a
value without the magic is one raw snappy block decompressed there. Then a chunk is read only when a read needs
bytes past the ones before, so a stream that fails later (a chunk cut short or not snappy, a concatenated header
cut short or of version 0) fails where the record reader meets it, as gzip and lz4 do (`test_gzip_streams`,
`test_lz4_streams`); fewer than 4 bytes of a chunk length end the stream; and a concatenated header of another
magic ends only the read call that meets it (-1 when that read has read nothing: a record's length or body read
starting there meets the end of the stream; one that meets it past its start reads on).

The expectations are what Kafka 2.8.2's readers (compiled from its source) gave over snappy-java 1.1.8.1's
``SnappyInputStream`` (compiled from its source, over a later snappy-java's native library) for these bytes when
written. Before, the texts were our own and every failure was met at decompression."""

from __future__ import annotations

import struct
import zlib

import cramjam
import pytest
from tests.unit.broker.test_gzip_streams import inner_set
from tests.unit.broker.v2_batches import INVALID, KAFKA_EXCEPTION, accepted, refused, stream_batch, v2_record

from zkcontroller.protocol.wire.compression import SNAPPY, XERIAL_MAGIC, StreamFailure, decompress
from zkcontroller.protocol.wire.record_sets import (
    INVALID_RECORD,
    UNKNOWN_SERVER_ERROR,
)

OTHER_MAGIC = XERIAL_MAGIC[:4] + b"XXXX" + struct.pack(">ii", 1, 1)
"""A concatenated header whose first four bytes are the magic's (so it is read as a header) and the rest not."""
PARSING = "java.io.IOException: PARSING_ERROR(2)"
FAILED_TO_UNCOMPRESS = "java.io.IOException: FAILED_TO_UNCOMPRESS(5)"
CUT_CHUNK = "java.io.IOException: failed to read chunk"


def header(version: int = 1) -> bytes:
    return XERIAL_MAGIC + struct.pack(">ii", version, 1)


def chunk(data: bytes) -> bytes:
    block = bytes(cramjam.snappy.compress_raw(data))
    return struct.pack(">i", len(block)) + block


def read(value: bytes) -> tuple[str, int, str]:
    try:
        return "ok", len(decompress(SNAPPY, value, 2, 1 << 20)), ""
    except StreamFailure as e:
        return ("open" if e.at_open else "read"), len(e.data), e.java


R = b"".join(v2_record(i) for i in range(3))
L = len(v2_record(0))


# -- the stream ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, java", [
    (b"", "org.xerial.snappy.SnappyIOException: [EMPTY_INPUT] Cannot decompress empty stream"),
    (b"\xff" * 6, PARSING),  # no magic: one raw block, whose length is not a varint
    (bytes(cramjam.snappy.compress_raw(R))[:-3], FAILED_TO_UNCOMPRESS),
])
def test_the_opening_fails(value: bytes, java: str) -> None:
    assert read(value) == ("open", 0, java)


def test_chunks_fail_where_they_are_read_after_the_content_before() -> None:
    assert read(header() + chunk(R[:10]) + chunk(R[10:])[:-3]) == ("read", 10, CUT_CHUNK)
    assert read(header() + chunk(R[:10]) + struct.pack(">i", 3) + b"\xff\xff\xff") == ("read", 10, PARSING)
    assert read(header() + chunk(R[:10]) + struct.pack(">i", 0)) == ("read", 10, PARSING)
    assert read(header() + chunk(R[:10]) + header()[:10]) == (
        "read", 10, "org.xerial.snappy.SnappyIOException: [FAILED_TO_UNCOMPRESS] Insufficient header size in a "
                    "concatenated block")
    assert read(header() + chunk(R[:10]) + header(0)) == (
        "read", 10, "org.xerial.snappy.SnappyIOException: [INCOMPATIBLE_VERSION] Compressed with an incompatible "
                    "codec version 0. At least version 1 is required")
    assert read(header() + struct.pack(">i", -5)) == ("read", 0, "java.lang.NegativeArraySizeException: -5")
    # after a chunk, the reused array's native length parse gets a limit before its start
    assert read(header() + chunk(R[:10]) + struct.pack(">i", -5)) == ("read", 10, PARSING)


def test_what_the_stream_reads_on_past() -> None:
    assert read(header(0) + chunk(R)) == ("ok", len(R), "")  # the first header's versions are not checked
    assert read(header() + chunk(R) + b"\0\0\0") == ("ok", len(R), "")  # a length cut short ends it (before:
    # refused, "snappy chunk length cut short")
    assert read(header() + chunk(R[:10]) + header() + chunk(R[10:])) == ("ok", len(R), "")  # concatenated (before:
    # refused, a chunk of -2108469695 bytes)


# -- v2 batches ----------------------------------------------------------------------------------------------------

def snappy_batch(value: bytes, count: int = 3) -> bytes:
    """A client's v2 batch of ``count`` records whose records part is ``value`` as given (snappy codec)."""
    return stream_batch(value, count, SNAPPY)


BOTH_PATHS = pytest.mark.parametrize("compression_type", ["producer", "gzip"])  # kept in place, or rebuilt
PREMATURE = (INVALID_RECORD, "Incorrect declared batch size, premature EOF reached", INVALID)


@BOTH_PATHS
def test_a_failing_chunk_is_met_where_the_reader_gets_to_it(compression_type: str) -> None:
    cut = header() + chunk(R[:10]) + chunk(R[10:])[:-3]
    assert refused(snappy_batch(cut), compression_type=compression_type) == (
        UNKNOWN_SERVER_ERROR, "Failed to decompress record stream", KAFKA_EXCEPTION)  # before: the same code, with
    # "Failed to decompress record stream: snappy chunk of 16 bytes overruns the value" logged
    after = header() + chunk(R) + struct.pack(">i", 50) + b"x"
    assert refused(snappy_batch(after), compression_type=compression_type) == (
        UNKNOWN_SERVER_ERROR, "Error checking for remaining bytes after reading batch", KAFKA_EXCEPTION)
    assert refused(snappy_batch(header() + struct.pack(">i", -5) + b"xxxx"), compression_type=compression_type) == (
        UNKNOWN_SERVER_ERROR, "-5", "java.lang.NegativeArraySizeException")


@BOTH_PATHS
def test_a_malformed_record_before_the_failure_answers_first(compression_type: str) -> None:
    malformed = v2_record(0) + v2_record(1, key_length=5) + v2_record(2)
    error, _, exception = refused(snappy_batch(header() + chunk(malformed) + struct.pack(">i", 50)),
                                  compression_type=compression_type)
    assert (error, exception) == (INVALID_RECORD, INVALID)


def test_a_cut_length_or_a_concatenated_stream_is_read_on() -> None:
    assert accepted(snappy_batch(header() + chunk(R) + b"\0\0")) == 3
    assert refused(snappy_batch(header() + chunk(R) + b"\0\0", 4)) == PREMATURE
    assert accepted(snappy_batch(header() + chunk(R[:10]) + header() + chunk(R[10:]))) == 3


@BOTH_PATHS
@pytest.mark.parametrize("at, answer", [
    (L, PREMATURE),  # a record's length: its read gets -1
    (L + 1, PREMATURE),  # a record's body: readFully's first read gets -1
    (L + 3, None),  # inside a body: that read returns short, the next reads on
])
def test_a_header_of_another_magic_ends_the_read_that_starts_there(at: int, answer: tuple[int, str, str] | None,
                                                                   compression_type: str) -> None:
    value = header() + chunk(R[:at]) + OTHER_MAGIC + chunk(R[at:])
    if answer is None:
        assert accepted(snappy_batch(value), compression_type=compression_type) == 3
    else:
        assert refused(snappy_batch(value), compression_type=compression_type) == answer
    # the end the read meets comes before a failure after it
    failing = header() + chunk(R[:at]) + OTHER_MAGIC + chunk(R[at:])[:-2]
    if answer is not None:
        assert refused(snappy_batch(failing), compression_type=compression_type) == answer


def test_after_the_last_record_the_end_check_meets_the_end_whatever_follows() -> None:
    assert accepted(snappy_batch(header() + chunk(R) + OTHER_MAGIC + chunk(b"more"))) == 3
    assert accepted(snappy_batch(header() + chunk(R) + OTHER_MAGIC + struct.pack(">i", 40))) == 3
    # two at one place inside a body: the read after the first starts at the second
    assert refused(snappy_batch(header() + chunk(R[:L + 3]) + OTHER_MAGIC * 2 + chunk(R[L + 3:]))) == PREMATURE
    # ... and it comes first even when another sits where the next read starts (here the end check's, after two
    # records: taking that one instead accepted the batch)
    assert refused(snappy_batch(header() + chunk(R[:L + 3]) + OTHER_MAGIC * 2 + chunk(R[L + 3:2 * L]) + OTHER_MAGIC
                                + chunk(R[2 * L:]), 2)) == PREMATURE


# -- legacy wrappers -----------------------------------------------------------------------------------------------

def wrapper(value: bytes, magic: int = 1) -> bytes:
    timestamp = struct.pack(">q", 1_000) if magic else b""
    body = struct.pack(">bb", magic, SNAPPY) + timestamp + struct.pack(">ii", -1, len(value)) + value
    return struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body


def test_a_legacy_wrapper_fails_with_the_streams_exception() -> None:
    inner = inner_set(3)
    assert refused(wrapper(b""), 2) == (
        UNKNOWN_SERVER_ERROR, "org.xerial.snappy.SnappyIOException: [EMPTY_INPUT] Cannot decompress empty stream",
        KAFKA_EXCEPTION)
    assert refused(wrapper(header() + chunk(inner) + struct.pack(">i", 3) + b"\xff\xff\xff"), 2) == (
        UNKNOWN_SERVER_ERROR, PARSING, KAFKA_EXCEPTION)
    assert refused(wrapper(header() + struct.pack(">i", -5)), 2) == (
        UNKNOWN_SERVER_ERROR, "-5", "java.lang.NegativeArraySizeException")
    assert accepted(wrapper(header() + chunk(inner[:30]) + header() + chunk(inner[30:])), 2) == 3


def test_a_legacy_wrappers_messages_end_at_a_read_that_meets_another_magic() -> None:
    """``DataLogInputStream`` reads each message's offset and size, then its body: a read getting -1 there ends
    the messages (no error), whatever follows; one meeting it past its start reads on."""
    inner = inner_set(3)
    first = 12 + struct.unpack_from(">i", inner, 8)[0]
    for at, count in ((first, 1), (first + 12, 1), (first + 5, 3), (first + 20, 3)):
        value = header() + chunk(inner[:at]) + OTHER_MAGIC + chunk(inner[at:])
        assert accepted(wrapper(value), 2) == count
    failing = header() + chunk(inner[:first]) + OTHER_MAGIC + struct.pack(">i", 40)
    assert accepted(wrapper(failing), 2) == 1
