"""An idempotent producer in the simulator: Kafka's Java producer with ``enable.idempotence=true``, ``acks=all`` and
``max.in.flight.requests.per.connection=5``, sending real Produce requests to the leaders' Produce path.

The steady producer (`workload.produce`) appends counts straight to the replica manager; this one goes through the
code a client's Produce reaches (`broker.produce.produce`, called on the leader's broker with its metadata cache and
`ReplicaManager.produce_target`, as `KafkaApis._produce` calls it), with v2 record batches carrying its producer
id, epoch 0 and base sequences, so the leaders' producer state (`broker.producer_state`) is exercised.

- Its producer id comes from InitProducerId as a live broker answers it (`broker.producer_ids`: a
  `ProducerIdManager` per broker process, claiming id blocks in the simulated ZooKeeper).
- One connection per broker process. The broker reads one request at a time from it (Kafka mutes a channel until
  the request's response is sent, an acks=-1 wait included), so the producer pipelines up to 5 requests and gets
  answers in order. Each request carries one batch per partition that broker leads and that may be sent (Java's
  ``RecordAccumulator.drain``). Requests and answers take 0.2–2 ms each way.
- A crashed (or cleanly stopped) broker process closes its connections: every request on it fails at once. A
  paused one answers nothing: the producer gives up after ``request.timeout.ms`` and closes the connection
  (Java's ``NetworkClient``), the broker's answer, if it comes, is lost. An answer is also lost when the broker
  dies while it travels. Either way the broker computed it: the invariants (`invariants_idempotence`) get every
  answer, delivered or not. An exception out of the Produce path fails the request the same way when the
  process died or the broker stopped under it; from a live, serving broker it is a bug in its code, reported as
  ``produce-path-raised`` (not retried: Kafka would answer UNKNOWN_SERVER_ERROR and hide it). InitProducerId
  likewise: a failure of the broker's ZooKeeper session (`SESSION_FAULTS`) or of a dead or stopped broker is a
  failed request; anything else from a live broker is ``init-producer-id-raised``.
- Retriable errors (NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS[_AFTER_APPEND], REQUEST_TIMED_OUT,
  UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, KAFKA_STORAGE_ERROR, a closed connection, a request timeout)
  put the batch back in sequence order, ``retry.backoff.ms`` (100) later, and refresh the metadata (the leaders as
  a live broker's metadata cache has them). A retried batch is sent only when no earlier batch of its partition
  is in flight (Java's ``shouldStopDrainBatchesForPartition``), so retries go in order. OUT_OF_ORDER_SEQUENCE_NUMBER
  is retried unless the batch is the next after the highest acknowledged sequence (Java's ``canRetry`` and
  ``isNextSequence``: otherwise it is an earlier batch's failure echoing); for that next batch it is reported
  (``idempotent-next-sequence-accepted``) and the partition is abandoned. A duplicate is answered NONE with the
  original offsets (Kafka 2.8's broker), which is success. Batches are retried until acknowledged
  (``delivery.timeout.ms`` is not modelled: a run ends with everything healed and the producer drained).

Not modelled: records' payloads (the logs keep offsets only; a batch's records are empty values), compression,
a request timeout separate from the broker's acks wait (both are ``request.timeout.ms`` here, as in Java), and the
epoch bump of KIP-360 (a fatal sequence error ends the partition's stream instead).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from zkcontroller.broker.delayed_produce import PurgatoryShutDown
from zkcontroller.broker.produce import ProducePartition, produce
from zkcontroller.broker.producer_ids import NoZooKeeperError, ProducerIdManager, init_producer_id
from zkcontroller.coordination.errors import (
    ConnectionLossError,
    OperationTimeoutError,
    SessionExpiredError,
    SessionMovedError,
)
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.error_names import error_name
from zkcontroller.protocol.wire.fetch_codec import record_batch
from zkcontroller.sim.invariants_idempotence import Ack
from zkcontroller.zk import paths
from zkcontroller.zk.znodes import TopicPartitionStateZNode

SESSION_FAULTS = (ConnectionLossError, SessionExpiredError, OperationTimeoutError, SessionMovedError, NoZooKeeperError)
"""What a live broker's InitProducerId may raise because of a fault the simulator injected on its ZooKeeper session
(or its restart): a failed request, retried. Anything else from a live broker is ``init-producer-id-raised``."""

if TYPE_CHECKING:
    from zkcontroller.sim.host import HostProcess, SimHost
    from zkcontroller.sim.world import SimWorld

T = TypeVar("T")

PRODUCE_VERSION = 8
CLIENT_ID = "sim-idempotent-producer"
NONE = 0
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
RETRIABLE = frozenset({3, 5, 6, 7, 19, 20, 56})
"""UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS,
NOT_ENOUGH_REPLICAS_AFTER_APPEND, KAFKA_STORAGE_ERROR: Java's retriable exceptions a Produce answer can carry."""
MAX_IN_FLIGHT = 5
"""``max.in.flight.requests.per.connection`` (at most 5 with idempotence)."""


