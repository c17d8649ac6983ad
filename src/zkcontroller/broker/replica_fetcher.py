"""A follower's fetching from one leader broker (Kafka's ``ReplicaFetcherThread``), offsets only.

One fetcher per source broker fetches all partitions this broker follows there: each fetch carries every
partition's log end offset and the leader epoch it follows; the answer says how many records to append and the
leader's high watermark. Each fetch carries ``replica.fetch.wait.max.ms`` as its ``max_wait_ms``: a leader with
nothing to send holds it that long, answering as soon as records are appended (`delayed_fetch`), and the next fetch
goes at once, as Kafka's fetcher does after an answer; only an empty answer the leader did not hold (one that came
back sooner, without errors) is followed by the rest of that wait, as before leaders held fetches. A partition
error delays that partition by ``replica.fetch.backoff.ms``, a failed fetch every partition by twice that (as
Kafka's). As Kafka's ``ReplicaFetcherBlockingSend``, the connect to the leader is bounded by
``replica.socket.timeout.ms`` (``awaitReady``) and the answer by ``request.timeout.ms`` (its NetworkClient's request
timeout, which disconnects: the fetch fails with ``sendAndReceive``'s "was disconnected before the response was
read"). The leader's endpoint is the one known when partitions were added.
FENCED_LEADER_EPOCH drops the partition until a LeaderAndIsr brings the new epoch; UNKNOWN_LEADER_EPOCH (the
leader has not learnt it yet) delays it. ``pause``/``resume`` stop and restart fetching without touching
leadership (a stalled follower, for drills). Fetches run in a KIP-227 fetch session (`fetch_session_handler`):
after the first, each names only the partitions whose fetch state changed. A record batch that fails its CRC
check (CORRUPT_MESSAGE) delays its partition, as Kafka's fetcher does. Records are appended at the offsets the
leader gives, as ``Log.appendAsFollower`` takes them: after a gap (a compacted log's) the log end goes past it;
records starting below the fetch offset mark the partition failed (``UnexpectedAppendOffsetException``, listing the
records' own first 10 offsets when the answer came over the wire: `record_offsets`), as do batches whose last offsets
do not increase (``OffsetsOutOfOrderException``, refused by the wire's decoder, its offsets read only for the message
and listed up to `fetch_codec.OUT_OF_ORDER_LISTED`, or by `Partition.append_as_follower`);
a batch beginning inside the one before it is appended, as Kafka's follower takes it. The leader's time index entries
come with the records (the batches' header timestamps) and go into the follower's (`Partition.append_as_follower`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.broker.delayed_produce import PurgatoryShutDown
from zkcontroller.broker.fetch_session_handler import FetchSessionHandler, fetch_metadata_string
from zkcontroller.broker.partition import FollowerAppendError, Partition
from zkcontroller.broker.timeouts import send_with_timeout
from zkcontroller.model import Broker, TopicPartition, sorted_partitions
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import (
    FetchPartition,
    FetchPartitionResult,
    FetchRequest,
    FetchResponse,
)
from zkcontroller.protocol.transport import (
    FETCHER_CLIENT,
    BrokerTransport,
    BrokerUnreachableError,
    ConnectTimeoutError,
    node_string,
)
from zkcontroller.protocol.wire.fetch_codec import (
    FetchedRecordsResult,
    OffsetsOutOfOrderResult,
    offsets_string,
    out_of_order_offsets,
)
from zkcontroller.protocol.wire.record_offsets import record_offsets
from zkcontroller.runtime.runtime import Runtime

log = logging.getLogger("kafka.server.ReplicaFetcherThread")

REPLICA_FETCH_MIN_BYTES = 1
"""``replica.fetch.min.bytes``' default (not configurable here: fetches carry offsets only)."""
REPLICA_FETCH_RESPONSE_MAX_BYTES = 10 * 1024 * 1024
"""``replica.fetch.response.max.bytes``' default: the Builder's ``maxBytes``."""
REPLICA_FETCH_MAX_BYTES = 1024 * 1024
"""``replica.fetch.max.bytes``' default: each partition's ``maxBytes`` (``fetchSize``)."""


def optional_string(value: int) -> str:
    """``Optional<Integer>.toString`` of an epoch, negative meaning none: ``Optional[3]`` / ``Optional.empty``."""
    return f"Optional[{value}]" if value >= 0 else "Optional.empty"


