"""The first and max record timestamps `record_sets.validate` reports for the time index: the batch header's for v2
(any codec), a legacy set's messages' (a wrapper's inner ones) as LogValidator's conversion to one v2 batch carries
them, none (-1) for magic 0, and nothing for a set it refuses."""

from __future__ import annotations

import struct
import zlib

import cramjam
import pytest
from kafka.record.memory_records import MemoryRecordsBuilder

from zkcontroller.protocol.wire.compression import GZIP, ZSTD
from zkcontroller.protocol.wire.record_sets import RECORD_BATCH_OVERHEAD, RecordSetError, crc32c, inspect, validate


def built(timestamps: list[int | None], magic: int, compression: int = 0) -> bytes:
    """One message or record per timestamp, as kafka-python's producer builds them (zstd: its uncompressed v2
    batch's records compressed here, as kafka-python has no zstd library in this environment)."""
    b = MemoryRecordsBuilder(magic=magic, compression_type=0 if compression == ZSTD else compression,
                             batch_size=1 << 20)
    for ts in timestamps:
        b.append(timestamp=ts, key=b"k", value=b"v" * 30)
    b.close()
    data = bytes(b.buffer())
    if compression != ZSTD:
        return data
    out = bytearray(data[:RECORD_BATCH_OVERHEAD] + bytes(cramjam.zstd.compress(data[RECORD_BATCH_OVERHEAD:])))
    out[22] |= ZSTD
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


def timestamps_of(data: bytes, version: int = 2, **checks: object) -> list[int]:
    found: list[int] = []
    validate(data, inspect(data, version), timestamps=found, **checks)  # type: ignore[arg-type]
    return found


@pytest.mark.parametrize("compression", [0, GZIP])
def test_a_magic_1_set_gives_its_first_and_largest_messages_timestamps(compression: int) -> None:
    assert timestamps_of(built([1_000, 3_000, 2_000, -1], 1, compression)) == [1_000, 3_000]


@pytest.mark.parametrize("compression", [0, GZIP])
def test_magic_0_has_no_timestamps(compression: int) -> None:
    assert timestamps_of(built([None, None], 0, compression)) == [-1, -1]


def test_a_first_message_without_timestamp_is_the_first_timestamp() -> None:
    """The converted batch's ``firstTimestamp`` is its first record's, -1 included."""
    assert timestamps_of(built([-1, 2_000], 1)) == [-1, 2_000]


def test_a_v1_wrapper_marked_log_append_time_gives_its_own_timestamp_to_every_inner_message() -> None:
    """Kafka's deep iterator reads a LogAppendTime v1 wrapper's inner messages at the wrapper's timestamp."""
    wrapper = bytearray(built([1_000, 3_000], 1, GZIP))
    wrapper[17] |= 0x08
    struct.pack_into(">q", wrapper, 18, 9_999)
    struct.pack_into(">I", wrapper, 12, zlib.crc32(wrapper[16:]))
    assert timestamps_of(bytes(wrapper)) == [9_999, 9_999]


@pytest.mark.parametrize("compression", [0, GZIP, ZSTD])
def test_a_v2_batch_gives_its_headers_timestamps(compression: int) -> None:
    data = built([5_000, 1_000, 7_000], 2, compression)
    assert (data[22] & 0x07, timestamps_of(data, 7)) == (compression, [5_000, 7_000])
    assert timestamps_of(data, 7, compacted=True) == [5_000, 7_000]  # the same when its records are walked


def test_a_refused_set_reports_nothing() -> None:
    data = bytearray(built([1_000, 2_000], 1, GZIP))
    data[-1] ^= 0xFF  # the wrapper's CRC no longer matches
    found: list[int] = []
    with pytest.raises(RecordSetError):
        validate(bytes(data), inspect(bytes(data), 2), timestamps=found)
    assert found == []
