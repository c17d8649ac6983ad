"""Snappy and lz4 legacy (magic 0/1) wrappers (`compression`, `legacy_records`): opened as Kafka 2.8's offset
assignment opens them (snappy-java's xerial stream or a raw block; Kafka's LZ4 frame reader, with its magic-0 header
checksum quirk), each inner message taking an offset up to a partial last one (as Kafka's ``DataLogInputStream``);
a wrapper that cannot be decompressed, or inflates past the bound, is UNKNOWN_SERVER_ERROR (Kafka's
``KafkaException``), one with no complete inner message INVALID_RECORD, an inner message with a bad CRC
CORRUPT_MESSAGE, and a compressed wrapper beside another entry INVALID_RECORD."""

from __future__ import annotations

import struct
import zlib

import cramjam
import pytest
from kafka.record.memory_records import MemoryRecordsBuilder

from zkcontroller.protocol.wire import compression
from zkcontroller.protocol.wire.compression import LZ4, SNAPPY, CompressionError, decompress, xxh32
from zkcontroller.protocol.wire.log_validator import count_records
from zkcontroller.protocol.wire.record_sets import (
    CORRUPT_MESSAGE,
    INVALID_RECORD,
    UNKNOWN_SERVER_ERROR,
    RecordSetError,
)

LIMIT = 1 << 26


def inner_set(n: int, magic: int) -> bytes:
    """``n`` uncompressed legacy messages as kafka-python builds them."""
    b = MemoryRecordsBuilder(magic=magic, compression_type=0, batch_size=1 << 20)
    for i in range(n):
        b.append(timestamp=None if magic == 0 else 1_000 + i, key=b"k", value=b"value %d" % i * 20)
    b.close()
    return bytes(b.buffer())


def wrapper(value: bytes, magic: int, codec: int) -> bytes:
    """A legacy wrapper message (null key) holding ``value``, compressed with ``codec``, CRC-32 right."""
    body = struct.pack(">bb", magic, codec) + (struct.pack(">q", 1_000) if magic == 1 else b"")
    body += struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    return struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body


def xerial(data: bytes, chunk: int = 32 * 1024) -> bytes:
    """snappy-java's stream (what Kafka's Java producer and kafka-python write): marker, versions, chunks."""
    out = compression.XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    for i in range(0, len(data), chunk):
        block = bytes(cramjam.snappy.compress_raw(data[i:i + chunk]))
        out += struct.pack(">i", len(block)) + block
    return out


def lz4_frame(data: bytes, *, block_checksums: bool = False, old_kafka_checksum: bool = False) -> bytes:
    """An LZ4 frame of independent 64 KiB blocks, as Kafka's ``KafkaLZ4BlockOutputStream`` writes; with
    ``old_kafka_checksum`` the header checksum over the magic too, as Kafka's magic-0 writers had it."""
    descriptor = bytes([0x60 | (0x10 if block_checksums else 0), 0x40])
    magic = struct.pack("<I", compression.LZ4_FRAME_MAGIC)
    hc = (xxh32(magic + descriptor if old_kafka_checksum else descriptor) >> 8) & 0xFF
    out = magic + descriptor + bytes([hc])
    for i in range(0, len(data), 1 << 16):
        block = bytes(cramjam.lz4.compress_block(data[i:i + (1 << 16)], store_size=False))
        out += struct.pack("<I", len(block)) + block + (struct.pack("<I", xxh32(block)) if block_checksums else b"")
    return out + b"\0\0\0\0"


def test_xxh32_matches_the_specifications_vectors() -> None:
    assert [xxh32(b""), xxh32(b"a"), xxh32(b"abc"), xxh32(b"Nobody inspects the spammish repetition")] == [
        0x02CC5D05, 0x550D7456, 0x32D153FF, 0xE2293B2F]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("kind", ["xerial", "raw"])