# ---------------------------------------------------------------------- v2 record batches


def encode_batch(producer_id: int, producer_epoch: int, base_sequence: int, count: int, timestamp: int) -> bytes:
    """One uncompressed v2 record batch of ``count`` empty records, as a client writes it: base offset 0,
    partition leader epoch -1 (the broker assigns both), the producer's id, epoch and first sequence."""
    return record_batch(0, count, -1, producer_id, producer_epoch, base_sequence, timestamp)


# ---------------------------------------------------------------------- the producer's state


@dataclass(eq=False)
class Batch:
    tp: TopicPartition
    producer_id: int
    base_sequence: int
    count: int
    records: bytes
    state: str = "queued"
    """queued | in-flight | acked"""
    attempts: int = 0


@dataclass(eq=False)
class _PartitionState:
    tp: TopicPartition
    producer_id: int
    next_sequence: int = 0
    batches: deque[Batch] = field(default_factory=deque)
    """Unacknowledged batches in sequence order (acknowledged ones leave from the front)."""
    last_acked: int = -1
    """The highest sequence acknowledged (Java's ``lastAckedSequence``; -1 none)."""
    backoff_until_ms: int = 0
    abandoned: bool = False

    def sendable(self) -> Batch | None:
        """Java's drain rules: the first queued batch, if a retry only once nothing earlier is in flight."""
        if self.abandoned:
            return None
        in_flight = 0
        for batch in self.batches:
            if batch.state == "in-flight":
                in_flight += 1
            elif batch.state == "queued":
                if in_flight >= MAX_IN_FLIGHT or (batch.attempts and in_flight):
                    return None
                return batch
        return None


@dataclass(eq=False)
class _Request:
    batches: list[Batch]
    connection: _Connection
    done: bool = False


