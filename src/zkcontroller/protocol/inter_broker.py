"""Requests between brokers and from a broker to the controller, as plain values (Kafka 2.8's schemas).

* ``ControlledShutdown`` v3 (broker → controller): a stopping broker asks the controller to move its
  leadership away first; the answer lists the partitions it still leads (spec §8.3, §9.10).
* ``AlterIsr`` v0 (leader → controller, IBP >= 2.7-IV2): a leader proposes a new ISR with the leader epoch and
  partition-state version it last saw; the controller checks both, writes ZooKeeper fenced, and answers with
  the state now in force (spec §9.8).
* ``Fetch`` (follower → leader), offsets only: no record bytes are carried, a fetch answers how many records
  the follower may append; what ISR upkeep needs (leader epoch fencing, high watermark) is exact. Fetches run
  in KIP-227 fetch sessions: a full fetch (epoch 0) opens one, then each incremental fetch names only the
  partitions whose fetch state changed and the ones to forget, and the answer only the partitions with news.

The wire encoding (`protocol.wire`) carries the same values.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import NamedTuple

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import ApiKey, Errors


@dataclass(frozen=True, slots=True)
class ControlledShutdownRequest:
    broker_id: int
    broker_epoch: int
    api_key: ApiKey = field(default=ApiKey.CONTROLLED_SHUTDOWN, init=False)


@dataclass(frozen=True, slots=True)
class ControlledShutdownResponse:
    error: Errors = Errors.NONE
    remaining_partitions: tuple[TopicPartition, ...] = ()
    """Partitions the broker still leads (empty: it may stop now)."""


@dataclass(frozen=True, slots=True)
class AlterIsrPartition:
    topic_partition: TopicPartition
    leader_epoch: int
    new_isr: tuple[int, ...]
    current_isr_version: int
    """The partition state's zkVersion the leader last saw."""


@dataclass(frozen=True, slots=True)
class AlterIsrRequest:
    broker_id: int
    broker_epoch: int
    partitions: tuple[AlterIsrPartition, ...] = ()
    api_key: ApiKey = field(default=ApiKey.ALTER_ISR, init=False)


@dataclass(frozen=True, slots=True)
class AlterIsrPartitionResult:
    topic_partition: TopicPartition
    error: Errors = Errors.NONE
    leader_id: int = -1
    leader_epoch: int = -1
    isr: tuple[int, ...] = ()
    current_isr_version: int = -1


@dataclass(frozen=True, slots=True)
class AlterIsrResponse:
    error: Errors = Errors.NONE
    partitions: tuple[AlterIsrPartitionResult, ...] = ()


@dataclass(frozen=True, slots=True)
class FetchPartition:
    topic_partition: TopicPartition
    current_leader_epoch: int
    fetch_offset: int
    """The follower's log end offset: what it has, so what it asks for next."""
    last_fetched_epoch: int = -1
    """The leader epoch of the follower's last records (Fetch v12's ``lastFetchedEpoch``; -1 unknown)."""


INVALID_SESSION_ID = 0
"""``FetchMetadata.INVALID_SESSION_ID``: no session (asked for, or granted)."""
INITIAL_EPOCH = 0
"""A full fetch that opens a session (closing the one named, if any)."""
FINAL_EPOCH = -1
"""A full fetch that wants no session (closing the one named, if any)."""


def next_fetch_session_epoch(epoch: int) -> int:
    """``FetchMetadata.nextEpoch``: epochs count up from 1 and wrap to 1, never back to the full-fetch values."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == 0x7FFFFFFF else epoch + 1


@dataclass(frozen=True, slots=True)
class FetchRequest:
    replica_id: int
    partitions: tuple[FetchPartition, ...] = ()
    """All partitions in a full fetch; in an incremental one, only those added to the session or changed."""
    max_records: int = 10_000
    session_id: int = INVALID_SESSION_ID
    session_epoch: int = FINAL_EPOCH
    forgotten: tuple[TopicPartition, ...] = ()
    """Partitions an incremental fetch drops from its session (``forgotten_topics_data``)."""
    max_wait_ms: int = 0
    """``MaxWaitMs``: how long the leader may hold a fetch with nothing to read (a follower's is
    ``replica.fetch.wait.max.ms``; 0 answers at once)."""
    min_bytes: int = 1
    """``MinBytes`` (``replica.fetch.min.bytes`` for a follower): records are not kept, so any record counts."""
    api_key: ApiKey = field(default=ApiKey.FETCH, init=False)

    @property
    def is_full(self) -> bool:
        return self.session_epoch in (INITIAL_EPOCH, FINAL_EPOCH)


class EpochEntry(NamedTuple):
    """Kafka's ``EpochEntry``: a leader epoch and the offset of its first record in a log."""

    epoch: int
    start_offset: int

    def __str__(self) -> str:
        return f"EpochEntry(epoch={self.epoch}, startOffset={self.start_offset})"