def partition_data_string(asked: FetchPartition, partition: Partition | None) -> str:
    """``FetchRequest.PartitionData.toString`` for one partition of a replica's fetch."""
    last_fetched = asked.last_fetched_epoch
    return (f"PartitionData(fetchOffset={asked.fetch_offset}, logStartOffset=0, maxBytes={REPLICA_FETCH_MAX_BYTES}, "
            f"currentLeaderEpoch={optional_string(asked.current_leader_epoch)}, "
            f"lastFetchedEpoch={optional_string(last_fetched)})")


class ReplicaFetcher:
    def __init__(self, broker_id: int, source_broker_id: int, partition: Callable[[TopicPartition], Partition | None],
                 broker: Callable[[int], Broker | None], transport: BrokerTransport, runtime: Runtime,
                 config: ReplicationConfig) -> None:
        self.broker_id = broker_id
        self.source_broker_id = source_broker_id
        self._partition = partition
        self._broker = broker
        self._transport = transport
        self._runtime = runtime
        self._config = config
        self._sends_last_fetched_epoch = config.truncates_on_fetch
        """Read once: the config is fixed for the fetcher's life, and the IBP comparison is too slow to make per
        partition per fetch."""
        self.fetching: dict[TopicPartition, int] = {}
        """Partitions fetched here, each with the leader epoch it follows."""
        self._delayed_until: dict[TopicPartition, int] = {}
        self.source: Broker | None = None
        """The leader's endpoint as of the last `add_partition` (Kafka's fetcher thread keeps the
        ``BrokerEndPoint`` it was created for, whatever later UpdateMetadata requests say)."""
        self.paused = False
        self.fetches = 0
        self.session = FetchSessionHandler(broker_id, source_broker_id)
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def _log(self, level: int, message: str) -> None:
        log.log(level, "[ReplicaFetcher replicaId=%d, leaderId=%d, fetcherId=0] %s", self.broker_id,
                self.source_broker_id, message)

    # ------------------------------------------------------------------ partitions and lifecycle

    def add_partition(self, tp: TopicPartition, leader_epoch: int, source: Broker | None = None) -> None:
        self.fetching[tp] = leader_epoch
        if source is not None:
            self.source = source
        self._delayed_until.pop(tp, None)
        self._wakeup.set()

    def remove_partition(self, tp: TopicPartition) -> None:
        self.fetching.pop(tp, None)
        self._delayed_until.pop(tp, None)

    def start(self) -> None:
        if self._task is None:
            self._task = self._runtime.spawn(self._run(), f"ReplicaFetcherThread-0-{self.source_broker_id}"
                                             f"-on-{self.broker_id}")

    def shutdown(self) -> None:
        """Stop fetching and close this fetcher's client (Kafka's ``ReplicaFetcherBlockingSend.close``): a fetcher
        made again for the same leader has a new connection and counts its correlation ids from 0."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
        close_client = getattr(self._transport, "close_client", None)
        if close_client is not None:
            close_client(self.source_broker_id, FETCHER_CLIENT, "replica fetcher shut down")

    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        self._wakeup.set()

    # ------------------------------------------------------------------ the fetch loop

    async def _run(self) -> None:
        config = self._config
        while True:
            if self.paused or not self.fetching:
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            sent_ms = self._runtime.now_ms()
            outcome = await self.fetch_once()
            if outcome is None:
                await self._runtime.sleep_ms(config.replica_fetch_backoff_ms)
                continue
            rest_ms = 0 if outcome else config.replica_fetch_wait_max_ms - (self._runtime.now_ms() - sent_ms)
            if rest_ms > 0:  # an empty answer the leader did not hold (it answers at once): wait out the rest
                await self._runtime.sleep_ms(rest_ms)
            else:
                await asyncio.sleep(0)  # one loop turn between fetches

    async def fetch_once(self) -> bool | None:
        """One fetch round: True to fetch again at once (records, an error or a divergence came, or the session must
        start over), False if every partition answered empty without error, None if it could not be made (then back
        off)."""
        now = self._runtime.now_ms()
        parts: list[FetchPartition] = []
        for tp in sorted_partitions(self.fetching):
            partition = self._partition(tp)
            if partition is not None and self._delayed_until.get(tp, 0) <= now:
                parts.append(FetchPartition(tp, self.fetching[tp], partition.log_end_offset,
                                            partition.last_fetched_epoch if self._sends_last_fetched_epoch else -1))
        leader = self.source or self._broker(self.source_broker_id)
        if not parts or leader is None:
            return None
        data = self.session.build(parts, self._config.replica_fetch_max_records, self._config.replica_fetch_wait_max_ms)
        self.fetches += 1
        failure = await self._connect(leader)
        if failure is None:
            try:
                # the NetworkClient's request timeout is request.timeout.ms (replica.socket.timeout.ms bounds only
                # the connect, above)
                response = await send_with_timeout(self._transport, self._runtime, leader, data.request,
                                                   self._config.request_timeout_ms)
            except (BrokerUnreachableError, PurgatoryShutDown):  # lost, the request timeout, or the leader stopped
                # while holding the fetch (in process; its socket server closes the connection on the wire)
                failure = (f"java.io.IOException: Connection to {leader.id} was disconnected before the response "
                           "was read")
            else:
                if not isinstance(response, FetchResponse):  # Kafka's asInstanceOf[FetchResponse] throws
                    failure = (f"java.lang.ClassCastException: class {type(response).__name__} cannot be cast to "
                               "class org.apache.kafka.common.requests.FetchResponse")
        if failure is not None:  # AbstractFetcherThread.processFetchRequest's catch
            self.session.handle_error()
            if log.isEnabledFor(logging.WARNING):
                self._log(logging.WARNING, f"Error in response for fetch request "
                          f"{self.fetch_request_string(data.request)}\n{failure}")
            self._delay_after_failure()
            return None
        if not self.session.handle_response(response):  # it logged why (Kafka's fetchFromLeader: no data, no WARN)
            if response.error in (Errors.FETCH_SESSION_ID_NOT_FOUND, Errors.INVALID_FETCH_SESSION_EPOCH, Errors.NONE):
                return True  # the next fetch is a full one, at once (Kafka's fetcher gets an empty answer)
            return None
        news = self._process(data.session_partitions, response)
        return news or not all(r.error is Errors.NONE and not r.records and r.diverging_end_offset < 0
                                      for r in response.partitions)

    async def _connect(self, leader: Broker) -> str | None:
        """``ReplicaFetcherBlockingSend.sendRequest``'s ``awaitReady`` before the request, bounded by
        ``replica.socket.timeout.ms``, on a transport with connections to open (`TcpTransport.connect`; others
        deliver at once): None when connected, else the exception line Kafka's warning then carries: its
        ``SocketTimeoutException`` when the bound ended first, ``awaitReady``'s ``IOException`` when the connection
        failed (refused, in reconnect back-off, or the NetworkClient's connection-setup timeout ended first)."""
        connect = getattr(self._transport, "connect", None)
        if connect is None:
            return None
        timeout_ms = self._config.replica_socket_timeout_ms
        try:
            await connect(leader, timeout_ms=timeout_ms, client=FETCHER_CLIENT)
        except ConnectTimeoutError:
            return f"java.net.SocketTimeoutException: Failed to connect within {timeout_ms} ms"
        except BrokerUnreachableError:
            return f"java.io.IOException: Connection to {node_string(leader, self._listener_name())} failed."
        return None

    def _listener_name(self) -> str | None:
        return getattr(self._transport, "listener_name", None)

    def fetch_request_string(self, request: FetchRequest) -> str:
        """The fetch as Kafka's ``FetchRequest.Builder.toString`` (2.8.2, ``FetchRequest.java``) prints it,
        with ``ReplicaFetcherThread.buildFetch``'s values: ``replica.fetch.wait.max.ms``, and the defaults of
        what we do not configure (``replica.fetch.min.bytes`` 1, ``replica.fetch.response.max.bytes`` 10 MiB,
        ``replica.fetch.max.bytes`` 1 MiB per partition, no rack id). Logs start at 0 here; ``lastFetchedEpoch`` is
        the epoch of the log's last records (`Partition.last_fetched_epoch`), empty below IBP 2.7-IV1."""
        fetch_data = ", ".join(f"{p.topic_partition}={partition_data_string(p, self._partition(p.topic_partition))}"
                               for p in request.partitions)
        return (f"(type=FetchRequest, replicaId={request.replica_id}, "
                f"maxWait={self._config.replica_fetch_wait_max_ms}, minBytes={REPLICA_FETCH_MIN_BYTES}, "
                f"maxBytes={REPLICA_FETCH_RESPONSE_MAX_BYTES}, "
                f"fetchData={{{fetch_data}}}, isolationLevel=READ_UNCOMMITTED, "
                f"toForget={', '.join(map(str, request.forgotten))}, "
                f"metadata={fetch_metadata_string(request.session_id, request.session_epoch)}, rackId=)")

    def _delay_after_failure(self) -> None:
        """Kafka's ``processFetchRequest`` after a failed fetch: it waits ``replica.fetch.backoff.ms`` (our loop's
        back-off), then delays every partition not delayed yet by as much again (``handlePartitionsWithErrors``;
        the source says "effectively doubling the delay")."""
        now = self._runtime.now_ms()
        until = now + 2 * self._config.replica_fetch_backoff_ms
        for tp in self.fetching:
            if self._delayed_until.get(tp, 0) <= now:
                self._delayed_until[tp] = until

    def _out_of_range(self, tp: TopicPartition, partition: Partition, result: FetchPartitionResult) -> None:
        """Kafka's ``fetchOffsetAndTruncate``: a follower ahead of the leader (after an unclean election) truncates
        to the leader's log end offset; otherwise it keeps its log and fetches on from its end (the leader's log
        starts at 0 here, so never above it). An answer without the leader's LEO (-1) falls back to its HW."""
        replica_end = partition.log_end_offset
        leader_end = result.log_end_offset if result.log_end_offset >= 0 else result.high_watermark
        if leader_end < replica_end:
            self._log(logging.WARNING, f"Reset fetch offset for partition {tp} from {replica_end} to current "
                      f"leader's latest offset {leader_end}")
            partition.truncate_to(leader_end)
        else:
            self._log(logging.WARNING, f"Reset fetch offset for partition {tp} from {replica_end} to current "
                      "leader's start offset 0")

    def _truncate_on_fetch(self, tp: TopicPartition, partition: Partition, result: FetchPartitionResult) -> None:
        """Kafka's ``truncateOnFetchResponse`` and ``getOffsetTruncationState``: the leader says the follower's
        last epoch is, in its log, ``diverging_epoch`` ending at ``diverging_end_offset``. If this replica knows
        that epoch, it truncates to the earlier of the two ends (and of its own log end); if not, to where its
        largest epoch below it ends, and the next fetch asks again from there; with no epoch to compare (an empty
        cache), to the leader's end. Then ``ReplicaFetcherThread.truncate`` (with its WARN when that goes below the
        high watermark)."""
        leader_epoch, leader_end = result.diverging_epoch, result.diverging_end_offset
        replica_end = partition.log_end_offset
        if leader_epoch < 0:
            self._log(logging.WARNING, "Leader or replica is on protocol version where leader epoch is not considered "
                      f"in the OffsetsForLeaderEpoch response. The leader's offset {leader_end} will be used for "
                      f"truncation in {tp}.")
            offset = min(leader_end, replica_end)
        else:
            epoch, end = partition.epoch_cache.end_offset_for(leader_epoch, replica_end)
            if end < 0:
                self._log(logging.WARNING, f"Based on replica's leader epoch, leader replied with epoch {leader_epoch} "
                          f"below any replica's tracked epochs for {tp}. The leader's offset only {leader_end} will be "
                          "used for truncation.")
                offset = min(leader_end, replica_end)
            elif epoch != leader_epoch:
                offset = min(end, replica_end)
                self._log(logging.INFO, f"Based on replica's leader epoch, leader replied with epoch {leader_epoch} "
                          f"unknown to the replica for {tp}. Will truncate to {offset} and send another leader epoch "
                          "request to the leader.")
            else:
                offset = min(end, leader_end, replica_end)
        if offset < partition.high_watermark:
            self._log(logging.WARNING, f"Truncating {tp} to offset {offset} below high watermark "
                      f"{partition.high_watermark}")
        partition.truncate_to(offset)

    def _mark_failed(self, tp: TopicPartition, asked: FetchPartition, exception: str) -> None:
        """An append Kafka's ``Log.append`` throws on (``exception``: class and message) is not a corrupt record:
        ``processFetchRequest``'s ``case t: Throwable`` logs it and marks the partition failed
        (``markPartitionFailed``: not fetched until a LeaderAndIsr adds it again)."""
        self._log(logging.ERROR, f"Unexpected error occurred while processing data for partition {tp} at offset "
                  f"{asked.fetch_offset}\n{exception}")
        self.remove_partition(tp)
        self._log(logging.WARNING, f"Partition {tp} marked as failed")

    @staticmethod
    def _unexpected_append_offset(tp: TopicPartition, asked: FetchPartition, result: FetchPartitionResult) -> str:
        """Kafka's ``UnexpectedAppendOffsetException`` for records starting below the fetch offset. Its first 10
        offsets are the records' own, read from the record set when it came over the wire (`record_offsets`: a
        compacted batch's are not consecutive, a compressed one is decompressed), else taken as consecutive from
        the base offset (an answer handed over in process has no records to read)."""
        base, last = result.base_offset, result.base_offset + result.records - 1
        if isinstance(result, FetchedRecordsResult) and result.record_set:
            offsets: Iterable[int] = record_offsets(result.record_set, 10)
        else:
            offsets = range(base, min(base + 10, last + 1))
        first = offsets_string(offsets)
        return (f"kafka.common.UnexpectedAppendOffsetException: Unexpected offset in append to {tp}. First offset "
                f"{base} is less than the next offset {asked.fetch_offset}. First 10 offsets in append: {first}, "
                f"last offset in append: {last}. Log start offset = 0")

    def _process(self, sent: dict[TopicPartition, FetchPartition], response: FetchResponse) -> bool:
        news = False  # records appended, or a partition marked failed: fetch again at once
        for result in response.partitions:
            tp = result.topic_partition
            asked = sent.get(tp)
            partition = self._partition(tp)
            if asked is None or partition is None or self.fetching.get(tp) != asked.current_leader_epoch:
                continue  # no longer fetched here, or fetched at another epoch since
            if partition.log_end_offset != asked.fetch_offset:
                continue  # truncated meanwhile
            if result.error is Errors.NONE and result.diverging_end_offset >= 0:
                self._truncate_on_fetch(tp, partition, result)
            elif isinstance(result, OffsetsOutOfOrderResult):
                self._mark_failed(tp, asked, "kafka.common.OffsetsOutOfOrderException: Out of order offsets found in "
                                  f"append to {tp}: {out_of_order_offsets(result.record_set)}")
                news = True
            elif result.error is Errors.NONE:
                records = result.records
                if records and result.base_offset != asked.fetch_offset:
                    if result.base_offset < asked.fetch_offset:
                        self._mark_failed(tp, asked, self._unexpected_append_offset(tp, asked, result))
                        news = True
                        continue
                    records += result.base_offset - asked.fetch_offset  # a gap (a compacted log): the log end jumps
                try:
                    partition.append_as_follower(records, result.high_watermark, result.batches, result.epochs,
                                                 result.timestamps)
                except FollowerAppendError as e:  # Log.append's OffsetsOutOfOrderException, in process
                    self._mark_failed(tp, asked, e.exception)
                    news = True
                    continue
                news = news or records > 0
            elif result.error is Errors.FENCED_LEADER_EPOCH:
                self._log(logging.INFO, f"Partition {tp} has an older epoch ({asked.current_leader_epoch}) than the "
                          "current leader. Will await the new LeaderAndIsr state before resuming fetching.")
                self.remove_partition(tp)
            elif result.error is Errors.CORRUPT_MESSAGE:
                self._log(logging.ERROR, f"Found invalid messages during fetch for partition {tp} offset "
                          f"{asked.fetch_offset}")
                self._delayed_until[tp] = self._runtime.now_ms() + self._config.replica_fetch_backoff_ms
            elif result.error is Errors.OFFSET_OUT_OF_RANGE:
                self._out_of_range(tp, partition, result)
            else:  # Kafka's processFetchRequest: each logged as there, then delayed by replica.fetch.backoff.ms
                # the DEBUG lines come per partition when leadership moves: formatted only when enabled
                if result.error is Errors.UNKNOWN_LEADER_EPOCH:
                    if log.isEnabledFor(logging.DEBUG):
                        self._log(logging.DEBUG, f"Remote broker has a smaller leader epoch for partition {tp} than "
                                  f"this replica's current leader epoch of {asked.current_leader_epoch}.")
                elif result.error is Errors.NOT_LEADER_OR_FOLLOWER:
                    if log.isEnabledFor(logging.DEBUG):
                        self._log(logging.DEBUG, f"Remote broker is not the leader for partition {tp}, which could "
                                  "indicate that the partition is being moved")
                elif result.error is Errors.UNKNOWN_TOPIC_OR_PARTITION:
                    self._log(logging.WARNING, f"Received UNKNOWN_TOPIC_OR_PARTITION from the leader for partition "
                              f"{tp}. This error may be returned transiently when the partition is being created or "
                              "deleted, but it is not expected to persist.")
                else:
                    self._log(logging.ERROR, f"Error for partition {tp} at offset {asked.fetch_offset}")
                self._delayed_until[tp] = self._runtime.now_ms() + self._config.replica_fetch_backoff_ms
        return news
