"""What a broker process's "disk" keeps of its logs: each partition's log end offset and high watermark, in a
journal in its first log dir, so a restarted process leads and follows from where it stopped.

The data plane keeps offsets, not records; Kafka keeps the records in its log segments and the high watermark in
``replication-offset-checkpoint``, both in the page cache, which a SIGKILL of the process does not lose. A
broker that restarted empty and kept its leadership (its old session expired after the new process registered)
answered high watermark 0, and its followers truncated acknowledged records to it. So every change is written
through at once with a plain ``write`` (no fsync: as Kafka, a machine crash may lose the tail, a process crash
does not). The journal is one line per change (``topic<TAB>partition<TAB>leo<TAB>hw``, a deleted partition's
offsets -1), read back last-line-wins, rewritten whole when it grows past ``compact_bytes``, or past twice what the
last rewrite wrote when that was more (what is kept outgrew ``compact_bytes``: rewrites stay amortized).

It also keeps each log's leader epoch cache (Kafka's ``leader-epoch-checkpoint``), one line per change of it
(``topic<TAB>partition<TAB>epochs<TAB>epoch:start,epoch:start,...``, rare: a new epoch or a truncation), so a
restarted follower knows its last epoch and keeps its log for truncation on fetch instead of truncating to its
high watermark. A journal from before (no such lines) gives no epochs.

And each log's idempotent-producer batches (Kafka's producer snapshots plus the log it replays after them on recovery,
``Log.loadProducerState``: our log has no batches to replay, so their headers are journaled as they are appended, leader
and follower): one line per append that had any
(``topic<TAB>partition<TAB>producers<TAB>base:last:pid:epoch:seq:ts;...``; none for non-idempotent traffic), and one per
producer snapshot (``topic<TAB>partition<TAB>snapshots<TAB>offset,...``), read back keeping what the producer state's
index keeps (`producer_state.compact`: every batch from the oldest snapshot kept on, each producer's last one before it
and its last 5; the snapshots kept are the state's, `producer_state.prune_snapshots`: the last
``MAX_PRODUCER_SNAPSHOTS`` (4), and back to the latest at or below the journaled high watermark), trimmed by each
offsets line whose log end is below them (a truncation: the batches and snapshots above it go), a producer's dropped by
an ``expired<TAB>pid,...`` line. A restarted broker rebuilds its producer state from them
(`ProducerStateManager.restore`), so it answers a retry of a batch it already holds DUPLICATE with the original offsets,
and a truncation after the restart finds each producer's last batch below it as before. A journal from before (no such
lines) gives no producers; one without snapshot lines keeps every batch until the first snapshot.

And each log's time index (Kafka's ``.timeindex`` files, which a restarted Kafka reads back: without them a restarted
broker answered ListOffsets by timestamp as though its log had no timestamps): one line
(``topic<TAB>partition<TAB>times<TAB>entry,...``, `partition.TimeIndex`'s entries, each ``offset:timestamp`` for a
record's own, first and max alike, else ``base:first:max``) per append that grew the index, leader and follower alike:
a leader's holds its batch's entries (its running maxima; none when the batch's max timestamp is not the largest yet,
so at most one line per produced batch), a follower's the entries of one fetched answer. The index writes
them itself as it appends (`TimeIndex.journal`: the Produce path and the fetcher need not know; about 2 us more per
produced batch that grows it, one more ``write``, against ~60 us for the whole Produce). A line precedes the offsets
line of the append that holds its batch, leader (as Kafka's ``LogSegment.append`` writes the index entry before the log
end moves) and follower alike, so an entry read back at or above the last log end (the process died between the two) is
dropped, as the producer batches are, and no batch below the log end is left unindexed. Read back by the index's own
rule (an entry whose offset or max timestamp is not above the last kept, a stale line, is skipped with a warning naming
the file and line; an unreadable line, as any, is skipped whole), trimmed by each offsets line whose log end is at or
below an entry (a truncation), kept whole by a rewrite (one line per log, written from the partition's own index,
`attach_time_index`: the journal keeps no second copy of a hosted log's index; an index has no retention here, as the
log has none, so a rewrite holds every running maximum of the log, what Kafka's answers need without its records),
a deleted partition's dropped with it. A journal from before (no such lines) gives an empty index: the restarted
broker finds only the batches it appends or fetches after.

The log dir is locked as Kafka's ``LogManager`` locks it (``.lock``): two brokers on one machine with the same
``log.dirs`` (the default /tmp/kafka-logs) would otherwise share one journal.
"""

