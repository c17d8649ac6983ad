"""`record_offsets`: the offsets Kafka's follower-append exceptions list are the records' own (base offset plus
each record's offset delta), read in compressed batches too (gzip, snappy, lz4, zstd), by the produce path's
bounded walk; the work is bounded by the bytes (never by a header's count) and the inflation by a small prefix; an
out-of-order record set's offsets are read only for its message, and at most `OUT_OF_ORDER_LISTED` of them."""

from __future__ import annotations

import copy
import dataclasses
import gzip
import pickle
from collections.abc import Callable

import cramjam
import pytest
from crc32c import crc32c
from tests.unit.broker.test_compression_empty_blocks import lz4_frame

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.wire import fetch_codec, record_offsets, v2_records
from zkcontroller.protocol.wire.fetch_codec import (
    OUT_OF_ORDER_LISTED,
    FetchedRecordsResult,
    OffsetsOutOfOrderError,
    OffsetsOutOfOrderResult,
    decode_batches,
    out_of_order_offsets,
)

CODECS: dict[str, tuple[int, Callable[[bytes], bytes]]] = {
    "none": (0, lambda raw: raw),
    "gzip": (1, gzip.compress),
    "snappy": (2, lambda raw: bytes(cramjam.snappy.compress_raw(raw))),
    "lz4": (3, lambda raw: lz4_frame([raw], block_checksums=False)),  # independent blocks, as Kafka's writer
    # (cramjam's frame links them, which Kafka's reader refuses)
    "zstd": (4, lambda raw: bytes(cramjam.zstd.compress(raw))),
}


def compacted_batch(base: int, deltas: list[int], codec: str = "none", count: int | None = None) -> bytes:
    """A v2 batch of empty records at ``deltas`` from ``base`` (a compacted batch when they skip some), its
    records compressed with ``codec``, with a valid CRC."""
    attributes, compress = CODECS[codec]
    records = compress(b"".join(fetch_codec._record(d) for d in deltas))
    header = fetch_codec._BATCH_HEADER.pack(base, fetch_codec._AFTER_LENGTH + len(records), -1, 2, 0, attributes,
                                            deltas[-1], -1, -1, -1, -1, -1, len(deltas) if count is None else count)
    batch = bytearray(header + records)
    fetch_codec._CRC.pack_into(batch, fetch_codec._CRC_AT, crc32c(memoryview(batch)[fetch_codec._CRC_FROM:]))
    return bytes(batch)


def raw_batch(base: int, last_delta: int, count: int, attributes: int, records: bytes) -> bytes:
    """A v2 batch with any header count and any ``records`` bytes (compressed already when ``attributes`` say so),
    with a valid CRC: what a crafted response may carry."""
    header = fetch_codec._BATCH_HEADER.pack(base, fetch_codec._AFTER_LENGTH + len(records), -1, 2, 0, attributes,
                                            last_delta, -1, -1, -1, -1, -1, count)
    batch = bytearray(header + records)
    fetch_codec._CRC.pack_into(batch, fetch_codec._CRC_AT, crc32c(memoryview(batch)[fetch_codec._CRC_FROM:]))
    return bytes(batch)


@pytest.mark.parametrize("codec", list(CODECS))
def test_the_records_own_offsets_are_read_in_any_codec(codec: str) -> None:
    """A compacted batch (offsets 10, 12, 15) listed as Kafka lists it; compressed ones used to be listed as 10, 11,
    12 (consecutive from the base offset), uncompressed ones already were right."""
    data = compacted_batch(10, [0, 2, 5], codec) + compacted_batch(16, [0, 1], codec)
    assert record_offsets.record_offsets(data, 100) == (10, 12, 15, 16, 17)
    assert record_offsets.record_offsets(data, 4) == (10, 12, 15, 16)
    assert record_offsets.record_offsets(data, 2) == (10, 12)


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_an_out_of_order_set_lists_its_compressed_records_offsets(codec: str) -> None:
    """``OffsetsOutOfOrderException``'s message: the second batch ends at 13, before the first's 15."""
    data = compacted_batch(10, [0, 2, 5], codec) + compacted_batch(12, [0, 1], codec)
    with pytest.raises(OffsetsOutOfOrderError) as refused:
        decode_batches(data)
    assert refused.value.offsets == (10, 12, 15, 12, 13)
    assert str(refused.value) == "Out of order offsets: List(10, 12, 15, 12, 13)"


