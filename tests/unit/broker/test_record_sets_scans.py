"""The record walks behind a Produce's key and timestamp checks (`log_validator`): zstd v2 batches are read as
gzip, snappy and lz4 ones are (a compacted topic refuses their keyless records, their timestamps are checked), with
the same 64 MiB bound; a legacy wrapper is decompressed once for its count and its keys; `scan_size` tells how
much a check would walk without inflating more than its limit."""

from __future__ import annotations

import struct
import tracemalloc
from collections.abc import Iterator

import cramjam
import kafka.codec
import pytest
from kafka.record.memory_records import MemoryRecordsBuilder
from tests.unit.broker.v2_batches import numbered

from zkcontroller.protocol.wire import compression, legacy_records, log_validator, record_sets, v2_records
from zkcontroller.protocol.wire.compression import CompressionError
from zkcontroller.protocol.wire.log_validator import validate
from zkcontroller.protocol.wire.record_sets import (
    INVALID_RECORD,
    INVALID_TIMESTAMP,
    RecordSetError,
    crc32c,
    inspect,
)

ZSTD = 4
NOW = 1_700_000_000_000
SMALLEST_RECORD = bytes([12, 0, 0, 0, 1, 1, 0])
"""A DefaultRecord of 7 bytes: length 6, attributes, timestamp and offset deltas 0, null key and value, no
headers."""


def _one_shot(data: bytes) -> bytes:
    """As librdkafka compresses: one frame, its content size given."""
    return bytes(cramjam.zstd.compress(data))


def _streamed(data: bytes) -> bytes:
    """As zstd-jni's ``ZstdOutputStream`` (Kafka's Java producer) writes: a frame without content size."""
    c = cramjam.zstd.Compressor()
    c.compress(data)
    return bytes(c.finish())


@pytest.fixture(params=[_one_shot, _streamed], ids=["one-shot", "streamed"])
def zstd_builder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """kafka-python's batch builder writing zstd with ``cramjam`` (its own zstd module is not installed here)."""
    monkeypatch.setattr(kafka.codec, "has_zstd", lambda: True)
    monkeypatch.setattr("kafka.record.default_records.zstd_encode", request.param)
    yield


def v2(keys: list[bytes | None], timestamps: list[int], compression_type: int) -> bytes:
    b = MemoryRecordsBuilder(magic=2, compression_type=compression_type, batch_size=1 << 20)
    for i, (key, timestamp) in enumerate(zip(keys, timestamps, strict=True)):
        b.append(timestamp=timestamp, key=key, value=b"value %d " % i * 30)
    b.close()
    return bytes(b.buffer())


def raw_batch(records: bytes, count: int, codec: int, value: bytes) -> bytes:
    """A v2 batch of ``count`` records whose (compressed) records section is ``value``."""
    head = struct.pack(">qiibIhiqqqhii", 0, 0, 0, 2, 0, codec, count - 1, NOW, NOW, -1, -1, -1, count)
    out = bytearray(head + value)
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


def refusal(data: bytes, version: int = 7, **checks: object) -> RecordSetError:
    with pytest.raises(RecordSetError) as e:
        validate(data, inspect(data, version), None, "orders-0", **checks)  # type: ignore[arg-type]
    return e.value


def test_a_zstd_batch_is_really_zstd(zstd_builder: None) -> None:
    data = v2([b"k"] * 3, [NOW] * 3, ZSTD)
    assert data[22] & 0x07 == ZSTD and data[61:65] == b"\x28\xb5\x2f\xfd"  # the zstd frame magic


def test_a_compacted_topic_refuses_a_zstd_batchs_keyless_records(zstd_builder: None) -> None:
    data = v2([b"k0", None, b"k2", None], [NOW] * 4, ZSTD)
    e = refusal(data, compacted=True)
    assert (e.error, str(e)) == (INVALID_RECORD, "One or more records have been rejected")
    assert [i for i, _ in e.record_errors] == [1, 3]
    assert validate(v2([b"a", b"b"], [NOW] * 2, ZSTD), inspect(v2([b"a", b"b"], [NOW] * 2, ZSTD), 7),
                    compacted=True) == 2


def test_a_zstd_batchs_timestamps_are_checked(zstd_builder: None) -> None:
    data = v2([b"k"] * 3, [NOW, NOW - 5_000, NOW + 1_000], ZSTD)
    e = refusal(data, now_ms=NOW, timestamp_difference_max_ms=1_000)
    assert e.error == INVALID_TIMESTAMP and [i for i, _ in e.record_errors] == [1]
    assert e.record_errors[0][1].startswith(f"Timestamp {NOW - 5_000} of message with offset 1 is out of range.")


def test_a_zstd_bomb_beyond_the_guard_is_refused_where_it_would_be_walked() -> None:
    """64 MiB and 7 bytes of records in about 6 KB: never inflated whole. A compacted topic (or one whose
    timestamps are checked) refuses it as Kafka refuses a batch it cannot decompress (KafkaException, so
    UNKNOWN_SERVER_ERROR): a deliberate deviation, Kafka would walk it all. Before, it was accepted unchecked."""
    n = record_sets.MAX_INFLATED // len(SMALLEST_RECORD) + 1
    bomb = _streamed(SMALLEST_RECORD * n)
    assert len(bomb) < 16_384
    with pytest.raises(compression.InflationLimitExceeded):
        compression.decompress(ZSTD, bomb, 2, record_sets.MAX_INFLATED)
    data = raw_batch(b"", n, ZSTD, bomb)
    for checks in ({"compacted": True}, {"now_ms": NOW, "timestamp_difference_max_ms": 1_000}):
        e = refusal(data, **checks)
        assert (e.error, e.exception) == (record_sets.UNKNOWN_SERVER_ERROR, "org.apache.kafka.common.KafkaException")
        assert str(e).startswith("Failed to decompress record stream: ") and "beyond 67108864 bytes" in str(e)
    with pytest.raises(record_sets.RecordSetError):  # every batch's records are read, as LogValidator reads them
        validate(data, inspect(data, 7))


