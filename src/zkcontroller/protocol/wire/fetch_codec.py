"""Fetch (api key 1) between brokers on the wire, for the offsets-only data plane.

A follower's fetch names, per partition, its current leader epoch and its log end offset; the leader answers
with an error, its high watermark, and the records the follower appends. Our logs hold offsets, not payloads,
so those travel as v2 record batches of empty records — null key, null value, no headers, 7–9 bytes each — which
tshark's Kafka dissector reads as such: one batch per idempotent producer's batch in the range, with its header's
producerId, producerEpoch, baseSequence and maxTimestamp (what the follower's producer state is built from), and
one plain batch (producerId -1) for each stretch between them, cut where a leader epoch begins; each batch's
``partitionLeaderEpoch`` is the leader epoch of its records, which the follower puts in its epoch cache. The
first batch's ``baseOffset`` is the fetch offset, the rest follow on without a gap. The batch carries Kafka's
CRC-32C (Castagnoli, over the bytes from ``attributes`` on, via the ``crc32c`` package); a follower checks it
and treats a batch that fails as Kafka does, the partition's result becoming CORRUPT_MESSAGE.
``partition_max_bytes`` carries the record limit the follower asks for; the session id and epoch and the
forgotten partitions carry the KIP-227 fetch session.
"""

from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from crc32c import crc32c

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import (
    EpochEntry,
    FetchPartition,
    FetchPartitionResult,
    FetchRequest,
    FetchResponse,
    ReplicatedBatch,
    TimeIndexEntry,
)
from zkcontroller.protocol.wire import codec
from zkcontroller.protocol.wire.codec import WireFormatError
from zkcontroller.protocol.wire.messages import FETCH
from zkcontroller.protocol.wire.plain_values import by_topic, error_of
from zkcontroller.protocol.wire.record_offsets import record_offsets
from zkcontroller.protocol.wire.record_sets import BATCH_HEADER as _BATCH_HEADER
from zkcontroller.protocol.wire.record_sets import LONG_MAX, LONG_MIN, java_long
from zkcontroller.protocol.wire.record_timestamps import running_maxima

_AFTER_LENGTH = _BATCH_HEADER.size - 12
"""batchLength counts the bytes after baseOffset and batchLength themselves."""
_CRC_AT, _CRC_FROM = 17, 21
"""Where the CRC sits in the header, and where the bytes it covers start (``attributes``)."""
_CRC = struct.Struct(">I")


class CorruptRecordError(WireFormatError):
    """A record batch whose CRC does not match its bytes (Kafka's ``CorruptRecordException``)."""


OUT_OF_ORDER_LISTED = 1000
"""The most offsets an ``OffsetsOutOfOrderException`` message lists here. Kafka's lists every record's offset
(``records.records.asScala.map(_.offset)``); ours stops after these, ending ``, ...)``, so a crafted record set
cannot make the message (or the work of reading it) large."""


class OffsetsOutOfOrderError(WireFormatError):
    """A fetched record set whose batches' last offsets do not increase (Kafka's ``OffsetsOutOfOrderException``,
    thrown by ``Log.append`` for a follower's append, a ``RuntimeException``: not a corrupt record, the fetcher
    marks the partition failed). Keeps the ``record_set``: its records' offsets, which Kafka's message lists, are
    read only when asked for (`offsets`, `str`)."""

    def __init__(self, record_set: bytes) -> None:
        super().__init__()
        self.record_set = record_set

    @property
    def offsets(self) -> tuple[int, ...]:
        """The first `OUT_OF_ORDER_LISTED` records' offsets (`record_offsets`)."""
        return record_offsets(self.record_set, OUT_OF_ORDER_LISTED)

    def __str__(self) -> str:
        return f"Out of order offsets: {out_of_order_offsets(self.record_set)}"


