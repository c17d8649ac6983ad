"""One partition's replication state on one broker (Kafka's ``Partition`` and ``Replica``), offsets only.

Every replica has a log end offset (LEO); the leader also tracks each follower's LEO and when it was last
caught up, keeps the high watermark (HW = the smallest LEO among the ISR and the followers caught up within
``replica.lag.time.max.ms``, never moving back) and decides ISR changes: shrink a follower not caught up within
that lag time, expand one whose LEO reached the HW (and the start of the current leader epoch). A proposed ISR
change is *pending* until the controller (or ZooKeeper) confirms it; meanwhile no other change is proposed and
the HW counts the larger of the two ISRs (Kafka 2.8's ``maximalIsr``). Pure state: the caller passes the time
and ships proposals.
"""

from __future__ import annotations

import logging
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from zkcontroller.broker.leader_epoch_cache import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochCache
from zkcontroller.broker.producer_state import ProducerStateManager
from zkcontroller.model import LeaderAndIsr, TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import EpochEntry, ReplicatedBatch, TimeIndexEntry
from zkcontroller.scala_sets import immutable_set, int_hash

log = logging.getLogger("kafka.cluster.Partition")

UNKNOWN_OFFSET = -1
_REFUSALS = frozenset({Errors.INVALID_UPDATE_VERSION, Errors.FENCED_LEADER_EPOCH, Errors.UNKNOWN_TOPIC_OR_PARTITION})
"""Per-partition AlterIsr errors Kafka does not retry: our leader epoch or partition-state version is stale."""
_NOT_APPLIED = frozenset({Errors.INELIGIBLE_REPLICA})
"""Beyond 2.8 (KIP-841, answered by our controller): the change was certainly not applied, so the leader goes back
to its committed ISR, as Kafka 3.3's ``handleAlterPartitionError``."""


class FollowerAppendError(Exception):
    """A fetched append Kafka's ``Log.append`` throws on for a follower (``exception``: Kafka's exception class and
    message, as the fetcher logs it before marking the partition failed). Nothing was appended."""

    def __init__(self, exception: str) -> None:
        super().__init__(exception)
        self.exception = exception


def _appended_offsets(start: int, end: int, batches: tuple[ReplicatedBatch, ...]) -> list[int]:
    """The offsets of an append's records as its batches hold them, in order (Kafka's message lists them): each
    producer batch's, and the plain records' before, between and after them."""
    offsets: list[int] = []
    at = start
    for batch in batches:
        offsets.extend(range(at, batch.base_offset))
        offsets.extend(range(batch.base_offset, batch.last_offset + 1))
        at = max(at, batch.last_offset + 1)
    offsets.extend(range(at, end))
    return offsets


@dataclass(slots=True)
class FollowerState:
    """What the leader knows of one follower (Kafka's remote ``Replica``)."""

    broker_id: int
    log_end_offset: int = UNKNOWN_OFFSET
    last_caught_up_time_ms: int = 0
    last_fetch_leader_log_end_offset: int = 0
    last_fetch_time_ms: int = 0

    def update_fetch_state(self, fetch_offset: int, fetch_time_ms: int, leader_end_offset: int) -> None:
        """Kafka's ``Replica.updateFetchState``: caught up at this fetch if it asked for the leader's LEO, or at
        the previous fetch if it now has what the leader had then."""
        if fetch_offset >= leader_end_offset:
            self.last_caught_up_time_ms = max(self.last_caught_up_time_ms, fetch_time_ms)
        elif fetch_offset >= self.last_fetch_leader_log_end_offset:
            self.last_caught_up_time_ms = max(self.last_caught_up_time_ms, self.last_fetch_time_ms)
        self.log_end_offset = fetch_offset
        self.last_fetch_leader_log_end_offset = leader_end_offset
        self.last_fetch_time_ms = fetch_time_ms

    def reset_last_caught_up_time(self, leader_end_offset: int, now_ms: int, last_caught_up_time_ms: int) -> None:
        self.last_fetch_leader_log_end_offset = leader_end_offset
        self.last_fetch_time_ms = now_ms
        self.last_caught_up_time_ms = last_caught_up_time_ms


