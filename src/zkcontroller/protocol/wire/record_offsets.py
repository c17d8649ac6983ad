"""The offsets of a fetched record set's records, for the messages of the exceptions Kafka 2.8's follower append
throws: ``UnexpectedAppendOffsetException`` lists the first 10 (``records.records.asScala.take(10).map(_.offset)``),
``OffsetsOutOfOrderException`` all of them (``records.records.asScala.map(_.offset)``), both reading each batch's
records, decompressing it.

Each record's offset is its batch's base offset plus the record's offset delta (`v2_records.walk_v2_records`, the
produce path's bounded walk), so a compacted batch (records removed, offsets kept) gives its real offsets, not
consecutive ones. Read on the fetch path (the wire decoder keeps a refused record set; the fetcher builds the
message from it), so the work is bounded by the bytes, never by a header's count: at most ``limit`` offsets; an
uncompressed batch gives at most one offset per 7 bytes (the smallest record); a compressed batch is inflated
only as a prefix (`compression.decompress`'s bounded readers, ``partial``), and only while offsets are still
wanted: `PREFIX_INFLATED` bytes at most over the whole call, the offsets stopping where it runs out (as under
``limit``; a prefix's records are read up to the last whole one). A record set's offsets are the
records read, no more: a batch cut short or not holding as many records as its header counts gives those read. A
batch whose records cannot be inflated at all (unreadable, an unknown codec, a first snappy block beyond the
budget) gives consecutive offsets from its base offset, at most its header's count and one per 7 of its bytes
(Kafka's reader would throw another exception there). A trailing partial batch (a leader's size limit) gives none.
"""

from __future__ import annotations

from zkcontroller.protocol.wire.compression import CompressionError, decompress
from zkcontroller.protocol.wire.record_sets import BATCH_HEADER, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD
from zkcontroller.protocol.wire.v2_records import SMALLEST_RECORD, V2Record, walk_v2_records

PREFIX_INFLATED = 1 << 20
"""The most bytes one `record_offsets` call inflates, over all its batches: about 120,000 empty records, far more
than a message lists."""


def record_offsets(data: bytes | memoryview, limit: int) -> tuple[int, ...]:
    """The offsets of the first ``limit`` records of a record set's whole v2 batches, in order (see the module)."""
    view, pos, offsets = memoryview(data), 0, list[int]()
    budget = PREFIX_INFLATED
    while len(offsets) < limit and pos + BATCH_HEADER.size <= len(view):
        header = BATCH_HEADER.unpack_from(view, pos)
        base, length, attributes, count = header[0], header[1], header[5], header[12]
        end = pos + LOG_OVERHEAD + length
        if end > len(view) or length < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD:
            break
        want = min(max(count, 0), limit - len(offsets))
        raw = view[pos + RECORD_BATCH_OVERHEAD:end]
        records: bytes | bytearray | memoryview | None = raw
        codec = attributes & 0x07
        if want and codec:
            if budget <= 0:
                break
            try:  # an unknown codec is a CompressionError too
                records = decompress(codec, bytes(raw), 2, budget, partial=True)
            except CompressionError:
                records = None
            budget -= len(records) if records is not None else 0
        if records is None:
            offsets.extend(range(base, base + min(want, len(raw) // SMALLEST_RECORD)))
        elif want:
            wanted = len(offsets) + want
            for r in walk_v2_records(records, count):
                if len(offsets) >= wanted or not isinstance(r, V2Record):  # up to a malformed one
                    break
                offsets.append(base + r.offset_delta)
        pos = end
    return tuple(offsets)