@dataclass(frozen=True, slots=True, eq=False)
class OffsetsOutOfOrderResult(FetchPartitionResult):
    """A fetched partition whose records `decode_batches` refused with `OffsetsOutOfOrderError` (nothing to
    append), keeping its ``record_set`` for the fetcher's mark-failed message (`out_of_order_offsets`, read only
    then). A dataclass field, so it survives `dataclasses.replace`, copying and pickling."""

    record_set: bytes = field(default=b"", repr=False, compare=False)


@dataclass(frozen=True, slots=True, eq=False)
class FetchedRecordsResult(FetchPartitionResult):
    """A fetched partition with records, decoded from the wire, keeping its ``record_set``: a follower whose log
    end is past its first batch lists the records' real offsets in its ``UnexpectedAppendOffsetException``
    (`record_offsets`; a compacted batch's are not consecutive). Read only then. A dataclass field, so it
    survives `dataclasses.replace`, copying and pickling (not compared, nor shown)."""

    record_set: bytes = field(default=b"", repr=False, compare=False)

    def __eq__(self, other: object) -> bool:
        """Equal to the same result handed over in process: the record set is not part of what it says."""
        if not isinstance(other, FetchPartitionResult):
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in _RESULT_FIELDS)

    __hash__ = FetchPartitionResult.__hash__


_RESULT_FIELDS = fields(FetchPartitionResult)


def out_of_order_offsets(record_set: bytes | memoryview) -> str:
    """Kafka's ``OffsetsOutOfOrderException`` list of a record set's offsets (`offsets_string`), cut after
    `OUT_OF_ORDER_LISTED` of them (``, ...`` then ends it)."""
    offsets = record_offsets(record_set, OUT_OF_ORDER_LISTED + 1)
    if len(offsets) > OUT_OF_ORDER_LISTED:
        return offsets_string((*map(str, offsets[:OUT_OF_ORDER_LISTED]), "..."))
    return offsets_string(offsets)


def offsets_string(offsets: Iterable[int | str]) -> str:
    """A sequence of offsets as Kafka's messages print a Scala collection of them: ``List(0, 1, 2)``."""
    return f"List({', '.join(map(str, offsets))})"


def _varint(value: int) -> bytes:
    """Kafka's zig-zag varint (a 64-bit signed value folded onto the codec's unsigned varint). Past the signed 64-bit
    range it would be longer than the 10 bytes Java's ``ByteUtils.readVarlong`` reads ("Varlong is too long"):
    `ValueError`, a bug in the caller."""
    if not LONG_MIN <= value <= LONG_MAX:
        raise ValueError(f"{value} is outside a varlong's signed 64-bit range")
    out = bytearray()
    codec.write_uvarint(out, (value << 1) ^ (value >> 63))
    return bytes(out)


_EMPTY_RECORD_TAIL = b"\x00\x00"  # attributes, timestampDelta 0
_NULL_KEY_VALUE_NO_HEADERS = _varint(-1) + _varint(-1) + _varint(0)


def _record(offset_delta: int) -> bytes:
    body = _EMPTY_RECORD_TAIL + _varint(offset_delta) + _NULL_KEY_VALUE_NO_HEADERS
    return _varint(len(body)) + body


def _timed_record(offset_delta: int, timestamp_delta: int) -> bytes:
    body = b"\x00" + _varint(timestamp_delta) + _varint(offset_delta) + _NULL_KEY_VALUE_NO_HEADERS
    return _varint(len(body)) + body