def test_a_snappy_wrapper_takes_an_offset_per_inner_message(magic: int, kind: str) -> None:
    inner = inner_set(7, magic)
    value = xerial(inner, chunk=100) if kind == "xerial" else bytes(cramjam.snappy.compress_raw(inner))
    assert count_records(wrapper(value, magic, SNAPPY), 2) == 7


@pytest.mark.parametrize("magic", [0, 1])
def test_a_compressed_wrapper_beside_another_entry_is_invalid_record(magic: int) -> None:
    """Kafka's LogValidator takes exactly one batch once any is compressed (``Compressed outer record has more than
    one batch``), whichever comes first."""
    one = wrapper(xerial(inner_set(3, magic)), magic, SNAPPY)
    for refused in (one + inner_set(2, magic), inner_set(2, magic) + one, one + one):
        with pytest.raises(RecordSetError, match="more than one batch") as e:
            count_records(refused, 2)
        assert e.value.error == INVALID_RECORD and e.value.exception == "org.apache.kafka.common.InvalidRecordException"
    assert count_records(inner_set(2, magic) + inner_set(3, magic), 2) == 5  # uncompressed messages: one each


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("block_checksums", [False, True])
def test_an_lz4_wrapper_takes_an_offset_per_inner_message(magic: int, block_checksums: bool) -> None:
    inner = inner_set(5, magic)
    assert count_records(wrapper(lz4_frame(inner, block_checksums=block_checksums), magic, LZ4), 2) == 5


def test_magic_0_lz4_ignores_the_header_checksum_old_writers_got_wrong_and_magic_1_checks_it() -> None:
    old = lz4_frame(inner_set(3, 0), old_kafka_checksum=True)
    assert count_records(wrapper(old, 0, LZ4), 2) == 3
    old_at_1 = lz4_frame(inner_set(3, 1), old_kafka_checksum=True)
    with pytest.raises(RecordSetError) as e:
        count_records(wrapper(old_at_1, 1, LZ4), 2)
    assert (e.value.error, str(e.value)) == (UNKNOWN_SERVER_ERROR,
                                             "java.io.IOException: Stream frame descriptor corrupted")


def corruptions(inner: bytes) -> list[tuple[int, bytes]]:
    frame = lz4_frame(inner, block_checksums=True)
    bad_block = bytearray(frame)
    bad_block[12] ^= 0xFF
    flags = bytearray(frame)
    flags[4] = 0xA0  # frame version 2
    return [
        (SNAPPY, b"not snappy at all"),
        (SNAPPY, xerial(inner)[:-3]),  # a chunk cut short
        (SNAPPY, compression.XERIAL_MAGIC + struct.pack(">iii", 1, 1, 1 << 30)),  # a chunk overrunning the value
        (LZ4, b"\x04\x22\x4d\x18"),  # no descriptor
        (LZ4, b"\x00" * 16),  # not the frame magic
        (LZ4, bytes(flags)),
        (LZ4, bytes(bad_block)),  # the block checksum differs
        (LZ4, frame[:-4]),  # no end mark
        (LZ4, bytes(cramjam.lz4.compress(inner * 500))),  # linked blocks, which Kafka's reader cannot follow
    ]


@pytest.mark.parametrize("case", range(9))
def test_a_wrapper_that_cannot_be_decompressed_is_unknown_server_error(case: int) -> None:
    """Kafka wraps the stream's failure in a KafkaException, none of appendToLocalLog's known exceptions."""
    codec, value = corruptions(inner_set(4, 1))[case]
    with pytest.raises(RecordSetError) as e:
        count_records(wrapper(value, 1, codec), 2)
    assert e.value.error == UNKNOWN_SERVER_ERROR and e.value.exception == "org.apache.kafka.common.KafkaException"


