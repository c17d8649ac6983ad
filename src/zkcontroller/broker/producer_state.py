"""Idempotent-producer state of one partition's leader: Kafka 2.8's ``ProducerStateManager``,
``ProducerStateEntry`` and ``ProducerAppendInfo``, with ``Log.analyzeAndValidateProducerState``'s use of them.

Per producer id the leader keeps the producer epoch and the metadata of its last 5 batches (first and last
sequence, first and last offset, max timestamp). A client append of batches carrying a producer id is checked,
batch by batch, after the log's own validation and once offsets are assigned:

* a batch with the entry's epoch and exactly the sequence range of one of those 5 is a retried duplicate: nothing
  is appended and the append answers the original batch's offsets (Kafka's ``findDuplicateBatch``, looked up in
  the state before this append; a client's record set holds one v2 batch, as `log_validator.validate` enforces);
* an epoch older than the entry's is INVALID_PRODUCER_EPOCH (2.7+, KIP-588: no longer PRODUCER_FENCED);
* a newer epoch must start at sequence 0 unless the entry's epoch is unknown; with the same epoch the first
  sequence must follow the last one (``Int.MaxValue`` wraps to 0), unless the entry's epoch is unknown: else
  OUT_OF_ORDER_SEQUENCE_NUMBER (``checkSequence``);
* a producer with no entry is accepted at any sequence (as Kafka, once the entry was expired or its records
  deleted).

Every replica keeps it, as Kafka's: the leader from its client appends, a follower from the batches it replicates
(``Log.appendAsFollower``, origin Replication: entries updated, sequences not checked, an older epoch only warned
of), so a newly elected leader knows the producers' last batches and answers a retry the old leader had already
replicated with its original offsets. The logs keeping offsets only, the batches' headers travel beside the offsets
a fetch serves: the leader serves, for the range fetched, the batches it still indexes (`batches_in`: at least
every entry's retained ones, in offset order; `ReplicatedBatch`) and the follower applies them
(`append_replicated`).

A truncation drops the batches at or above its offset and rebuilds the producers they belonged to from what remains
below it (`truncate`). Kafka reloads its latest producer snapshot at or below that offset and replays the log from
there (``Log.truncateTo`` → ``rebuildProducerState``), so it finds a producer whose last batches all went. Our log
has no batches to replay, so the index of batches stands in for both: a producer snapshot is taken every
`PRODUCER_SNAPSHOT_INTERVAL` producer batches (32, or one per live producer if more; Kafka takes one at each
segment roll; our logs have no segments), and the index keeps every batch from the oldest snapshot kept on (from
the log start before the first) and, of each live producer, its last batch before it (what that snapshot holds of
it) and its last 5 (`compact`; an expired producer's batches before it go, as Kafka's snapshot holds the current
producers only). A truncation at or above the oldest snapshot kept so finds each producer's last batch below it,
as Kafka's. The snapshots kept (`prune_snapshots`) are the last `MAX_PRODUCER_SNAPSHOTS` (4) and, back from them,
every one down to the latest at or below the replica's high watermark (which `Partition` keeps in
`high_watermark`), up to `MAX_UNCOMMITTED_SNAPSHOTS` (8) in all: a truncation that keeps what was committed (at or
above the high watermark: every truncation but an unclean election's) finds each producer as Kafka does while the
high watermark is within 7 snapshot intervals (224 producer batches, or 7 × the live producers if more than 32) of
the log end. When it is in step with the log end, as with in-sync followers, the last 4 are all that is kept
(96 to 128 producer batches back). A deeper truncation (an unclean leader's, or one below a high watermark that
lagged more) forgets a producer none of whose kept batches lie below it, where Kafka would still find it (then any
sequence is accepted from it, Kafka's rule for a producer with no entry): its log holds every batch, ours only
headers, and memory per partition is the bound (about 2.5x the 64 batches a partition with one producer held
before snapshots, up to 2x that again while the high watermark lags: docs/benchmarks.md).
Plain traffic records nothing.
A restart keeps it, as Kafka's snapshots and log recovery do: every batch recorded is written through to the broker
process's journal (`journal`, `LogOffsetsJournal.record_producer_batches`), each snapshot too (`journal_snapshot`),
and a restarted replica replays the kept ones and takes back the snapshots (`restore`), dropping the producers
expired meanwhile (Kafka's ``loadFromSnapshot``). Transactional batches are neither checked nor recorded
(transactions are not served: they are appended as before). A batch's timestamp is its header's max timestamp (the
records are not decoded; Kafka takes the max of its records', the same for a well-formed batch).

Entries expire as Kafka's ``removeExpiredProducers``: every 10 minutes (`expire_producers`), those whose last batch
timestamp is at least ``transactional.id.expiration.ms`` (7 days) old.
"""