def record_batch(base_offset: int, count: int, leader_epoch: int = -1, producer_id: int = -1,
                 producer_epoch: int = -1, base_sequence: int = -1, max_timestamp: int = -1,
                 first_timestamp: int | None = None, inner: Sequence[TimeIndexEntry] = ()) -> bytes:
    """One uncompressed v2 record batch of ``count`` empty records (null key and value, no headers), its CRC-32C
    from the attributes on: what a leader serves, and (base offset 0, epoch -1) what a client produces. Its
    ``firstTimestamp`` is ``first_timestamp``, by default its max timestamp. ``inner``: time index entries of
    records after the first (a producer batch's running maxima, in offset order): each such record carries its
    timestamp, and each record after it the same, so that a follower reads them back (`decode_batches`); every other
    record has the first timestamp. A record's ``timestampDelta`` is its timestamp less the first as a Java long
    (wrapped: Long.MAX_VALUE after a first timestamp of -1 is Long.MIN_VALUE), as Kafka's ``MemoryRecordsBuilder``
    writes it and as its reader (``baseTimestamp + timestampDelta``, wrapping too) and `running_maxima` read it back:
    every pair of 64-bit timestamps round-trips, in a varlong Java can read."""
    first = max_timestamp if first_timestamp is None else first_timestamp
    if inner:
        deltas = [0] * count
        for entry, after in zip(inner, [*(e.base_offset for e in inner[1:]), base_offset + count], strict=True):
            deltas[entry.base_offset - base_offset:after - base_offset] = [
                java_long(entry.max_timestamp - first)] * (after - entry.base_offset)
        records = b"".join(_timed_record(i, delta) for i, delta in enumerate(deltas))
    else:
        records = b"".join(_record(i) for i in range(count))
    batch = bytearray(_BATCH_HEADER.pack(base_offset, _AFTER_LENGTH + len(records), leader_epoch, 2, 0, 0, count - 1,
                                         first, max_timestamp, producer_id, producer_epoch, base_sequence,
                                         count))
    batch += records
    _CRC.pack_into(batch, _CRC_AT, crc32c(memoryview(batch)[_CRC_FROM:]))
    return bytes(batch)


def encode_records(base_offset: int, count: int, batches: tuple[ReplicatedBatch, ...] = (),
                   epochs: tuple[EpochEntry, ...] = (), timestamps: tuple[TimeIndexEntry, ...] = ()) -> bytes:
    """``count`` empty records from ``base_offset`` as v2 batches: one per producer batch of ``batches`` (within
    the range, in offset order), plain ones between, each plain stretch cut where an epoch of ``epochs`` begins
    and around each time index entry of ``timestamps`` (in offset order) whose first timestamp is below its max (a
    batch whose records were not read: it begins a batch of its own, carrying its first and max timestamps); each
    batch's ``partitionLeaderEpoch`` is the epoch in force at its base offset (-1 without one). The other entries
    (a record's own: first = max) are carried by the records: a batch's first timestamp is its first record's entry's
    (else -1), each record at or after an entry carries that entry's timestamp (`record_batch`'s ``inner``), and its
    max timestamp is its last entry's (a producer batch its own max timestamp), -1 for a batch holding none. No bytes
    (not null, as Kafka) for zero records. An epoch beginning inside a producer batch cannot be told (a batch is
    appended whole, under one epoch: it does not happen). A producer batch may begin inside the one before it (a
    follower takes such a batch, as Kafka's: `Partition.append_as_follower`), and is served so. `ValueError` for a
    producer batch outside the range or not ending after the one before."""
    if count <= 0:
        return b""
    if not batches and not timestamps and (not epochs or (len(epochs) == 1 and epochs[0].start_offset <= base_offset)):
        return record_batch(base_offset, count, epochs[0].epoch if epochs else -1)  # the common case: one batch
    out, at, end = bytearray(), base_offset, base_offset + count
    starts = [e.start_offset for e in epochs]
    in_force = -1  # index into epochs of the epoch at `at`
    stamps = {t.base_offset: t for t in timestamps}
    offsets = [t.base_offset for t in timestamps]
    apart = [i for i, t in enumerate(timestamps) if t.first_timestamp != t.max_timestamp]
    cuts = sorted({*starts, *(offsets[i] for i in apart), *(offsets[i + 1] for i in apart if i + 1 < len(offsets))})

    def epoch_at(offset: int) -> int:
        nonlocal in_force
        while in_force + 1 < len(epochs) and starts[in_force + 1] <= offset:
            in_force += 1
        return epochs[in_force].epoch if in_force >= 0 else -1

    next_cut = 0  # index into cuts of the first above `at`

    def plain(upto: int) -> None:
        nonlocal at, next_cut
        while at < upto:
            epoch = epoch_at(at)
            while next_cut < len(cuts) and cuts[next_cut] <= at:
                next_cut += 1
            stop = min(cuts[next_cut], upto) if next_cut < len(cuts) else upto
            stamp = stamps.get(at)
            inner = timestamps[bisect_right(offsets, at):bisect_left(offsets, stop)] if offsets else ()
            if inner:  # records' own entries after the first record: carried by the records' timestamps
                out.extend(record_batch(at, stop - at, epoch, max_timestamp=inner[-1].max_timestamp,
                                        first_timestamp=stamp.first_timestamp if stamp else -1, inner=inner))
            else:
                out.extend(record_batch(at, stop - at, epoch, max_timestamp=stamp.max_timestamp if stamp else -1,
                                        first_timestamp=stamp.first_timestamp if stamp else -1))
            at = stop

    for b in batches:
        if (b.base_offset < base_offset and not out) or b.last_offset < at or b.last_offset >= end:
            raise ValueError(f"producer batch {b} is not within offsets {at}..{end - 1} of the fetched range")
        plain(b.base_offset)
        stamp = stamps.get(b.base_offset)
        inner = timestamps[bisect_right(offsets, b.base_offset):bisect_right(offsets, b.last_offset)] \
            if offsets else ()
        first = stamp.first_timestamp if stamp else (-1 if inner else None)  # records before the first entry: -1
        out.extend(record_batch(b.base_offset, b.count, epoch_at(b.base_offset), b.producer_id, b.producer_epoch,
                                b.base_sequence, b.max_timestamp, first, inner))
        at = b.last_offset + 1
    plain(end)
    return bytes(out)