@pytest.mark.parametrize("inner", [b"", b"not a message set at all, just bytes", bytes(11)])
def test_a_wrapper_without_a_complete_inner_message_is_invalid_record(inner: bytes) -> None:
    with pytest.raises(RecordSetError, match="no inner records") as e:
        count_records(wrapper(bytes(cramjam.snappy.compress_raw(inner)), 1, SNAPPY), 2)
    assert e.value.error == INVALID_RECORD and e.value.exception == "org.apache.kafka.common.InvalidRecordException"


@pytest.mark.parametrize("cut", [1, 5, 30])
def test_a_partial_last_inner_message_ends_the_wrapper_and_the_complete_ones_count(cut: int) -> None:
    inner = inner_set(4, 1)
    assert count_records(wrapper(xerial(inner[:-cut]), 1, SNAPPY), 2) == 3
    assert count_records(wrapper(lz4_frame(inner_set(4, 0)[:-cut]), 0, LZ4), 2) == 3


@pytest.mark.parametrize("magic", [0, 1])
def test_a_zstd_wrapper_is_invalid_record_and_a_codec_above_zstd_unknown_server_error(magic: int) -> None:
    """DeepRecordsIterator refuses zstd for magic < 2; CompressionType.forId fails on ids 5 to 7 (before the set's
    other entries are looked at, after this entry's CRC)."""
    value = bytes(cramjam.zstd.compress(inner_set(2, magic)))
    with pytest.raises(RecordSetError, match="Invalid wrapper compressionType") as e:
        count_records(wrapper(value, magic, 4), 2)
    assert e.value.error == INVALID_RECORD and e.value.exception == "org.apache.kafka.common.InvalidRecordException"
    for codec in (5, 6, 7):
        with pytest.raises(RecordSetError, match=f"Unknown compression type id: {codec}") as e:
            count_records(wrapper(value, magic, codec) + inner_set(1, magic), 2)
        assert e.value.error == UNKNOWN_SERVER_ERROR and e.value.exception == "java.lang.IllegalArgumentException"
    bad = bytearray(wrapper(value, magic, 5))
    bad[-1] ^= 1
    with pytest.raises(RecordSetError) as e:
        count_records(bytes(bad), 2)
    assert e.value.error == CORRUPT_MESSAGE


@pytest.mark.parametrize("magic", [0, 1])
def test_a_wrapper_with_a_null_value_is_invalid_record(magic: int) -> None:
    body = struct.pack(">bb", magic, SNAPPY) + (struct.pack(">q", 1_000) if magic == 1 else b"")
    body += struct.pack(">ii", -1, -1)
    null = struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body
    with pytest.raises(RecordSetError, match=f"null value \\(magic = {magic}\\)") as e:
        count_records(null, 2)
    assert e.value.error == INVALID_RECORD and e.value.exception == "org.apache.kafka.common.InvalidRecordException"


def test_an_inner_message_with_a_bad_crc_is_corrupt_message() -> None:
    """LogValidator checks the CRC of a compressed set's inner messages: CorruptRecordException."""
    inner = bytearray(inner_set(3, 1))
    inner[-1] ^= 1
    with pytest.raises(RecordSetError, match="crc") as e:
        count_records(wrapper(xerial(bytes(inner)), 1, SNAPPY), 2)
    assert e.value.error == CORRUPT_MESSAGE and e.value.exception is None


@pytest.mark.parametrize("codec", [SNAPPY, LZ4])
@pytest.mark.parametrize("announced", [13, 0, -1])
def test_an_inner_message_announcing_too_few_bytes_is_corrupt_message_in_kafkas_words(codec: int,
                                                                                       announced: int) -> None:
    """A wrapper's inner messages are read by ``DataLogInputStream``, whose message names no size ("Record size is
    less than ..."); the outer set's ``ByteBufferLogInputStream`` names it ("Record size 13 is less than ...")."""
    inner = inner_set(1, 1) + struct.pack(">qi", 1, announced) + bytes(20)
    with pytest.raises(RecordSetError) as e:
        count_records(wrapper(xerial(inner) if codec == SNAPPY else lz4_frame(inner), 1, codec), 2)
    assert (e.value.error, str(e.value), e.value.exception) == (
        CORRUPT_MESSAGE, "Record size is less than the minimum record overhead (14)", None)
    with pytest.raises(RecordSetError) as e:
        count_records(inner_set(1, 1) + struct.pack(">qi", 1, announced) + bytes(20), 2)
    assert str(e.value) == f"Record size {announced} is less than the minimum record overhead (14)"