def test_what_cannot_be_read() -> None:
    """Unreadable compression and a codec id past zstd give consecutive offsets from the base offset (at most the
    header's count); fewer records than counted give those read, not made-up ones; a partial trailing batch none."""
    broken = bytearray(compacted_batch(10, [0, 2, 5], "gzip"))
    broken[-8:] = b"\0" * 8
    assert record_offsets.record_offsets(bytes(broken), 100) == (10, 11, 12)
    assert record_offsets.record_offsets(compacted_batch(10, [0, 2], "lz4", count=3), 100) == (10, 12)
    unknown = bytearray(compacted_batch(10, [0, 2, 5]))
    unknown[22] |= 0x07
    assert record_offsets.record_offsets(bytes(unknown), 100) == (10, 11, 12)
    whole = compacted_batch(20, [0, 3])
    assert record_offsets.record_offsets(whole + whole[:40], 100) == (20, 23)


def test_zstd_is_read_as_far_as_the_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    """A zstd batch inflating past `record_offsets.PREFIX_INFLATED` (set to 64 KiB here) gives the offsets of the
    records in its first 64 KiB (it used to give consecutive ones past a bound); one within it is read whole."""
    monkeypatch.setattr(record_offsets, "PREFIX_INFLATED", 64 << 10)
    many = list(range(0, 20_000, 2))  # 10,000 records, about 90 KB inflated, a few KB compressed
    listed = record_offsets.record_offsets(compacted_batch(0, many, "zstd"), 20_000)
    assert 0 < len(listed) < 10_000 and listed == tuple(many[:len(listed)])
    few = list(range(0, 4_000, 2))  # about 18 KB inflated
    assert record_offsets.record_offsets(compacted_batch(0, few, "zstd"), 3) == (0, 2, 4)


# the review's denial-of-service findings: each test fails on the code before the fix, allocating little


def test_a_header_count_makes_no_offsets() -> None:
    """A 122-byte out-of-order response whose first batch counts 200,000 records (2**31-1 killed the follower):
    the offsets listed are those the bytes hold (none: one byte of records), never the header's count."""
    data = raw_batch(100, 199_999, 200_000, 0, b"\xff") + raw_batch(0, 0, 1, 0, b"")
    with pytest.raises(OffsetsOutOfOrderError) as refused:
        decode_batches(data)
    assert len(refused.value.offsets) <= len(data) // 7
    assert record_offsets.record_offsets(data, 1 << 40) == ()


def test_decoding_an_out_of_order_set_reads_no_offsets(monkeypatch: pytest.MonkeyPatch) -> None:
    """The wire decoder only refuses the set: its offsets are read when the fetcher builds the message."""
    def unexpected(*_args: object) -> tuple[int, ...]:
        raise AssertionError("offsets read on the decode path")

    data = compacted_batch(10, [0, 2, 5]) + compacted_batch(12, [0, 1])
    monkeypatch.setattr(fetch_codec, "record_offsets", unexpected)
    result = fetch_codec._partition_result("t", {"partition": 0, "error_code": 0, "high_watermark": 20,
                                                 "record_set": data})
    assert isinstance(result, OffsetsOutOfOrderResult) and result.record_set == data


