"""A Fetch with nothing to read, held (Kafka's ``DelayedFetch`` in the fetch purgatory).

A consumer at the high watermark gets no records and no error; the answer waits up to the request's
``max_wait_ms`` so that the consumer polls at that pace. A follower at the leader's log end is held the same way, up
to its ``replica.fetch.wait.max.ms`` (`ReplicaManager.fetch_messages`, Kafka's ``fetchMessages``), so that records
appended meanwhile reach it at once and an acks=-1 produce waits for two fetch round trips, not for the follower's
next poll. As in Kafka a held fetch is completed early, and read again, as soon as one of its partitions can
answer something new (``DelayedFetch.tryComplete``):

- this broker no longer leads it, or no longer hosts it (cases A to D);
- the request named a leader epoch (``current_leader_epoch`` >= 0) and the partition's is now another (case E);
- for a consumer, the high watermark moved past the fetch offset; for a follower (``FetchLogEnd``), the log end
  offset is no longer the fetch offset (case G: ``fetch.min.bytes`` reached; or case F, a log end below it).
  Records are not kept, so their size is unknown: any record past the fetch offset counts as enough, whatever
  ``min_bytes`` asked. Case H (a diverging epoch appearing while held) needs the leader's log truncated, which
  happens only with an epoch change or lost leadership, cases A and E.

The checks run when the produce purgatory's events fire (`delayed_produce.ProduceWaiters`: the HW moves up, records
are appended as leader, leadership, the ISR or the replica changes), Kafka's ``checkAndComplete`` on the fetch
purgatory, and never by polling. The fetch read again below the high watermark is answered
UNSUPPORTED_FOR_MESSAGE_FORMAT, as any consumer fetch there. A follower's fetch is read again when it expires too
(Kafka's ``forceComplete`` runs ``onComplete`` either way), so it carries a high watermark that moved meanwhile
(one that expires with no wake-up for any of its partitions keeps its first read, which a read then would repeat:
`ReplicaManager.fetch_messages`); the read does not record the follower's fetch again (Kafka's ``onComplete`` calls
``readFromLocalLog``, not ``updateFollowerFetchState``: its caught-up time is the one taken when the fetch came).
When the purgatory shuts down a held fetch is dropped unanswered (`PurgatoryShutDown`), as Kafka's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zkcontroller.broker.delayed_produce import ProduceWaiters
from zkcontroller.broker.fetch_session import (
    CachedPartition,
    FetchContext,
    IncrementalFetchContext,
    SessionErrorContext,
)
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
    """One partition of a held fetch: where it fetches, with the leader epoch it named (-1: none) and, from a
    follower, the epoch of its last records (-1: none)."""

    topic_partition: TopicPartition
    current_leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int = -1


def can_complete(held: HeldPartition, partition: Partition | None, from_follower: bool = False) -> bool:
    """``DelayedFetch.tryComplete`` for one partition of a held fetch (see the module's docstring)."""
    if partition is None or not partition.is_leader:
        return True
    if held.current_leader_epoch >= 0 and held.current_leader_epoch != partition.leader_epoch:
        return True
    if from_follower:
        return partition.log_end_offset != held.fetch_offset
    return partition.high_watermark > held.fetch_offset


def may_hold(request: FetchRequest, response: FetchResponse) -> bool:
    """Kafka's ``fetchMessages`` answers at once when the fetch failed as a whole, asked for nothing (a full fetch
    of no partition), or read records, an error or a diverging epoch for some partition; otherwise it may wait."""
    if response.error is not Errors.NONE or (request.is_full and not request.partitions):
        return False
    return nothing_to_answer(response.partitions)


def nothing_to_answer(results: Iterable[FetchPartitionResult]) -> bool:
    """No records, no error and no diverging epoch in any partition read: the fetch may wait."""
    return not any(p.error is not Errors.NONE or p.records or p.diverging_end_offset >= 0 for p in results)


def follower_may_hold(request: FetchRequest, context: FetchContext, read: list[FetchPartitionResult]) -> bool:
    """`may_hold` on a follower's read before its fetch context has seen it (the context learns only the answer
    sent, after any hold): a fetch-session error, or a full fetch of no partition, is answered at once."""
    if isinstance(context, SessionErrorContext) or (request.is_full and not request.partitions):
        return False
    return nothing_to_answer(read)


def held_by_context(request: FetchRequest, context: FetchContext) -> list[HeldPartition]:
    """`held_partitions` from the fetch context: a full fetch's own partitions, an incremental one's whole session,
    none for a sessionless incremental fetch (its session emptied: KafkaApis' ``interesting.isEmpty``)."""
    if request.is_full:
        return _held(request.partitions)
    return _held(context.session.partitions.values()) if isinstance(context, IncrementalFetchContext) else []


def _held(partitions: Iterable[FetchPartition | CachedPartition]) -> list[HeldPartition]:
    return [HeldPartition(p.topic_partition, p.current_leader_epoch, p.fetch_offset, p.last_fetched_epoch)
            for p in partitions]


def read_held(manager: ReplicaManager, request: FetchRequest, held: list[HeldPartition]) -> list[FetchPartitionResult]:
    """Each held partition served once more (``DelayedFetch.onComplete``), outside any session so none is opened or
    advanced a second time, without recording the follower's fetch again."""
    again = FetchRequest(request.replica_id,
                         tuple(FetchPartition(h.topic_partition, h.current_leader_epoch, h.fetch_offset,
                                              h.last_fetched_epoch) for h in held),
                         max_records=request.max_records, session_epoch=FINAL_EPOCH)
    return list(manager.handle_fetch(again, update_follower_state=False).partitions)


def same_partitions(read: list[FetchPartitionResult], held: list[HeldPartition]) -> bool:
    return len(read) == len(held) and all(r.topic_partition == h.topic_partition
                                          for r, h in zip(read, held, strict=True))


def held_partitions(manager: ReplicaManager, request: FetchRequest, response: FetchResponse) -> list[HeldPartition]:
    """The partitions the fetch served: a full fetch's own, an incremental one's whole session."""
    if request.is_full:
        return _held(request.partitions)
    session = manager.fetch_manager.cache.get(response.session_id)
    return [] if session is None else _held(session.partitions.values())


async def hold(waiters: ProduceWaiters, held: list[HeldPartition],
               partition: Callable[[TopicPartition], Partition | None], timeout_ms: int, runtime: Runtime,
               from_follower: bool = False) -> bool:
    """Wait until one of ``held`` can complete (True) or ``timeout_ms`` passes (False): Kafka's
    ``tryCompleteElseWatch`` then ``onExpiration``. `PurgatoryShutDown` if the purgatory shuts down first."""
    return await waiters.until([h.topic_partition for h in held],
                               lambda: any(can_complete(h, partition(h.topic_partition), from_follower)
                                           for h in held),
                               timeout_ms, runtime, "fetch")


async def hold_follower(waiters: ProduceWaiters, held: list[HeldPartition],
                        partition: Callable[[TopicPartition], Partition | None], timeout_ms: int,
                        runtime: Runtime) -> tuple[bool, bool]:
    """`hold` for a follower's fetch: (completed, untouched). ``untouched`` is True when no wake-up came for any of
    ``held`` while it waited (its partitions were checked only once, as it parked), so nothing a read of them
    returns changed: `ReplicaManager.fetch_messages` then answers from the first read."""
    checks = 0

    def done() -> bool:
        nonlocal checks
        checks += 1
        return any(can_complete(h, partition(h.topic_partition), True) for h in held)

    completed = await waiters.until([h.topic_partition for h in held], done, timeout_ms, runtime, "fetch")
    return completed, checks == 1


def read_again(manager: ReplicaManager, request: FetchRequest, response: FetchResponse,
               held: list[HeldPartition]) -> FetchResponse:
    """The answer of a consumer's held fetch completed early (``DelayedFetch.onComplete`` reads the log again): each
    partition served once more (`read_held`); then, in the session the fetch had, the high watermarks sent are noted
    (an incremental answer keeps only the partitions with news)."""
    results = read_held(manager, request, held)
    session = None if response.session_id == INVALID_SESSION_ID else manager.fetch_manager.cache.get(
        response.session_id)
    if session is not None:
        cached = session.partitions
        kept = [r for r in results if (c := cached.get(r.topic_partition)) is None or c.must_respond(r)]
        if not request.is_full:
            results = kept
    return FetchResponse(Errors.NONE, tuple(results), response.session_id)