class TimeIndex:
    """Kafka's time index, offsets only: for each batch appended (as leader, or fetched as follower: the leader
    serves its entries in the fetched batches' headers, `entries_in`) whose max timestamp is above every
    earlier one, that max timestamp, the batch's base offset and its first record's timestamp (a v2 batch's base
    timestamp plus the first record's delta; for a legacy message set, those of the v2 batch Kafka 2.8's
    LogValidator converts it to: its messages' first and largest timestamps, none for magic 0, the append time for
    a LogAppendTime topic, `log_validator.validate`). Kept only while increasing, as Kafka's
    ``TimeIndex.maybeAppend``, so the first batch whose max timestamp reaches a target (``Log.fetchOffsetByTimestamp``'s
    search) is a bisection. A leader's batch whose records' timestamps are not all at or below its first gives one
    entry per record that is a new running maximum instead (`append_records`: its offset, its timestamp as first and
    max), so that a lookup names the record inside the batch that Kafka's scan names. Two arrays of 64-bit ints (offset,
    max timestamp: 16 bytes an entry), not tuples, the first timestamp kept apart for the few entries whose first is
    below their max: an entry per produced batch that raises the max, plus one per record that raises it inside a
    batch.

    The entries kept are written through to ``journal`` when set (a broker process's `LogOffsetsJournal`, as Kafka's
    ``.timeindex`` files outlive the process): the callers (the leader's Produce, a follower's fetch) append here and
    need not know; a fetched answer's entries go in one call (`extend`), not one per batch. A truncation is journaled
    by the log end's own line (`Partition.truncate_to`)."""

    __slots__ = ("_first", "_max", "_offset", "journal", "journal_records", "topic_partition")

    def __init__(self, topic_partition: TopicPartition | None = None) -> None:
        self._max = array("q")
        self._offset = array("q")
        self._first: dict[int, int] = {}
        """The first timestamp of each entry whose first is below its max (by position): a batch whose records were
        not read (an older journal's, a header fetched alone). A record's own entry, every one a leader makes, has
        none."""
        self.topic_partition = topic_partition
        self.journal: Callable[[TopicPartition, Sequence[tuple[int, int, int]]], None] | None = None
        """Called with the entries each `append` or `extend` kept, (base offset, first, max timestamp) each (plain
        tuples: a `TimeIndexEntry` costs a Python-level ``__new__`` per produced batch); not when none was."""
        self.journal_records: Callable[[TopicPartition, list[int], list[int]], None] | None = None
        """Where `append_records` journals its records' entries when set, as their offsets and timestamps (first and
        max alike): no tuple per record, a line formatted in one pass; else through ``journal``."""

    def __len__(self) -> int:
        return len(self._max)

    def append(self, base_offset: int, first_timestamp: int, max_timestamp: int) -> bool:
        """A batch appended at ``base_offset``; ignored unless its max timestamp is the largest yet (and it begins
        after the last batch kept: a follower's fetched entries are the leader's word, checked to keep the order). A
        first timestamp above the max (a client's header can say so) is kept as the max, by leader and followers
        alike, so that both answer a lookup the same. True when kept (and journaled)."""
        first = self._keep(base_offset, first_timestamp, max_timestamp)
        if first is None:
            return False
        if self.journal is not None and self.topic_partition is not None:
            self.journal(self.topic_partition, ((base_offset, first, max_timestamp),))
        return True

    def extend(self, entries: Iterable[tuple[int, int, int]]) -> None:
        """`append` each of ``entries`` (a fetched answer's), journaling those kept together."""
        kept = [(base, first, largest) for base, first_timestamp, largest in entries
                if (first := self._keep(base, first_timestamp, largest)) is not None]
        if kept and self.journal is not None and self.topic_partition is not None:
            self.journal(self.topic_partition, kept)

    def _keep(self, base_offset: int, first_timestamp: int, max_timestamp: int) -> int | None:
        """`append`'s rule: the first timestamp kept, None if the entry is not."""
        if max_timestamp >= 0 and (not self._max or (max_timestamp > self._max[-1]
                                                     and base_offset > self._offset[-1])):
            first = min(first_timestamp, max_timestamp)
            self._max.append(max_timestamp)
            self._offset.append(base_offset)
            if first != max_timestamp:
                self._first[len(self._max) - 1] = first
            return first
        return None

    @property
    def last_timestamp(self) -> int:
        """The largest timestamp indexed, -1 for none (a batch whose max is not above it adds nothing)."""
        return self._max[-1] if self._max else -1

    def append_records(self, base_offset: int, records: Sequence[tuple[int, int]]) -> None:
        """A leader's batch at ``base_offset`` whose records' timestamps are not all its first's: the records that
        are new running maxima, (offset delta, timestamp) each (`record_timestamps.running_maxima`), each an entry
        of its own (its offset, its timestamp as first and max), journaled together. ``records`` increase in both
        (`running_maxima` gives them so, above the index's largest timestamp): appended whole, not one by one."""
        if not records:
            return
        if records[0][1] < 0 or (self._max and (records[0][1] <= self._max[-1] or base_offset <= self._offset[-1])):
            self.extend([(base_offset + delta, timestamp, timestamp) for delta, timestamp in records])
            return  # not above the index (a caller's stale word): entry by entry, by `append`'s rule
        offsets = [base_offset + delta for delta, _ in records]  # increasing, as their timestamps
        timestamps = [timestamp for _, timestamp in records]
        self._offset.extend(offsets)
        self._max.extend(timestamps)
        if self.topic_partition is None:
            return
        if self.journal_records is not None:
            self.journal_records(self.topic_partition, offsets, timestamps)
        elif self.journal is not None:
            self.journal(self.topic_partition, list(zip(offsets, timestamps, timestamps, strict=True)))

    def lookup(self, target: int) -> tuple[int, int] | None:
        """(timestamp, offset) of the first entry whose max timestamp is >= ``target``, None if none: its first
        record when its timestamp reaches the target, else its offset with its max timestamp. A leader's entries
        are the log's running maxima, record by record (first = max: Kafka's answer exactly, the first record
        reaching the target); an entry whose first timestamp is below its max comes from a batch whose records were
        not read (read back from an older journal, or a batch header fetched alone), whose answer past the first is
        the batch's base offset with its max timestamp, not the record inside it Kafka names."""
        at = bisect_left(self._max, target)
        if at == len(self._max):
            return None
        first = self._first.get(at, self._max[at]) if self._first else self._max[at]
        return (first if first >= target else self._max[at]), self._offset[at]

    def entries_in(self, start_offset: int, end_offset: int) -> tuple[TimeIndexEntry, ...]:
        """The entries whose batches begin in [``start_offset``, ``end_offset``), what a fetch of those offsets
        serves a follower (at most one per record, as each batch holds one at least)."""
        at, stop = bisect_left(self._offset, start_offset), bisect_left(self._offset, end_offset)
        firsts, maxima = self._first, self._max
        return tuple(TimeIndexEntry(self._offset[i], firsts.get(i, maxima[i]), maxima[i]) for i in range(at, stop))

    def entries(self) -> tuple[TimeIndexEntry, ...]:
        """Every entry, in offset order (what a restart keeps: `LogOffsetsJournal`, `ReplicaManager.log_offsets`)."""
        return self.entries_in(0, self._offset[-1] + 1) if self._offset else ()

    def copy_below(self, other: TimeIndex, end_offset: int) -> None:
        """``other``'s entries of batches beginning below ``end_offset``, after this index's by `append`'s rule (as
        arrays when this one is empty: a restart's, with no tuple per entry); not journaled."""
        if self._offset:
            self.extend(other.entries_in(0, end_offset))
            return
        stop = bisect_left(other._offset, end_offset)
        self._offset = other._offset[:stop]
        self._max = other._max[:stop]
        self._first = {position: first for position, first in other._first.items() if position < stop}

    def truncate(self, end_offset: int) -> None:
        """Forget the batches at or above ``end_offset`` (``Log.truncateTo``); one comparison when none is."""
        if self._offset and end_offset <= self._offset[-1]:
            at = bisect_left(self._offset, end_offset)
            del self._max[at:], self._offset[at:]
            if self._first:
                for position in [p for p in self._first if p >= at]:
                    del self._first[position]


