"""Counting a Produce request's records without keeping them (`record_sets`, `log_validator`): v2 batches by their
header's count, legacy message sets by their messages (gzip wrappers opened), and Kafka's refusals of corrupt,
truncated or mis-versioned sets, in the two stages Kafka checks them."""

from __future__ import annotations

import struct
import zlib

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder
from kafka.record.util import calc_crc32c

from zkcontroller.protocol.wire import log_validator, record_sets
from zkcontroller.protocol.wire.log_validator import count_records
from zkcontroller.protocol.wire.record_sets import (
    CORRUPT_MESSAGE,
    INVALID_RECORD,
    UNSUPPORTED_COMPRESSION_TYPE,
    RecordSetError,
    crc32c,
    inspect,
)


def built(n: int, magic: int = 2, compression: int = 0) -> bytes:
    """``n`` records as kafka-python's producer builds them."""
    b = MemoryRecordsBuilder(magic=magic, compression_type=compression, batch_size=1 << 20)
    for i in range(n):
        b.append(timestamp=None if magic == 0 else 1_000 + i, key=b"k", value=b"value %d" % i * 20)
    b.close()
    return bytes(b.buffer())


def patched(batch: bytes, offset: int, fmt: str, value: int, *, fix_crc: bool = True) -> bytes:
    """A v2 batch with one header field changed and (unless told not to) its CRC-32C recomputed."""
    out = bytearray(batch)
    struct.pack_into(fmt, out, offset, value)
    if fix_crc:
        struct.pack_into(">I", out, 17, crc32c(out[21:]))
    return bytes(out)


def refused(data: bytes, version: int = 3) -> int:
    with pytest.raises(RecordSetError) as e:
        count_records(data, version)
    return e.value.error


def test_crc32c_is_castagnoli() -> None:
    assert crc32c(b"123456789") == 0xE3069283 == calc_crc32c(b"123456789")


@pytest.mark.parametrize("compression", [0, 1])
@pytest.mark.parametrize("n", [1, 7, 300])
def test_a_v2_batch_counts_its_records(n: int, compression: int) -> None:
    assert count_records(built(n, 2, compression), 3) == n


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("compression", [0, 1])
def test_a_legacy_message_set_counts_its_messages_gzip_wrappers_opened(magic: int, compression: int) -> None:
    assert count_records(built(6, magic, compression), 2) == 6


def test_two_legacy_sets_back_to_back_count_together_before_v3_unless_one_is_compressed() -> None:
    assert count_records(built(3, 1) + built(4, 1), 2) == 7
    assert refused(built(3, 1) + built(4, 1, 1), 2) == INVALID_RECORD  # LogValidator: one batch once compressed


def test_a_set_mixing_magics_is_invalid_record_but_a_bad_crc_anywhere_comes_first() -> None:
    assert refused(built(2, 1) + built(2), 2) == INVALID_RECORD
    bad_tail = bytearray(built(2))
    bad_tail[-1] ^= 1
    assert refused(built(2, 1) + bytes(bad_tail), 2) == CORRUPT_MESSAGE


def test_a_corrupt_message_inside_a_gzip_wrapper_is_corrupt_message() -> None:
    import gzip

    inner = bytearray(built(3, 1))
    inner[-1] ^= 1
    wrapper_value = gzip.compress(bytes(inner))
    body = struct.pack(">bbq", 1, 1, 0) + struct.pack(">i", -1) + struct.pack(">i", len(wrapper_value)) + wrapper_value
    message = struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body
    assert refused(message, 2) == CORRUPT_MESSAGE
    inner[-1] ^= 1  # and intact, its 3 messages count
    wrapper_value = gzip.compress(bytes(inner))
    body = struct.pack(">bbq", 1, 1, 0) + struct.pack(">i", -1) + struct.pack(">i", len(wrapper_value)) + wrapper_value
    assert count_records(struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body, 2) == 3


def test_a_flipped_bit_is_corrupt_message_at_the_append_stage() -> None:
    batch = bytearray(built(5))
    batch[-1] ^= 1
    entries = inspect(bytes(batch), 3)  # the iterator does not look at the CRC
    assert len(entries) == 1
    with pytest.raises(RecordSetError) as e:
        log_validator.validate(bytes(batch), entries)
    assert e.value.error == CORRUPT_MESSAGE


def test_a_corrupt_legacy_message_is_corrupt_message() -> None:
    data = bytearray(built(2, 1))
    data[30] ^= 0xFF
    assert refused(bytes(data), 2) == CORRUPT_MESSAGE


def test_a_size_below_the_smallest_record_is_corrupt_message_at_once() -> None:
    data = patched(built(3), 8, ">i", 13, fix_crc=False)
    with pytest.raises(RecordSetError) as e:
        inspect(data, 3)
    assert e.value.error == CORRUPT_MESSAGE


def test_a_batch_smaller_than_a_v2_header_is_corrupt_message() -> None:
    batch = built(1)
    short = batch[:12] + batch[12:40]
    short = short[:8] + struct.pack(">i", len(short) - 12) + short[12:]
    assert refused(short) == CORRUPT_MESSAGE


def test_a_truncated_only_batch_leaves_no_batch_invalid_record() -> None:
    assert refused(built(5)[:-3]) == INVALID_RECORD
    assert refused(b"") == INVALID_RECORD


def test_a_truncated_tail_after_a_whole_batch_is_dropped_as_kafka_trims_it() -> None:
    assert count_records(built(5) + built(2)[:20], 3) == 5


