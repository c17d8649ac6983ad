"""acks=-1 produce requests waiting for their records to be replicated (Kafka's ``DelayedProduce`` in the produce
purgatory).

A waiting request is checked again whenever something that can complete it happens to one of its partitions —
the leader's high watermark moves up, leadership or the ISR changes, the replica stops — (the replica manager
calls `ProduceWaiters.wake`, Kafka's ``checkAndComplete``), and once more when its timeout (the request's
``timeout``, on the broker's runtime clock, so the simulator's virtual time rules it) expires. No polling.

When the replica manager shuts down, so does the purgatory (Kafka's ``DelayedOperationPurgatory.shutdown``): a
request still waiting is dropped, never answered. In Kafka the socket server has by then stopped processing
requests and closed every connection (``KafkaServer.shutdown`` calls ``stopProcessingRequests`` right after the
controlled shutdown, the replica manager's shutdown later), so the producer sees its connection close. Here each
dropped request raises `PurgatoryShutDown`, on which the request handler closes that connection unanswered (the
broker's own shutdown closes the others next). A request whose partitions the controlled shutdown moved away has
already completed (NOT_LEADER_OR_FOLLOWER) and been answered before that, as in Kafka.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from zkcontroller.broker.partition import Partition
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.runtime.runtime import Runtime

REQUEST_TIMED_OUT = 7
NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20


class PurgatoryShutDown(Exception):
    """The produce purgatory shut down while the request waited (or before it could): it is dropped, unanswered."""


@dataclass(slots=True)
class PendingAppend:
    """One partition of a waiting request: the offset its records end at (Kafka's ``requiredOffset``); ``error``
    is set when it completes."""

    topic_partition: TopicPartition
    required_offset: int
    error: int | None = None


class ProduceWaiters:
    """The produce purgatory of one broker: an event per waiting request, keyed by partition."""

    def __init__(self) -> None:
        self._events: dict[TopicPartition, dict[asyncio.Event, None]] = {}
        """Waiters per partition, in the order they started waiting (a dict, not a set: a set of events iterates in
        memory-address order, so two requests waiting on one partition woke in an order that differed between
        processes and the simulator's runs were not reproducible)."""
        self._shut_down = False

    @property
    def shut_down(self) -> bool:
        """True once `shutdown` ran: a request still waiting, or arriving, is dropped."""
        return self._shut_down

    def shutdown(self) -> None:
        """Drop every waiting request (see the module's docstring), and any that would wait from now on."""
        self._shut_down = True
        for events in list(self._events.values()):
            for event in events:
                event.set()

    def wake(self, tp: TopicPartition) -> None:
        """Something that may complete a request waiting on ``tp`` happened."""
        for event in self._events.get(tp, ()):
            event.set()

    def waiting(self) -> int:
        """Requests waiting now, counted once per partition (for tests)."""
        return sum(len(s) for s in self._events.values())

    def watch(self, tps: list[TopicPartition], event: asyncio.Event) -> None:
        """Set ``event`` on each `wake` of one of ``tps`` (and on `shutdown`) until `unwatch`: the produce
        requests' keys, shared with the held consumer fetches (`delayed_fetch`), which wake on the same events."""
        for tp in tps:
            self._events.setdefault(tp, {})[event] = None

    def unwatch(self, tps: list[TopicPartition], event: asyncio.Event) -> None:
        for tp in tps:
            watchers = self._events.get(tp)
            if watchers is not None:
                watchers.pop(event, None)
                if not watchers:
                    del self._events[tp]

    async def until(self, tps: list[TopicPartition], done: Callable[[], bool], timeout_ms: int, runtime: Runtime,
                    purgatory: str) -> bool:
        """Until ``done()`` (checked now and on each `wake` of one of ``tps``) is true (True), or ``timeout_ms``
        passes (False), on the runtime's clock from now: Kafka's ``tryCompleteElseWatch`` then ``onExpiration``.
        `PurgatoryShutDown` if the purgatory shuts down first (``done()`` is still asked once after the wake-up:
        Kafka completes an operation as it wakes, before its shutdown drops it). Shared by the produce and the
        fetch purgatories (``purgatory`` names the one in the messages and task names)."""
        event = asyncio.Event()
        self.watch(tps, event)
        timer = runtime.spawn(_until(runtime, runtime.now_ms() + max(timeout_ms, 0)),
                              f"request-delayed-{purgatory}-timeout")
        try:
            while True:
                event.clear()
                if done():
                    return True
                if self._shut_down:
                    raise PurgatoryShutDown(f"the {purgatory} purgatory shut down (the broker is stopping): "
                                            "request dropped")
                waiter = runtime.spawn(event.wait(), f"request-delayed-{purgatory}-wake")
                try:
                    await asyncio.wait((waiter, timer), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
                if timer.done() and not event.is_set():
                    return False
        finally:
            timer.cancel()
            self.unwatch(tps, event)

    async def wait(self, pending: list[PendingAppend], timeout_ms: int, runtime: Runtime,
                   partition: Callable[[TopicPartition], Partition | None], min_insync_replicas: Callable[[str], int],
                   offline: Callable[[TopicPartition], bool]) -> None:
        """Until every one of ``pending`` has its error set (NONE when replicated), or ``timeout_ms`` passes
        (REQUEST_TIMED_OUT for the rest). `PurgatoryShutDown` if the purgatory shuts down first: the request is
        dropped."""
        def replicated() -> bool:
            for p in pending:
                if p.error is None:
                    p.error = check_replicated(p, partition(p.topic_partition),
                                               min_insync_replicas(p.topic_partition.topic), offline(p.topic_partition))
            return all(p.error is not None for p in pending)

        if not await self.until([p.topic_partition for p in pending], replicated, timeout_ms, runtime, "produce"):
            for p in pending:
                if p.error is None:
                    p.error = REQUEST_TIMED_OUT


async def _until(runtime: Runtime, deadline_ms: int) -> None:
    """Sleep to ``deadline_ms``, fixed when the request started waiting, not when this task first runs."""
    await runtime.sleep_ms(max(deadline_ms - runtime.now_ms(), 0))


def check_replicated(p: PendingAppend, partition: Partition | None, min_isr: int, offline: bool) -> int | None:
    """Kafka's ``DelayedProduce.tryComplete`` for one partition: an error code when it is done (NONE when the HW
    reached the end of its records and the maximal ISR, as Kafka counts it here, still has ``min.insync.replicas``),
    None to keep waiting."""
    if offline:
        return int(Errors.KAFKA_STORAGE_ERROR)
    if partition is None:
        return int(Errors.NOT_LEADER_OR_FOLLOWER)
    if not partition.is_leader:  # checkEnoughReplicasReachOffset on a follower
        return int(Errors.NOT_LEADER_OR_FOLLOWER)
    if partition.high_watermark < p.required_offset:
        return None
    return int(Errors.NONE) if len(partition.maximal_isr) >= min_isr else NOT_ENOUGH_REPLICAS_AFTER_APPEND