from __future__ import annotations

import fcntl
import logging
import os
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from itertools import pairwise
from pathlib import Path

from zkcontroller.broker.partition import TimeIndex
from zkcontroller.broker.producer_state import compact, next_compaction, prune_snapshots
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.inter_broker import EpochEntry, ReplicatedBatch, TimeIndexEntry

JOURNAL_NAME = ".zkcontroller-log-offsets"
LOCK_NAME = ".lock"
DEFAULT_COMPACT_BYTES = 16 << 20

log = logging.getLogger("kafka.log.LogManager")


class RecoveredLog(tuple[int, int]):
    """(log end offset, high watermark) of a log a restart finds, with its leader epochs as ``epochs``, its
    idempotent producers' retained batches as ``producers`` (offset order) and its time index entries as
    ``time_index``: a pair wherever offsets are expected, carrying the rest through to the new replica manager
    unchanged. The time index may come as the journal's `TimeIndex` read back (``time_index_source``), which a
    partition restores from array to array: a restart does not make a tuple per entry of every log it finds."""

    epochs: tuple[EpochEntry, ...]
    producers: tuple[ReplicatedBatch, ...]
    producer_snapshots: tuple[int, ...]
    _time_index: tuple[TimeIndexEntry, ...] | TimeIndex

    def __new__(cls, log_end_offset: int, high_watermark: int, epochs: tuple[EpochEntry, ...] = (),
                producers: tuple[ReplicatedBatch, ...] = (), producer_snapshots: tuple[int, ...] = (),
                time_index: tuple[TimeIndexEntry, ...] | TimeIndex = ()) -> RecoveredLog:
        log = super().__new__(cls, (log_end_offset, high_watermark))
        log.epochs = epochs
        log.producers = producers
        log.producer_snapshots = producer_snapshots
        log._time_index = time_index
        return log

    @property
    def time_index(self) -> tuple[TimeIndexEntry, ...]:
        """The time index entries, in offset order."""
        return self._time_index.entries() if isinstance(self._time_index, TimeIndex) else self._time_index

    @property
    def time_index_source(self) -> TimeIndex | None:
        """The journal's index read back, when it came so (`Partition.restore_time_index` copies its arrays)."""
        return self._time_index if isinstance(self._time_index, TimeIndex) else None


_MIN_COMPACT_AT = 64


def _last_offset(batch: ReplicatedBatch) -> int:
    return batch.last_offset


class _ProducerBatches:
    """One log's journaled producer batches (offset order, as the producer state's index keeps them) and snapshot
    offsets, and where the highest batch ends (a truncation below it trims them), and the log's high watermark (the
    snapshots kept depend on it, as the producer state's: `prune_snapshots`)."""

    __slots__ = ("_compact_at", "batches", "end", "high_watermark", "snapshots")

    def __init__(self, high_watermark: int | None = None) -> None:
        self.batches: list[ReplicatedBatch] = []
        self.snapshots: list[int] = []
        self.high_watermark = high_watermark
        self.end = 0
        self._compact_at = _MIN_COMPACT_AT

    def add(self, batch: ReplicatedBatch) -> None:
        self.batches.append(batch)
        self.end = max(self.end, batch.last_offset + 1)
        if len(self.batches) >= self._compact_at:
            self.compact()

    def compact(self) -> None:
        prune_snapshots(self.snapshots, self.high_watermark)
        self.batches = compact(self.batches, self.snapshots[0] if self.snapshots else 0)
        self._compact_at = next_compaction(len(self.batches))

    def offsets(self, log_end_offset: int, high_watermark: int) -> None:
        """An offsets line: keep its high watermark, and `truncate` to its log end."""
        self.high_watermark = high_watermark
        self.truncate(log_end_offset)

    def add_snapshot(self, offset: int) -> None:
        self.snapshots.append(offset)
        prune_snapshots(self.snapshots, self.high_watermark)

    def truncate(self, log_end_offset: int) -> None:
        """Drop the batches not wholly below ``log_end_offset`` and the snapshots above it. ``end`` comes from the
        batches only, and an expiry may have dropped those a snapshot followed: so the snapshots are checked even
        when no batch lies beyond (one comparison more), or a later snapshot at the same offset would make a
        journal line its next read refuses."""
        if log_end_offset >= self.end:
            while self.snapshots and self.snapshots[-1] > log_end_offset:
                self.snapshots.pop()
            return
        del self.batches[bisect_left(self.batches, log_end_offset, key=_last_offset):]
        while self.snapshots and self.snapshots[-1] > log_end_offset:
            self.snapshots.pop()
        self.end = log_end_offset

    def drop(self, producer_ids: Iterable[int]) -> list[int]:
        """Forget expired producers; the ids that had batches here."""
        present = {b.producer_id for b in self.batches}
        dropped = [pid for pid in producer_ids if pid in present]
        if dropped:
            gone = set(dropped)
            self.batches = [b for b in self.batches if b.producer_id not in gone]
        return dropped

    def kept(self) -> tuple[ReplicatedBatch, ...]:
        self.compact()
        return tuple(self.batches)


