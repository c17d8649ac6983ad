"""One broker's replicas (Kafka's ``ReplicaManager`` with its ``ReplicaFetcherManager``), offsets only.

It sits beside the `BrokerControlPlane` and follows it by composition: control requests go through
`handle_control_request`, which lets the control plane decide (fencing, epochs) and then applies what it
accepted: become-leader (reset followers' caught-up times), become-follower (truncate, fetch from the new
leader), StopReplica (stop fetching; forget the log on delete). It serves followers' fetches as leader,
takes appends from a workload, runs the ``isr-expiration`` check every half ``replica.lag.time.max.ms`` and
ships ISR proposals through the IBP's `IsrManager` (see `alter_isr_manager`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import Any

from zkcontroller.broker import delayed_fetch
from zkcontroller.broker.alter_isr_manager import IsrManager, isr_manager_for
from zkcontroller.broker.client_quota_manager import mark_local_complete
from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.broker.control_plane import BrokerControlPlane, PartitionRole
from zkcontroller.broker.delayed_produce import ProduceWaiters
from zkcontroller.broker.feature_cache import FinalizedFeatureCache
from zkcontroller.broker.fetch_session import CachedPartition, FetchManager, FetchSessionCache, FetchTarget
from zkcontroller.broker.leader_and_isr_log import (
    FETCHER_MANAGER_LOGGER,
    LeaderAndIsrLog,
    leader_unavailable_line,
    removed_fetcher_line,
)
from zkcontroller.broker.leader_and_isr_log import state_log as state_change_log
from zkcontroller.broker.log_config import LogDefaults
from zkcontroller.broker.log_offsets_journal import LogOffsetsJournal, RecoveredLog
from zkcontroller.broker.partition import IsrProposal, Partition
from zkcontroller.broker.produce import ProduceTarget, is_compacted
from zkcontroller.broker.producer_state import DEFAULT_PRODUCER_ID_EXPIRATION_MS, expire_producers
from zkcontroller.broker.replica_fetcher import ReplicaFetcher
from zkcontroller.broker.topic_config_manager import TopicConfigManager
from zkcontroller.model import Broker, LeaderAndIsr, TopicPartition, sorted_partitions
from zkcontroller.protocol.control_requests import (
    AnyControlRequest,
    ControlResponse,
    Errors,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaRequest,
)
from zkcontroller.protocol.inter_broker import FetchPartitionResult, FetchRequest, FetchResponse, ReplicatedBatch
from zkcontroller.protocol.transport import BrokerTransport
from zkcontroller.runtime.gc_pause import gc_paused
from zkcontroller.runtime.log_lines import write_line
from zkcontroller.runtime.runtime import Runtime
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

log = logging.getLogger("kafka.server.ReplicaManager")
fetcher_manager_log = logging.getLogger(FETCHER_MANAGER_LOGGER)
log_manager_log = logging.getLogger("kafka.log.LogManager")


TIME_INDEX_ENTRIES_SERVED = 200
"""At most this many time-index entries per partition in one answer to a follower: each starts a batch of its own
(61 bytes of header where a plain stretch costs about 8 bytes a record), so a log of one-record Produce requests
would otherwise be served at 8x the bytes, and a follower behind on many such partitions could be answered more
than it reads (`runtime.tcp_transport.MAX_RESPONSE_BYTES`), asking again forever. Kafka bounds the same answer by bytes
(``replica.fetch.max.bytes``, ``replica.fetch.response.max.bytes``)."""

class NotLeaderError(ValueError):
    """An append to a partition this broker does not lead (Kafka's NOT_LEADER_OR_FOLLOWER)."""


class ReplicaManager:
    def __init__(self, control_plane: BrokerControlPlane, transport: BrokerTransport, runtime: Runtime,
                 config: ReplicationConfig | None = None, *, zk: Callable[[], KafkaZkClient | None] = lambda: None,
                 isr_manager: IsrManager | None = None,
                 recovered_logs: Mapping[TopicPartition, tuple[int, int]] | None = None,
                 log_defaults: LogDefaults | None = None, journal: LogOffsetsJournal | None = None,
                 fetcher_transport: BrokerTransport | None = None) -> None:
        self.control_plane = control_plane
        self.broker_id = control_plane.broker_id
        self.transport = transport
        self.fetcher_transport = fetcher_transport or transport
        """What the replica fetchers send on: their own connections on TCP (Kafka's ``ReplicaFetcherBlockingSend``),
        since the leader holds a fetch with nothing to read and `transport` keeps one request in flight per broker."""
        self.runtime = runtime
        self.config = config or ReplicationConfig()
        self._truncates_on_fetch = self.config.truncates_on_fetch  # read once, not per partition of a LeaderAndIsr
        self._partitions: dict[TopicPartition, Partition] = {}
        self._consumer_fetch_logged = False
        self._recovered = dict(recovered_logs or {})
        """(log end offset, high watermark) per partition found "on disk" at start (Kafka's LogManager loading
        logs and the HW checkpoint): a restarted broker keeps its log."""
        self._journal = journal
        """A broker process's "disk": every offset change written through (`LogOffsetsJournal`)."""
        self.fetchers: dict[int, ReplicaFetcher] = {}
        self.isr_manager: IsrManager = isr_manager or isr_manager_for(
            self.config, broker_id=self.broker_id, broker_epoch=lambda: control_plane.broker_epoch,
            controller=self._controller, transport=transport, zk=zk, runtime=runtime,
            on_result=self._on_isr_result)
        self.isr_shrinks = 0
        self.isr_expands = 0
        self.fetch_manager = FetchManager(FetchSessionCache(
            self.config.max_incremental_fetch_session_cache_slots,
            self.config.min_incremental_fetch_session_eviction_ms, runtime.rng))
        self._tasks: list[asyncio.Task[None]] = []
        self.produce_waiters = ProduceWaiters()
        """acks=-1 produce requests waiting for replication; woken where the HW moves up or leadership, the ISR or
        the replica changes."""
        self.topic_configs = TopicConfigManager(self.broker_id, zk, runtime, log_defaults,
                                                self.config.inter_broker_protocol_version)
        """The configs of the topics this broker has logs of, read at log creation and on change notifications."""
        self.min_insync_replicas: Callable[[str], int] = self.topic_configs.min_insync_replicas
        """A topic's ``min.insync.replicas``: its override, else the broker's (server.properties, else 1)."""
        self.features = FinalizedFeatureCache(self.broker_id, zk, runtime)
        """``/feature``'s finalized features and epoch, watched (Kafka's ``FinalizedFeatureCache``): ApiVersions
        v3+ sends them. Started by the first ApiVersions that needs it (`FinalizedFeatureCache.ensure_started`),
        not at startup: a broker no client asks (the simulator's) reads nothing more, so its runs are unchanged."""
        self._created_topics: set[str] = set()
        self._config_task: asyncio.Task[None] | None = None
        self.producer_id_expiration_ms = DEFAULT_PRODUCER_ID_EXPIRATION_MS
        """``transactional.id.expiration.ms``: idempotent producers' entries expire this long after their last batch."""
        self._fetchers_paused = False
        self.shutting_down = False
        """Kafka's ``isShuttingDown``, set before the controlled shutdown: a partition this broker now follows gets
        no fetcher, so it cannot catch up and rejoin the ISR the controller just took it out of."""

    # ------------------------------------------------------------------ observers

    @property
    def partitions(self) -> Mapping[TopicPartition, Partition]:
        return dict(self._partitions)

    def partition(self, tp: TopicPartition) -> Partition | None:
        return self._partitions.get(tp)

    def leader_partitions(self) -> list[TopicPartition]:
        return sorted_partitions(tp for tp, p in self._partitions.items() if p.is_leader)

    def log_offsets(self) -> dict[TopicPartition, tuple[int, int]]:
        """What a disk would keep across a restart: (log end offset, high watermark) of every local log, each a
        `RecoveredLog` carrying its leader epochs (``leader-epoch-checkpoint``), producer batches (snapshots) and time
        index entries (``.timeindex``)."""
        kept = dict(self._recovered)
        kept.update({tp: RecoveredLog(p.log_end_offset, p.high_watermark, p.epoch_cache.entries,
                                      p.producer_state.retained(), p.producer_state.snapshot_offsets,
                                      p.time_index.entries())
                     for tp, p in self._partitions.items()})
        return kept

    def log_end_offset(self, tp: TopicPartition) -> int | None:
        p = self._partitions.get(tp)
        return None if p is None else p.log_end_offset

    def high_watermark(self, tp: TopicPartition) -> int | None:
        p = self._partitions.get(tp)
        return None if p is None else p.high_watermark

    def produce_target(self) -> ProduceTarget:
        """What the Produce API appends to and waits on (`produce`)."""
        return ProduceTarget(partition=self._partitions.get, runtime=self.runtime,
                             offline=lambda: self.control_plane.offline_partitions,
                             waiters=self.produce_waiters,
                             min_insync_replicas=self.min_insync_replicas, broker_id=self.broker_id,
                             max_message_bytes=self.topic_configs.max_message_bytes,
                             log_append_time=self.topic_configs.log_append_time,
                             compacted=lambda topic: is_compacted(self.topic_configs.config(topic).values),
                             timestamp_difference_max_ms=lambda topic: self._timestamp_difference_max_ms(topic),
                             compression_type=lambda topic: str(self.topic_configs.config(topic).values.get(
                                 "compression.type", "producer")),
                             configs_loaded=self.topic_configs.wait_loaded)

    def _timestamp_difference_max_ms(self, topic: str) -> int:
        """The topic's ``message.timestamp.difference.max.ms`` (its override, else the broker's default)."""
        value = self.topic_configs.config(topic).values["message.timestamp.difference.max.ms"]
        assert isinstance(value, int)
        return value

    # ------------------------------------------------------------------ lifecycle

    def startup(self) -> None:
        """Start the ``isr-expiration`` task and the ISR manager (Kafka's ``ReplicaManager.startup``), and the
        producer-id expiration (Kafka's per-log ``PeriodicProducerExpirationCheck``) and the topic config changes'
        watch (Kafka's ``DynamicConfigManager.startup``)."""
        if self._config_task is None:
            self._config_task = self.runtime.spawn(self.topic_configs.startup(), f"config-manager-{self.broker_id}")
        if self._tasks:
            return
        self._tasks.append(self.runtime.spawn(expire_producers(
            self.runtime, lambda: [p.producer_state for p in self._partitions.values()],
            lambda: self.producer_id_expiration_ms), f"producer-expiration-{self.broker_id}"))
        if self.config.replica_fetching:
            self._tasks.append(self.runtime.spawn(self._isr_expiration(), f"isr-expiration-{self.broker_id}"))
            self.isr_manager.start()

    def shutdown(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._tasks.clear()
        if self._config_task is not None:
            self._config_task.cancel()
            self._config_task = None
        self.topic_configs.shutdown()
        self.features.shutdown()
        self.isr_manager.shutdown()
        for fetcher in self.fetchers.values():
            fetcher.shutdown()
        self.fetchers.clear()
        self.produce_waiters.shutdown()  # Kafka's delayedProducePurgatory.shutdown(): waiting requests are dropped

    def on_session_reconnected(self) -> None:
        """A ZooKeeper session reconnected or replaced: the watches of the topic configs and ``/feature`` are
        re-armed, and what changed meanwhile read."""
        self.topic_configs.on_session_reconnected()
        self.features.on_session_reconnected()

    def pause_fetchers(self) -> None:
        """Stop fetching from every leader (a stalled follower); leadership is untouched."""
        self._fetchers_paused = True
        for fetcher in self.fetchers.values():
            fetcher.pause()

    def resume_fetchers(self) -> None:
        self._fetchers_paused = False
        for fetcher in self.fetchers.values():
            fetcher.resume()

    # ------------------------------------------------------------------ control requests (by composition)

    def handle_control_request(self, request: AnyControlRequest, correlation_id: int = 0) -> ControlResponse:
        """The control plane decides; then the partitions it accepted change role here. The cyclic collector
        waits until the request is applied (`gc_paused`: one request can carry tens of thousands of partitions)."""
        with gc_paused():
            start_ms = self.runtime.now_ms()
            response = self.control_plane.handle(request, correlation_id)
            accepted = [tp for tp, error in response.partition_errors if error is Errors.NONE]
            # idle fetchers shut down once per request, as Kafka's becomeLeaderOrFollower and handleStopReplica
            if isinstance(request, LeaderAndIsrRequest):
                lines = LeaderAndIsrLog.start(self.broker_id, request, correlation_id)  # None: INFO is off
                if lines is not None:
                    lines.accepted(accepted)
                for tp in accepted:
                    unavailable = self.control_plane.leader_unavailable.get(tp)
                    if unavailable is not None:
                        self._local_partition(tp)  # Kafka's createLogIfNotExists; leadership and fetcher untouched
                        self._leader_unavailable(request, correlation_id, unavailable, lines)
                    else:
                        self._apply_leadership(tp, lines)
                self._shutdown_idle_fetchers()
                self.topic_configs.logs_created(self._created_topics)  # LogManager reads the topic's config
                self._created_topics.clear()
                if lines is not None:
                    lines.write(self.runtime.now_ms() - start_ms, self._alive_broker,
                                self.config.replica_fetching and not self.shutting_down,
                                fenced=response.error is Errors.STALE_BROKER_EPOCH)
            elif isinstance(request, StopReplicaRequest):
                deleted = {s.topic_partition for s in request.partition_states if s.delete_partition}
                for tp in accepted:
                    self._stop_replica(tp, tp in deleted)
                self._shutdown_idle_fetchers()
                hosted = {tp.topic for tp in self._partitions}
                for topic in {tp.topic for tp in deleted} - hosted:  # the topic's last log is gone
                    self.topic_configs.forget(topic)
            return response

    def _leader_unavailable(self, request: LeaderAndIsrRequest, correlation_id: int,
                            state: LeaderAndIsrPartitionState, lines: LeaderAndIsrLog | None) -> None:
        if lines is not None:
            lines.leader_unavailable(state)  # written among the follower lines, after the leaders', as Kafka does
        elif state_change_log.isEnabledFor(logging.ERROR):
            write_line(state_change_log, logging.ERROR,
                       leader_unavailable_line(self.broker_id, request, correlation_id, state))

    def _apply_leadership(self, tp: TopicPartition, lines: LeaderAndIsrLog | None = None) -> None:
        hosted = self.control_plane.partition(tp)
        if hosted is None:
            return
        partition = self._local_partition(tp)
        if hosted.role is PartitionRole.LEADER:
            if lines is not None:
                lines.making_leader(tp, partition)
            self._remove_fetcher(tp)
            partition.make_leader(hosted.leader_epoch, hosted.isr, hosted.replicas, hosted.zk_version,
                                  hosted.controller_epoch, self.runtime.now_ms())
            self.isr_manager.clear_pending(tp)
        elif hosted.role is PartitionRole.FOLLOWER:
            if lines is not None:
                lines.making_follower(tp, partition)
            partition.make_follower(hosted.leader, hosted.leader_epoch, hosted.isr, hosted.replicas,
                                    hosted.zk_version, hosted.controller_epoch, self._truncates_on_fetch)
            self.isr_manager.clear_pending(tp)  # as Kafka's makeFollower: we may have led it before
            if self.shutting_down:  # makeFollowers: the old fetcher goes, no new one is added
                self._remove_fetcher(tp)
            else:
                self._add_fetcher(tp, hosted.leader, hosted.leader_epoch)
        else:
            self._remove_fetcher(tp)
            partition.make_offline()
        self.produce_waiters.wake(tp)  # a waiting acks=-1 request on a former leader completes now

    def _local_partition(self, tp: TopicPartition) -> Partition:
        """The partition's local log, created (from what a restart found on disk, if anything) when missing."""
        partition = self._partitions.get(tp)
        if partition is None:
            partition = self._partitions[tp] = Partition(tp, self.broker_id, self.config.replica_lag_time_max_ms)
            partition.on_high_watermark_increase = self.produce_waiters.wake
            partition.on_leader_append = self.produce_waiters.wake
            self._created_topics.add(tp.topic)
            if self._journal is not None:  # before restoring: producers expired while down are written through
                partition.producer_state.journal_expired = self._journal.record_expired_producers
            if tp in self._recovered:
                recovered = self._recovered.pop(tp)
                partition.log_end_offset, partition.high_watermark = recovered
                partition.restore_epochs(getattr(recovered, "epochs", ()))  # a `RecoveredLog` carries them
                partition.restore_producers(getattr(recovered, "producers", ()), self.runtime.now_ms(),
                                            self.producer_id_expiration_ms,
                                            getattr(recovered, "producer_snapshots", ()))
                source = getattr(recovered, "time_index_source", None)  # the journal's index, copied as arrays
                partition.restore_time_index(source if source is not None else getattr(recovered, "time_index", ()))
            if self._journal is not None:
                partition.journal = self._journal.record
                partition.epoch_cache.flush = self._journal.record_epochs
                partition.producer_state.journal = self._journal.record_producer_batches
                partition.producer_state.journal_snapshot = self._journal.record_producer_snapshot
                partition.time_index.journal = self._journal.record_time_index
                partition.time_index.journal_records = self._journal.record_time_index_records
                self._journal.attach_time_index(tp, partition.time_index)
                self._journal.record(tp, partition.log_end_offset, partition.high_watermark)
        return partition

    def _stop_replica(self, tp: TopicPartition, delete: bool) -> None:
        """Kafka's ``stopPartitions``: the fetcher stops; without delete the partition is otherwise left as it is
        (a leader keeps serving fetches and checking its ISR until a LeaderAndIsr or a deleting StopReplica)."""
        self._remove_fetcher(tp)
        if delete:
            self._recovered.pop(tp, None)
            if self._journal is not None:
                self._journal.forget(tp)
        if tp in self._partitions and (delete or self.control_plane.partition(tp) is None):
            del self._partitions[tp]
        self.produce_waiters.wake(tp)

    def sync_offline_log_dirs(self) -> None:
        """After `BrokerControlPlane.fail_log_dir`: partitions it took offline stop fetching and leading."""
        for tp in self.control_plane.offline_partitions:
            self._stop_replica(tp, delete=True)
        self._shutdown_idle_fetchers()

    def handle_log_dir_failure(self, log_dir: str) -> list[TopicPartition]:
        """Kafka's ``ReplicaManager.handleLogDirFailure`` and ``LogManager.handleLogDirFailure`` up to the
        ZooKeeper notification (the server's job): the replicas in ``log_dir`` go offline (the control plane then
        answers KAFKA_STORAGE_ERROR for them), stop fetching and leading, and their logs are lost. A dir already
        offline is ignored, as Kafka does. Returns the partitions taken offline."""
        plane, me = self.control_plane, self.broker_id
        if log_dir not in plane.log_dirs:
            raise ValueError(f"broker {me} has no log dir {log_dir!r}; its log dirs are {', '.join(plane.log_dirs)}")
        if log_dir in plane.offline_log_dirs:
            return []
        log.warning("[ReplicaManager broker=%d] Stopping serving replicas in dir %s", me, log_dir)
        failed = plane.fail_log_dir(log_dir)
        for tp in failed:
            self._stop_replica(tp, delete=True)
        self._shutdown_idle_fetchers()
        names = ",".join(str(tp) for tp in failed)
        if failed and fetcher_manager_log.isEnabledFor(logging.INFO):
            fetcher_manager_log.info(removed_fetcher_line(me, failed))
        log.warning("[ReplicaManager broker=%d] Broker %d stopped fetcher for partitions %s and stopped moving logs "
                    "for partitions  because they are in the failed log directory %s.", me, me, names, log_dir)
        log_manager_log.warning("Stopping serving logs in dir %s", log_dir)
        if self.all_log_dirs_offline:
            log_manager_log.error("Shutdown broker because all log dirs in %s have failed", ", ".join(plane.log_dirs))
        else:
            log_manager_log.warning("Logs for partitions %s are offline and logs for future partitions  are offline "
                                    "due to failure on log directory %s", names, log_dir)
        return failed

    @property
    def all_log_dirs_offline(self) -> bool:
        """Kafka halts the broker then (``Exit.halt(1)`` in ``LogManager.handleLogDirFailure``)."""
        return len(self.control_plane.offline_log_dirs) == len(self.control_plane.log_dirs)

    def _add_fetcher(self, tp: TopicPartition, leader: int, leader_epoch: int) -> None:
        if not self.config.replica_fetching:
            return
        for source, other in self.fetchers.items():
            if source != leader:
                other.remove_partition(tp)
        fetcher = self.fetchers.get(leader)
        if fetcher is None:
            fetcher = self.fetchers[leader] = ReplicaFetcher(
                self.broker_id, leader, self._partitions.get, self._alive_broker, self.fetcher_transport,
                self.runtime, self.config)
            if self._fetchers_paused:
                fetcher.pause()
            fetcher.start()
        fetcher.add_partition(tp, leader_epoch, self._alive_broker(leader))

    def _remove_fetcher(self, tp: TopicPartition) -> None:
        for fetcher in self.fetchers.values():
            fetcher.remove_partition(tp)

    def _shutdown_idle_fetchers(self) -> None:
        """Called once per request or log-dir failure (it was once per partition: a 10,000-partition request
        scanned every fetcher 10,000 times)."""
        for source in [s for s, f in self.fetchers.items() if not f.fetching]:
            self.fetchers.pop(source).shutdown()

    def _alive_broker(self, broker_id: int) -> Broker | None:
        return self.control_plane.metadata_cache.alive_broker(broker_id)

    def _controller(self) -> Broker | None:
        controller_id = self.control_plane.metadata_cache.controller_id
        return None if controller_id is None or controller_id < 0 else self._alive_broker(controller_id)

    # ------------------------------------------------------------------ the workload and followers' fetches

    def append(self, tp: TopicPartition, records: int) -> int:
        """Append ``records`` (a count: offsets only) on the leader; returns the new log end offset."""
        partition = self._partitions.get(tp)
        if partition is None or not partition.is_leader:
            raise NotLeaderError(f"broker {self.broker_id} is not the leader of {tp}")
        return partition.append_as_leader(records, self.runtime.now_ms())

    def handle_fetch_request(self, request: FetchRequest) -> FetchResponse | Coroutine[Any, Any, FetchResponse]:
        """A fetch as it comes in (``KafkaApis.handleFetchRequest``): a follower's that may wait (``max_wait_ms``
        and ``min_bytes`` above 0) is served by `fetch_messages`, an awaitable the transports and the wire's
        request handler await; any other is answered at once (a consumer's is held by the wire's request handler)."""
        if request.replica_id >= 0 and request.max_wait_ms > 0 and request.min_bytes > 0:
            return self.fetch_messages(request)
        return self.handle_fetch(request)

    async def fetch_messages(self, request: FetchRequest) -> FetchResponse:
        """Kafka's ``fetchMessages`` for a follower: read (`handle_fetch`, which records the follower's fetch);
        if nothing was read and nothing failed, hold the fetch in the purgatory up to ``max_wait_ms`` until records
        are appended past its offset or leadership changes (`delayed_fetch`), then read it again (or, expired with no
        wake-up for any of its partitions, answered from the first read, which a new read would repeat).
        `PurgatoryShutDown` when the broker stops meanwhile: the fetch is dropped unanswered."""
        now = self.runtime.now_ms()
        context = self.fetch_manager.new_context(request, now, privileged=request.replica_id >= 0)
        read = self._read(request, context.targets(), now, True)
        held = delayed_fetch.held_by_context(request, context) \
            if delayed_fetch.follower_may_hold(request, context, read) else []
        if not held:  # answered at once (or an incremental fetch whose session holds no partition)
            return context.respond(read)
        mark_local_complete(self.runtime.now_ms())  # a purgatory wait, not request handling time
        completed, untouched = await delayed_fetch.hold_follower(self.produce_waiters, held, self._partitions.get,
                                                                 request.max_wait_ms, self.runtime)
        # completed or expired: read again, unless it expired with nothing changed (`delayed_fetch.hold_follower`).
        # Only now does the fetch context see the answer (its session notes the high watermarks sent; a full fetch
        # opens its session), as Kafka's updateAndGenerateResponseData runs after the hold: noted at the first read,
        # a high watermark that moved just before it would be left out of the answer sent after it.
        unchanged = untouched and not completed and delayed_fetch.same_partitions(read, held)
        return context.respond(read if unchanged else delayed_fetch.read_held(self, request, held))

    def handle_fetch(self, request: FetchRequest, *, update_follower_state: bool = True) -> FetchResponse:
        """Serve a fetch at once (Kafka's ``readFromLocalLog``; for a replica with ``updateFollowerFetchState``
        unless ``update_follower_state`` is False, as when a held fetch is read again): epoch checks, then the
        follower's LEO and caught-up time are recorded, maybe expanding the ISR and moving the HW. In a fetch session
        every partition of the session is served; the answer carries those with news (`fetch_session`)."""
        now = self.runtime.now_ms()
        context = self.fetch_manager.new_context(request, now, privileged=request.replica_id >= 0)
        return context.respond(self._read(request, context.targets(), now, update_follower_state))

    def _read(self, request: FetchRequest, targets: Iterable[FetchTarget | CachedPartition], now: int,
              update_follower_state: bool) -> list[FetchPartitionResult]:
        """`handle_fetch`'s read of each partition the fetch serves (``targets``, from its fetch context), before the
        context cuts the answer down."""
        from_follower = request.replica_id >= 0  # -1 a consumer, -2 a debugging consumer
        results = []
        for asked in targets:
            tp = asked.topic_partition
            partition = self._partitions.get(tp)
            if partition is None:  # Kafka's getPartitionOrError
                if tp in self.control_plane.offline_partitions:  # HostedPartition.Offline
                    error = Errors.KAFKA_STORAGE_ERROR
                elif self.control_plane.metadata_cache.contains(tp):  # the topic exists, not hosted here (any more)
                    error = Errors.NOT_LEADER_OR_FOLLOWER
                else:
                    error = Errors.UNKNOWN_TOPIC_OR_PARTITION
                results.append(FetchPartitionResult(tp, error))
                continue
            error = partition.fetch_error(request.replica_id, asked.current_leader_epoch, asked.fetch_offset)
            last_epoch = asked.last_fetched_epoch  # the leader's own epoch diverges only past its end: out of range
            if from_follower and last_epoch >= 0 and (
                    error is Errors.OFFSET_OUT_OF_RANGE
                    or (error is Errors.NONE and last_epoch != partition.leader_epoch)):
                diverging = partition.diverging_epoch(last_epoch, asked.fetch_offset)
                if diverging is not None and diverging[1] < 0:  # the epoch cache cannot tell: Kafka's exception
                    error = Errors.OFFSET_OUT_OF_RANGE
                elif diverging is not None:  # no records, and where the epoch ended; the follower's LEO not taken
                    results.append(FetchPartitionResult(tp, Errors.NONE, partition.high_watermark, 0,
                                                        asked.fetch_offset, diverging_epoch=diverging[0],
                                                        diverging_end_offset=diverging[1]))
                    continue
            if error is not Errors.NONE:
                leader_end = partition.log_end_offset if error is Errors.OFFSET_OUT_OF_RANGE else -1
                results.append(FetchPartitionResult(tp, error, partition.high_watermark, log_end_offset=leader_end))
                continue
            if not from_follower:
                results.append(self._consumer_fetch(tp, partition, asked.fetch_offset))
                continue
            if not partition.is_assigned_follower(request.replica_id):
                log.warning("[ReplicaManager broker=%d] Leader %d failed to record follower %d's position %d, and "
                            "last sent HW since the replica is not recognized to be one of the assigned replicas %s "
                            "for partition %s. Empty records will be returned for this partition.", self.broker_id,
                            self.broker_id, request.replica_id, asked.fetch_offset,
                            ",".join(map(str, partition.replicas)), tp)
                results.append(FetchPartitionResult(tp, Errors.NONE, partition.high_watermark, 0, asked.fetch_offset))
                continue
            if update_follower_state:
                proposal = partition.record_follower_fetch(request.replica_id, asked.fetch_offset, now)
                if proposal is not None:
                    self.isr_manager.submit(proposal)
            offset = asked.fetch_offset
            records = min(asked.max_records, partition.log_end_offset - offset)
            indexed = partition.time_index.entries_in(offset, offset + records) if records > 0 else ()
            if len(indexed) > TIME_INDEX_ENTRIES_SERVED:  # each is a batch header of its own on the wire
                records = indexed[TIME_INDEX_ENTRIES_SERVED].base_offset - offset
            if records > 0:  # the records' batch headers: producer batches (if any) and leader epochs
                producers = partition.producer_state
                batches: tuple[ReplicatedBatch, ...] = ()
                if producers.last_indexed_offset >= offset:
                    records, batches = producers.batches_in(offset, records)
                    offset = min(offset, batches[0].base_offset) if batches else offset  # a first batch whole
                results.append(FetchPartitionResult(tp, Errors.NONE, partition.high_watermark, records, offset,
                                                    batches=batches,
                                                    epochs=partition.epoch_cache.epochs_in(offset, offset + records),
                                                    timestamps=partition.time_index.entries_in(offset,
                                                                                               offset + records)))
            else:
                results.append(FetchPartitionResult(tp, Errors.NONE, partition.high_watermark, records, offset))
        return results

    def _consumer_fetch(self, tp: TopicPartition, partition: Partition, fetch_offset: int) -> FetchPartitionResult:
        """A consumer's fetch that passed Kafka's checks (the partition, the leader epoch, leadership, the offset).
        At or past the high watermark there is nothing a consumer may read: no records and no error, as Kafka
        answers (a consumer at the end polls on, and `KafkaApis` holds the answer as Kafka's DelayedFetch would).
        Below it the log keeps offsets, not records, so there are none to send: UNSUPPORTED_FOR_MESSAGE_FORMAT, the code
        Kafka gives a request its log format cannot serve. Clients raise it to the application (kafka-python's
        ``poll``, the Java consumer's "Unexpected error code 43"); an empty answer read as "no new records"
        forever, and the broker logged the consumer as an unknown follower."""
        if fetch_offset >= partition.high_watermark:
            return FetchPartitionResult(tp, Errors.NONE, partition.high_watermark, 0, fetch_offset)
        if not self._consumer_fetch_logged:
            self._consumer_fetch_logged = True
            log.warning("[ReplicaManager broker=%d] Fetch from a consumer for %s: not served, this broker keeps "
                        "offsets, not records; answered UNSUPPORTED_FOR_MESSAGE_FORMAT (logged once)",
                        self.broker_id, tp)
        return FetchPartitionResult(tp, Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT, partition.high_watermark)

    # ------------------------------------------------------------------ ISR upkeep

    async def _isr_expiration(self) -> None:
        while True:
            await self.runtime.sleep_ms(self.config.isr_expiration_interval_ms)
            self.maybe_shrink_isr()

    def maybe_shrink_isr(self) -> list[IsrProposal]:
        """One ``isr-expiration`` round over the partitions this broker leads."""
        now, lag = self.runtime.now_ms(), self.config.replica_lag_time_max_ms
        proposals = []
        for partition in self._partitions.values():
            proposal = partition.maybe_shrink_isr(now, lag)
            if proposal is not None:
                proposals.append(proposal)
                self.isr_manager.submit(proposal)
        return proposals

    def _on_isr_result(self, proposal: IsrProposal, result: LeaderAndIsr | Errors) -> None:
        partition = self._partitions.get(proposal.topic_partition)
        if partition is None:
            return
        before = partition.isr
        self.produce_waiters.wake(proposal.topic_partition)  # the maximal ISR a waiting request counts may change
        if partition.on_isr_update(proposal, result, self.runtime.now_ms()):
            if len(partition.isr) < len(before):
                self.isr_shrinks += 1
            elif len(partition.isr) > len(before):
                self.isr_expands += 1
        elif partition.should_resend(proposal, result):
            self.isr_manager.resubmit(proposal)