def decode_batches(data: bytes | None, timestamps: list[TimeIndexEntry] | None = None
                   ) -> tuple[int, int, tuple[ReplicatedBatch, ...], tuple[EpochEntry, ...]]:
    """A fetched record set: how many offsets it spans (from the first batch's base offset to the last one's last
    offset), from which base offset, its producer batches (those with a producer id) and its leader epochs (the
    first batch's ``partitionLeaderEpoch`` at its base offset, then each change of it; a batch saying -1 adds none).
    Every whole batch is read; a trailing partial batch, which a leader may send at its size limit, is left for the
    next fetch, as Kafka's reader does. As Kafka's follower (``Log.appendAsFollower``: offsets taken as given, only
    checked to increase), batches may leave gaps between them (a compacted log's), and a batch may hold fewer
    records than offsets (a compacted batch); the follower's log end then goes past the gaps. `CorruptRecordError`
    for what no leader serves: a batch failing its CRC (Kafka's ``CorruptRecordException``), a negative offset
    delta or records count, or more records than offsets (which Kafka's leader refuses at produce,
    ``LogValidator``'s "Inconsistent batch offset range"); `OffsetsOutOfOrderError` for a batch whose last offset
    is not after the previous batch's (Kafka's ``analyzeAndValidateRecords`` compares last offsets, so a batch may
    begin inside the previous one; its ``OffsetsOutOfOrderException``); another magic than 2 `WireFormatError`.
    ``timestamps``, when given, gets each batch's base offset, first and max timestamps when its max timestamp is
    set (>= 0): what the follower's time index takes from them (`Partition.append_as_follower`)."""
    if not data:
        return 0, 0, (), ()
    view, pos, base, at = memoryview(data), 0, 0, -1
    monotonic = True
    batches: list[ReplicatedBatch] = []
    epochs: list[EpochEntry] = []
    while pos + _BATCH_HEADER.size <= len(view):
        (offset, length, leader_epoch, magic, crc, _attributes, last_delta, first_ts, max_ts, producer_id,
         producer_epoch, base_sequence, count) = _BATCH_HEADER.unpack_from(view, pos)
        if magic != 2:
            raise WireFormatError(f"record batch at byte {pos}: magic {magic}, expected 2")
        if length < _AFTER_LENGTH:  # else a batch no longer than its length field is read again, forever
            raise CorruptRecordError(f"Record batch is corrupt (the size {length + 12} is smaller than the minimum "
                                     f"allowed overhead {_BATCH_HEADER.size})")
        end = pos + 12 + length
        if end > len(view):
            break
        if crc32c(view[pos + _CRC_FROM:end]) != crc:
            raise CorruptRecordError(f"record batch at byte {pos} (base offset {offset}): CRC {crc:#010x} "
                                     "does not match its bytes")
        if last_delta < 0 or count < 0 or count > last_delta + 1:
            raise CorruptRecordError(f"record batch at byte {pos}: Inconsistent batch offset range [{offset}, "
                                     f"{offset + last_delta}] and count of records {count}")
        if at < 0:
            base = offset
        if at - 1 >= offset + last_delta:  # Kafka's `lastOffset >= batch.lastOffset` (lastOffset -1 at first)
            monotonic = False  # thrown after the loop, as Kafka's append does: a later corrupt batch wins
        at = offset + last_delta + 1
        if producer_id >= 0:
            batches.append(ReplicatedBatch(offset, at - 1, producer_id, producer_epoch, base_sequence, max_ts))
        if leader_epoch >= 0 and (not epochs or epochs[-1].epoch != leader_epoch):
            epochs.append(EpochEntry(leader_epoch, offset))
        if timestamps is not None and max_ts >= 0:
            if first_ts < max_ts and count > 1:  # records after the first may carry the batch's running maxima
                points = running_maxima(view[pos:end], -1)
                if points and points[-1][1] == max_ts:
                    timestamps.extend(TimeIndexEntry(offset + d, t, t) for d, t in points)
                else:  # not carried (a batch whose records were not read at produce): the batch's own entry
                    timestamps.append(TimeIndexEntry(offset, first_ts, max_ts))
            else:
                timestamps.append(TimeIndexEntry(offset, first_ts, max_ts))
        pos = end
    if not monotonic:
        raise OffsetsOutOfOrderError(data)  # its offsets are read only for its message
    return (at - base if at >= 0 else 0), base, tuple(batches), tuple(epochs)


