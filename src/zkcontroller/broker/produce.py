"""Produce (API 0) on the offsets-only logs: Kafka 2.8's ``KafkaApis.handleProduceRequest``,
``ReplicaManager.appendRecords`` and ``Partition.appendRecordsToLeader``, appending a count of records.

Per partition, in Kafka's order: a partition the metadata cache does not know is UNKNOWN_TOPIC_OR_PARTITION; a
record set ``ProduceRequest.validateRecords`` refuses gets its error (`record_sets.inspect`), unless that check
fails unexpectedly (a codec id above zstd before v7: `record_sets.RequestFailed`, raised to the caller, which
answers every partition `failed_request_answers` as ``KafkaApis.handle``'s ``handleError`` does); then, for every
partition left, acks outside {-1, 0, 1} is INVALID_REQUIRED_ACKS; then the append: an internal topic from any client
but the admin client INVALID_TOPIC_EXCEPTION, a failed log dir KAFKA_STORAGE_ERROR, a partition not hosted or not
led here NOT_LEADER_OR_FOLLOWER, acks=-1 with an ISR smaller than ``min.insync.replicas`` NOT_ENOUGH_REPLICAS, a
record set the log's validation refuses its error (`log_validator.validate`). A partition appended answers its base
offset (the LEO before the append), its log append time (the broker's clock when the topic's
``message.timestamp.type`` is LogAppendTime, else -1) and log start offset 0 (nothing is ever deleted).

Last, once offsets are assigned, an idempotent producer's batches go through the partition's `producer_state`: a
stale epoch is INVALID_PRODUCER_EPOCH, a sequence gap OUT_OF_ORDER_SEQUENCE_NUMBER (both logged as failures, with log
start offset 0), and a retry of one of the producer's last 5 batches is not appended again but answers NONE with
that batch's metadata, as Kafka 2.8's ``Log.append`` answers a duplicate: its base offset (an acks=-1 retry waits
for its last offset), its max timestamp as log append time (whatever the topic's timestamp type) and the log start
offset.

``min.insync.replicas`` and ``max.message.bytes`` are the topic's (`topic_config_manager`: its overrides, else the
broker's ``min.insync.replicas``/``message.max.bytes``): an entry larger than ``max.message.bytes`` is
RECORD_TOO_LARGE, checked with the CRCs as ``Log.analyzeAndValidateRecords`` does. A topic whose config is still
being read (its log was just created) is waited for first.

A record set whose check walks many records in Python (a large v2 batch, whose every record is read, or a
compressed legacy wrapper: more than `INLINE_SCAN_BYTES` inflated, which a zip bomb reaches
from a few KB) is checked on a worker thread before the append, so the event loop answers other connections
meanwhile (the check holds the GIL, but gives it up every few milliseconds); smaller ones stay on the loop, where
the check costs less than the thread hop. A partition the append would refuse before its records are looked at
(internal topic, offline log dir, not led here, too small an ISR) is not walked. One such check is in flight per
event loop (`runtime.blocking_worker`): the others wait on the loop; a request whose task is cancelled, or whose broker
stops (its produce purgatory shut down: the request is dropped unanswered, as a waiting acks=-1 one is), stops its
walk within 4096 records or 65,536 headers of one record (a compressed entry's decompression, at most 64 MiB, is
not interrupted); at interpreter
exit the running walk stops and the queued ones are dropped. A refusal found there keeps no traceback (whose
frames would hold the whole walk), and each partition's outcome is released once appended. The simulator's
runtime never hops (its virtual-time loop has no threads): its traces do not change. ``validateRecords``' walk of
a set's entries (`record_sets.inspect`) hops the same way when more than `INLINE_SCAN_BYTES` lie past its first
entry (a Produce v0-v2 set of tiny legacy messages: 100 MiB are 4 million entries, seconds of the loop), one
partition after another in request order, so the answers and a request's failure are the inline ones.

acks=-1 then waits (`delayed_produce`) unless every partition failed; acks=0 gets no response at all, unless a
partition failed: then the connection is closed, so the producer refreshes its metadata (the caller's job).
"""

