"""`record_offsets`: the offsets Kafka's follower-append exceptions list are the records' own (base offset plus
each record's offset delta), read in compressed batches too (gzip, snappy, lz4, zstd), with the produce path's
bound on inflation; a batch that cannot be read gives its first ``recordsCount`` offsets from its base offset."""

from __future__ import annotations

import gzip
from collections.abc import Callable

import cramjam
import pytest
from crc32c import crc32c

from zkcontroller.protocol.wire import fetch_codec, record_offsets
from zkcontroller.protocol.wire.fetch_codec import OffsetsOutOfOrderError, decode_batches

CODECS: dict[str, tuple[int, Callable[[bytes], bytes]]] = {
    "none": (0, lambda raw: raw),
    "gzip": (1, gzip.compress),
    "snappy": (2, lambda raw: bytes(cramjam.snappy.compress_raw(raw))),
    "lz4": (3, lambda raw: bytes(cramjam.lz4.compress(raw))),
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


@pytest.mark.parametrize("codec", list(CODECS))
def test_the_records_own_offsets_are_read_in_any_codec(codec: str) -> None:
    """A compacted batch (offsets 10, 12, 15) listed as Kafka lists it; compressed ones used to be listed as 10, 11,
    12 (consecutive from the base offset), uncompressed ones already were right."""
    data = compacted_batch(10, [0, 2, 5], codec) + compacted_batch(16, [0, 1], codec)
    assert record_offsets.record_offsets(data) == (10, 12, 15, 16, 17)
    assert record_offsets.record_offsets(data, 4) == (10, 12, 15, 16)
    assert record_offsets.record_offsets(data, 2) == (10, 12)


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_an_out_of_order_set_lists_its_compressed_records_offsets(codec: str) -> None:
    """``OffsetsOutOfOrderException``'s message: the second batch ends at 13, before the first's 15."""
    data = compacted_batch(10, [0, 2, 5], codec) + compacted_batch(12, [0, 1], codec)
    with pytest.raises(OffsetsOutOfOrderError) as refused:
        decode_batches(data)
    assert refused.value.offsets == (10, 12, 15, 12, 13)


def test_what_cannot_be_read_falls_back_to_the_header() -> None:
    """Unreadable compression, fewer records than counted, a codec id past zstd, and a zstd batch inflating beyond
    the bound: the first ``recordsCount`` offsets from the base offset. A partial trailing batch gives none."""
    broken = bytearray(compacted_batch(10, [0, 2, 5], "gzip"))
    broken[-8:] = b"\0" * 8
    assert record_offsets.record_offsets(bytes(broken)) == (10, 11, 12)
    assert record_offsets.record_offsets(compacted_batch(10, [0, 2], "lz4", count=3)) == (10, 11, 12)
    unknown = bytearray(compacted_batch(10, [0, 2, 5]))
    unknown[22] |= 0x07
    assert record_offsets.record_offsets(bytes(unknown)) == (10, 11, 12)
    whole = compacted_batch(20, [0, 3])
    assert record_offsets.record_offsets(whole + whole[:40]) == (20, 23)


def test_zstd_inflation_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A zstd batch inflating past `record_sets.MAX_INFLATED` (set to 64 KiB here) is not read (the decoder stops
    at the bound); one within it is."""
    monkeypatch.setattr(record_offsets, "MAX_INFLATED", 64 << 10)
    many = list(range(0, 20_000, 2))  # 10,000 records, about 90 KB inflated, a few KB compressed
    assert record_offsets.record_offsets(compacted_batch(0, many, "zstd"), 3) == (0, 1, 2)
    few = list(range(0, 4_000, 2))  # about 18 KB inflated
    assert record_offsets.record_offsets(compacted_batch(0, few, "zstd"), 3) == (0, 2, 4)