from __future__ import annotations

import logging
import struct
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.inter_broker import ReplicatedBatch
from zkcontroller.protocol.wire.record_sets import Entry
from zkcontroller.runtime.runtime import Runtime

log = logging.getLogger("kafka.log.ProducerAppendInfo")

NUM_BATCHES_TO_RETAIN = 5
"""``ProducerStateEntry.NumBatchesToRetain``: the in-flight requests an idempotent producer may have per broker."""
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
INT_MAX = 2**31 - 1
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
INVALID_PRODUCER_EPOCH = 47
DEFAULT_PRODUCER_ID_EXPIRATION_MS = 604_800_000
"""``transactional.id.expiration.ms``'s default, which in 2.8 also expires producer ids (``producer.id.expiration.ms``
came with Kafka 3.4)."""
PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS = 600_000
"""``LogManager.ProducerIdExpirationCheckIntervalMs``."""
_TRANSACTIONAL_FLAG = 0x10
_HEADER = struct.Struct(">hiqqqhii")
# from byte 21 of a v2 batch: attributes, last offset delta, first timestamp, max timestamp, producer id,
# producer epoch, base sequence, records count
_HEADER_AT = 21
_MIN_COMPACT_AT = 64
"""The index of batches is compacted (`compact`) when it reaches this many, or a quarter more than the last
compaction kept (`next_compaction`): amortized O(1) per batch (about 5 looks), bounded by what `compact` keeps."""
PRODUCER_SNAPSHOT_INTERVAL = 32
"""Producer batches recorded between two producer snapshots, or as many as there are live producers if more (so
that the snapshots kept reach back at least one batch per producer per interval). Stands in for Kafka's snapshot
at each segment roll. Taking one is O(1) (its offset only: the index holds its state); what scales with the
producers is the compaction of the index (`compact`)."""
MAX_PRODUCER_SNAPSHOTS = 4
"""Producer snapshots always kept per log: a truncation finds every producer's last batch below it at least
(MAX_PRODUCER_SNAPSHOTS - 1) × max(PRODUCER_SNAPSHOT_INTERVAL, live producers) producer batches back (96 for up to
32 producers), at most MAX_PRODUCER_SNAPSHOTS × that (see the module docstring). Bounds the index, and the
journal, to about that many batches plus 6 per live producer while the high watermark follows the log end."""
MAX_UNCOMMITTED_SNAPSHOTS = 8
"""At most this many snapshots are kept so that the latest one at or below the high watermark stays (a truncation
to the high watermark then finds every producer, as Kafka's): bounds the index to about 2x the above while the high
watermark lags (`prune_snapshots`)."""


def prune_snapshots(snapshots: list[int], high_watermark: int | None) -> None:
    """Drop, in place, the producer snapshots (increasing offsets) no truncation needs: kept are the last
    `MAX_PRODUCER_SNAPSHOTS` and every one from the latest at or below ``high_watermark`` on (all of them when none
    is), at most `MAX_UNCOMMITTED_SNAPSHOTS`. ``high_watermark`` None (not known: a state outside a partition) keeps
    the last `MAX_PRODUCER_SNAPSHOTS` only. Shared by the producer state and the journal, so both keep the same."""
    first = len(snapshots) - MAX_PRODUCER_SNAPSHOTS
    if first <= 0:
        return
    if high_watermark is not None:
        committed = bisect_right(snapshots, high_watermark) - 1  # -1: none at or below it
        first = max(0, len(snapshots) - MAX_UNCOMMITTED_SNAPSHOTS, min(first, committed))
    del snapshots[:first]