from __future__ import annotations

import logging
from bisect import bisect_right
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import NamedTuple

from zkcontroller.broker.client_quota_manager import mark_local_complete
from zkcontroller.broker.delayed_produce import PendingAppend, ProduceWaiters, PurgatoryShutDown
from zkcontroller.broker.metadata_cache import MetadataCache
from zkcontroller.broker.partition import Partition
from zkcontroller.broker.producer_state import ProducerStateError, producer_batches
from zkcontroller.java_hash import hash_map_spread, java_string_hash
from zkcontroller.model import TopicPartition, is_internal
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.wire import log_validator, record_sets
from zkcontroller.protocol.wire.record_sets import RecordSetError
from zkcontroller.protocol.wire.record_timestamps import legacy_running_maxima, running_maxima
from zkcontroller.runtime import blocking_worker
from zkcontroller.runtime.runtime import AsyncioRuntime, Runtime

log = logging.getLogger("kafka.server.ReplicaManager")

INVALID_REQUIRED_ACKS = 21
NOT_ENOUGH_REPLICAS = 19
ADMIN_CLIENT_ID = "__admin_client"
"""``AdminUtils.AdminClientId``: the only client allowed to append to internal topics."""
DEFAULT_MIN_INSYNC_REPLICAS = 1
LOG_START_OFFSET = 0
INLINE_SCAN_BYTES = 16 * 1024
"""A record set whose check walks more bytes than this (records inflated) is checked on a worker thread. Below,
it stays on the loop: at most about 8 ms for 16 KiB of the smallest (7-byte) records, a fraction of a millisecond
for 100-byte ones, where the hop (50-150 µs) would be a large share (docs/benchmarks.md)."""
CANCEL_EVERY_RECORDS = 4096
"""How often (in records) a walk on the worker asks whether it is still wanted (`log_validator.validate`)."""


def is_compacted(config: Mapping[str, object]) -> bool:
    """Kafka's ``LogConfig.compact``: the topic's ``cleanup.policy`` list has ``compact``."""
    policy = config.get("cleanup.policy")
    return isinstance(policy, list | tuple) and "compact" in policy


@dataclass(frozen=True, slots=True)
class ProducePartition:
    """One partition of a Produce request; ``records`` None when the request says null."""

    topic: str
    partition: int
    records: bytes | None


@dataclass(frozen=True, slots=True)
class ProduceAnswer:
    topic: str
    partition: int
    error: int = 0
    base_offset: int = -1
    log_start_offset: int = -1
    error_message: str | None = None
    log_append_time: int = -1
    """The append's time for a LogAppendTime topic, else -1; a duplicate's original batch's max timestamp."""
    record_errors: tuple[tuple[int, str], ...] = ()
    """Per record refused (its index in the batch, why): Produce v8+'s ``RecordErrors``."""


class ProduceTarget:
    """What the produce path needs of a broker's replica manager (passed in so this module stays testable)."""

    def __init__(self, *, partition: Callable[[TopicPartition], Partition | None], runtime: Runtime,
                 offline: Callable[[], Collection[TopicPartition]], waiters: ProduceWaiters,
                 min_insync_replicas: Callable[[str], int] = lambda _topic: DEFAULT_MIN_INSYNC_REPLICAS,
                 broker_id: int = -1, max_message_bytes: Callable[[str], int | None] = lambda _topic: None,
                 configs_loaded: Callable[[Collection[str]], Awaitable[None]] | None = None,
                 log_append_time: Callable[[str], bool] = lambda _topic: False,
                 compacted: Callable[[str], bool] = lambda _topic: False,
                 timestamp_difference_max_ms: Callable[[str], int] = lambda _topic: record_sets.LONG_MAX,
                 offload_scans: bool | None = None,
                 compression_type: Callable[[str], str] = lambda _topic: "producer") -> None:
        self.partition = partition
        self.broker_id = broker_id
        self.runtime = runtime
        self.offline = offline
        self.waiters = waiters
        self.min_insync_replicas = min_insync_replicas
        self.max_message_bytes = max_message_bytes
        """A topic's ``max.message.bytes`` (None: no limit)."""
        self.configs_loaded = configs_loaded
        """Waits until the configs being read of these topics are known."""
        self.log_append_time = log_append_time
        """A topic's ``message.timestamp.type`` is LogAppendTime."""
        self.compacted = compacted
        """A topic's ``cleanup.policy`` has ``compact``: its records need keys (Kafka's ``LogConfig.compact``)."""
        self.timestamp_difference_max_ms = timestamp_difference_max_ms
        """A topic's ``message.timestamp.difference.max.ms``: how far a CreateTime record's timestamp may be from
        the broker's clock (LogValidator's ``validateTimestamp``)."""
        self.compression_type = compression_type
        """A topic's ``compression.type``: with a codec named, LogValidator takes its compressed path
        (`log_validator.validate`)."""
        self.offload_scans = isinstance(runtime, AsyncioRuntime) if offload_scans is None else offload_scans
        """Large record-set checks go to a worker thread (`INLINE_SCAN_BYTES`): by default on the real runtime
        only (the simulator's loop runs no threads)."""