def test_the_out_of_order_list_is_capped() -> None:
    """Kafka lists every offset; ours stops after `OUT_OF_ORDER_LISTED`, saying so."""
    data = compacted_batch(10, list(range(OUT_OF_ORDER_LISTED + 500))) + compacted_batch(0, [0])
    listed = out_of_order_offsets(data)
    assert listed.startswith("List(10, 11, ") and listed.endswith(f", {OUT_OF_ORDER_LISTED + 9}, ...)")
    assert listed.count(",") == OUT_OF_ORDER_LISTED
    assert out_of_order_offsets(compacted_batch(10, [0, 2]) + compacted_batch(0, [0])) == "List(10, 12, 0)"


def test_each_varint_is_read_by_the_bounded_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of 0xFF bytes (36 bytes of zstd cost 7 s, quadratically, as one ever-growing varint): the records
    are walked by `v2_records`' varint reader, which reads no more than 11 bytes a varint."""
    consumed: list[int] = []
    bounded = v2_records._varint

    def counting(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
        value, after = bounded(buf, pos)
        consumed.append(after - pos)
        return value, after

    monkeypatch.setattr(v2_records, "_varint", counting)
    for codec, records in ((0, b"\xff" * 4096), (4, bytes(cramjam.zstd.compress(b"\xff" * (64 << 10))))):
        assert record_offsets.record_offsets(raw_batch(100, 0, 1, codec, records), 10) == ()
    assert consumed and max(consumed) <= 11


def test_inflation_is_a_small_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    """A zstd batch of 8 MiB of records (each may inflate to 64 MiB, read 3 times over, at 6 buffer sizes): the
    first 10 offsets inflate no more than `PREFIX_INFLATED` bytes, in buffers of at most about twice that in all."""
    buffers: list[int] = []
    decompress_into = cramjam.zstd.decompress_into

    def measured(value: bytes, out: bytearray) -> int:
        buffers.append(len(out))
        return int(decompress_into(value, out))

    records = b"".join(fetch_codec._record(d) for d in range(1024)) * 1024  # 1M records, ~8 MiB
    data = raw_batch(0, 1023, 1 << 20, 4, bytes(cramjam.zstd.compress(records)))
    monkeypatch.setattr(cramjam.zstd, "decompress_into", measured)
    assert record_offsets.record_offsets(data, 10) == tuple(range(10))
    assert max(buffers) <= record_offsets.PREFIX_INFLATED + 1
    assert sum(buffers) <= 2 * record_offsets.PREFIX_INFLATED + len(buffers)


def test_inflation_is_bounded_over_all_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """An out-of-order set of 5 gzip batches of ~400 KB inflated each: no more than `PREFIX_INFLATED` bytes are
    inflated for its message, over all of them (each used to be inflated whole, up to 64 MiB)."""
    inflated: list[int] = []
    bounded = record_offsets.decompress

    def measured(codec: int, value: bytes, magic: int, limit: int, **kwargs: bool) -> bytes:
        out = bounded(codec, value, magic, limit, **kwargs)
        inflated.append(len(out))
        return out

    one = compacted_batch(0, list(range(50_000)), "gzip")
    data = b"".join(raw_batch(i * 50_000, 49_999, 50_000, 1, one[61:]) for i in (1, 2, 3, 4, 0))
    monkeypatch.setattr(record_offsets, "decompress", measured)
    listed = record_offsets.record_offsets(data, 1 << 30)
    assert sum(inflated) <= record_offsets.PREFIX_INFLATED
    assert listed[:3] == (50_000, 50_001, 50_002) and len(listed) <= sum(inflated) // 7


@pytest.mark.parametrize("make", [FetchedRecordsResult, OffsetsOutOfOrderResult])
def test_the_record_set_survives_copies(make: type) -> None:
    """``dataclasses.replace``, `copy` and `pickle` keep the record set (it was lost: the slot was not a field)."""
    result = make(TopicPartition("t", 0), Errors.NONE, 20, record_set=b"abc")
    for other in (dataclasses.replace(result, high_watermark=21), copy.copy(result), copy.deepcopy(result),
                  pickle.loads(pickle.dumps(result))):
        assert type(other) is make and other.record_set == b"abc"