class LogDirLockedError(Exception):
    """Another process holds the log dir (Kafka's ``KafkaException`` from ``lockLogDirs``)."""


class LogOffsetsJournal:
    def __init__(self, log_dir: str | Path, compact_bytes: int = DEFAULT_COMPACT_BYTES) -> None:
        self.dir = Path(log_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock_fd = os.open(self.dir / LOCK_NAME, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock_fd)
            raise LogDirLockedError(
                f"Failed to acquire lock on file .lock in {self.dir}. A Kafka instance in another process or "
                "thread is using this directory.") from None
        self.path = self.dir / JOURNAL_NAME
        self.compact_bytes = compact_bytes
        self._epochs: dict[TopicPartition, tuple[EpochEntry, ...]] = {}
        self._producers: dict[TopicPartition, _ProducerBatches] = {}
        self._times: dict[TopicPartition, TimeIndex] = {}
        """Each log's time index as read back (or as journaled for a log no partition has taken yet): the journal's
        own, until `attach_time_index` hands it the partition's."""
        self._indexes: dict[TopicPartition, TimeIndex] = {}
        """The partitions' own time indexes, which a rewrite writes out (no second copy is kept here)."""
        self._offsets = self._read()
        self._fd = -1
        self._rewrite()

    def recovered(self) -> dict[TopicPartition, RecoveredLog]:
        """(log end offset, high watermark) per partition, as the last run left them, each a `RecoveredLog`
        carrying the partition's leader epochs, producer batches and snapshot offsets, and time index entries."""
        return {tp: RecoveredLog(leo, hw, self._epochs.get(tp, ()), self._producer_batches(tp),
                                 self._producer_snapshots(tp), self._time_source(tp))
                for tp, (leo, hw) in self._offsets.items()}

    def _time_source(self, tp: TopicPartition) -> TimeIndex | tuple[TimeIndexEntry, ...]:
        """The log's index as kept here, for a restart to copy (an attached one: the partition's own, copied too)."""
        times = self._indexes.get(tp)
        if times is None:
            times = self._times.get(tp)
        return times if times is not None else ()

    def _time_entries(self, tp: TopicPartition) -> tuple[TimeIndexEntry, ...]:
        times = self._indexes.get(tp)
        if times is None:
            times = self._times.get(tp)
        return times.entries() if times is not None else ()

    def attach_time_index(self, tp: TopicPartition, index: TimeIndex) -> None:
        """The partition's time index, which journals its entries here (`TimeIndex.journal`): a rewrite writes it
        out, and the copy read back (restored into it before: `Partition.restore_time_index`) goes."""
        self._times.pop(tp, None)
        self._indexes[tp] = index

    def record_time_index(self, tp: TopicPartition, entries: Sequence[tuple[int, int, int]]) -> None:
        """Entries the partition's time index kept (`TimeIndex.journal`: a leader's batch's, those of one fetched
        answer a follower's), written through as one line (an entry whose first timestamp is its max as
        ``offset:timestamp``, a leader's usual one). An attached index (`attach_time_index`) holds them already;
        for another log (a caller without a partition) they are kept here by the index's rule, for the rewrite."""
        if tp not in self._indexes:
            times = self._times.get(tp)
            if times is None:
                times = self._times[tp] = TimeIndex()
            times.extend(entries)
        if len(entries) == 1:  # a produced batch's: the hot path
            base, first, largest = entries[0]
            self._write(f"{tp.topic}\t{tp.partition}\ttimes\t{base}:{largest}\n" if first == largest
                        else f"{tp.topic}\t{tp.partition}\ttimes\t{base}:{first}:{largest}\n")
        elif entries:
            self._write(_times_line(tp, entries))

    def record_time_index_records(self, tp: TopicPartition, offsets: list[int], timestamps: list[int]) -> None:
        """Records' own entries (first = max) a leader's batch added (`TimeIndex.journal_records`), as
        `record_time_index`'s, one ``offset:timestamp`` item each, formatted in one pass."""
        if tp not in self._indexes:
            self.record_time_index(tp, list(zip(offsets, timestamps, timestamps, strict=True)))
            return
        items = ",".join([f"{offset}:{timestamp}" for offset, timestamp in zip(offsets, timestamps, strict=True)])
        self._write(f"{tp.topic}\t{tp.partition}\ttimes\t{items}\n")

    def _producer_batches(self, tp: TopicPartition) -> tuple[ReplicatedBatch, ...]:
        kept = self._producers.get(tp)
        return kept.kept() if kept is not None else ()

    def _producer_snapshots(self, tp: TopicPartition) -> tuple[int, ...]:
        kept = self._producers.get(tp)
        return tuple(kept.snapshots) if kept is not None else ()

    def record_producer_batches(self, tp: TopicPartition, batches: Sequence[ReplicatedBatch]) -> None:
        """Idempotent producer batches appended to the log (as leader or follower), written through before the
        log end that holds them."""
        if not batches:
            return
        self._keep_producer_batches(tp, batches)
        self._write(_producers_line(tp, batches))

    def record_producer_snapshot(self, tp: TopicPartition, offset: int) -> None:
        """The partition's producer state took a snapshot at ``offset`` (`ProducerStateManager.journal_snapshot`),
        written through: a restart keeps the batches it needs. Snapshots at or above it (none, as the state drops
        them on truncation, as `record` does) are dropped first, so the offsets kept always increase."""
        snapshots = self._kept_producers(tp).snapshots
        while snapshots and snapshots[-1] >= offset:
            snapshots.pop()
        self._kept_producers(tp).add_snapshot(offset)
        self._write(_snapshots_line(tp, (offset,)))

    def _kept_producers(self, tp: TopicPartition) -> _ProducerBatches:
        kept = self._producers.get(tp)
        if kept is None:
            known = self._offsets.get(tp)
            kept = self._producers[tp] = _ProducerBatches(known[1] if known is not None else None)
        return kept

    def _keep_producer_batches(self, tp: TopicPartition, batches: Iterable[ReplicatedBatch]) -> None:
        kept = self._kept_producers(tp)
        for batch in batches:
            kept.add(batch)

    def record_expired_producers(self, tp: TopicPartition, producer_ids: Iterable[int]) -> None:
        """Producers whose entries expired (``transactional.id.expiration.ms``): a restart must not bring them
        back."""
        kept = self._producers.get(tp)
        if kept is None:
            return
        dropped = kept.drop(producer_ids)
        if dropped:
            self._write(f"{tp.topic}\t{tp.partition}\texpired\t{','.join(map(str, dropped))}\n")

    def record_epochs(self, tp: TopicPartition, entries: tuple[EpochEntry, ...]) -> None:
        """The partition's leader epoch cache changed (Kafka's checkpoint write), written through."""
        self._epochs[tp] = entries
        self._write(_epochs_line(tp, entries))

    def record(self, tp: TopicPartition, log_end_offset: int, high_watermark: int) -> None:
        """One change, written through (a SIGKILL right after it keeps it)."""
        self._offsets[tp] = (log_end_offset, high_watermark)
        kept = self._producers.get(tp)
        if kept is not None:
            kept.offsets(log_end_offset, high_watermark)
        times = self._times.get(tp)
        if times is not None:
            times.truncate(log_end_offset)
        self._write(f"{tp.topic}\t{tp.partition}\t{log_end_offset}\t{high_watermark}\n")

    def forget(self, tp: TopicPartition) -> None:
        """The partition's log was deleted (a deleting StopReplica): a restart must not bring it back."""
        self._epochs.pop(tp, None)
        self._producers.pop(tp, None)
        self._times.pop(tp, None)
        self._indexes.pop(tp, None)
        if self._offsets.pop(tp, None) is not None:
            self._write(f"{tp.topic}\t{tp.partition}\t-1\t-1\n")

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._lock_fd >= 0:
            os.close(self._lock_fd)  # releases the lock
            self._lock_fd = -1

    def _write(self, line: str) -> None:
        if self._fd < 0:
            return  # closed: the broker is stopping
        os.write(self._fd, line.encode())
        self._size += len(line)
        if self._size > self._rewrite_at:
            self._rewrite()

    def _read(self) -> dict[TopicPartition, tuple[int, int]]:
        offsets: dict[TopicPartition, tuple[int, int]] = {}
        self._offsets = offsets  # as read so far: a log's producer batches take its high watermark
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return offsets
        for number, raw in enumerate(data.split(b"\n"), 1):
            if not raw:
                continue
            try:
                topic, partition, leo, hw = raw.decode().split("\t")
                tp = TopicPartition(topic, int(partition))
                if leo == "epochs":
                    self._epochs[tp] = _parse_epochs(hw)
                    continue
                if leo == "producers":
                    self._keep_producer_batches(tp, _parse_producers(hw))
                    continue
                if leo == "snapshots":
                    self._keep_snapshots(tp, _parse_snapshots(hw), number)
                    continue
                if leo == "times":
                    self._keep_times(tp, _parse_times(hw), number)
                    continue
                if leo == "expired":
                    expired = [int(pid) for pid in hw.split(",")]
                    if tp in self._producers:
                        self._producers[tp].drop(expired)
                    continue
                offsets_read = (int(leo), int(hw))
            except ValueError:  # a torn last line (the machine, not the process, went down mid-write)
                log.warning("Skipping unreadable line %d of %s: %r", number, self.path, raw[:80])
                continue
            if offsets_read[0] < 0:
                offsets.pop(tp, None)
                self._epochs.pop(tp, None)
                self._producers.pop(tp, None)
                self._times.pop(tp, None)
            else:
                offsets[tp] = offsets_read
                if tp in self._producers:
                    self._producers[tp].offsets(*offsets_read)
                if tp in self._times:
                    self._times[tp].truncate(offsets_read[0])
        for tp in list(self._producers):  # batches journaled just before a log end that never came
            if tp in offsets:
                self._producers[tp].truncate(offsets[tp][0])
            else:
                del self._producers[tp]
        for tp in list(self._times):  # a follower's entries journaled just before a log end that never came
            if tp in offsets:
                self._times[tp].truncate(offsets[tp][0])
            else:
                del self._times[tp]
        return offsets

    def _rewrite(self) -> None:
        """The journal as one line per partition, replacing the old one atomically."""
        temporary = self.path.with_suffix(".tmp")
        text = "".join(f"{tp.topic}\t{tp.partition}\t{leo}\t{hw}\n" for tp, (leo, hw) in self._offsets.items())
        text += "".join(_epochs_line(tp, entries) for tp, entries in self._epochs.items()
                        if entries and tp in self._offsets)
        text += "".join(_producers_line(tp, batches) for tp in self._offsets
                        if (batches := self._producer_batches(tp)))
        text += "".join(_snapshots_line(tp, snapshots) for tp in self._offsets
                        if (snapshots := self._producer_snapshots(tp)))
        text += "".join(_times_line(tp, entries) for tp in self._offsets if (entries := self._time_entries(tp)))
        temporary.write_text(text)
        os.replace(temporary, self.path)
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        self._size = len(text)
        # amortized: when what is kept outgrows compact_bytes, the next rewrite waits until the journal doubles
        self._rewrite_at = max(self.compact_bytes, 2 * len(text))

    def _keep_snapshots(self, tp: TopicPartition, offsets: list[int], number: int) -> None:
        """A snapshots line read back: each offset not above the last kept (a stale line, or a torn one read as a
        smaller number) is skipped with a warning, as the snapshots kept must increase."""
        snapshots = self._kept_producers(tp).snapshots
        for offset in offsets:
            if snapshots and offset <= snapshots[-1]:
                log.warning("Skipping producer snapshot offset %d of %s on line %d of %s: not after the last one kept "
                            "(%d)", offset, tp, number, self.path, snapshots[-1])
                continue
            self._kept_producers(tp).add_snapshot(offset)

    def _keep_times(self, tp: TopicPartition, entries: list[TimeIndexEntry], number: int) -> None:
        """A times line read back, by the index's own rule: an entry not after the last kept (a stale line, or a
        torn one read as a smaller number) is skipped with a warning, the others kept."""
        times = self._times.get(tp)
        if times is None:
            times = self._times[tp] = TimeIndex()
        for entry in entries:
            if not times.append(*entry):
                log.warning("Skipping time index entry %s of %s on line %d of %s: not after the last one kept",
                            entry, tp, number, self.path)


_LONG_MAX = (1 << 63) - 1


def _times_line(tp: TopicPartition, entries: Iterable[tuple[int, int, int]]) -> str:
    items = ",".join(f"{b}:{m}" if f == m else f"{b}:{f}:{m}" for b, f, m in entries)
    return f"{tp.topic}\t{tp.partition}\ttimes\t{items}\n"


def _parse_times(text: str) -> list[TimeIndexEntry]:
    """``base:first:max`` or ``offset:timestamp`` (first and max alike: a record's own entry), comma separated;
    ValueError for anything else, a negative base offset or max timestamp, a first timestamp above the max (the
    index keeps the smaller: `TimeIndex.append`), or a value no Java long holds (the index keeps them in 64-bit
    arrays, which would raise OverflowError at start-up)."""
    entries = []
    for item in text.split(","):
        fields = [int(v) for v in item.split(":")]
        if len(fields) == 2:
            fields.insert(1, fields[1])
        base, first, largest = fields
        if base < 0 or largest < 0 or first > largest or max(base, largest) > _LONG_MAX or first < -_LONG_MAX - 1:
            raise ValueError(f"bad time index entry {item!r}")
        entries.append(TimeIndexEntry(base, first, largest))
    return entries


def _epochs_line(tp: TopicPartition, entries: tuple[EpochEntry, ...]) -> str:
    return f"{tp.topic}\t{tp.partition}\tepochs\t{','.join(f'{e}:{s}' for e, s in entries)}\n"


def _parse_epochs(text: str) -> tuple[EpochEntry, ...]:
    """``epoch:start,...`` (empty: none); ValueError for anything else, a negative number, or epochs and starts
    that do not both increase (a cache is monotonic)."""
    entries = tuple(EpochEntry(int(e), int(s)) for e, s in (item.split(":") for item in text.split(",") if item))
    for before, after in pairwise(entries):
        if after.epoch <= before.epoch or after.start_offset <= before.start_offset:
            raise ValueError(f"leader epochs out of order: {before}, {after}")
    if any(e.epoch < 0 or e.start_offset < 0 for e in entries):
        raise ValueError("negative leader epoch or start offset")
    return entries


def _producers_line(tp: TopicPartition, batches: Iterable[ReplicatedBatch]) -> str:
    items = ";".join(f"{b.base_offset}:{b.last_offset}:{b.producer_id}:{b.producer_epoch}:{b.base_sequence}:"
                     f"{b.max_timestamp}" for b in batches)
    return f"{tp.topic}\t{tp.partition}\tproducers\t{items}\n"


def _snapshots_line(tp: TopicPartition, offsets: Iterable[int]) -> str:
    return f"{tp.topic}\t{tp.partition}\tsnapshots\t{','.join(map(str, offsets))}\n"


def _parse_snapshots(text: str) -> list[int]:
    """``offset,...``; ValueError for anything else or a negative offset (their order is checked as kept:
    `LogOffsetsJournal._keep_snapshots`)."""
    offsets = [int(o) for o in text.split(",")]
    if any(o < 0 for o in offsets):
        raise ValueError(f"bad producer snapshot offsets {text!r}")
    return offsets


def _parse_producers(text: str) -> list[ReplicatedBatch]:
    """``base:last:pid:epoch:seq:ts;...``; ValueError for anything else, or a batch that ends before it starts or
    has a negative offset or producer id."""
    batches = []
    for item in text.split(";"):
        base, last, pid, epoch, seq, ts = (int(v) for v in item.split(":"))
        if base < 0 or last < base or pid < 0:
            raise ValueError(f"bad producer batch {item!r}")
        batches.append(ReplicatedBatch(base, last, pid, epoch, seq, ts))
    return batches