class _Checks(NamedTuple):
    """What `log_validator.validate` checks a partition's record set against (its topic's configs)."""

    max_batch_size: int | None
    compacted: bool
    create_time: bool
    timestamp_difference_max_ms: int
    compression_type: str = "producer"


def _checks(topic: str, target: ProduceTarget) -> _Checks:
    return _Checks(target.max_message_bytes(topic), target.compacted(topic), not target.log_append_time(topic),
                   target.timestamp_difference_max_ms(topic), target.compression_type(topic))


@dataclass(slots=True)
class _Scanned:
    """A record set checked (or inflated) before the append, for the checks it was done with: the append uses it
    if its topic's configs are still those. ``outcome``: the count or refusal of a check done off the loop (at the
    time its walk started); ``inflated``: compressed values already inflated (`log_validator.scan_size`);
    ``timestamps``: the set's first and max record timestamps that check found (`log_validator.validate`);
    ``points``: its records' running maxima above -1 (`_running_maxima`), read on the worker too when the time index
    may need them, so a long set is not walked again on the loop."""

    checks: _Checks
    inflated: dict[int, bytes | bytearray]
    outcome: int | RecordSetError | None = None
    timestamps: list[int] = field(default_factory=list)
    points: list[tuple[int, int]] | None = None


def _running_maxima(records: bytes, entries: list[record_sets.Entry], inflated: Mapping[int, bytes | bytearray],
                    above: int) -> list[tuple[int, int]]:
    """An accepted set's records that raise the running maximum above ``above`` (`record_timestamps`): the v2
    batch's, or a legacy set's messages as the one v2 batch Kafka converts it to."""
    entry = entries[0]
    if entry.magic == 2:
        batch = memoryview(records)[entry.start:entry.start + entry.size]
        return running_maxima(batch, above, inflated.get(entry.start))
    return legacy_running_maxima(records, [(e.start, e.magic) for e in entries], above, inflated)


def _validate(records: bytes, entries: list[record_sets.Entry], tp: TopicPartition, checks: _Checks, now_ms: int,
              inflated: dict[int, bytes | bytearray], timestamps: list[int] | None = None,
              cancelled: Callable[[], bool] | None = None) -> int:
    return log_validator.validate(records, entries, checks.max_batch_size, str(tp), compacted=checks.compacted,
                                  now_ms=now_ms, create_time=checks.create_time,
                                  timestamp_difference_max_ms=checks.timestamp_difference_max_ms, inflated=inflated,
                                  cancelled=cancelled, timestamps=timestamps,
                                  compression_type=checks.compression_type)