class _Connection:
    """The producer's connection to one broker process: pipelined on the producer's side, one request at a time on
    the broker's."""

    def __init__(self, producer: IdempotentProducer, host: SimHost) -> None:
        assert host.process is not None and host.server is not None
        self.producer = producer
        self.host = host
        self.process: HostProcess = host.process
        self.server = host.server
        self.closed = False
        self.in_flight: list[_Request] = []
        self._queue: deque[tuple[float, _Request]] = deque()
        self._wake = asyncio.Event()
        self._last_arrival = 0.0
        loop = asyncio.get_running_loop()
        self._worker = loop.create_task(self._serve(), name=f"sim-idempotent-conn-{host.broker_id}")
        self._watch = loop.create_task(self._watch_process(), name=f"sim-idempotent-watch-{host.broker_id}")

    @property
    def broker_id(self) -> int:
        return self.host.broker_id

    def usable(self) -> bool:
        return not self.closed and not self.process.dead and self.host.process is self.process

    def send(self, request: _Request) -> None:
        loop = asyncio.get_running_loop()
        arrival = max(loop.time() + self.producer.latency_s(), self._last_arrival)
        self._last_arrival = arrival
        self.in_flight.append(request)
        self._queue.append((arrival, request))
        self._wake.set()
        loop.call_later(self.producer.request_timeout_ms / 1000, self._timed_out, request)

    def _timed_out(self, request: _Request) -> None:
        if not request.done and not self.closed:
            self.close(f"request timed out after {self.producer.request_timeout_ms} ms")

    def close(self, why: str) -> None:
        """The producer's side closes (or sees closed): every request still on it fails."""
        if self.closed:
            return
        self.closed = True
        self._wake.set()
        self._watch.cancel()
        failed, self.in_flight = self.in_flight, []
        self.producer.connection_closed(self, failed, why)

    async def _watch_process(self) -> None:
        await self.process.died.wait()
        self._worker.cancel()  # the broker is gone: whatever it was doing for us ends with it
        self.close(f"broker {self.broker_id} process died")

    async def _serve(self) -> None:
        """The broker's side: read a request when it has arrived and the previous one is answered."""
        loop = asyncio.get_running_loop()
        while not self.closed:
            if not self._queue:
                self._wake.clear()
                await self._wake.wait()
                continue
            arrival, request = self._queue[0]
            if loop.time() < arrival:
                await asyncio.sleep(arrival - loop.time())
            self._queue.popleft()
            if self.closed:
                return
            await self.process.wait_runnable()
            await self._handle(request)

    async def _handle(self, request: _Request) -> None:
        server = self.server
        plane, manager = server.control_plane, server.replica_manager
        if not server.running or plane is None or manager is None:
            self.close(f"broker {self.broker_id} is not serving")
            return
        parts = [ProducePartition(b.tp.topic, b.tp.partition, b.records) for b in request.batches]
        try:
            answers = await produce(PRODUCE_VERSION, -1, self.producer.request_timeout_ms, CLIENT_ID, parts,
                                    cache=plane.metadata_cache, target=manager.produce_target())
        except PurgatoryShutDown:  # the broker stops: the connection closes unanswered
            self.close(f"broker {self.broker_id} shut down")
            return
        except Exception as e:  # RequestFailed included: this producer's batches are well-formed
            if self._broker_gone():  # the process died, or the broker stopped, under the request: no answer
                self.producer.world.record("workload-failed", f"idempotent produce to {self.broker_id}: "
                                                              f"{type(e).__name__}: {e}")
            else:  # a live, serving broker's Produce path raised: a bug, never a fault the sim injected
                self.producer.invariants.on_request_raised("produce-path-raised", self.broker_id, self.process.name,
                                                          e)
            self.close(f"broker {self.broker_id} failed the request")
            return
        if self.process.dead:
            return
        asyncio.get_running_loop().call_later(self.producer.latency_s(), self._deliver, request, answers)

    def _broker_gone(self) -> bool:
        """The process this connection reached is dead or replaced, or its broker no longer serves (crashed or
        stopped): a failure the simulator's faults explain. A paused process runs nothing, and a partition cuts
        the network, which the Produce path does not use, so neither makes it raise."""
        return self.process.dead or self.host.process is not self.process or not self.server.running

    def _deliver(self, request: _Request, answers: list[Any] | None) -> None:
        """The answer arrives, or is lost if the connection closed (or the broker died) while it travelled; the
        invariants hear of its acknowledgements either way."""
        lost = self.closed or self.process.dead or request.done
        by_tp = {} if answers is None else {(a.topic, a.partition): a for a in answers}
        for batch in request.batches:
            answer = by_tp.get((batch.tp.topic, batch.tp.partition))
            if answer is not None and answer.error == NONE:
                self.producer.broker_acked(batch, answer.base_offset, self.broker_id, delivered=not lost)
        if lost:
            return
        if request in self.in_flight:
            self.in_flight.remove(request)
        self.producer.answered(request, answers)


# ---------------------------------------------------------------------- the producer