def next_compaction(kept: int) -> int:
    """The index size at which to compact again after a compaction that kept ``kept`` batches: a quarter more (at
    least 16), so the index peaks about 25% above what `compact` keeps, at about 5 looks per batch."""
    return max(_MIN_COMPACT_AT, kept + max(kept // 4, _MIN_COMPACT_AT // 4))


def increment_sequence(sequence: int, increment: int) -> int:
    """``DefaultRecordBatch.incrementSequence``: sequences wrap from ``Int.MaxValue`` to 0."""
    if sequence > INT_MAX - increment:
        return increment - (INT_MAX - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    """``DefaultRecordBatch.decrementSequence``."""
    if sequence < decrement:
        return INT_MAX - (decrement - sequence) + 1
    return sequence - decrement


class ProducerStateError(Exception):
    """An append the producer state refuses: ``error`` is the partition's error code, ``exception`` Kafka's
    exception class (for the log line)."""

    def __init__(self, error: int, exception: str, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.exception = exception


@dataclass(frozen=True, slots=True)
class ProducerBatch:
    """What the producer state reads of one v2 batch: its header's producer fields, count and max timestamp."""

    producer_id: int
    producer_epoch: int
    base_sequence: int
    count: int
    max_timestamp: int
    is_transactional: bool = False

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > NO_PRODUCER_ID

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.count - 1)


def producer_batches(data: bytes | memoryview, entries: list[Entry]) -> list[ProducerBatch]:
    """The v2 batches of a record set the log validated (`log_validator.validate`), in order; none for a legacy
    (magic 0/1) set, which carries no producer ids."""
    buf = memoryview(data)
    batches = []
    for e in entries:
        if e.magic != 2:
            return []
        (attributes, _delta, _first_ts, max_ts, producer_id, epoch, base_sequence,
         count) = _HEADER.unpack_from(buf, e.start + _HEADER_AT)
        batches.append(ProducerBatch(producer_id, epoch, base_sequence, count, max_ts,
                                     bool(attributes & _TRANSACTIONAL_FLAG)))
    return batches


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """One appended batch, as Kafka keeps it: its last sequence and offset, and how far back its first ones are."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass(slots=True)
class ProducerStateEntry:
    """One producer id's epoch and last batches (oldest first)."""

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))
    last_timestamp: int = -1

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    def find_duplicate(self, batch: ProducerBatch) -> BatchMetadata | None:
        """The retained batch ``batch`` repeats (same epoch, same sequence range), if any."""
        if batch.producer_epoch != self.producer_epoch:
            return None
        first, last = batch.base_sequence, batch.last_sequence
        return next((b for b in self.batches if b.first_seq == first and b.last_seq == last), None)

    def maybe_update_epoch(self, producer_epoch: int) -> None:
        """A new epoch forgets the batches of the old one."""
        if producer_epoch != self.producer_epoch:
            self.batches.clear()
            self.producer_epoch = producer_epoch

    def add_batch(self, producer_epoch: int, metadata: BatchMetadata) -> None:
        self.maybe_update_epoch(producer_epoch)
        self.batches.append(metadata)  # the deque's maxlen drops the oldest
        self.last_timestamp = metadata.timestamp

    def add_replicated(self, batch: ReplicatedBatch) -> None:
        """Record a batch as its header describes it (a replicated one, or one replayed after a truncation)."""
        delta = batch.last_offset - batch.base_offset
        last_seq = NO_SEQUENCE if batch.base_sequence == NO_SEQUENCE else increment_sequence(batch.base_sequence, delta)
        self.add_batch(batch.producer_epoch, BatchMetadata(last_seq,  # DefaultRecordBatch.lastSequence
                                                           batch.last_offset, delta, batch.max_timestamp))

    def update(self, other: ProducerStateEntry) -> None:
        """Take what an append added (``ProducerStateEntry.update``)."""
        self.maybe_update_epoch(other.producer_epoch)
        self.batches.extend(other.batches)
        self.last_timestamp = other.last_timestamp


class ProducerAppendInfo:
    """One producer's batches of one client append, checked against its entry before the append and each other."""

    def __init__(self, tp: TopicPartition, current: ProducerStateEntry) -> None:
        self.topic_partition = tp
        self.current = current
        self.updated = ProducerStateEntry(current.producer_id, current.producer_epoch,
                                          last_timestamp=current.last_timestamp)

    def append(self, batch: ProducerBatch, first_offset: int) -> None:
        """``appendDataBatch``: check the epoch, then the sequence; record the batch. `ProducerStateError` if
        refused."""
        self._check_epoch(batch.producer_epoch, first_offset)
        self._check_sequence(batch.producer_epoch, batch.base_sequence, first_offset)
        self.updated.add_batch(batch.producer_epoch, BatchMetadata(batch.last_sequence, first_offset + batch.count - 1,
                                                                   batch.count - 1, batch.max_timestamp))

    def _check_epoch(self, epoch: int, offset: int) -> None:
        if epoch < self.updated.producer_epoch:
            raise ProducerStateError(
                INVALID_PRODUCER_EPOCH, "InvalidProducerEpochException",
                f"Epoch of producer {self.current.producer_id} at offset {offset} in {self.topic_partition} is "
                f"{epoch}, which is smaller than the last seen epoch {self.updated.producer_epoch}")

    def _check_sequence(self, epoch: int, first_seq: int, offset: int) -> None:
        pid, tp, updated = self.current.producer_id, self.topic_partition, self.updated
        if epoch != updated.producer_epoch:
            if first_seq != 0 and updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise ProducerStateError(
                    OUT_OF_ORDER_SEQUENCE_NUMBER, "OutOfOrderSequenceException",
                    f"Invalid sequence number for new epoch of producer {pid} at offset {offset} in partition {tp}: "
                    f"{epoch} (request epoch), {first_seq} (seq. number), {updated.producer_epoch} (current producer "
                    "epoch)")
            return
        if updated.batches:
            last_seq = updated.last_seq
        elif epoch == self.current.producer_epoch:
            last_seq = self.current.last_seq
        else:
            last_seq = NO_SEQUENCE
        # no current epoch (the producer's records are gone): any sequence is accepted
        if self.current.producer_epoch != NO_PRODUCER_EPOCH and not _in_sequence(last_seq, first_seq):
            raise ProducerStateError(
                OUT_OF_ORDER_SEQUENCE_NUMBER, "OutOfOrderSequenceException",
                f"Out of order sequence number for producer {pid} at offset {offset} in partition {tp}: {first_seq} "
                f"(incoming seq. number), {last_seq} (current end sequence number)")


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT_MAX)