def _validate_outcome(records: bytes, entries: list[record_sets.Entry], tp: TopicPartition, checks: _Checks,
                      clock: Callable[[], int], inflated: dict[int, bytes | bytearray],
                      timestamps: list[int] | None = None, points: list[list[tuple[int, int]]] | None = None,
                      cancelled: Callable[[], bool] | None = None) -> int | RecordSetError:
    """`_validate` on a worker thread, at the time ``clock`` reads as the walk starts (as Kafka's ``Log.append``
    reads its clock for LogValidator, not when the request arrived: a walk may wait behind another for seconds):
    the refusal returned, for the append to answer in its turn, without its traceback (whose frames hold the
    whole walk: up to 64 MiB inflated and millions of entries). ``points``: given the accepted set's running maxima
    above -1 when its first record is below its max in a CreateTime topic (what its time index entries may be)."""
    now_ms = clock()
    try:
        count = _validate(records, entries, tp, checks, now_ms, inflated, timestamps, cancelled)
    except RecordSetError as e:
        return e.with_traceback(None)
    if points is not None and count and checks.create_time and timestamps and timestamps[0] < timestamps[1]:
        points.append(_running_maxima(records, entries, inflated, -1))
    return count


async def _scan(p: ProducePartition, entries: list[record_sets.Entry], target: ProduceTarget) -> _Scanned:
    """A partition's record set checked ahead of its append: on a worker thread if its walk is long (the check's
    time read there, as the walk starts: `_validate_outcome`), else only probed (its small compressed values
    inflated once, kept for the append)."""
    assert p.records is not None
    checks = _checks(p.topic, target)
    inflated: dict[int, bytes | bytearray] = {}
    walked = log_validator.scan_size(p.records, entries, INLINE_SCAN_BYTES, inflated, compacted=checks.compacted,
                                     create_time=checks.create_time,
                                     timestamp_difference_max_ms=checks.timestamp_difference_max_ms)
    if walked <= INLINE_SCAN_BYTES:
        return _Scanned(checks, inflated)
    waiters = target.waiters
    if waiters.shut_down:
        raise PurgatoryShutDown("the broker is stopping: request dropped at its record check")
    timestamps: list[int] = []
    points: list[list[tuple[int, int]]] = []
    # one check per loop goes to the worker: the others wait on the loop (cancellable), not in its queue
    outcome = await blocking_worker.run(_validate_outcome, p.records, entries, TopicPartition(p.topic, p.partition),
                                        checks, target.runtime.now_ms, inflated, timestamps, points,
                                        stopped=lambda: waiters.shut_down)
    if waiters.shut_down:  # the broker stopped meanwhile: dropped unanswered, as a waiting acks=-1 request is
        raise PurgatoryShutDown("the broker is stopping: request dropped at its record check")
    return _Scanned(checks, inflated, outcome, timestamps, points[0] if points else None)


def _inspect_on_worker(records: bytes, version: int, cancelled: Callable[[], bool]
                       ) -> list[record_sets.Entry] | RecordSetError:
    """`record_sets.inspect` on the worker thread: a refusal returned (without its traceback), `RequestFailed`
    raised, as on the loop."""
    try:
        return record_sets.inspect(records, version, cancelled=cancelled)
    except RecordSetError as e:
        return e.with_traceback(None)


async def _inspect(records: bytes, version: int, target: ProduceTarget | None) -> list[record_sets.Entry]:
    """`record_sets.inspect` (``validateRecords``), on the worker thread when the set may hold many entries (its
    first entry leaves more than `INLINE_SCAN_BYTES` after it: 100 MiB of the smallest legacy messages are 4
    million entries, seconds of the loop), else on the loop. The partitions are still inspected one by one in
    request order, so the answers and the request's failure (`record_sets.RequestFailed`) are the same."""
    if target is None or not target.offload_scans or not _many_entries(records):
        return record_sets.inspect(records, version)
    waiters = target.waiters
    if waiters.shut_down:
        raise PurgatoryShutDown("the broker is stopping: request dropped at its record check")
    outcome = await blocking_worker.run(_inspect_on_worker, records, version, stopped=lambda: waiters.shut_down)
    if waiters.shut_down:  # the broker stopped meanwhile: dropped unanswered, as at the record check
        raise PurgatoryShutDown("the broker is stopping: request dropped at its record check")
    if isinstance(outcome, RecordSetError):
        raise outcome
    return outcome


