"""ListOffsets v1+ from the offsets-only logs (Kafka 2.8's ``ReplicaManager.fetchOffsetForTimestamp`` and
``Partition.fetchOffsetForTimestamp``).

Per partition, in Kafka's order: a partition asked twice is INVALID_REQUEST; one in a failed log dir
KAFKA_STORAGE_ERROR; one not hosted here NOT_LEADER_OR_FOLLOWER if the metadata cache knows it, else
UNKNOWN_TOPIC_OR_PARTITION; then the current leader epoch, when given (FENCED_LEADER_EPOCH if ours is newer,
UNKNOWN_LEADER_EPOCH if older); then leadership, unless the request comes from the debugging replica id (-2).

Latest (-1) is the high watermark for a consumer (replica id -1) at either isolation level (no transactions, so the
last stable offset is the HW), the log end offset for anyone else, with our leader epoch; a new leader whose HW has
not reached its epoch's start offset answers OFFSET_NOT_AVAILABLE (LEADER_NOT_AVAILABLE before v5) to a consumer.
Earliest (-2) is the log start offset, always 0 here (no retention), with no leader epoch (there is no epoch
cache to say which epoch wrote offset 0). Any other target is looked up in the partition's time index
(`partition.TimeIndex`: each batch's first and max timestamps, kept by the leader that appended it, whatever its
codec; a legacy message set's are its messages', as Kafka 2.8 converts it to one v2 batch, so magic 0 records,
which have none, are never found in a CreateTime topic, as in Kafka): the first entry
whose max timestamp reaches the target, when below the last fetchable offset, answers its record's offset and
timestamp, with that offset's leader epoch. A leader indexes each record that is a new running maximum of the log's
timestamps (reading a v2 batch's records only when they are not all below its first:
`record_timestamps.running_maxima`), so this is Kafka's answer, the first record in the log reaching the target, even
inside a batch (a legacy set's messages are read as the one v2 batch Kafka converts it to holds them); an entry
whose first timestamp is below its max (read back from an older journal, or fetched as a batch header only) answers
its base offset with its max timestamp past its first record. None found answers
NONE with timestamp and offset -1, as Kafka's ``buildErrorResponse(Errors.NONE)`` (clients read "no offset for that
time"), or OFFSET_NOT_AVAILABLE to a consumer while a new leader's HW lags its epoch's start. Followers index the
leader's entries as they append what they fetch (`Partition.append_as_follower`), so a new leader finds the batches
appended before it took over; a broker process journals the index (`LogOffsetsJournal`, as Kafka keeps its
``.timeindex`` files), so a restarted broker answers as before its restart.

v0 (`legacy_list_offsets`, Kafka's ``legacyFetchOffsetsForTimestamp`` and ``Log.legacyFetchOffsetsBefore``)
answers up to ``max_num_offsets`` offsets, highest first, from the (offset, time) pairs of the log's segments plus
(log end offset, now) when the log is not empty. Ours is one segment from offset 0 whose last-modified time is not
kept: latest gives [LEO, 0], earliest [0]; a timestamp at or after now gives what latest gives, an earlier one
nothing (no offset is known to be older than it). A consumer's offsets above the HW are replaced by the HW. No
epoch or duplicate checks at v0, as in Kafka.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable

from zkcontroller.broker.metadata_cache import MetadataCache
from zkcontroller.broker.partition import Partition
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.wire.client_apis import LegacyOffsetAnswer, LegacyOffsetQuery, OffsetAnswer, OffsetQuery

CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
READ_COMMITTED = 1
LOG_START_OFFSET = 0
"""Nothing is ever deleted from an offsets-only log, so it starts at 0 (the Fetch answers say so too)."""
OFFSET_NOT_AVAILABLE = 78
NO_TIMESTAMP = -1
NO_EPOCH = -1


def list_offsets(version: int, replica_id: int, isolation_level: int, queries: Iterable[OffsetQuery], *,
                 partition: Callable[[TopicPartition], Partition | None], cache: MetadataCache | None,
                 offline: Collection[TopicPartition] = (),
                 timestamps_unsupported: Callable[[str], bool] = lambda _topic: False) -> list[OffsetAnswer]:
    """The answer to each of ``queries``, in order. ``partition`` finds this broker's replica (None if not
    hosted); ``cache`` tells an unhosted partition the cluster knows from an unknown one;
    ``timestamps_unsupported``: the topic's ``message.format.version`` is before 0.10.0, whose messages carry no
    timestamp, so a search by timestamp is UNSUPPORTED_FOR_MESSAGE_FORMAT (``Log.fetchOffsetByTimestamp``)."""
    queries = list(queries)
    counts = Counter((q.topic, q.partition) for q in queries)
    answers = []
    for q in queries:
        tp = TopicPartition(q.topic, q.partition)
        if counts[(q.topic, q.partition)] > 1:
            answers.append(OffsetAnswer(q.topic, q.partition, Errors.INVALID_REQUEST))
            continue
        answers.append(_answer(version, replica_id, isolation_level, q, tp, partition(tp), cache, offline,
                               timestamps_unsupported))
    return answers


def _answer(version: int, replica_id: int, isolation_level: int, q: OffsetQuery, tp: TopicPartition,
            p: Partition | None, cache: MetadataCache | None, offline: Collection[TopicPartition],
            timestamps_unsupported: Callable[[str], bool]) -> OffsetAnswer:
    def error(code: int) -> OffsetAnswer:
        return OffsetAnswer(q.topic, q.partition, code)

    if tp in offline:
        return error(Errors.KAFKA_STORAGE_ERROR)
    if p is None:
        known = cache is not None and cache.contains(tp)
        return error(Errors.NOT_LEADER_OR_FOLLOWER if known else Errors.UNKNOWN_TOPIC_OR_PARTITION)
    if q.current_leader_epoch != NO_EPOCH:  # Partition.checkCurrentLeaderEpoch
        if p.leader_epoch > q.current_leader_epoch:
            return error(Errors.FENCED_LEADER_EPOCH)
        if p.leader_epoch < q.current_leader_epoch:
            return error(Errors.UNKNOWN_LEADER_EPOCH)
    if replica_id != DEBUGGING_REPLICA_ID and not p.is_leader:
        return error(Errors.NOT_LEADER_OR_FOLLOWER)
    from_consumer = replica_id == CONSUMER_REPLICA_ID
    # READ_COMMITTED reads up to the last stable offset: with no transactions, the high watermark.
    last_fetchable = p.high_watermark if from_consumer else p.log_end_offset
    lagging = from_consumer and p.is_leader and p.leader_epoch_start_offset > p.high_watermark
    if q.timestamp == LATEST_TIMESTAMP:
        if lagging:
            return error(OFFSET_NOT_AVAILABLE if version >= 5 else Errors.LEADER_NOT_AVAILABLE)
        return OffsetAnswer(q.topic, q.partition, Errors.NONE, NO_TIMESTAMP, last_fetchable, p.leader_epoch)
    if q.timestamp == EARLIEST_TIMESTAMP:
        return OffsetAnswer(q.topic, q.partition, Errors.NONE, NO_TIMESTAMP, LOG_START_OFFSET, NO_EPOCH)
    if timestamps_unsupported(q.topic):  # Log.fetchOffsetByTimestamp's first check
        return error(Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT)
    found = p.time_index.lookup(q.timestamp)  # Log.fetchOffsetByTimestamp, then below the last fetchable offset
    if found is not None and found[1] < last_fetchable:
        timestamp, offset = found
        epochs = p.epoch_cache.epochs_in(offset, offset + 1)  # the batch's partitionLeaderEpoch
        return OffsetAnswer(q.topic, q.partition, Errors.NONE, timestamp, offset,
                            epochs[0].epoch if epochs else NO_EPOCH)
    if lagging:  # Partition.fetchOffsetForTimestamp's maybeOffsetsError, when nothing was found
        return error(OFFSET_NOT_AVAILABLE if version >= 5 else Errors.LEADER_NOT_AVAILABLE)
    return OffsetAnswer(q.topic, q.partition, Errors.NONE)  # buildErrorResponse(NONE): timestamp and offset -1


def legacy_list_offsets(replica_id: int, queries: Iterable[LegacyOffsetQuery], now_ms: int, *,
                        partition: Callable[[TopicPartition], Partition | None], cache: MetadataCache | None,
                        offline: Collection[TopicPartition] = ()) -> list[LegacyOffsetAnswer]:
    """ListOffsets v0: the offsets for each of ``queries``, in order."""
    answers = []
    for q in queries:
        tp = TopicPartition(q.topic, q.partition)
        p = partition(tp)
        if tp in offline:
            error: int = Errors.KAFKA_STORAGE_ERROR
        elif p is None:
            error = Errors.NOT_LEADER_OR_FOLLOWER if cache is not None and cache.contains(tp) \
                else Errors.UNKNOWN_TOPIC_OR_PARTITION
        elif replica_id != DEBUGGING_REPLICA_ID and not p.is_leader:
            error = Errors.NOT_LEADER_OR_FOLLOWER
        else:
            offsets = _offsets_before(p.log_end_offset, q.timestamp, q.max_num_offsets, now_ms)
            if replica_id == CONSUMER_REPLICA_ID and any(o > p.high_watermark for o in offsets):
                offsets = [p.high_watermark, *(o for o in offsets if o <= p.high_watermark)]
            answers.append(LegacyOffsetAnswer(q.topic, q.partition, Errors.NONE, tuple(offsets)))
            continue
        answers.append(LegacyOffsetAnswer(q.topic, q.partition, error))
    return answers


def _offsets_before(log_end_offset: int, timestamp: int, max_num_offsets: int, now_ms: int) -> list[int]:
    """``Log.legacyFetchOffsetsBefore`` over one segment from offset 0 with no last-modified time known."""
    entries: list[tuple[int, int | None]] = [(LOG_START_OFFSET, None)]
    if log_end_offset > LOG_START_OFFSET:
        entries.append((log_end_offset, now_ms))
    if timestamp == LATEST_TIMESTAMP:
        start = len(entries) - 1
    elif timestamp == EARLIEST_TIMESTAMP:
        start = 0
    else:
        start = next((i for i in range(len(entries) - 1, -1, -1)
                      if (t := entries[i][1]) is not None and t <= timestamp), -1)
    count = max(0, min(max_num_offsets, start + 1))
    return sorted((entries[start - j][0] for j in range(count)), reverse=True)