def _last_offset(batch: ReplicatedBatch) -> int:
    """Sort key of batches in log order: their last offsets increase (Kafka's follower checks only those), their
    base offsets need not (a batch may begin inside the one before it)."""
    return batch.last_offset


def compact(batches: list[ReplicatedBatch], horizon: int,
            live: Container[int] | None = None) -> list[ReplicatedBatch]:
    """What a log's index of producer batches (offset order) keeps: every batch ending at or after ``horizon``
    (the oldest producer snapshot's offset, 0 without one: Kafka replays its log from there), and below it, of
    each producer (each ``live`` one, when given), its last batch ending before it (that snapshot's entry for it)
    and its last 5. An expired producer keeps nothing below ``horizon``: Kafka's snapshot holds the current
    producers only (expired ones removed), so a truncation would not find it either. Kept so, a producer's
    batches in the index are always its latest ones down to some point: its last 5 below any truncation offset at
    or above ``horizon`` are there."""
    keep = [False] * len(batches)
    seen: dict[int, int] = {}
    pinned: set[int] = set()
    for i in range(len(batches) - 1, -1, -1):
        batch = batches[i]
        pid = batch.producer_id
        newer = seen.get(pid, 0)
        seen[pid] = newer + 1
        if batch.last_offset >= horizon:
            keep[i] = True
        else:
            keep[i] = (live is None or pid in live) and (pid not in pinned or newer < NUM_BATCHES_TO_RETAIN)
            pinned.add(pid)
    return [b for b, k in zip(batches, keep, strict=True) if k]