def _many_entries(records: bytes) -> bool:
    """More than `INLINE_SCAN_BYTES` of the set lie beyond its first entry (as its header announces it): it may
    hold thousands of entries. One batch, however large, is not."""
    if len(records) <= INLINE_SCAN_BYTES:
        return False
    size = int.from_bytes(records[8:12], "big", signed=True) if len(records) >= 12 else 0
    return len(records) - (max(size, 0) + record_sets.LOG_OVERHEAD) > INLINE_SCAN_BYTES


async def produce(version: int, acks: int, timeout_ms: int, client_id: str | None,
                  partitions: list[ProducePartition], *, cache: MetadataCache | None,
                  target: ProduceTarget | None, transactional_id: str | None = None) -> list[ProduceAnswer]:
    """One answer per partition of the request, in request order; for acks=-1 only once they are replicated (or
    failed, or timed out). A partition named twice is answered once, for its last record set, as Kafka's map of
    partitions keeps it. `record_sets.RequestFailed` when the request fails as a whole."""
    record_sets.check_first_batches([p.records for p in partitions], transactional_id)
    places: dict[tuple[str, int], int] = {}
    """Each partition's place in the answer: its first entry's, as Kafka's map keeps it (its last entry wins)."""
    named: list[ProducePartition] = []
    answers: list[ProduceAnswer | None] = []
    inspected: dict[int, list[record_sets.Entry] | None] = {}
    """The partitions that go on to the append, by place: their entries (None for null records)."""
    repeated = False
    for p in partitions:  # every one named, in request order: a RequestFailed one fails the request, even if renamed
        i = places.setdefault((p.topic, p.partition), len(named))
        if i == len(named):
            named.append(p)
            answers.append(None)
        else:
            named[i], answers[i], repeated = p, None, True
            inspected.pop(i, None)
        if cache is None or not cache.contains(TopicPartition(p.topic, p.partition)):
            answers[i] = ProduceAnswer(p.topic, p.partition, int(Errors.UNKNOWN_TOPIC_OR_PARTITION))
            continue
        try:
            inspected[i] = None if p.records is None else await _inspect(p.records, version, target)
        except RecordSetError as e:  # validateRecords' ApiException: the error alone, no message
            answers[i] = ProduceAnswer(p.topic, p.partition, e.error)
    if repeated:  # a repeat re-inserts its place: the appends still go in place order
        inspected = dict(sorted(inspected.items()))
    partitions = named
    if acks not in (-1, 0, 1):
        return [a if a is not None else ProduceAnswer(p.topic, p.partition, INVALID_REQUIRED_ACKS)
                for a, p in zip(answers, partitions, strict=True)]
    if target is not None and target.configs_loaded is not None and inspected:
        await target.configs_loaded({partitions[i].topic for i in inspected})
    scanned: dict[int, _Scanned] = {}
    offload = target is not None and target.offload_scans
    if offload:
        assert target is not None
        for i, entries in inspected.items():  # a partition the append refuses first is not walked
            p = partitions[i]
            if p.records is not None and entries and _refusal(p, acks, client_id, cache, target) is None:
                scanned[i] = await _scan(p, entries, target)
    pending: dict[int, PendingAppend] = {}
    for i, entries in inspected.items():
        p = partitions[i]
        ahead = scanned.pop(i, None)  # each walk's memory released once its partition is appended
        if offload:  # the topic's checks changed during the hops (or the partition became appendable): hop again
            assert target is not None
            while (p.records is not None and entries and (ahead is None or ahead.checks != _checks(p.topic, target))
                   and _refusal(p, acks, client_id, cache, target) is None):
                ahead = await _scan(p, entries, target)
        answer = _append(p, entries, acks, client_id, cache, target, ahead)
        del ahead
        answers[i] = answer
        if isinstance(answer, Appended) and acks == -1:
            pending[i] = PendingAppend(TopicPartition(p.topic, p.partition), answer.base_offset + answer.count)
    if pending and target is not None:
        mark_local_complete(target.runtime.now_ms())  # DelayedProduce's wait: no request handling time
        await target.waiters.wait(list(pending.values()), timeout_ms, target.runtime, target.partition,
                                  target.min_insync_replicas, lambda tp: tp in target.offline())
        for i, waited in pending.items():
            appended = answers[i]
            assert appended is not None and waited.error is not None
            if waited.error != Errors.NONE:
                answers[i] = replace(appended, error=waited.error)
    return [a for a in answers if a is not None]