class TimeIndexEntry(NamedTuple):
    """One batch of a log's time index (`broker.partition.TimeIndex`): its base offset and its first and max record
    timestamps, as the leader took them at Produce; served to followers in the fetched batches' headers."""

    base_offset: int
    first_timestamp: int
    max_timestamp: int


@dataclass(frozen=True, slots=True)
class ReplicatedBatch:
    """An idempotent producer's batch within a fetched range, as its v2 header describes it: the offsets-only log
    keeps no batches, so the leader serves these from its producer state (`broker.producer_state`), and the
    follower builds its own from them (Kafka's ``Log.appendAsFollower``, origin Replication)."""

    base_offset: int
    last_offset: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    max_timestamp: int

    @property
    def count(self) -> int:
        return self.last_offset - self.base_offset + 1


@dataclass(frozen=True, slots=True)
class FetchPartitionResult:
    topic_partition: TopicPartition
    error: Errors = Errors.NONE
    high_watermark: int = -1
    records: int = 0
    """How many offsets from ``base_offset`` on the follower appends (offsets only, no payload; past a gap between
    batches, the offsets up to the last batch's end)."""
    base_offset: int = 0
    """The offset those records start at: the fetch offset the leader served (its session's cached one when an
    incremental fetch did not name the partition)."""
    log_end_offset: int = -1
    """The leader's log end offset, sent with OFFSET_OUT_OF_RANGE only (-1 otherwise, or unknown): it stands in
    for the ListOffsets (latest) request Kafka's follower sends then (``fetchOffsetAndTruncate``)."""
    diverging_epoch: int = -1
    diverging_end_offset: int = -1
    """Fetch v12's ``divergingEpoch`` end offset (-1: none): the follower's last fetched epoch ended there on the
    leader, below the fetch offset, so the follower truncates to it before fetching on (KIP-595's truncation on
    fetch, Kafka 2.7-IV1+)."""
    batches: tuple[ReplicatedBatch, ...] = ()
    """The idempotent producers' batches among the records served, in log order, which is the order of their last
    offsets (empty when there are none: the rest of the range is plain batches, producer id -1). Each ends within
    the records served; a batch may begin inside the one before it (overlapping batches, as Kafka's follower
    takes them), and the first may begin below the fetch offset (served whole, as Kafka's read serves the batch
    holding it: ``base_offset`` is then its base offset)."""
    epochs: tuple[EpochEntry, ...] = ()
    """The leader epochs of the records served (each batch's ``partitionLeaderEpoch``): the epoch at the base
    offset, then each epoch that begins within the records, from the leader's epoch cache (empty without records).
    The follower assigns them in its own cache (``Log.maybeAssignEpochStartOffset``)."""
    timestamps: tuple[TimeIndexEntry, ...] = ()
    """The leader's time index entries whose batches begin within the records served (offset order): the follower
    indexes them as it appends (Kafka's follower indexes each appended batch's max timestamp, ``LogSegment.append``)."""

    def __init__(self, topic_partition: TopicPartition, error: Errors = Errors.NONE, high_watermark: int = -1,
                 records: int = 0, base_offset: int = 0, log_end_offset: int = -1, diverging_epoch: int = -1,
                 diverging_end_offset: int = -1, batches: tuple[ReplicatedBatch, ...] = (),
                 epochs: tuple[EpochEntry, ...] = (), timestamps: tuple[TimeIndexEntry, ...] = ()) -> None:
        """As the frozen dataclass's generated ``__init__``, but setting each slot through its descriptor (a third
        cheaper than ``object.__setattr__`` by name): a leader makes one of these per partition of every fetch,
        records or not. The parameters are the fields above, with their defaults
        (`tests/wire/test_fetch_codec_producer_batches.py` checks they agree)."""
        _set_topic_partition(self, topic_partition)
        _set_error(self, error)
        _set_high_watermark(self, high_watermark)
        _set_records(self, records)
        _set_base_offset(self, base_offset)
        _set_log_end_offset(self, log_end_offset)
        _set_diverging_epoch(self, diverging_epoch)
        _set_diverging_end_offset(self, diverging_end_offset)
        _set_batches(self, batches)
        _set_epochs(self, epochs)
        _set_timestamps(self, timestamps)


(_set_topic_partition, _set_error, _set_high_watermark, _set_records, _set_base_offset, _set_log_end_offset,
 _set_diverging_epoch, _set_diverging_end_offset, _set_batches, _set_epochs, _set_timestamps) = (
    FetchPartitionResult.__dict__[f.name].__set__ for f in fields(FetchPartitionResult))


@dataclass(frozen=True, slots=True)
class FetchResponse:
    error: Errors = Errors.NONE
    """A session error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH) comes here, with no partitions."""
    partitions: tuple[FetchPartitionResult, ...] = ()
    session_id: int = INVALID_SESSION_ID


BrokerToControllerRequest = ControlledShutdownRequest | AlterIsrRequest
BrokerToControllerResponse = ControlledShutdownResponse | AlterIsrResponse