class ProducerStateManager:
    """The producer entries of one partition's replica (leader or follower), and the index of their batches by
    offset that a leader serves to its followers."""

    def __init__(self, tp: TopicPartition) -> None:
        self.topic_partition = tp
        self.producers: dict[int, ProducerStateEntry] = {}
        self._index: list[ReplicatedBatch] = []
        """The batches recorded, in offset order: at least what `compact` keeps (others until compacted)."""
        self._compact_at = _MIN_COMPACT_AT
        self._snapshots: list[int] = []
        """The offsets of the producer snapshots kept, oldest first (the index holds their state: `compact`;
        which are kept: `prune_snapshots`)."""
        self.high_watermark: int | None = None
        """The replica's high watermark, kept here by its `Partition` (None outside one): the latest snapshot at or
        below it is kept (`prune_snapshots`), so a truncation to it finds every producer."""
        self._since_snapshot = 0
        """Batches indexed since the latest snapshot."""
        self.last_indexed_offset = -1
        """The last offset of the last batch indexed (-1: none): a fetch from beyond it has no batch to serve."""
        self.journal: Callable[[TopicPartition, list[ReplicatedBatch]], None] | None = None
        """Where each append's recorded batches are written through (a broker process's journal): only appends
        that record any, so non-idempotent traffic costs nothing."""
        self.journal_expired: Callable[[TopicPartition, list[int]], None] | None = None
        """Where expired producers are written through, so that a restart does not bring them back."""
        self.journal_snapshot: Callable[[TopicPartition, int], None] | None = None
        """Where each producer snapshot's offset is written through, so that a restart keeps the same horizon."""

    def append(self, batches: Iterable[ProducerBatch], first_offset: int) -> BatchMetadata | None:
        """A client append of ``batches`` at ``first_offset`` (the log end offset): the original batch's metadata
        when it is a retried duplicate (append nothing), else None with the batches recorded (append them).
        `ProducerStateError` when refused (nothing recorded)."""
        updates: dict[int, ProducerAppendInfo] = {}
        recorded: list[ReplicatedBatch] = []
        offset = first_offset
        for batch in batches:
            if batch.has_producer_id and not batch.is_transactional:
                entry = self.producers.get(batch.producer_id)
                duplicate = entry.find_duplicate(batch) if entry is not None else None
                if duplicate is not None:
                    return duplicate
                info = updates.get(batch.producer_id)
                if info is None:
                    info = updates[batch.producer_id] = ProducerAppendInfo(
                        self.topic_partition, entry or ProducerStateEntry(batch.producer_id))
                info.append(batch, offset)
                recorded.append(ReplicatedBatch(offset, offset + batch.count - 1, batch.producer_id,
                                                batch.producer_epoch, batch.base_sequence, batch.max_timestamp))
            offset += batch.count
        for producer_id, info in updates.items():
            entry = self.producers.get(producer_id)
            if entry is None:
                self.producers[producer_id] = info.updated
            else:
                entry.update(info.updated)
        if recorded:
            self._index_batches(recorded)
        return None

    def append_replicated(self, batches: Iterable[ReplicatedBatch]) -> None:
        """A follower's append of fetched batches (Kafka's origin Replication): each updates its producer's entry
        unchecked, the leader having checked it; an epoch older than the entry's is only warned of and taken, as
        Kafka's ``checkProducerEpoch``."""
        recorded = self._replay(batches)
        if recorded:
            self._index_batches(recorded)

    def _replay(self, batches: Iterable[ReplicatedBatch]) -> list[ReplicatedBatch]:
        """Apply replicated (or journaled) batches to their producers' entries; the batches applied."""
        recorded = []
        for batch in batches:
            entry = self.producers.get(batch.producer_id)
            if entry is None:
                entry = self.producers[batch.producer_id] = ProducerStateEntry(batch.producer_id)
            elif batch.producer_epoch < entry.producer_epoch:
                log.warning("Epoch of producer %d at offset %d in %s is %d, which is smaller than the last seen epoch "
                            "%d", batch.producer_id, batch.base_offset, self.topic_partition, batch.producer_epoch,
                            entry.producer_epoch)
            entry.add_replicated(batch)
            recorded.append(batch)
        return recorded

    def restore(self, batches: Iterable[ReplicatedBatch], log_end_offset: int, now_ms: int, expiration_ms: int,
                snapshots: Iterable[int] = ()) -> None:
        """A restart's producer batches (offset order, from the journal or the previous process's `retained`) and
        snapshot offsets: the batches replayed as replicated ones (an epoch change forgets the older batches, as
        when first appended) and indexed, those not wholly below ``log_end_offset`` (and snapshots above it)
        dropped, then the producers expired meanwhile removed (Kafka's ``loadFromSnapshot`` skips expired entries)
        and written through `journal_expired`, so the journal drops them too. Nothing is journaled again: the
        journal already holds it."""
        kept = self._replay(b for b in batches if b.last_offset < log_end_offset)
        self._snapshots = [s for s in snapshots if s <= log_end_offset]
        self.remove_expired(now_ms, expiration_ms)  # journaled as expired, or the journal keeps them for ever
        self._index = compact(kept, self._horizon(), self.producers)  # the expired's batches below it go
        self._compact_at = next_compaction(len(self._index))
        self._after_index_change()

    def retained(self) -> tuple[ReplicatedBatch, ...]:
        """The index of batches, in offset order: what a restart replays (`restore`, with `snapshot_offsets`)."""
        return tuple(self._index)  # empty for non-idempotent traffic: `ReplicaManager.log_offsets` stays cheap

    @property
    def snapshot_offsets(self) -> tuple[int, ...]:
        """The offsets of the producer snapshots kept, oldest first."""
        return tuple(self._snapshots)

    def _horizon(self) -> int:
        """The oldest snapshot still needed (0 without one: Kafka replays its log from the start), the older ones
        dropped first (`prune_snapshots`: the high watermark may have moved since the last look)."""
        prune_snapshots(self._snapshots, self.high_watermark)
        return self._snapshots[0] if self._snapshots else 0

    def _index_batches(self, batches: list[ReplicatedBatch]) -> None:
        if self.journal is not None:
            self.journal(self.topic_partition, batches)
        self._index.extend(batches)
        self._since_snapshot += len(batches)
        if self._since_snapshot >= PRODUCER_SNAPSHOT_INTERVAL and self._since_snapshot >= len(self.producers):
            self._take_snapshot(batches[-1].last_offset + 1)
        if len(self._index) >= self._compact_at:
            self._index = compact(self._index, self._horizon(), self.producers)
            self._compact_at = next_compaction(len(self._index))
        self.last_indexed_offset = self._index[-1].last_offset if self._index else -1

    def _take_snapshot(self, offset: int) -> None:
        """Kafka's ``takeSnapshot`` at ``offset`` (the end of the batches just recorded, so the producers' state
        there is the current one): only its offset is kept, the index holding its state (`compact`)."""
        self._snapshots.append(offset)
        prune_snapshots(self._snapshots, self.high_watermark)
        self._since_snapshot = 0
        if self.journal_snapshot is not None:
            self.journal_snapshot(self.topic_partition, offset)

    def _after_index_change(self) -> None:
        index = self._index
        self.last_indexed_offset = index[-1].last_offset if index else -1
        since = bisect_left(index, self._snapshots[-1], key=_last_offset) if self._snapshots else 0
        self._since_snapshot = len(index) - since

    def batches_in(self, base_offset: int, count: int) -> tuple[int, tuple[ReplicatedBatch, ...]]:
        """What a leader serves of ``count`` records from ``base_offset``: the count, cut so that no batch is split
        (before a batch that would cross its end, or past the end of the first batch, which is always served whole,
        as Kafka's fetch always returns the first batch whole), and the indexed batches within, in log order. The
        index is in log order, which is the order of last offsets (Kafka's follower takes a batch beginning inside
        the one before it: `Partition.append_as_follower`), so it is looked up by them, and such a batch is served
        after the one it overlaps, as Kafka's log holds it. As Kafka's read (``LogSegment.translateOffset``: the
        first batch whose last offset reaches the fetch offset), a first batch beginning below ``base_offset`` is
        served whole: the records served then start at its base offset, and the count is counted from there (the
        follower, whose log ends inside it, fails with ``UnexpectedAppendOffsetException``, as Kafka's does). So a
        batch overlapping the one before it reaches the follower whichever fetch it falls in: with that one, or
        first at the next fetch. Cheap when no producer batch lies at or after ``base_offset``."""
        index = self._index
        if count <= 0 or self.last_indexed_offset < base_offset:
            return count, ()
        start, end = base_offset, base_offset + count
        served: list[ReplicatedBatch] = []
        for i in range(bisect_left(index, base_offset, key=_last_offset), len(index)):
            batch = index[i]
            if not served and batch.base_offset < base_offset:
                start = batch.base_offset  # Kafka's read starts at the batch holding the fetch offset
            if batch.last_offset >= end:
                if served or batch.base_offset > base_offset:  # cut before it, not before what was served
                    floor = served[-1].last_offset + 1 if served else base_offset
                    end = max(floor, min(end, batch.base_offset))
                else:
                    end = batch.last_offset + 1
                    served.append(batch)
                break
            served.append(batch)
        return end - start, tuple(served)

    def truncate(self, offset: int) -> None:
        """The log was truncated to ``offset``: drop the snapshots above it (as Kafka's ``truncateAndReload``) and
        the batches at or above it, and rebuild each producer that had one from its indexed batches below it (its
        last 5, replayed in order: an epoch change forgets the older ones), forgetting a producer none of whose
        batches remain. Kafka rebuilds the state from its latest snapshot at or below ``offset`` and the log's
        batches after it (``Log.truncateTo`` → ``rebuildProducerState``); the index holds the same down to the
        oldest snapshot (`compact`), so the result is Kafka's for any ``offset`` at or above it (with up to 5
        batches per producer where Kafka's snapshot gives 1 plus those replayed)."""
        while self._snapshots and self._snapshots[-1] > offset:
            self._snapshots.pop()
        index = self._index
        at = bisect_left(index, offset, key=_last_offset)
        if at == len(index):
            return
        # expired ones are not brought back
        affected = {b.producer_id for b in index[at:]}.intersection(self.producers)
        del index[at:]
        self._after_index_change()
        # one pass from the end collects each affected producer's last 5 below the truncation
        kept: dict[int, list[ReplicatedBatch]] = {pid: [] for pid in affected}
        wanting = len(affected)
        for i in range(len(index) - 1, -1, -1):
            if not wanting:
                break
            batch = index[i]
            found = kept.get(batch.producer_id)
            if found is not None and len(found) < NUM_BATCHES_TO_RETAIN:
                found.append(batch)
                if len(found) == NUM_BATCHES_TO_RETAIN:
                    wanting -= 1
        for producer_id, newest_first in kept.items():
            if not newest_first:
                del self.producers[producer_id]
                continue
            entry = self.producers[producer_id] = ProducerStateEntry(producer_id)
            for batch in reversed(newest_first):
                entry.add_replicated(batch)

    def remove_expired(self, now_ms: int, expiration_ms: int) -> list[int]:
        """``removeExpiredProducers``: drop the producers whose last batch is ``expiration_ms`` old (no transaction
        is ever open here); their ids."""
        expired = [pid for pid, e in self.producers.items() if now_ms - e.last_timestamp >= expiration_ms]
        for pid in expired:
            del self.producers[pid]
        if expired and self.journal_expired is not None:
            self.journal_expired(self.topic_partition, expired)
        return expired


async def expire_producers(runtime: Runtime, states: Callable[[], Iterable[ProducerStateManager]],
                           expiration_ms: Callable[[], int],
                           interval_ms: int = PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS) -> None:
    """Kafka's ``PeriodicProducerExpirationCheck``, for all of a broker's partitions at once: every ``interval_ms``
    (first after one interval), expire each partition's old producers."""
    while True:
        await runtime.sleep_ms(interval_ms)
        now = runtime.now_ms()
        for state in list(states()):
            state.remove_expired(now, expiration_ms())