def _refusal(p: ProducePartition, acks: int, client_id: str | None, cache: MetadataCache | None,
             target: ProduceTarget | None, *, logged: bool = False) -> ProduceAnswer | None:
    """The append's refusals before the log looks at the records, in Kafka 2.8's order (``appendToLocalLog``'s
    internal topic check, ``getPartitionOrException``, ``appendRecordsToLeader``'s leader and min ISR checks); None
    when there is none. Checked before a record set is walked (so a refused one is not) and again at the append;
    ``logged``: NOT_ENOUGH_REPLICAS's failure logged (at the append only)."""
    tp = TopicPartition(p.topic, p.partition)

    def error(code: int, log_start_offset: int = -1) -> ProduceAnswer:
        return ProduceAnswer(p.topic, p.partition, code, log_start_offset=log_start_offset)

    if is_internal(p.topic) and client_id != ADMIN_CLIENT_ID:
        return error(int(Errors.INVALID_TOPIC_EXCEPTION))
    if target is not None and tp in target.offline():
        return error(int(Errors.KAFKA_STORAGE_ERROR))
    partition = target.partition(tp) if target is not None else None
    if partition is None:
        known = cache is not None and cache.contains(tp)
        return error(int(Errors.NOT_LEADER_OR_FOLLOWER if known else Errors.UNKNOWN_TOPIC_OR_PARTITION))
    if not partition.is_leader:
        return error(int(Errors.NOT_LEADER_OR_FOLLOWER))
    assert target is not None
    min_isr = target.min_insync_replicas(p.topic)
    if acks == -1 and len(partition.isr) < min_isr:
        if logged:  # not among appendToLocalLog's known exceptions: logged as a failure, with the log start offset
            _failed(target, tp, f"org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the "
                                f"current ISR Set({', '.join(map(str, partition.isr))}) is insufficient to satisfy "
                                f"the min.isr requirement of {min_isr} for partition {tp}")
        return error(NOT_ENOUGH_REPLICAS, log_start_offset=LOG_START_OFFSET)
    return None