def _topic_of(item: FetchPartition | FetchPartitionResult) -> str:
    return item.topic_partition.topic


def encode_request(request: FetchRequest, version: int) -> bytes:
    forgotten = {t: [tp.partition for tp in tps] for t, tps in by_topic(request.forgotten, lambda tp: tp.topic).items()}
    return codec.encode(FETCH.request, version, {
        "cluster_id": None, "replica_id": request.replica_id, "max_wait_ms": request.max_wait_ms,
        "min_bytes": request.min_bytes,
        "max_bytes": 0x7FFFFFFF, "isolation_level": 0, "session_id": request.session_id,
        "session_epoch": request.session_epoch,
        "topics": [{"topic": t, "partitions": [
            {"partition": p.topic_partition.partition, "current_leader_epoch": p.current_leader_epoch,
             "fetch_offset": p.fetch_offset, "last_fetched_epoch": p.last_fetched_epoch, "log_start_offset": -1,
             "partition_max_bytes": request.max_records} for p in ps]}
            for t, ps in by_topic(request.partitions, _topic_of).items()],
        "forgotten_topics_data": [{"topic": t, "partitions": ps} for t, ps in forgotten.items()], "rack_id": ""})


def decode_request(version: int, buf: bytes | memoryview, offset: int) -> FetchRequest:
    d = codec.decode(FETCH.request, version, buf, offset, exact=False)
    partitions = tuple(FetchPartition(TopicPartition(t["topic"], p["partition"]), p["current_leader_epoch"],
                                      p["fetch_offset"], p.get("last_fetched_epoch", -1))
                       for t in d["topics"] for p in t["partitions"])
    limits = {p["partition_max_bytes"] for t in d["topics"] for p in t["partitions"]}
    forgotten = tuple(TopicPartition(t["topic"], p)
                      for t in d.get("forgotten_topics_data") or () for p in t["partitions"])
    return FetchRequest(d["replica_id"], partitions, max(limits) if limits else 10_000,
                        d.get("session_id", 0), d.get("session_epoch", -1), forgotten, d["max_wait_ms"],
                        d["min_bytes"])


