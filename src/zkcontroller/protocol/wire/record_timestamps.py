"""The records of an accepted v2 batch that ListOffsets by timestamp can name: each whose timestamp is above every
earlier one in the log (a strict running maximum), with its offset delta.

Kafka answers a search for target ``t`` with the first record in the log whose timestamp reaches ``t``
(``LogSegment.findOffsetByTimestamp``: its sparse index only picks where the scan of the batches starts, and every
record before that point is below the target, so the answer does not depend on the index). That record is always a
new running maximum (every record before it is below ``t``), and each running maximum is that answer for the targets
between the one before it and itself: so these records, and no fewer, answer every target as Kafka does without the
log. A producer's batch whose records all carry one timestamp has one; records whose timestamps increase have one
per distinct timestamp.

Read only for a batch whose first record is below its max (else the first is its only candidate), after
`log_validator.validate` accepted it, so the records are well formed: each record's length, attributes byte and
timestamp delta are read and the rest skipped by its length. A record's offset is its index in the batch (an
in-place batch's deltas are checked to be so, a rebuilt one is renumbered so: `v2_records.v2_well_formed`'s
``in_order``; an uncompressed batch's deltas are not checked, and Kafka would name base + a crafted delta there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zkcontroller.protocol.wire.compression import decompress
from zkcontroller.protocol.wire.record_sets import LONG_MAX, LONG_MIN, MAX_INFLATED, RECORD_BATCH_OVERHEAD, java_long


def _varint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """A zig-zag varint or varlong of a well-formed record; its value and where the next field starts."""
    raw, shift = 0, 0
    while True:
        b = buf[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7


def running_maxima(batch: bytes | bytearray | memoryview, above: int,
                   inflated: bytes | bytearray | None = None) -> list[tuple[int, int]]:
    """(offset delta, timestamp) of each record of the v2 ``batch`` (a whole entry, offset and size fields included)
    whose timestamp is above ``above`` (the index's largest so far, -1 for none: a negative timestamp is never named)
    and every earlier record's, in order. ``inflated``: its records already decompressed, if they were."""
    view = memoryview(batch)
    base_timestamp = int.from_bytes(view[27:35], "big", signed=True)
    count = int.from_bytes(view[57:61], "big", signed=True)
    records: bytes | bytearray
    if inflated is not None:
        records = inflated
    elif view[22] & 0x07:
        records = decompress(view[22] & 0x07, bytes(view[RECORD_BATCH_OVERHEAD:]), 2, MAX_INFLATED)
    else:
        records = bytes(view[RECORD_BATCH_OVERHEAD:])  # indexed faster than the view
    points: list[tuple[int, int]] = []
    top = above
    pos = 0
    for index in range(count):
        b = records[pos]
        if b < 0x80:  # a record of at most 63 bytes
            length, pos = (b >> 1) ^ -(b & 1), pos + 1
        elif (c := records[pos + 1]) < 0x80:  # up to 8191 bytes
            raw = (b & 0x7F) | c << 7
            length, pos = (raw >> 1) ^ -(raw & 1), pos + 2
        else:
            length, pos = _varint(records, pos)
        b = records[pos + 1]  # past the attributes
        timestamp = base_timestamp + ((b >> 1) ^ -(b & 1) if b < 0x80 else _varint(records, pos + 1)[0])
        if not LONG_MIN <= timestamp <= LONG_MAX:  # as Java's long sum, wrapped
            timestamp = java_long(timestamp)
        if timestamp > top:
            top = timestamp
            points.append((index, timestamp))
        pos += length
    return points


def legacy_running_maxima(data: bytes | bytearray | memoryview, starts: Sequence[tuple[int, int]], above: int,
                          inflated: Mapping[int, bytes | bytearray] | None = None) -> list[tuple[int, int]]:
    """`running_maxima` of an accepted legacy (magic 0/1) set, which Kafka 2.8 converts to one v2 batch of its
    messages in order, a wrapper's inner ones in its place, each at the next offset: (offset delta, timestamp) of
    each message above ``above`` and every earlier one. ``starts``: each entry's start and magic
    (`record_sets.Entry`); ``inflated``: wrappers' inner sets already decompressed, by entry start. Magic 0 carries
    no timestamp (-1: never named)."""
    view = memoryview(data)
    points: list[tuple[int, int]] = []
    top = above
    index = 0
    for start, magic in starts:
        codec = view[start + 17] & 0x07
        if not codec:
            stamps = [int.from_bytes(view[start + 18:start + 26], "big", signed=True) if magic == 1 else -1]
        else:
            inner = inflated.get(start) if inflated is not None else None
            if inner is None:
                inner = decompress(codec, _legacy_value(view[start:], magic), magic, MAX_INFLATED)
            stamps = _inner_timestamps(memoryview(inner))
        for timestamp in stamps:
            if timestamp > top:
                top = timestamp
                points.append((index, timestamp))
            index += 1
    return points


def _legacy_value(message: memoryview, magic: int) -> bytes:
    """A validated legacy wrapper's value (its key skipped)."""
    pos = 18 + (8 if magic == 1 else 0)
    key = int.from_bytes(message[pos:pos + 4], "big", signed=True)
    pos += 4 + max(key, 0)
    size = int.from_bytes(message[pos:pos + 4], "big", signed=True)
    return bytes(message[pos + 4:pos + 4 + size])


def _inner_timestamps(inner: memoryview) -> list[int]:
    """Each whole inner message's timestamp, -1 for magic 0 (a partial last message is not one, as Kafka's
    ``DataLogInputStream`` stops there)."""
    stamps = []
    pos = 0
    while pos + 12 <= len(inner):
        end = pos + 12 + int.from_bytes(inner[pos + 8:pos + 12], "big", signed=True)
        if end > len(inner) or end < pos + 26:
            break
        stamps.append(int.from_bytes(inner[pos + 18:pos + 26], "big", signed=True) if inner[pos + 16] == 1 else -1)
        pos = end
    return stamps