def _append(p: ProducePartition, entries: list[record_sets.Entry] | None, acks: int, client_id: str | None,
            cache: MetadataCache | None, target: ProduceTarget | None, scanned: _Scanned | None = None
            ) -> ProduceAnswer:
    """``appendToLocalLog`` for one partition; ``scanned``: its record set checked (or inflated) ahead (`_scan`),
    used if the topic's configs have not changed since."""
    tp = TopicPartition(p.topic, p.partition)

    def error(code: int, message: str | None = None, log_start_offset: int = -1) -> ProduceAnswer:
        return ProduceAnswer(p.topic, p.partition, code, log_start_offset=log_start_offset, error_message=message)

    refused = _refusal(p, acks, client_id, cache, target, logged=True)
    if refused is not None:
        return refused
    assert target is not None
    partition = target.partition(tp)
    assert partition is not None
    if p.records is None or entries is None:  # Kafka's append of a null MemoryRecords fails unexpectedly
        _failed(target, tp, "java.lang.NullPointerException")
        return error(int(Errors.UNKNOWN_SERVER_ERROR), log_start_offset=LOG_START_OFFSET)
    now = target.runtime.now_ms()
    checks = _checks(p.topic, target)
    stamped = not checks.create_time
    if scanned is not None and scanned.checks != checks:
        scanned = None  # the topic's configs changed meanwhile: checked again, here
    outcome: int | RecordSetError
    timestamps: list[int] = []  # the set's first and max record timestamps, once validated
    inflated = scanned.inflated if scanned is not None else {}  # filled by the check: read again by the index
    scanned_points = None
    if scanned is not None and scanned.outcome is not None:  # checked at its own (earlier) time; appended now
        outcome, timestamps, scanned_points = scanned.outcome, scanned.timestamps, scanned.points
    else:
        try:
            outcome = _validate(p.records, entries, tp, checks, now, inflated, timestamps)
        except RecordSetError as failure:  # kept without its traceback (the walk's frames)
            outcome = failure.with_traceback(None)
    scanned = None
    if isinstance(outcome, RecordSetError):
        e = outcome
        if e.exception is not None:  # appendToLocalLog's Throwable branch: logged, the log start offset, no message
            _failed(target, tp, f"{e.exception}: {e}" if str(e) else e.exception)  # Throwable.toString
            return error(e.error, log_start_offset=LOG_START_OFFSET)
        if e.error == record_sets.INVALID_RECORD:  # LogValidator's record errors (RecordValidationException): message
            _failed(target, tp, f"org.apache.kafka.common.InvalidRecordException: {e}")
            return replace(error(e.error, str(e), LOG_START_OFFSET), record_errors=e.record_errors)
        if e.error == record_sets.INVALID_TIMESTAMP:  # the same, with an InvalidTimestampException
            _failed(target, tp, f"org.apache.kafka.common.errors.InvalidTimestampException: {e}")
            return replace(error(e.error, str(e), LOG_START_OFFSET), record_errors=e.record_errors)
        return error(e.error)  # CorruptRecordException: a known exception, answered without either
    count = outcome
    base_offset = partition.log_end_offset
    batches = producer_batches(p.records, entries)
    if stamped:  # LogValidator stamps every batch with the append time: its max timestamp too
        batches = [replace(b, max_timestamp=now) for b in batches]
    elif len(batches) == 1 and timestamps and batches[0].max_timestamp != timestamps[1]:
        # the one v2 batch's max as LogValidator rewrites it (its records'), where the header said otherwise (a
        # real producer's says the same: no dataclass copy per batch, a tenth of the Produce path)
        batches = [replace(batches[0], max_timestamp=timestamps[1])]
    try:  # Log.analyzeAndValidateProducerState, once offsets are assigned
        duplicate = partition.producer_state.append(batches, base_offset)
    except ProducerStateError as e:  # not among appendToLocalLog's known exceptions, as NOT_ENOUGH_REPLICAS
        _failed(target, tp, f"org.apache.kafka.common.errors.{e.exception}: {e}")
        return error(e.error, log_start_offset=LOG_START_OFFSET)
    if duplicate is not None:  # a retry of a batch appended before: nothing appended, the batch's metadata answered
        return Appended(p.topic, p.partition, int(Errors.NONE), duplicate.first_offset, LOG_START_OFFSET,
                        log_append_time=duplicate.timestamp, count=duplicate.last_offset - duplicate.first_offset + 1)
    # Indexed before the log end moves, as Kafka's LogSegment.append writes its time index entry before the log end
    # offset is updated: a broker process killed between the two journal lines drops the entry on restart (it is at
    # the log end read back) rather than keeping a log end whose batch the index lost.
    if stamped and count:  # LogValidator stamps the batch (a legacy set converted to one) with the append time
        partition.time_index.append(base_offset, now, now)
    elif timestamps and count:  # the v2 batch's first record's and max timestamps, or a legacy set's converted batch's
        first, largest = timestamps
        index = partition.time_index
        if first < largest and largest > index.last_timestamp:
            # records after the first may reach a target first: each new running maximum is indexed, as Kafka's
            # search names the first record reaching the target (read only when the batch raises the index's max);
            # a set checked on the worker brought them all (strictly rising: those above the index's max are a tail)
            if scanned_points is not None:
                points = scanned_points[bisect_right(scanned_points, index.last_timestamp, key=itemgetter(1)):]
            else:
                points = _running_maxima(p.records, entries, inflated, index.last_timestamp)
            index.append_records(base_offset, points)
        else:
            index.append(base_offset, first, largest)
    partition.append_as_leader(count, now)
    return Appended(p.topic, p.partition, int(Errors.NONE), base_offset, LOG_START_OFFSET,
                    log_append_time=now if stamped else -1, count=count)