@dataclass(frozen=True, slots=True)
class IsrProposal:
    """An ISR change the leader wants made: the state to write and the controller epoch to stamp on it."""

    topic_partition: TopicPartition
    leader_and_isr: LeaderAndIsr
    controller_epoch: int


class Partition:
    def __init__(self, tp: TopicPartition, local_broker_id: int, replica_lag_time_max_ms: int = 30_000) -> None:
        self.topic_partition = tp
        self.local_broker_id = local_broker_id
        self.replica_lag_time_max_ms = replica_lag_time_max_ms
        self._log_end_offset = 0
        self._high_watermark = 0
        self.journal: Callable[[TopicPartition, int, int], None] | None = None
        """Where each change of the two offsets is written through (a broker process's `LogOffsetsJournal`)."""
        self.leader = -1
        self.leader_epoch = -1
        self.leader_epoch_start_offset = 0
        self.epoch_cache = LeaderEpochCache(tp)
        """Each leader epoch's first offset in this log (`leader_epoch_cache`), kept across restarts by a broker
        process's journal. Changed only through this class, which keeps `last_fetched_epoch` in step."""
        self.last_fetched_epoch = UNDEFINED_EPOCH
        """The epoch cache's latest epoch (Kafka's ``latestEpoch``), read per partition by every fetch: -1 when
        unknown (a new log, or one whose epochs a restart did not find)."""
        self.isr: tuple[int, ...] = ()
        self.replicas: tuple[int, ...] = ()
        self.zk_version = 0
        self.controller_epoch = 0
        self.pending_isr: tuple[int, ...] | None = None
        self.isr_update_refused = False
        """The controller refused our state as stale: propose nothing until a LeaderAndIsr brings a new one."""
        self.followers: dict[int, FollowerState] = {}
        self.on_high_watermark_increase: Callable[[TopicPartition], None] | None = None
        """Called when the leader's HW moves up: acks=-1 produce requests wait on it (``DelayedProduce``)."""
        self.on_leader_append: Callable[[TopicPartition], None] | None = None
        """Called when records are appended as leader and the HW stayed (Kafka's ``LeaderHwChange.Same``: the
        fetch purgatory's ``checkAndComplete``): a follower's fetch held at the old log end completes."""
        self.producer_state = ProducerStateManager(tp)
        """Idempotent producers' last batches in this log, appended here as leader or replicated as follower
        (`producer_state`): kept across leadership changes, so a new leader finds a producer's retries. It is told
        the high watermark (`high_watermark`'s setter), so a truncation to it finds every producer."""
        self.producer_state.high_watermark = 0
        self.time_index = TimeIndex(tp)
        """The batches' timestamps this replica appended, as leader or follower, for ListOffsets by timestamp
        (`TimeIndex`), written through to a broker process's journal (its ``journal``) and restored from it on a
        restart (`restore_time_index`), as Kafka reads its ``.timeindex`` files."""


    @property
    def log_end_offset(self) -> int:
        return self._log_end_offset

    @log_end_offset.setter
    def log_end_offset(self, value: int) -> None:
        self._log_end_offset = value
        if self.journal is not None:
            self.journal(self.topic_partition, value, self._high_watermark)

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @high_watermark.setter
    def high_watermark(self, value: int) -> None:
        self._high_watermark = value
        self.producer_state.high_watermark = value
        if self.journal is not None:
            self.journal(self.topic_partition, self._log_end_offset, value)
    def __repr__(self) -> str:
        return (f"Partition({self.topic_partition}, leader={self.leader}, epoch={self.leader_epoch}, isr={self.isr}, "
                f"leo={self.log_end_offset}, hw={self.high_watermark})")

    @property
    def is_leader(self) -> bool:
        return self.leader == self.local_broker_id

    @property
    def maximal_isr(self) -> tuple[int, ...]:
        """The ISR, plus a pending expansion's new member (a pending shrink still counts the old members)."""
        if self.pending_isr is None:
            return self.isr
        return tuple(sorted(set(self.isr) | set(self.pending_isr)))

    def _log(self, level: int, message: str) -> None:
        log.log(level, "[Partition %s broker=%d] %s", self.topic_partition, self.local_broker_id, message)

    def _proposed_state(self, new_isr: tuple[int, ...]) -> str:
        """Kafka's ``PendingExpandIsr`` / ``PendingShrinkIsr`` as printed, from the committed ISR (which a pending
        proposal leaves as it was) and the ISR proposed."""
        added = [r for r in new_isr if r not in self.isr]
        if added:  # one member at a time (maybeExpandIsr)
            return f"PendingExpandIsr(isr={_isr_set(self.isr)}, newInSyncReplicaId={added[0]})"
        # ``(isr - localBrokerId).filter(..)``: a part of the ISR, so a HashSet when the ISR is one
        removed = [r for r in self.isr if r not in new_isr]
        return (f"PendingShrinkIsr(isr={_isr_set(self.isr)}, "
                f"outOfSyncReplicaIds={immutable_set(removed, int_hash, len(self.isr))})")

    # ------------------------------------------------------------------ leadership (from LeaderAndIsr)

    def make_leader(self, leader_epoch: int, isr: tuple[int, ...], replicas: tuple[int, ...], zk_version: int,
                    controller_epoch: int, now_ms: int) -> None:
        """Kafka's ``makeLeader``: on a new leader epoch, followers in the ISR count as caught up now. A broker
        that was not leading also forgets what it knew of its followers' fetches (``updateFetchState`` with an
        unknown offset, fetch time 0 and leader LEO -1), so a follower's first fetch counts as caught up only if
        it asks for the leader's LEO, not merely for the LEO at the election."""
        new_leader = not self.is_leader
        new_epoch = leader_epoch != self.leader_epoch or new_leader
        self.leader, self.isr, self.replicas = self.local_broker_id, isr, replicas
        self.zk_version, self.controller_epoch, self.pending_isr = zk_version, controller_epoch, None
        self.isr_update_refused = False
        self.followers = {r: self.followers.get(r, FollowerState(r)) for r in replicas if r != self.local_broker_id}
        if new_epoch:
            self.leader_epoch = leader_epoch
            self.leader_epoch_start_offset = self.log_end_offset
            for follower in self.followers.values():
                caught_up = now_ms if follower.broker_id in isr else 0
                follower.reset_last_caught_up_time(self.log_end_offset, now_ms, caught_up)
        # Kafka's makeLeader: so that a follower with entries of a later epoch than our log's truncates correctly
        if self.epoch_cache.assign(leader_epoch, self.log_end_offset):
            self.last_fetched_epoch = self.epoch_cache.latest_epoch
        if new_leader:
            for follower in self.followers.values():
                follower.update_fetch_state(UNKNOWN_OFFSET, 0, UNKNOWN_OFFSET)
        self.maybe_increment_high_watermark(now_ms)

    def make_follower(self, leader: int, leader_epoch: int, isr: tuple[int, ...], replicas: tuple[int, ...],
                      zk_version: int, controller_epoch: int, truncate_on_fetch: bool = False) -> None:
        """Kafka's ``makeFollower``. With truncation on fetch (IBP 2.7-IV1+) and a known last epoch, the log is
        kept: the new leader's answer to the first fetch says where it diverges (`diverging_epoch`).
        Otherwise (Kafka's path for a log without epochs) a new follower truncates to its high watermark: what it
        may hold that the new leader lacks lies above it. Truncating to the HW when the fetch would do loses
        acknowledged records if this follower is elected before it fetches again (docs/soak.md, F2)."""
        if (leader_epoch != self.leader_epoch and self.log_end_offset > self.high_watermark
                and not (truncate_on_fetch and self.last_fetched_epoch >= 0)):
            self.truncate_to(self.high_watermark)
        self.leader, self.leader_epoch, self.isr, self.replicas = leader, leader_epoch, isr, replicas
        self.zk_version, self.controller_epoch, self.pending_isr = zk_version, controller_epoch, None
        self.followers = {}

    def make_offline(self) -> None:
        """Hosted with no known leader (its LeaderAndIsr named one that was not alive): neither leads nor follows.
        The log, and so its producer state, is kept."""
        self.leader, self.pending_isr, self.followers = -1, None, {}

    # ------------------------------------------------------------------ the log, offsets only

    def append_as_leader(self, records: int, now_ms: int) -> int:
        if not self.is_leader:
            raise ValueError(f"broker {self.local_broker_id} does not lead {self.topic_partition}")
        if records < 0:
            raise ValueError(f"cannot append {records} records to {self.topic_partition}")
        if records and self.last_fetched_epoch != self.leader_epoch:  # Kafka stamps the batch with our epoch
            self.epoch_cache.assign(self.leader_epoch, self.log_end_offset)
            self.last_fetched_epoch = self.epoch_cache.latest_epoch
        self.log_end_offset += records
        if not self.maybe_increment_high_watermark(now_ms) and records and self.on_leader_append is not None:
            self.on_leader_append(self.topic_partition)  # the HW's own hook did not fire: wake held fetches
        return self.log_end_offset

    def append_as_follower(self, records: int, leader_high_watermark: int,
                           batches: tuple[ReplicatedBatch, ...] = (), epochs: tuple[EpochEntry, ...] = (),
                           timestamps: tuple[TimeIndexEntry, ...] = ()) -> None:
        """A fetched answer: append, with its producer batches into the producer state, its batches' leader
        epochs into the epoch cache (Kafka's ``maybeAssignEpochStartOffset`` per batch: a no-op for the epoch the
        cache already ends with) and its batches' timestamps into the time index (``LogSegment.append``, through
        `TimeIndex.extend`: the leader's rule, only increasing ones, journaled in one line), those within the records
        appended (a batch beginning below the log end is already indexed here, or was not by the leader); then
        take the leader's HW clamped to the log (Kafka's ``Log.updateHighWatermark`` on a follower), even when
        lower than ours: a newly elected leader may not have advanced its HW yet, and the follower copies it, as
        Kafka's does.

        As Kafka's ``Log.appendAsFollower`` (``validateAndAssignOffsets = false``), the batches' offsets are taken as
        given, checked only to increase by last offset (``analyzeAndValidateRecords``' ``monotonic``): a batch may
        begin inside the one before it (even below the log end, the fetcher having checked that the first begins
        at or above it: ``UnexpectedAppendOffsetException``), and its producer's entry takes it, unchecked, as any
        replicated batch. Last offsets that do not increase (none ending before the log end either) are
        `FollowerAppendError`, Kafka's ``OffsetsOutOfOrderException``, with nothing appended: the fetch codec
        refuses such a record set on the wire; this is the same check for answers handed over in process."""
        if records < 0:
            raise ValueError(f"cannot append {records} records to {self.topic_partition}")
        start = self.log_end_offset
        end = start + records
        if batches:
            last = start - 1
            for batch in batches:
                if batch.last_offset <= last:
                    offsets = ", ".join(map(str, _appended_offsets(start, end, batches)))
                    raise FollowerAppendError(
                        "kafka.common.OffsetsOutOfOrderException: Out of order offsets found in append to "
                        f"{self.topic_partition}: List({offsets})")
                last = batch.last_offset
            self.producer_state.append_replicated(b for b in batches if b.last_offset < end)
        if epochs and (len(epochs) > 1 or epochs[0].epoch != self.last_fetched_epoch):
            for epoch, start_offset in epochs:
                if start <= start_offset < end:
                    self.epoch_cache.assign(epoch, start_offset)
            self.last_fetched_epoch = self.epoch_cache.latest_epoch
        if timestamps:
            self.time_index.extend(entry for entry in timestamps if start <= entry.base_offset < end)
        self.log_end_offset = end
        self.high_watermark = max(0, min(leader_high_watermark, end))

    def truncate_to(self, offset: int) -> None:
        """Kafka's ``Log.truncateTo``: the log end goes back to ``offset`` (no effect at or beyond it), the
        producer state loses the batches above it (`ProducerStateManager.truncate`) and the epoch cache the epochs
        starting at or after the new end (always, as Kafka: an epoch this broker began as leader without appending
        is dropped even by a truncation that keeps the log)."""
        if offset < self.log_end_offset:
            self.log_end_offset = max(0, offset)
            self.producer_state.truncate(self.log_end_offset)
            self.time_index.truncate(self.log_end_offset)
        self.epoch_cache.truncate_from_end(self.log_end_offset)
        self.last_fetched_epoch = self.epoch_cache.latest_epoch
        self.high_watermark = min(self.high_watermark, self.log_end_offset)

    def restore_epochs(self, entries: tuple[EpochEntry, ...]) -> None:
        """A restart's epochs from the journal (Kafka reads ``leader-epoch-checkpoint``), trimmed to the log end as
        Kafka's ``Log`` does on load."""
        self.epoch_cache = LeaderEpochCache(self.topic_partition, entries, self.epoch_cache.flush)
        self.epoch_cache.truncate_from_end(self.log_end_offset)
        self.last_fetched_epoch = self.epoch_cache.latest_epoch

    def restore_producers(self, batches: tuple[ReplicatedBatch, ...], now_ms: int, expiration_ms: int,
                          snapshots: tuple[int, ...] = ()) -> None:
        """A restart's producer batches and snapshot offsets from the journal (Kafka's producer snapshots and log
        recovery), those within the log end, less the producers expired meanwhile (`ProducerStateManager.restore`)."""
        self.producer_state.restore(batches, self.log_end_offset, now_ms, expiration_ms, snapshots)

    def restore_time_index(self, entries: Iterable[TimeIndexEntry] | TimeIndex) -> None:
        """A restart's time index entries from the journal (Kafka loads the ``.timeindex`` files), those of batches
        beginning below the log end, as Kafka's recovery truncates the index with the log; the journal's index read
        back is copied array to array (`TimeIndex.copy_below`). Appended before the journal is hooked up: they are
        on disk already."""
        if isinstance(entries, TimeIndex):
            self.time_index.copy_below(entries, self.log_end_offset)
        else:
            self.time_index.extend(entry for entry in entries if entry.base_offset < self.log_end_offset)

    def diverging_epoch(self, last_fetched_epoch: int, fetch_offset: int) -> tuple[int, int] | None:
        """The leader's side of truncation on fetch (Kafka 2.8's ``Partition.readRecords`` with a
        ``lastFetchedEpoch``): the follower's last epoch as our epoch cache knows it (the largest epoch not above
        it) and where that ended here (`LeaderEpochCache.end_offset_for`), when the follower's log diverges from
        ours (that epoch is older than the follower's, or ended before the fetch offset); None when it does not.
        (-1, -1) when the cache cannot tell (Kafka answers OFFSET_OUT_OF_RANGE)."""
        epoch, end = self.epoch_cache.end_offset_for(last_fetched_epoch, self.log_end_offset)
        if epoch == UNDEFINED_EPOCH or end == UNDEFINED_EPOCH_OFFSET:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if epoch < last_fetched_epoch or end < fetch_offset:
            return epoch, end
        return None

    def maybe_increment_high_watermark(self, now_ms: int) -> bool:
        """Kafka's ``maybeIncrementLeaderHW``: HW = the smallest LEO of the leader and of each follower in the
        maximal ISR or caught up within ``replica.lag.time.max.ms`` (else a follower rejoining under steady
        appends could chase the HW for ever); it never moves back (a follower of unknown LEO holds it). As in
        Kafka it is only evaluated on an append, a fetch that moves a LEO, a new leadership or an ISR change, not
        when time alone lets a follower's caught-up time expire."""
        maximal_isr = self.maximal_isr
        new_hw = self.log_end_offset
        for follower in self.followers.values():
            if follower.log_end_offset < new_hw and (
                    now_ms - follower.last_caught_up_time_ms <= self.replica_lag_time_max_ms
                    or follower.broker_id in maximal_isr):
                new_hw = follower.log_end_offset
        if new_hw > self.high_watermark:
            self.high_watermark = new_hw
            if self.on_high_watermark_increase is not None:
                self.on_high_watermark_increase(self.topic_partition)
            return True
        return False

    # ------------------------------------------------------------------ fetches from followers (leader side)

    def fetch_error(self, replica_id: int, current_leader_epoch: int, fetch_offset: int) -> Errors:
        """What a leader answers before reading, in Kafka's order (``getLocalLog``, then the log read): the
        leader epoch first (FENCED_LEADER_EPOCH when ours is newer, UNKNOWN_LEADER_EPOCH when older), then
        leadership, then the offset. NONE when the fetch may be read; a replica outside the assignment is then
        answered without records (see `is_assigned_follower`). A negative epoch (-1: Fetch v0-v8, or a fetcher
        that knows none) is Kafka's ``Optional.empty`` and skips the epoch check, as ``checkCurrentLeaderEpoch``."""
        if current_leader_epoch >= 0:
            if current_leader_epoch < self.leader_epoch:
                return Errors.FENCED_LEADER_EPOCH
            if current_leader_epoch > self.leader_epoch:
                return Errors.UNKNOWN_LEADER_EPOCH
        if not self.is_leader:
            return Errors.NOT_LEADER_OR_FOLLOWER
        if fetch_offset > self.log_end_offset or fetch_offset < 0:
            return Errors.OFFSET_OUT_OF_RANGE
        return Errors.NONE

    def is_assigned_follower(self, replica_id: int) -> bool:
        """Kafka's ``updateFollowerFetchState`` finds the replica: only assigned followers' fetches are recorded
        and get records."""
        return replica_id in self.followers

    def record_follower_fetch(self, replica_id: int, fetch_offset: int, now_ms: int) -> IsrProposal | None:
        """A served fetch: the follower's LEO and caught-up time, the HW, and maybe an ISR expansion. As Kafka's
        ``updateFollowerFetchState``, the HW is only looked at when the follower's LEO moved: nothing else a
        fetch changes can raise it (a proposed expansion only adds a member to the maximal ISR)."""
        follower = self.followers[replica_id]
        previous = follower.log_end_offset
        follower.update_fetch_state(fetch_offset, now_ms, self.log_end_offset)
        proposal = self.maybe_expand_isr(replica_id)
        if follower.log_end_offset != previous:
            self.maybe_increment_high_watermark(now_ms)
        return proposal

    # ------------------------------------------------------------------ ISR upkeep (leader side)

    def maybe_expand_isr(self, replica_id: int) -> IsrProposal | None:
        """Kafka's ``maybeExpandIsr``: a follower outside the ISR whose LEO reached the HW and the start of
        this leader epoch joins it (proposed; applied when confirmed)."""
        if self.pending_isr is not None or self.isr_update_refused or replica_id in self.isr:
            return None
        follower = self.followers.get(replica_id)
        if follower is None or follower.log_end_offset < max(self.high_watermark, self.leader_epoch_start_offset):
            return None
        new_isr = (*self.isr, replica_id)  # Kafka's `isr + id` on a small Scala Set keeps insertion order
        # Kafka 2.8's expandIsr writes no INFO line (2.6's "Expanding ISR" went with AlterIsr): the expansion
        # shows as "ISR updated to ..." once confirmed, and `_propose`'s DEBUG "Enqueued ISR change" before.
        return self._propose(new_isr)

    def out_of_sync_replicas(self, now_ms: int, max_lag_ms: int) -> list[int]:
        """Followers in the ISR behind the leader's LEO and not caught up within ``max_lag_ms``."""
        return [r for r in self.isr if r != self.local_broker_id and (f := self.followers.get(r)) is not None
                and f.log_end_offset != self.log_end_offset and now_ms - f.last_caught_up_time_ms > max_lag_ms]

    def maybe_shrink_isr(self, now_ms: int, max_lag_ms: int) -> IsrProposal | None:
        """Kafka's ``maybeShrinkIsr`` (the ``isr-expiration`` task)."""
        if not self.is_leader or self.pending_isr is not None or self.isr_update_refused:
            return None
        out_of_sync = self.out_of_sync_replicas(now_ms, max_lag_ms)
        if not out_of_sync:
            return None
        new_isr = tuple(r for r in self.isr if r not in out_of_sync)
        lagging = " ".join(f"(brokerId: {r}, endOffset: {self.followers[r].log_end_offset})" for r in out_of_sync)
        self._log(logging.INFO, f"Shrinking ISR from {_ids(self.isr)} to {_ids(new_isr)}. Leader: (highWatermark: "
                  f"{self.high_watermark}, endOffset: {self.log_end_offset}). Out of sync replicas: {lagging}.")
        proposal = self._propose(new_isr)
        self.maybe_increment_high_watermark(now_ms)  # as Kafka's maybeShrinkIsr after shrinkIsr
        return proposal

    def _propose(self, new_isr: tuple[int, ...]) -> IsrProposal:
        lai = LeaderAndIsr(self.local_broker_id, self.leader_epoch, new_isr, self.zk_version)
        if log.isEnabledFor(logging.DEBUG):  # Kafka's sendAlterIsrRequest
            self._log(logging.DEBUG, f"Enqueued ISR change to state {_leader_and_isr(lai)} after transition to "
                      f"{self._proposed_state(new_isr)}")
        self.pending_isr = new_isr
        return IsrProposal(self.topic_partition, lai, self.controller_epoch)

    def is_pending(self, proposal: IsrProposal) -> bool:
        """Kafka's ``isrState == proposedIsrState``: ``proposal`` is the change in flight for this leadership."""
        return (self.is_leader and proposal.leader_and_isr.leader_epoch == self.leader_epoch
                and self.pending_isr == proposal.leader_and_isr.isr)

    def should_resend(self, proposal: IsrProposal, result: LeaderAndIsr | Errors) -> bool:
        """After `on_isr_update`: an error other than a refusal leaves the proposal pending and it goes again
        (Kafka's ``sendAlterIsrRequest(proposedIsrState)``)."""
        return (isinstance(result, Errors) and result not in _REFUSALS and result not in _NOT_APPLIED
                and self.is_pending(proposal))

    def on_isr_update(self, proposal: IsrProposal, result: LeaderAndIsr | Errors, now_ms: int) -> bool:
        """The answer to a proposal (Kafka's ``handleAlterIsrResponse``): apply a confirmed state of our leader
        epoch, drop a stale answer. On an error the proposal stays pending, as in Kafka, so the HW still counts
        a proposed member and no other change is proposed: after a refusal until the next LeaderAndIsr, after any
        other error until it is re-sent and answered (see `should_resend`). Returns True when the ISR changed."""
        if not self.is_pending(proposal):
            return False  # leadership or ISR state changed meanwhile: the LeaderAndIsr that did it rules
        if isinstance(result, Errors):
            self._log_isr_update_error(proposal, result)
            if result in _NOT_APPLIED:
                self.pending_isr = None
            elif result in _REFUSALS:
                self.isr_update_refused = True
            return False
        if result.leader_epoch != self.leader_epoch or result.zk_version < self.zk_version:
            if log.isEnabledFor(logging.DEBUG):
                why = (f"a stale leader epoch {self.leader_epoch}" if result.leader_epoch != self.leader_epoch
                       else f"a newer version {self.zk_version}")
                self._log(logging.DEBUG, f"Ignoring new ISR {_leader_and_isr(result)} since we have {why}.")
            return False
        self.isr, self.zk_version, self.pending_isr = result.isr, result.zk_version, None
        self._log(logging.INFO, f"ISR updated to {_ids(self.isr)} and version updated to [{self.zk_version}]")
        self.maybe_increment_high_watermark(now_ms)  # 2.8.2 omits this (KAFKA-13091): see docs/replication.md
        return True

    def _log_isr_update_error(self, proposal: IsrProposal, error: Errors) -> None:
        """Kafka 2.8.2's ``handleAlterIsrResponse`` lines: a refusal is given up at DEBUG, any other error is
        retried at WARN. INELIGIBLE_REPLICA (beyond 2.8) is said at INFO, as Kafka 3.3's reset to the committed
        state. Formatted only when the level is on: a controller failover can fail thousands at once."""
        level = (logging.INFO if error in _NOT_APPLIED else logging.DEBUG if error in _REFUSALS
                 else logging.WARNING)
        if not log.isEnabledFor(level):
            return
        state = self._proposed_state(proposal.leader_and_isr.isr)
        if error in _NOT_APPLIED:
            text = (f"since the controller rejected the request with {error.name}. ISR state has been reset to the "
                    f"latest committed state CommittedIsr(isr={_isr_set(self.isr)}).")
        else:
            text = _GIVING_UP.get(error, f"due to unexpected {error.name}. Retrying.")
        self._log(level, f"Failed to update ISR to {state} {text}")


_GIVING_UP = {
    Errors.UNKNOWN_TOPIC_OR_PARTITION: "since it doesn't know about this topic or partition. Giving up.",
    Errors.FENCED_LEADER_EPOCH: "since we sent an old leader epoch. Giving up.",
    Errors.INVALID_UPDATE_VERSION: "due to invalid version. Giving up.",
}
"""Kafka 2.8.2's words for each refusal (`_REFUSALS`)."""


def _ids(replicas: tuple[int, ...]) -> str:
    return ",".join(map(str, replicas))


def _isr_set(isr: tuple[int, ...]) -> str:
    """Kafka's ``isrState.isr``: the ISR's ``toSet`` (an immutable ``Set[Int]``), in the ISR's order up to four
    members, in its hash trie's order beyond."""
    return immutable_set(isr, int_hash)


def _leader_and_isr(lai: LeaderAndIsr) -> str:
    """Kafka's ``LeaderAndIsr.toString`` (its ISR is a Scala ``List``)."""
    return (f"LeaderAndIsr(leader={lai.leader}, leaderEpoch={lai.leader_epoch}, "
            f"isr=List({', '.join(map(str, lai.isr))}), zkVersion={lai.zk_version})")
