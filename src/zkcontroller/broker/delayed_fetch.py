"""A consumer's Fetch with nothing to read, held (Kafka's ``DelayedFetch`` in the fetch purgatory).

A consumer at the high watermark gets no records and no error; the answer waits up to the request's
``max_wait_ms`` so that the consumer polls at that pace. As in Kafka it is completed early, and the fetch read
again, as soon as one of its partitions can answer something new (``DelayedFetch.tryComplete``):

- this broker no longer leads it, or no longer hosts it (cases A to D);
- the request named a leader epoch (``current_leader_epoch`` >= 0) and the partition's is now another (case E);
- the high watermark moved past the fetch offset (case G: ``fetch.min.bytes`` reached). Records are not kept, so
  their size is unknown: any record past the fetch offset counts as enough, whatever ``min_bytes`` asked.

The checks run when the produce purgatory's events fire (`delayed_produce.ProduceWaiters`: the HW moves up,
leadership, the ISR or the replica changes), Kafka's ``checkAndComplete`` on the fetch purgatory, and never by
polling. The fetch read again below the high watermark is answered UNSUPPORTED_FOR_MESSAGE_FORMAT, as any consumer
fetch there. When the purgatory shuts down a held fetch is dropped unanswered (`PurgatoryShutDown`), as Kafka's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zkcontroller.broker.delayed_produce import ProduceWaiters
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import (
    FINAL_EPOCH,
    INVALID_SESSION_ID,
    FetchPartition,
    FetchPartitionResult,
    FetchRequest,
    FetchResponse,
)
from zkcontroller.runtime.runtime import Runtime

if TYPE_CHECKING:
    from zkcontroller.broker.partition import Partition
    from zkcontroller.broker.replica_manager import ReplicaManager


@dataclass(frozen=True, slots=True)
class HeldPartition:
    """One partition of a held fetch: where it fetches, with the leader epoch it named (-1: none)."""

    topic_partition: TopicPartition
    current_leader_epoch: int
    fetch_offset: int


def can_complete(held: HeldPartition, partition: Partition | None) -> bool:
    """``DelayedFetch.tryComplete`` for one partition of a consumer's fetch (see the module's docstring)."""
    if partition is None or not partition.is_leader:
        return True
    if held.current_leader_epoch >= 0 and held.current_leader_epoch != partition.leader_epoch:
        return True
    return partition.high_watermark > held.fetch_offset


def held_partitions(manager: ReplicaManager, request: FetchRequest, response: FetchResponse) -> list[HeldPartition]:
    """The partitions the fetch served: a full fetch's own, an incremental one's whole session."""
    if request.is_full:
        return [HeldPartition(p.topic_partition, p.current_leader_epoch, p.fetch_offset) for p in request.partitions]
    session = manager.fetch_manager.cache.get(response.session_id)
    if session is None:
        return []
    return [HeldPartition(c.topic_partition, c.current_leader_epoch, c.fetch_offset)
            for c in session.partitions.values()]


async def hold(waiters: ProduceWaiters, held: list[HeldPartition],
               partition: Callable[[TopicPartition], Partition | None], timeout_ms: int, runtime: Runtime) -> bool:
    """Wait until one of ``held`` can complete (True) or ``timeout_ms`` passes (False): Kafka's
    ``tryCompleteElseWatch`` then ``onExpiration``. `PurgatoryShutDown` if the purgatory shuts down first."""
    return await waiters.until([h.topic_partition for h in held],
                               lambda: any(can_complete(h, partition(h.topic_partition)) for h in held),
                               timeout_ms, runtime, "fetch")


def read_again(manager: ReplicaManager, request: FetchRequest, response: FetchResponse,
               held: list[HeldPartition]) -> FetchResponse:
    """The answer of a fetch completed early (``DelayedFetch.onComplete`` reads the log again): each partition
    served once more, outside any session so none is opened or advanced a second time; then, in the session the
    fetch had, the high watermarks sent are noted (an incremental answer keeps only the partitions with news)."""
    again = FetchRequest(request.replica_id,
                         tuple(FetchPartition(h.topic_partition, h.current_leader_epoch, h.fetch_offset) for h in held),
                         max_records=request.max_records, session_epoch=FINAL_EPOCH)
    results: list[FetchPartitionResult] = list(manager.handle_fetch(again).partitions)
    session = None if response.session_id == INVALID_SESSION_ID else manager.fetch_manager.cache.get(
        response.session_id)
    if session is not None:
        cached = session.partitions
        kept = [r for r in results if (c := cached.get(r.topic_partition)) is None or c.must_respond(r)]
        if not request.is_full:
            results = kept
    return FetchResponse(Errors.NONE, tuple(results), response.session_id)
