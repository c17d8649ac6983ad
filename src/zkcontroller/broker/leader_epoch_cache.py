"""One replica's leader epochs (Kafka 2.8's ``LeaderEpochFileCache``): for each leader epoch under which records
reached the log, the offset of its first record. Truncation on fetch reads it on both sides: the leader answers
where the follower's last epoch ended in its own log (`end_offset_for`), the follower finds where that epoch ended
in its log and truncates there.

It is filled as Kafka fills it: a new leader assigns (its epoch, its log end offset) (``Partition.makeLeader``);
a follower assigns each fetched batch's ``partitionLeaderEpoch`` at the batch's base offset
(``Log.maybeAssignEpochStartOffset``). An entry is only added for a new epoch, or the same epoch at a lower start;
entries at or above it that it conflicts with go first (Kafka's WARN when that drops more than an empty epoch).
A truncation of the log removes the entries starting at or above its end (``truncateFromEnd``). Logs start at 0
here, so ``truncateFromStart`` has nothing to do.

Kafka writes the cache through to ``leader-epoch-checkpoint`` on each change; here each change is handed to
``flush`` (a broker process's `LogOffsetsJournal.record_epochs`), so a restart keeps the last epoch.
"""

from __future__ import annotations

import logging
from bisect import bisect_right
from collections.abc import Callable, Iterable

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.inter_broker import EpochEntry

log = logging.getLogger("kafka.server.epoch.LeaderEpochFileCache")

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class LeaderEpochCache:
    def __init__(self, tp: TopicPartition, entries: Iterable[EpochEntry] = (),
                 flush: Callable[[TopicPartition, tuple[EpochEntry, ...]], None] | None = None) -> None:
        self.topic_partition = tp
        self._entries: list[EpochEntry] = []
        self.flush = flush
        """Called with every entry after each change (Kafka's ``checkpoint.write``)."""
        for entry in entries:
            self._assign(EpochEntry(*entry))

    def __repr__(self) -> str:
        return f"LeaderEpochCache({self.topic_partition}, {self._entries})"

    @property
    def entries(self) -> tuple[EpochEntry, ...]:
        return tuple(self._entries)

    @property
    def latest_epoch(self) -> int:
        """The latest epoch with an entry (Kafka's ``latestEpoch``), -1 when there is none."""
        return self._entries[-1].epoch if self._entries else UNDEFINED_EPOCH

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Kafka's ``assign``: add (epoch, start offset) when it is a new epoch or moves the latest one's start
        down; ValueError for a negative epoch or offset (Kafka's IllegalArgumentException). True if changed."""
        if self._assign(EpochEntry(epoch, start_offset)):
            self._flush()
            return True
        return False

    def _assign(self, entry: EpochEntry) -> bool:
        if entry.epoch < 0 or entry.start_offset < 0:
            raise ValueError(f"Received invalid partition leader epoch entry {entry}")
        entries = self._entries
        if entries and entry.epoch == entries[-1].epoch and entry.start_offset >= entries[-1].start_offset:
            return False
        removed = []
        while entries and (entries[-1].epoch >= entry.epoch or entries[-1].start_offset >= entry.start_offset):
            removed.append(entries.pop())
        if len(removed) > 1 or (removed and removed[0].start_offset != entry.start_offset):
            # logged before the new entry is added, so its count leaves it out (Kafka's warn precedes the put)
            log.warning("[LeaderEpochCache %s] New epoch entry %s caused truncation of conflicting entries %s. Cache "
                        "now contains %d entries.", self.topic_partition, entry,
                        "ListBuffer(" + ", ".join(map(str, removed)) + ")", len(entries))
        entries.append(entry)
        return True

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """Kafka's ``endOffsetFor``: (the largest epoch at most ``requested_epoch``, where it ends: the start of
        the next epoch, or the log end for the latest). Below every epoch: (``requested_epoch``, the first epoch's
        start). Undefined (-1, -1) for an undefined epoch or one above every epoch known."""
        entries = self._entries
        if requested_epoch == UNDEFINED_EPOCH or not entries:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if entries[-1].epoch == requested_epoch:
            return requested_epoch, log_end_offset
        higher = bisect_right(entries, requested_epoch, key=_epoch)
        if higher == len(entries):
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if higher == 0:
            return requested_epoch, entries[0].start_offset
        return entries[higher - 1].epoch, entries[higher].start_offset

    def epochs_in(self, base_offset: int, end_offset: int) -> tuple[EpochEntry, ...]:
        """The epochs of the records in [base, end): (the epoch of ``base_offset``, base), then each entry starting
        within the range; empty for an empty range or records older than every entry. What a leader stamps on the
        batches it serves (their ``partitionLeaderEpoch``)."""
        entries = self._entries
        if end_offset <= base_offset or not entries:
            return ()
        latest = entries[-1]
        if latest.start_offset <= base_offset:  # the common case: the records are all of the latest epoch
            return (EpochEntry(latest.epoch, base_offset),)
        at = bisect_right(entries, base_offset, key=_start_offset)
        served = [] if at == 0 else [EpochEntry(entries[at - 1].epoch, base_offset)]
        for entry in entries[at:]:
            if entry.start_offset >= end_offset:
                break
            served.append(entry)
        return tuple(served)

    def truncate_from_end(self, end_offset: int) -> None:
        """Kafka's ``truncateFromEnd``: the log now ends at ``end_offset``; entries starting at or after it go."""
        entries = self._entries
        if end_offset < 0 or not entries or entries[-1].start_offset < end_offset:
            return
        while entries and entries[-1].start_offset >= end_offset:
            entries.pop()
        self._flush()

    def _flush(self) -> None:
        if self.flush is not None:
            self.flush(self.topic_partition, tuple(self._entries))


def _epoch(entry: EpochEntry) -> int:
    return entry.epoch


def _start_offset(entry: EpochEntry) -> int:
    return entry.start_offset