class IdempotentProducer:
    """One idempotent producer writing to every partition of one topic (see the module's docstring); it reports
    every acknowledgement a broker computes to the checker's `IdempotenceInvariants`."""

    def __init__(self, world: SimWorld, topic: str, partitions: int, *, request_timeout_ms: int = 8_000,
                 retry_backoff_ms: int = 100, batch_interval_ms: int = 20, max_queued: int = 20,
                 max_records: int = 5) -> None:
        self.world = world
        self.topic = topic
        self.partitions = partitions
        self.request_timeout_ms = request_timeout_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.batch_interval_ms = batch_interval_ms
        self.max_queued = max_queued
        self.max_records = max_records
        self.invariants = world.checker.idempotence
        self.producer_id = -1
        self.producer_epoch = 0
        self.generating = False
        self._partitions: dict[TopicPartition, _PartitionState] = {}
        self._leaders: dict[TopicPartition, int] = {}
        self._refresh_due = True
        self._next_refresh_ms = 0
        self._connections: dict[int, _Connection] = {}
        self._id_managers: dict[Any, ProducerIdManager] = {}
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.sent_requests = 0
        self.retries = 0
        self.acked_batches = 0

    # ------------------------------------------------------------------ running

    def latency_s(self) -> float:
        return self.world.rng.uniform(0.2, 2.0) / 1000

    def now_ms(self) -> int:
        return self.world.elapsed_ms()

    async def start(self, bound_ms: int = 60_000) -> bool:
        """InitProducerId from a live broker, then start sending; False if no broker answered within the bound."""
        deadline = self.now_ms() + bound_ms
        while self.producer_id < 0:
            if self.now_ms() >= deadline:
                self.world.record("workload-failed", "idempotent producer: no producer id")
                return False
            await self._init_producer_id()
            if self.producer_id < 0:
                await asyncio.sleep(self.retry_backoff_ms / 1000)
        self.world.record("workload", f"idempotent producer id={self.producer_id} topic={self.topic}")
        for partition in range(self.partitions):
            tp = TopicPartition(self.topic, partition)
            self._partitions[tp] = _PartitionState(tp, self.producer_id)
        self.generating = True
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._generate(), name="sim-idempotent-generate"),
                       loop.create_task(self._send_loop(), name="sim-idempotent-send")]
        return True

    async def _init_producer_id(self) -> None:
        up = [h for h in self.world.hosts if h.up and h.server is not None and h.process is not None]
        if not up:
            return
        host = self.world.rng.choice(up)
        server, process = host.server, host.process
        assert server is not None and process is not None
        manager = self._id_managers.get(server)
        if manager is None:  # one per broker process, as each claims its own id blocks
            manager = self._id_managers[server] = ProducerIdManager(host.broker_id, lambda: server.zk)
        await asyncio.sleep(self.latency_s())
        try:
            result = await _unless_dead(process, init_producer_id(manager, None, 60_000, -1, -1))
        except Exception as e:  # the broker answers UNKNOWN_SERVER_ERROR (KafkaApis' catch-all)
            if isinstance(e, SESSION_FAULTS) or process.dead or host.process is not process or not server.running:
                self.world.record("workload-failed", f"InitProducerId on {host.broker_id}: {type(e).__name__}")
            else:  # a live broker's id allocation raised without a ZooKeeper fault: a bug, never an injected one
                self.invariants.on_request_raised("init-producer-id-raised", host.broker_id, process.name, e)
            return
        if result is not None and result.error == NONE:
            self.producer_id, self.producer_epoch = result.producer_id, result.producer_epoch

    async def _generate(self) -> None:
        """The application: a batch of 1..max_records records per partition every interval, while the
        accumulator has room."""
        rng = self.world.rng
        while self.generating:
            for state in self._partitions.values():
                if state.abandoned or len(state.batches) >= self.max_queued:
                    continue
                count = rng.randint(1, self.max_records)
                records = encode_batch(state.producer_id, self.producer_epoch, state.next_sequence, count,
                                       self.world.now_ms())
                state.batches.append(Batch(state.tp, state.producer_id, state.next_sequence, count, records))
                state.next_sequence += count
            self._wake.set()
            await asyncio.sleep(self.batch_interval_ms / 1000)

    def unacked(self) -> int:
        return sum(len(s.batches) for s in self._partitions.values() if not s.abandoned)

    async def drain(self, bound_ms: int) -> bool:
        """Stop making batches and wait (at most ``bound_ms``) until every one is acknowledged."""
        self.generating = False
        deadline = self.now_ms() + bound_ms
        while self.unacked() and self.now_ms() < deadline:
            self._wake.set()
            await asyncio.sleep(0.1)
        drained = not self.unacked()
        self.world.record("workload", f"idempotent producer drained={drained} unacked={self.unacked()} "
                                      f"acked={self.acked_batches} retries={self.retries}")
        return drained

    def stop(self) -> None:
        self.generating = False
        for task in self._tasks:
            task.cancel()
        for connection in list(self._connections.values()):
            connection.closed = True

    # ------------------------------------------------------------------ sending

    async def _send_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._wake.clear()
            wait = self._drain()
            if wait is not None:
                loop.call_later(wait / 1000, self._wake.set)
            await self._wake.wait()

    def _drain(self) -> float | None:
        """Send what may be sent; the ms until a backoff or metadata refresh makes more sendable (None: nothing)."""
        now = self.now_ms()
        if self._refresh_due:
            if now < self._next_refresh_ms:
                return self._next_refresh_ms - now
            self._refresh_metadata()
        ready: dict[int, list[Batch]] = {}
        backoff: float | None = None
        for tp, state in self._partitions.items():
            if state.backoff_until_ms > now:
                backoff = min(backoff or 1e18, state.backoff_until_ms - now)
                continue
            batch = state.sendable()
            leader = self._leaders.get(tp, -1)
            if batch is None:
                continue
            if leader < 0:
                self._refresh_due = True
                continue
            ready.setdefault(leader, []).append(batch)
        for broker_id, batches in sorted(ready.items()):
            connection = self._connection(broker_id)
            if connection is None:
                for batch in batches:
                    self._retry(batch, f"connection to broker {broker_id} refused")
                continue
            if len(connection.in_flight) >= MAX_IN_FLIGHT:
                continue
            for batch in batches:
                batch.state = "in-flight"
                batch.attempts += 1
            self.sent_requests += 1
            connection.send(_Request(batches, connection))
            self._wake.set()  # the next request to this broker may take each partition's following batch
        if self._refresh_due:
            return max(self._next_refresh_ms - now, 1)
        return backoff

    def _connection(self, broker_id: int) -> _Connection | None:
        connection = self._connections.get(broker_id)
        if connection is not None and connection.usable():
            return connection
        host = self.world.host(broker_id)
        if host.state not in ("running", "paused") or host.server is None or not host.server.running:
            return None
        connection = self._connections[broker_id] = _Connection(self, host)
        return connection

    def _refresh_metadata(self) -> None:
        """The leaders as a live broker's metadata cache has them (Java asks the least loaded node)."""
        self._refresh_due = False
        self._next_refresh_ms = self.now_ms() + self.retry_backoff_ms
        up = [h for h in self.world.hosts if h.up and h.control_plane is not None]
        if not up:
            self._refresh_due = True
            return
        cache = self.world.rng.choice(up).control_plane.metadata_cache
        for tp in self._partitions:
            info = cache.partition_info(tp)
            self._leaders[tp] = info.leader if info is not None and cache.has_alive_broker(info.leader) else -1

    # ------------------------------------------------------------------ answers

    def broker_acked(self, batch: Batch, base_offset: int, broker_id: int, *, delivered: bool) -> None:
        """The broker answered ``batch`` with success (``delivered``: the answer reached the producer)."""
        self.invariants.on_ack(Ack(batch.producer_id, batch.tp.topic, batch.tp.partition, batch.base_sequence,
                                   batch.count, base_offset, broker_id, delivered))

    def answered(self, request: _Request, answers: list[Any] | None) -> None:
        request.done = True
        by_tp = {} if answers is None else {(a.topic, a.partition): a for a in answers}
        for batch in request.batches:
            if batch.state != "in-flight":
                continue
            answer = by_tp.get((batch.tp.topic, batch.tp.partition))
            error = -1 if answer is None else answer.error
            if error == NONE:
                self._acked(batch)
            elif error in RETRIABLE:
                self._retry(batch, f"{error_name(error)} from {request.connection.broker_id}")
            elif error == OUT_OF_ORDER_SEQUENCE_NUMBER:
                self._out_of_order(batch, request.connection.broker_id)
            else:
                self._abandon(batch, f"{error_name(error)} from {request.connection.broker_id}")
        self._wake.set()

    def connection_closed(self, connection: _Connection, failed: list[_Request], why: str) -> None:
        for request in failed:
            request.done = True
            for batch in request.batches:
                if batch.state == "in-flight":
                    self._retry(batch, why)
        self._wake.set()

    def _state(self, batch: Batch) -> _PartitionState:
        return self._partitions[batch.tp]

    def _acked(self, batch: Batch) -> None:
        batch.state = "acked"
        self.acked_batches += 1
        state = self._state(batch)
        state.last_acked = max(state.last_acked, batch.base_sequence + batch.count - 1)
        while state.batches and state.batches[0].state == "acked":
            state.batches.popleft()

    def _retry(self, batch: Batch, why: str) -> None:
        state = self._state(batch)
        batch.state = "queued"
        self.retries += 1
        state.backoff_until_ms = self.now_ms() + self.retry_backoff_ms
        self._refresh_due = True
        self.world.record("produce-retry", f"{batch.tp} seq={batch.base_sequence} attempt={batch.attempts}: {why}")

    def _out_of_order(self, batch: Batch, broker_id: int) -> None:
        state = self._state(batch)
        if batch.base_sequence != state.last_acked + 1:  # not the next sequence (Java's isNextSequence): retry
            self._retry(batch, f"OUT_OF_ORDER_SEQUENCE_NUMBER from {broker_id}")
            return
        if self._deposed(batch.tp, broker_id):
            self._retry(batch, f"OUT_OF_ORDER_SEQUENCE_NUMBER from {broker_id}, a deposed leader")
            return
        self.invariants.on_out_of_order(batch.producer_id, batch.tp.topic, batch.tp.partition, batch.base_sequence,
                                        batch.count, broker_id)
        self._abandon(batch, f"OUT_OF_ORDER_SEQUENCE_NUMBER from {broker_id} for the next sequence")

    def _deposed(self, tp: TopicPartition, broker_id: int) -> bool:
        """True when ``broker_id`` no longer leads ``tp`` at ZooKeeper's leader epoch: a leader deposed while paused
        or cut off, not yet told, knows nothing of the sequences its successor acknowledged, and Kafka's would
        refuse the next one the same way. Its refusal is no violation; the producer finds the leader again."""
        path = paths.partition_state_path(tp.topic, tp.partition)
        found = self.world.zk.read(path)
        if found is None:
            return True
        current = TopicPartitionStateZNode.decode(found[0], path, found[1].version).leader_and_isr
        server = self.world.host(broker_id).server
        manager = None if server is None else server.replica_manager
        partition = None if manager is None else manager.partition(tp)
        return current.leader != broker_id or partition is None or partition.leader_epoch != current.leader_epoch

    def _abandon(self, batch: Batch, why: str) -> None:
        """A fatal error for the partition's stream: its batches are failed to the application."""
        state = self._state(batch)
        state.abandoned = True
        self.world.record("workload-failed", f"idempotent producer abandons {batch.tp} at seq={batch.base_sequence}"
                                             f": {why}")


async def _unless_dead(process: HostProcess, work: Awaitable[T]) -> T | None:
    """``work`` on a broker process, gated by it: None if the process dies first."""
    task = asyncio.ensure_future(_gated(process, work))
    death = asyncio.ensure_future(process.died.wait())
    try:
        await asyncio.wait((task, death), return_when=asyncio.FIRST_COMPLETED)
    finally:
        death.cancel()
    if task.done() and not process.dead:
        return task.result()
    task.cancel()
    return None


async def _gated(process: HostProcess, work: Awaitable[T]) -> T:
    await process.wait_runnable()
    return await work