def encode_response(response: FetchResponse, version: int) -> bytes:
    return codec.encode(FETCH.response, version, {
        "throttle_time_ms": 0, "error_code": int(response.error), "session_id": response.session_id,
        "responses": [{"topic": t, "partition_responses": [
            {"partition": r.topic_partition.partition, "error_code": int(r.error),
             "high_watermark": r.high_watermark, "last_stable_offset": _last_stable_offset(r), "log_start_offset": 0,
             "aborted_transactions": [], "preferred_read_replica": -1,
             "record_set": encode_records(r.base_offset, r.records, r.batches, r.epochs, r.timestamps),
             **_diverging(r)} for r in rs]}
            for t, rs in by_topic(response.partitions, _topic_of).items()]})


def _diverging(r: FetchPartitionResult) -> dict[str, Any]:
    """v12's tagged ``divergingEpoch``, only when the follower must truncate (left out at its default)."""
    if r.diverging_end_offset < 0:
        return {}
    return {"diverging_epoch": {"epoch": r.diverging_epoch, "end_offset": r.diverging_end_offset}}


def _last_stable_offset(r: FetchPartitionResult) -> int:
    """The HW (no transactions here), except in an OFFSET_OUT_OF_RANGE answer, which carries the leader's LEO
    there (Kafka's error answers say -1) instead of a ListOffsets exchange (`FetchPartitionResult.log_end_offset`)."""
    if r.error is Errors.OFFSET_OUT_OF_RANGE and r.log_end_offset >= 0:
        return r.log_end_offset
    return r.high_watermark


def _partition_result(topic: str, p: dict[str, Any]) -> FetchPartitionResult:
    tp = TopicPartition(topic, p["partition"])
    stamps: list[TimeIndexEntry] = []
    try:
        count, base, batches, epochs = decode_batches(p["record_set"], stamps)
    except CorruptRecordError:
        return FetchPartitionResult(tp, Errors.CORRUPT_MESSAGE, p["high_watermark"])
    except OffsetsOutOfOrderError:
        return OffsetsOutOfOrderResult(tp, Errors.NONE, p["high_watermark"], record_set=p["record_set"])
    error = error_of(p["error_code"])
    leader_end = p.get("last_stable_offset", -1) if error is Errors.OFFSET_OUT_OF_RANGE else -1
    diverging = p.get("diverging_epoch") or {}
    if count:
        return FetchedRecordsResult(tp, error, p["high_watermark"], count, base, leader_end, diverging.get("epoch", -1),
                                    diverging.get("end_offset", -1), batches, epochs, tuple(stamps),
                                    record_set=p["record_set"])
    return FetchPartitionResult(tp, error, p["high_watermark"], count, base, leader_end,
                                diverging.get("epoch", -1), diverging.get("end_offset", -1), batches, epochs)


def decode_response(version: int, buf: bytes | memoryview, offset: int) -> FetchResponse:
    d = codec.decode(FETCH.response, version, buf, offset)
    return FetchResponse(error_of(d.get("error_code") or 0), tuple(
        _partition_result(t["topic"], p) for t in d["responses"] for p in t["partition_responses"]),
        d.get("session_id") or 0)