def failed_request_answers(partitions: list[ProducePartition],
                           failure: record_sets.RequestFailed | None = None) -> list[ProduceAnswer]:
    """``ProduceRequest.getErrorResponse`` for an exception `produce` let through (`record_sets.RequestFailed`):
    every partition named, once, the failure's error (UNKNOWN_SERVER_ERROR by default) and the message
    ``ApiError.fromThrowable`` keeps (none for UNKNOWN_SERVER_ERROR), in the order of the request's
    ``partitionSizes`` ``HashMap``, grouped by topic as its response data collection groups them (a topic's first
    partition in that order places it)."""
    error = int(Errors.UNKNOWN_SERVER_ERROR) if failure is None else failure.error
    message = None if failure is None else failure.answer_message
    order = _hash_map_order([TopicPartition(p.topic, p.partition) for p in partitions])
    topics: dict[str, list[TopicPartition]] = {}
    for tp in order:
        topics.setdefault(tp.topic, []).append(tp)
    return [ProduceAnswer(tp.topic, tp.partition, error, log_start_offset=-1, error_message=message)
            for tps in topics.values() for tp in tps]


def request_text(acks: int, timeout_ms: int, partitions: list[ProducePartition]) -> str:
    """``ProduceRequest.toString``, as ``handleError`` logs the request: its partitions' record set sizes (summed
    for a partition named twice) in its ``partitionSizes`` ``HashMap`` order."""
    sizes: dict[TopicPartition, int] = {}
    for p in partitions:
        tp = TopicPartition(p.topic, p.partition)
        sizes[tp] = sizes.get(tp, 0) + (len(p.records) if p.records is not None else 0)
    listed = ",".join(f"{tp}={sizes[tp]}" for tp in _hash_map_order(list(sizes)))
    return f"{{acks={acks},timeout={timeout_ms},partitionSizes=[{listed}]}}"


def _hash_map_order(keys: list[TopicPartition]) -> list[TopicPartition]:
    """The iteration order of a ``java.util.HashMap<TopicPartition, ...>`` these keys were put into, in this order
    (duplicates kept at their first put): by bucket of the final table, each bucket in put order, as resizes keep
    it. The puts are replayed for the table's size: 16 slots, doubled when the size passes three quarters of them
    (``putVal``'s ``++size > threshold``), and also when a bucket reaches 9 keys while the table has fewer than 64
    slots (``treeifyBin`` resizes instead of treeifying then). From 64 slots such a bucket is a tree bin, whose
    order this does not replay: ``TopicPartition`` is not ``Comparable``, so Java breaks ties there by
    ``System.identityHashCode``, which differs from run to run."""
    unique = list(dict.fromkeys(keys))
    hashes = [hash_map_spread((31 * (31 + tp.partition) + java_string_hash(tp.topic)) & 0xFFFFFFFF) for tp in unique]
    capacity = 16
    in_bucket: dict[int, int] = {}
    for i, h in enumerate(hashes):
        b = h & (capacity - 1)
        in_bucket[b] = in_bucket.get(b, 0) + 1
        resized = False
        if in_bucket[b] >= 9 and capacity < 64:  # treeifyBin on a small table
            capacity, resized = capacity * 2, True
        if i + 1 > capacity * 3 // 4:
            capacity, resized = capacity * 2, True
        if resized:
            in_bucket = {}
            for seen in hashes[:i + 1]:
                in_bucket[seen & (capacity - 1)] = in_bucket.get(seen & (capacity - 1), 0) + 1
    order = sorted(range(len(unique)), key=lambda i: (hashes[i] & (capacity - 1), i))
    return [unique[i] for i in order]


def _failed(target: ProduceTarget, tp: TopicPartition, exception: str) -> None:
    """``processFailedRecord``'s ERROR line."""
    log.error("[ReplicaManager broker=%d] Error processing append operation on partition %s\n%s", target.broker_id,
              tp, exception)


@dataclass(frozen=True, slots=True)
class Appended(ProduceAnswer):
    """A partition appended: its answer, and how many records (the delayed produce waits for base + count)."""

    count: int = 0
