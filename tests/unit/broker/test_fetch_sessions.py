"""KIP-227 fetch sessions between followers and a leader: after one full fetch, a follower names only the
partitions whose fetch state changed and the leader answers only partitions with news, yet the leader still
serves (and counts as caught up) every partition of the session; session errors, a leader that lost its
sessions, forgetting partitions, and the cache's eviction rules."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator

import pytest

from zkcontroller.broker.fetch_session import FetchManager, FetchSessionCache
from zkcontroller.broker.fetch_session_handler import FetchSessionHandler
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    FetchPartition,
    FetchPartitionResult,
    FetchRequest,
    FetchResponse,
    next_fetch_session_epoch,
)

from .replica_helpers import LAG_MS, Brokers, state

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


@pytest.fixture
def brokers() -> Iterator[Brokers]:
    b = Brokers(n=2)
    yield b
    b.close()


def record_fetches(brokers: Brokers, leader: int = 1) -> list[tuple[FetchRequest, FetchResponse]]:
    """Every fetch the leader serves from now on, with its answer."""
    seen: list[tuple[FetchRequest, FetchResponse]] = []
    rm = brokers.rms[leader]

    def handle(request: FetchRequest) -> FetchResponse:
        response = rm.handle_fetch(request)
        seen.append((request, response))
        return response

    brokers.transport.register(leader, handle)
    return seen


def two_partitions(brokers: Brokers) -> None:
    for p in (0, 1):
        brokers.lead(state(replicas=(1, 2), isr=(1, 2), partition=p))


async def test_after_a_full_fetch_only_changes_travel_and_idle_partitions_stay_caught_up(brokers: Brokers) -> None:
    two_partitions(brokers)
    seen = record_fetches(brokers)
    await brokers.fetch_all()
    full, answer = seen[-1]
    assert (full.session_id, full.session_epoch) == (0, INITIAL_EPOCH) and len(full.partitions) == 2
    assert answer.session_id > 0 and len(answer.partitions) == 2

    brokers.rms[1].append(T1, 5)
    brokers.clock.advance(LAG_MS - 1)
    await brokers.fetch_all()
    request, answer = seen[-1]
    assert (request.session_id, request.session_epoch) == (answer.session_id, 1)
    assert request.partitions == () and request.forgotten == ()  # nothing changed on the follower
    assert [(r.topic_partition, r.records) for r in answer.partitions] == [(T1, 5)]  # only t-1 has news
    assert brokers.rms[2].log_end_offset(T1) == 5

    brokers.clock.advance(LAG_MS - 1)
    await brokers.fetch_all()
    request, answer = seen[-1]
    assert request.session_epoch == 2 and [p.topic_partition for p in request.partitions] == [T1]  # its LEO moved
    assert [(r.topic_partition, r.high_watermark) for r in answer.partitions] == [(T1, 5)]  # the new HW

    # t-0 was never named again, yet the leader served it on every fetch: the follower is caught up there
    assert brokers.rms[1].maybe_shrink_isr() == []
    assert brokers.rms[1].partition(T0).isr == (1, 2)  # type: ignore[union-attr]


async def test_a_leader_that_lost_its_sessions_makes_the_follower_start_over_with_a_full_fetch(
        brokers: Brokers) -> None:
    two_partitions(brokers)
    seen = record_fetches(brokers)
    await brokers.fetch_all()
    first = seen[-1][1].session_id
    brokers.rms[1].fetch_manager.cache.remove(first)  # as a restarted leader: an empty cache
    brokers.rms[1].append(T0, 3)
    await brokers.fetch_all()
    request, answer = seen[-1]
    assert request.session_id == first and answer.error is Errors.FETCH_SESSION_ID_NOT_FOUND
    assert answer.partitions == ()
    await brokers.fetch_all()
    request, answer = seen[-1]
    assert (request.session_id, request.session_epoch) == (0, INITIAL_EPOCH) and len(request.partitions) == 2
    assert answer.error is Errors.NONE and answer.session_id not in (0, first)
    assert brokers.rms[2].log_end_offset(T0) == 3


async def test_a_partition_no_longer_fetched_is_forgotten_and_the_last_one_closes_the_session(
        brokers: Brokers) -> None:
    two_partitions(brokers)
    seen = record_fetches(brokers)
    await brokers.fetch_all()
    cache = brokers.rms[1].fetch_manager.cache
    assert (len(cache), cache.total_partitions) == (1, 2)
    brokers.rms[2].fetchers[1].remove_partition(T0)
    await brokers.fetch_all()
    request, _ = seen[-1]
    assert request.forgotten == (T0,) and cache.total_partitions == 1
    brokers.rms[2].fetchers[1].remove_partition(T1)
    brokers.rms[2].fetchers[1].add_partition(T0, 0)  # keeps the fetcher; t-1 alone goes
    await brokers.fetch_all()
    request, answer = seen[-1]
    assert request.forgotten == (T1,) and [p.topic_partition for p in request.partitions] == [T0]
    assert [r.topic_partition for r in answer.partitions] == [T0]  # newly added: always answered
    assert cache.total_partitions == 1


async def test_a_corrupt_batch_delays_its_partition_by_the_fetch_back_off(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    two_partitions(brokers)
    seen = record_fetches(brokers)
    rm = brokers.rms[1]

    def corrupting(request: FetchRequest) -> FetchResponse:  # as the wire decoder reports a CRC mismatch
        answer = rm.handle_fetch(request)
        seen.append((request, answer))
        return FetchResponse(answer.error, tuple(FetchPartitionResult(r.topic_partition, Errors.CORRUPT_MESSAGE)
                                                 if r.topic_partition == T0 else r for r in answer.partitions),
                             answer.session_id)

    brokers.transport.register(1, corrupting)
    await brokers.fetch_all()
    assert "Found invalid messages during fetch for partition t-0 offset 0" in caplog.text
    await brokers.fetch_all()
    assert seen[-1][0].forgotten == (T0,)  # left out until the back-off passes
    brokers.clock.advance(brokers.rms[2].config.replica_fetch_backoff_ms)
    await brokers.fetch_all()
    assert [p.topic_partition for p in seen[-1][0].partitions] == [T0]


def full(replica: int, *tps: TopicPartition, session_id: int = 0, epoch: int = INITIAL_EPOCH) -> FetchRequest:
    return FetchRequest(replica, tuple(FetchPartition(tp, 0, 0) for tp in tps), 100, session_id, epoch)


def served(manager: FetchManager, request: FetchRequest, now: int = 0, hw: int = 0) -> FetchResponse:
    context = manager.new_context(request, now)
    return context.respond([FetchPartitionResult(t.topic_partition, Errors.NONE, hw) for t in context.targets()])


def test_session_errors_a_duplicate_and_a_final_fetch() -> None:
    manager = FetchManager(FetchSessionCache(10, 1000, random.Random(1)))
    opened = served(manager, full(2, T0))
    sid = opened.session_id
    incremental = FetchRequest(2, (), 100, sid, 1)
    assert served(manager, incremental).error is Errors.NONE
    replay = served(manager, incremental)  # the same epoch again: a duplicate
    assert (replay.error, replay.partitions) == (Errors.INVALID_FETCH_SESSION_EPOCH, ())
    assert served(manager, FetchRequest(2, (), 100, sid + 1, 1)).error is Errors.FETCH_SESSION_ID_NOT_FOUND
    closing = served(manager, full(2, T0, session_id=sid, epoch=FINAL_EPOCH))
    assert closing.session_id == 0 and len(manager.cache) == 0 and len(closing.partitions) == 1


def test_an_error_is_always_answered_and_the_partition_is_sent_again_once_it_clears() -> None:
    manager = FetchManager(FetchSessionCache(10, 1000, random.Random(1)))
    sid = served(manager, full(2, T0), hw=4).session_id
    context = manager.new_context(FetchRequest(2, (), 100, sid, 1), 0)
    failed = context.respond([FetchPartitionResult(T0, Errors.UNKNOWN_LEADER_EPOCH, 4)])
    assert [r.error for r in failed.partitions] == [Errors.UNKNOWN_LEADER_EPOCH]
    assert [r.topic_partition for r in served(manager, FetchRequest(2, (), 100, sid, 2), hw=4).partitions] == [T0]
    assert served(manager, FetchRequest(2, (), 100, sid, 3), hw=4).partitions == ()


def test_a_full_cache_evicts_only_a_stale_or_less_valuable_session() -> None:
    cache = FetchSessionCache(1, 1000, random.Random(1))
    manager = FetchManager(cache)
    first = served(manager, full(2, T0, T1), now=0).session_id
    assert served(manager, full(3, T0), now=500).session_id == 0  # the follower's young session stays
    assert served(manager, full(3, T0, T1, TopicPartition("u", 0)), now=500).session_id == 0
    later = served(manager, full(3, T0), now=1001)  # first unused for more than 1 s: stale
    assert later.session_id not in (0, first) and cache.evictions == 1 and cache.get(first) is None
    # a session older than the eviction time, touched recently, yields to a bigger one
    served(manager, FetchRequest(3, (), 100, later.session_id, 1), now=2002)
    bigger = served(manager, full(4, T0, T1), now=2003)
    assert bigger.session_id != 0 and cache.evictions == 2 and len(cache) == 1


def test_no_slots_means_every_fetch_stays_full() -> None:
    handler = FetchSessionHandler(2, 1)
    manager = FetchManager(FetchSessionCache(0, 1000, random.Random(1)))
    for _ in range(2):
        data = handler.build([FetchPartition(T0, 0, 0)], 100)
        assert data.request.is_full and data.request.session_id == 0
        assert handler.handle_response(served(manager, data.request))


def test_the_handler_sends_changes_forgets_what_went_and_starts_over_on_a_misfit() -> None:
    handler = FetchSessionHandler(2, 1)
    a, b = FetchPartition(T0, 0, 0), FetchPartition(T1, 0, 0)
    data = handler.build([a, b], 100)
    assert data.request.partitions == (a, b)
    assert handler.handle_response(FetchResponse(Errors.NONE, (FetchPartitionResult(T0), FetchPartitionResult(T1)),
                                                 session_id=9))
    moved, c = FetchPartition(T1, 0, 7), FetchPartition(TopicPartition("u", 0), 1, 0)
    data = handler.build([moved, c], 100)
    assert (data.request.session_id, data.request.session_epoch) == (9, 1)
    assert data.request.partitions == (moved, c) and data.request.forgotten == (T0,)
    assert set(data.session_partitions) == {T1, c.topic_partition}
    # an incremental answer naming a partition outside the session: the next fetch is full
    assert not handler.handle_response(FetchResponse(Errors.NONE, (FetchPartitionResult(T0),), session_id=9))
    data = handler.build([moved, c], 100)
    assert (data.request.session_id, data.request.session_epoch) == (9, INITIAL_EPOCH)
    assert data.request.partitions == (moved, c)


def test_epochs_wrap_to_one_and_never_to_the_full_fetch_values() -> None:
    assert next_fetch_session_epoch(INITIAL_EPOCH) == 1
    assert next_fetch_session_epoch(0x7FFFFFFF) == 1
    assert next_fetch_session_epoch(FINAL_EPOCH) == FINAL_EPOCH


def test_log_lines_are_kafkas_under_kafkas_loggers(caplog: pytest.LogCaptureFixture) -> None:
    """FetchSession.scala 2.8.2: FetchManager's context lines, FetchSessionCache's session and eviction lines, and
    IncrementalFetchContext's INFO when the session moved on between the context and its answer."""
    caplog.set_level(logging.DEBUG, "kafka.server")
    manager = FetchManager(FetchSessionCache(10, 1000, random.Random(1)))
    sid = served(manager, full(2, T0, T1), now=7).session_id
    first = manager.new_context(FetchRequest(2, (FetchPartition(T0, 0, 3),), 100, sid, 1), 8)
    served(manager, FetchRequest(2, (), 100, sid, 2), now=9)  # the session moves on before `first` answers
    first.respond([FetchPartitionResult(T0, Errors.NONE, 0)])
    served(manager, FetchRequest(2, (), 100, sid, 3, forgotten=(T0, T1)), now=10)
    lines = [(r.name, r.levelname, r.getMessage()) for r in caplog.records]
    assert lines == [
        ("kafka.server.FetchManager", "DEBUG", "Created a new full FetchContext with 2 partition(s)."),
        ("kafka.server.FetchSessionCache", "DEBUG", f"Created fetch session FetchSession(id={sid}, privileged=true, "
                                                    "partitionMap.size=2, creationMs=7, lastUsedMs=7, epoch=1)"),
        ("kafka.server.FetchManager", "DEBUG", f"Created a new incremental FetchContext for session id {sid}, epoch 2: "
                                               "added 0 partition(s), updated 1 partition(s), removed 0 partition(s)"),
        ("kafka.server.FetchManager", "DEBUG", f"Created a new incremental FetchContext for session id {sid}, epoch 3: "
                                               "added 0 partition(s), updated 0 partition(s), removed 0 partition(s)"),
        ("kafka.server.IncrementalFetchContext", "INFO", f"Incremental fetch session {sid} expected epoch 2, but got 3."
                                                         "  Possible duplicate request."),
        ("kafka.server.FetchManager", "DEBUG", f"Created a new sessionless FetchContext and closing session id {sid}, "
                                               "epoch 3: after removing 2 partition(s), there are no more partitions "
                                               "left."),
    ]


def test_the_handlers_info_lines_are_kafkas(caplog: pytest.LogCaptureFixture) -> None:
    """FetchSessionHandler 2.8.2 under the fetcher's LogContext: an answer that does not fit (with Kafka's own
    unbalanced parentheses) and a session error."""
    caplog.set_level(logging.INFO, "org.apache.kafka.clients.FetchSessionHandler")
    handler = FetchSessionHandler(2, 1)
    data = handler.build([FetchPartition(T0, 0, 0), FetchPartition(T1, 0, 0)], 100)
    assert not handler.handle_response(FetchResponse(Errors.NONE, (FetchPartitionResult(T0, Errors.NONE, 0),), 9))
    handler.build(list(data.session_partitions.values()), 100)
    assert not handler.handle_response(FetchResponse(Errors.FETCH_SESSION_ID_NOT_FOUND))
    assert [r.getMessage() for r in caplog.records] == [
        "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Node 1 sent an invalid full fetch response with "
        "omitted=(t-1, response=(t-0)",
        "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Node 1 was unable to process the fetch request with "
        "(sessionId=INVALID, epoch=INITIAL): FETCH_SESSION_ID_NOT_FOUND.",
    ]
