"""The offsets of a fetched record set's records, for the messages of the exceptions Kafka 2.8's follower append
throws: ``OffsetsOutOfOrderException`` lists every record's offset, ``UnexpectedAppendOffsetException`` the first
10 (``records.records.asScala.map(_.offset)``, which reads each batch's records, decompressing it).

Each record's offset is its batch's base offset plus the record's offset delta, so a compacted batch (records
removed, offsets kept) gives its real offsets, not consecutive ones. A compressed batch is decompressed with the
bounds the produce path uses (`record_sets.MAX_INFLATED` bytes at most): gzip, snappy and lz4 by
`compression.decompress`; zstd, which that module does not read, by ``cramjam``'s streaming decoder into a buffer of
bounded size (it stops when the buffer is full rather than inflate further), grown from 4x the compressed size up to
the bound. A batch whose records cannot be read (cut short, unreadable compression, inflating beyond the bound, or
not as many records as its header counts) gives the first ``recordsCount`` offsets from its base offset, as before;
a trailing partial batch (a leader's size limit) gives none. For error messages only: nothing here is on the fetch
path.
"""

from __future__ import annotations

import struct

import cramjam

from zkcontroller.protocol.wire.compression import GZIP, LZ4, SNAPPY, CompressionError, decompress
from zkcontroller.protocol.wire.record_sets import MAX_INFLATED, RECORD_BATCH_OVERHEAD, ZSTD

_BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")
"""baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta, firstTimestamp,
maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount (61 bytes)."""
_MIN_RECORD_BODY = 6
"""attributes, timestampDelta, offsetDelta, key length, value length, header count: one byte each at least."""


def _zigzag(view: bytes | memoryview, pos: int) -> tuple[int, int]:
    """A zig-zag varint at ``pos``: its value and the position after it. IndexError past the end."""
    value = shift = 0
    while True:
        byte = view[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7


def _unzstd(value: bytes, limit: int) -> bytes:
    """A zstd frame inflated to at most ``limit`` bytes; `CompressionError` beyond, or if unreadable."""
    size = min(limit, max(4 * len(value), 1 << 16))
    while True:
        out = bytearray(size)
        try:
            written = cramjam.zstd.decompress_into(value, out)
        except cramjam.DecompressionError as e:
            if size >= limit or "whole buffer" not in str(e):
                raise CompressionError(f"zstd: {e}") from None
            size = min(limit, 4 * size)
            continue
        return bytes(out[:written])


def _records(batch: memoryview, codec: int) -> bytes | memoryview | None:
    """The records part of a v2 batch, decompressed; None when it cannot be read."""
    records = batch[RECORD_BATCH_OVERHEAD:]
    if codec == 0:
        return records
    try:
        if codec in (GZIP, SNAPPY, LZ4):
            return decompress(codec, bytes(records), 2, MAX_INFLATED)
        if codec == ZSTD:
            return _unzstd(bytes(records), MAX_INFLATED)
    except CompressionError:
        return None
    return None


def _batch_offsets(base: int, count: int, records: bytes | memoryview, limit: int) -> list[int] | None:
    """The offsets of a batch's first ``limit`` records (of ``count``), read from their offset deltas; None when
    they cannot be (cut short, or a record whose length cannot be one)."""
    found: list[int] = []
    at, size = 0, len(records)
    try:
        for _ in range(min(count, limit)):
            length, body = _zigzag(records, at)
            if length < _MIN_RECORD_BODY or body + length > size:
                return None
            _timestamp_delta, after = _zigzag(records, body + 1)  # after the record's attributes byte
            delta, _ = _zigzag(records, after)
            found.append(base + delta)
            at = body + length
    except IndexError:
        return None
    return found


def record_offsets(data: bytes | memoryview, limit: int | None = None) -> tuple[int, ...]:
    """The offsets of the records of a record set's whole v2 batches, in order (at most ``limit`` of them, the
    batches after those not read)."""
    view, pos, offsets = memoryview(data), 0, []
    wanted = limit if limit is not None else 1 << 62
    while pos + _BATCH_HEADER.size <= len(view) and len(offsets) < wanted:
        (base, length, _epoch, _magic, _crc, attributes, _last_delta, _first_ts, _max_ts, _pid, _producer_epoch,
         _seq, count) = _BATCH_HEADER.unpack_from(view, pos)
        end = pos + 12 + length
        if end > len(view) or length < _BATCH_HEADER.size - 12:
            break
        count = max(count, 0)
        want = min(count, wanted - len(offsets))
        records = _records(view[pos:end], attributes & 0x07) if want else None
        found = _batch_offsets(base, count, records, want) if records is not None else None
        offsets.extend(found if found is not None else range(base, base + want))
        pos = end
    return tuple(offsets)