def test_v3_takes_exactly_one_batch_of_magic_2() -> None:
    assert refused(built(2) + built(3)) == INVALID_RECORD
    assert refused(built(2, magic=1)) == INVALID_RECORD


@pytest.mark.parametrize("compression", [0, 1])
def test_v0_to_v2_refuse_more_than_one_v2_batch_at_the_append_compressed_or_not(compression: int) -> None:
    """LogValidator.getFirstBatchAndMaybeValidateNoMoreBatches: a first batch of magic 2 must be the only one,
    whatever the codec; a legacy set only when compressed (`test_two_legacy_sets_back_to_back_...`)."""
    data = built(2, compression=compression) + built(3)
    entries = inspect(data, 2)  # validateRecords checks nothing before v3
    assert len(entries) == 2
    with pytest.raises(RecordSetError) as e:
        log_validator.validate(data, entries, topic_partition="t-0")
    assert (e.value.error, str(e.value), e.value.exception) == (
        INVALID_RECORD, "Compressed outer record has more than one batch",
        "org.apache.kafka.common.InvalidRecordException")
    assert count_records(built(2, compression=compression), 2) == 2


@pytest.mark.parametrize("codec", [5, 6, 7])
def test_a_codec_id_above_zstd_fails_the_whole_request_from_v3_to_v6(codec: int) -> None:
    """ProduceRequest.validateRecords reads the first batch's CompressionType (forId throws an
    IllegalArgumentException, no ApiException) before v7; from v7 it does not, and the append's
    Log.analyzeAndValidateRecords fails the partition alone (UNKNOWN_SERVER_ERROR)."""
    data = patched(built(2), 21, ">h", codec)
    for version in (3, 6):
        with pytest.raises(record_sets.RequestFailed) as failed:
            inspect(data, version)
        assert (str(failed.value), failed.value.exception) == (
            f"Unknown compression type id: {codec}", "java.lang.IllegalArgumentException")
    with pytest.raises(record_sets.RequestFailed):  # the codec is read before the one-batch rule
        inspect(data + built(1), 5)
    legacy = bytearray(built(2, magic=1))
    legacy[17] = codec  # a legacy message's attributes
    with pytest.raises(RecordSetError) as refused_first:  # the magic is checked first
        inspect(bytes(legacy), 4)
    assert refused_first.value.error == INVALID_RECORD
    for version in (2, 7, 8):
        entries = inspect(data, version)
        assert refused(data, version) == record_sets.UNKNOWN_SERVER_ERROR
        assert len(entries) == 1


def test_the_appends_messages_name_the_partition_as_kafkas_do() -> None:
    """LogValidator.validateBatch's and Log.analyzeAndValidateRecords' InvalidRecordException messages end with
    the partition (the ReplicaManager logs them); "Compressed outer record has more than one batch" does not."""
    cases = {patched(built(3), 0, ">q", 5): "The baseOffset of the record batch in the append to t-0 should be 0, "
                                            "but it is 5",
             patched(built(3), 23, ">i", 1): "Inconsistent batch offset range [0, 1] and count of records 3 in topic "
                                             "partition t-0.",
             patched(patched(built(3), 43, ">q", 1000), 53, ">i", -1): "Invalid sequence number -1 in record batch "
                                                                       "with producerId 1000 in topic partition t-0.",
             built(2, 1) + built(2): "Batch magic 2 is not the same as the first batch'es magic byte 1 in topic "
                                     "partition t-0."}
    for data, message in cases.items():
        with pytest.raises(RecordSetError) as e:
            log_validator.validate(data, inspect(data, 2), topic_partition="t-0")
        assert str(e.value) == message


def test_zstd_before_v7_is_unsupported_compression_type() -> None:
    zstd = patched(built(2), 21, ">h", 4)
    assert refused(zstd, 6) == UNSUPPORTED_COMPRESSION_TYPE
    with pytest.raises(RecordSetError) as e:  # from v7 its records are read: not zstd, so not decompressed
        count_records(zstd, 7)
    assert (e.value.error, e.value.exception) == (
        record_sets.UNKNOWN_SERVER_ERROR, "org.apache.kafka.common.KafkaException")


def test_a_clients_batch_must_start_at_base_offset_0_as_in_kafka_2_8() -> None:
    """Log.analyzeAndValidateRecords refuses a client's v2 batch whose base offset is not 0 (InvalidRecordException)."""
    assert count_records(built(3), 3) == 3
    assert refused(patched(built(3), 0, ">q", 5), 3) == INVALID_RECORD


def test_a_producer_id_needs_a_base_sequence() -> None:
    with_pid = patched(built(3), 43, ">q", 1000)
    assert count_records(patched(with_pid, 53, ">i", 0), 3) == 3
    assert refused(patched(with_pid, 53, ">i", -1)) == INVALID_RECORD


def test_only_a_producer_id_above_minus_one_needs_a_base_sequence() -> None:
    """Kafka's ``hasProducerId`` is ``producerId > -1``: an id of -5 is "none", so its -1 sequence passes."""
    assert count_records(patched(patched(built(3), 43, ">q", -5), 53, ">i", -1), 3) == 3


@pytest.mark.parametrize(("offset", "fmt", "value"), [
    (23, ">i", -1),     # an empty offset range
    (57, ">i", 0),      # records count 0
    (57, ">i", -1),     # negative count
    (23, ">i", 9),      # last offset delta disagrees with the count
    (21, ">h", 0x20),   # a control batch from a client
])
def test_kafkas_batch_validation_is_invalid_record(offset: int, fmt: str, value: int) -> None:
    assert refused(patched(built(3), offset, fmt, value)) == INVALID_RECORD