@pytest.mark.parametrize("codec", [SNAPPY, LZ4])
def test_a_wrapper_inflating_beyond_the_bound_is_refused_before_it_is_held(codec: int) -> None:
    big = bytes(300_000)
    value = xerial(big) if codec == SNAPPY else lz4_frame(big)
    with pytest.raises(CompressionError, match="beyond"):
        decompress(codec, value, 1, 100_000)
    assert len(decompress(codec, value, 1, LIMIT)) == 300_000


def test_inner_messages_of_another_magic_are_record_errors_a_compressed_one_fails_at_once() -> None:
    """LogValidator's record errors (INVALID_RECORD, its RecordValidationException with a message) for inner
    messages of another magic, collected over the records; in record order, a bad CRC fails at once (its
    CorruptRecordException), and so does a compressed inner message (the deep iterator's InvalidRecordException:
    Kafka's Throwable branch, no record errors)."""
    nested = wrapper(bytes(cramjam.snappy.compress_raw(inner_set(2, 1))), 1, SNAPPY)
    bad_crc = bytearray(inner_set(1, 1))
    bad_crc[-1] ^= 1
    invalid = "org.apache.kafka.common.InvalidRecordException"
    for inner, error, exception in ((nested, INVALID_RECORD, invalid),
                                    (inner_set(1, 1) + inner_set(2, 0), INVALID_RECORD, None),
                                    (nested + bytes(bad_crc), INVALID_RECORD, invalid),
                                    (bytes(bad_crc) + nested, CORRUPT_MESSAGE, None),
                                    (inner_set(2, 0) + bytes(bad_crc), CORRUPT_MESSAGE, None)):
        with pytest.raises(RecordSetError) as e:
            count_records(wrapper(xerial(inner), 1, SNAPPY), 2)
        assert (e.value.error, e.value.exception) == (error, exception)
        if exception:
            assert str(e.value) == "Inner messages must not be compressed" and not e.value.record_errors
        elif error == INVALID_RECORD:
            assert str(e.value) == "One or more records have been rejected"
            assert [i for i, _ in e.value.record_errors] == [1, 2]
            assert e.value.record_errors[0][1].startswith("Record LegacyRecordBatch(offset=0, Record(magic=0, ")
            assert e.value.record_errors[0][1].endswith("'s magic does not match outer magic 1 in topic partition .")


def test_a_v1_wrapper_offset_below_its_last_inner_offset_and_not_zero_is_invalid_record() -> None:
    """DeepRecordsIterator: 0 (kafka-python, librdkafka) or at least the last inner offset (Java) is taken."""
    inner = inner_set(3, 1)  # inner offsets 0, 1, 2
    one = bytearray(wrapper(xerial(inner), 1, SNAPPY))
    for offset, refused in ((0, False), (2, False), (9, False), (1, True)):
        one[:8] = struct.pack(">q", offset)  # the offset is outside the CRC
        if not refused:
            assert count_records(bytes(one), 2) == 3
            continue
        with pytest.raises(RecordSetError, match="invalid wrapper offset") as e:
            count_records(bytes(one), 2)
        assert e.value.error == INVALID_RECORD and e.value.exception == "org.apache.kafka.common.InvalidRecordException"
    one = bytearray(wrapper(xerial(inner_set(3, 0)), 0, SNAPPY))
    one[:8] = struct.pack(">q", 1)
    assert count_records(bytes(one), 2) == 3  # magic 0 wrappers are not checked