def test_an_unreadable_compressed_batch_is_refused_where_it_would_be_walked() -> None:
    data = raw_batch(b"", 3, ZSTD, b"\x28\xb5\x2f\xfd garbage")
    e = refusal(data, compacted=True)
    assert (e.error, e.exception) == (record_sets.UNKNOWN_SERVER_ERROR, "org.apache.kafka.common.KafkaException")
    assert str(e) == "Failed to decompress record stream"  # Kafka's text: zstd-jni's is its cause, not logged


def test_a_zstd_buffer_full_is_told_from_other_failures_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only cramjam's exact "buffer full" message grows the buffer; any other failure naming it is unreadable."""
    def failing(_value: object, _out: object) -> int:
        raise cramjam.DecompressionError("frame failed to write whole buffer of the dictionary")
    monkeypatch.setattr(cramjam.zstd, "decompress_into", failing)
    with pytest.raises(CompressionError) as e:
        compression.decompress(ZSTD, b"x", 2, 1 << 20)
    assert not isinstance(e.value, compression.InflationLimitExceeded)


def test_zstd_hands_back_its_own_buffer() -> None:
    """No copy of the inflated records (up to 64 MiB): the bytearray inflated into is the answer."""
    assert type(compression.decompress(ZSTD, _streamed(b"abc" * 10), 2, 100)) is bytearray


def test_zstd_reads_concatenated_frames_and_refuses_garbage() -> None:
    value = _one_shot(b"abc") + _streamed(b"def")
    assert compression.decompress(ZSTD, value, 2, 100) == b"abcdef"
    with pytest.raises(compression.InflationLimitExceeded):
        compression.decompress(ZSTD, value, 2, 5)
    with pytest.raises(CompressionError):
        compression.decompress(ZSTD, b"\x28\xb5\x2f\xfd garbage", 2, 100)


@pytest.mark.parametrize("magic", [0, 1])
def test_a_legacy_wrapper_is_decompressed_once_for_its_count_and_its_keys(magic: int,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    b = MemoryRecordsBuilder(magic=magic, compression_type=1, batch_size=1 << 20)  # gzip: kafka-python's own
    for i in range(5):
        b.append(timestamp=NOW if magic else None, key=None if i == 2 else b"k", value=b"value %d " % i * 30)
    b.close()
    data = bytes(b.buffer())
    calls: list[int] = []
    original = compression.decompress

    def counted(*args: object) -> bytes:
        calls.append(1)
        return original(*args)  # type: ignore[arg-type]
    for module in (log_validator, v2_records, legacy_records):  # every caller of decompress
        monkeypatch.setattr(module, "decompress", counted)
    e = refusal(data, 2, compacted=True)  # Produce v2: the last to take legacy sets
    assert (e.error, [i for i, _ in e.record_errors]) == (INVALID_RECORD, [2])
    assert len(calls) == 1


def test_scan_size_inflates_no_further_than_its_limit() -> None:
    n = 1_000_000
    bomb = raw_batch(b"", n, ZSTD, _streamed(SMALLEST_RECORD * n))  # 7 MB of records
    inflated: dict[int, bytes] = {}
    assert log_validator.scan_size(bomb, inspect(bomb, 7), 4096, inflated, compacted=True, create_time=True,
                     timestamp_difference_max_ms=record_sets.LONG_MAX) == 4097
    assert inflated == {}
    small = raw_batch(b"", 10, ZSTD, _one_shot(SMALLEST_RECORD * 10))
    assert log_validator.scan_size(small, inspect(small, 7), 4096, inflated, compacted=True, create_time=True,
                     timestamp_difference_max_ms=record_sets.LONG_MAX) == 70
    assert inflated == {0: SMALLEST_RECORD * 10}  # kept for validate, which does not inflate it again
    assert log_validator.scan_size(small, inspect(small, 7), 4096, {}, compacted=False, create_time=True,
                     timestamp_difference_max_ms=record_sets.LONG_MAX) == 70  # walked all the same (structure)


def test_scan_size_counts_a_legacy_sets_messages() -> None:
    b = MemoryRecordsBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    for i in range(100):
        b.append(timestamp=NOW, key=b"k", value=b"value %d" % i)
    b.close()
    data = bytes(b.buffer())
    entries = inspect(data, 2)
    assert log_validator.scan_size(data, entries, 1 << 20, {}, compacted=False, create_time=True,
                                   timestamp_difference_max_ms=record_sets.LONG_MAX) == len(data)
    assert log_validator.scan_size(data, entries, 100, {}, compacted=False, create_time=True,
                                   timestamp_difference_max_ms=record_sets.LONG_MAX) <= 100 + len(data) // 100 + 1


def test_the_walk_keeps_only_the_refused_records() -> None:
    """A bomb of good records is walked without holding a tuple per record (about 90 bytes each: 0.9 GB for the
    64 MiB bomb): the peak stays near the inflated bytes."""
    n = 100_000
    keyed = bytes([12, 0, 0, 0, 0, 1, 0])  # an empty key: not null
    data = raw_batch(b"", n, ZSTD, _streamed(numbered(keyed, n)))  # offset deltas in order: kept in place
    entries = inspect(data, 7)
    tracemalloc.start()
    try:
        assert validate(data, entries, compacted=True, now_ms=NOW, timestamp_difference_max_ms=1_000) == n
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(keyed) * n  # 0.7 MB inflated; a list of the records alone is about 9 MB
