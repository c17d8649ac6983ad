"""Hypothesis: a follower's fetch session handler against a leader's fetch manager, over random changes to what
the follower fetches, lost requests and answers, replayed requests, evictions and a restarted leader.

The property is the one that makes sessions safe: whenever the follower accepts an answer, the leader served
exactly the partitions the follower fetches, each at the follower's current leader epoch and offset; and a
refused or lost exchange never leaves the pair stuck (the next fetch is accepted)."""

from __future__ import annotations

import random

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from zkcontroller.broker.fetch_session import FetchManager, FetchSessionCache
from zkcontroller.broker.fetch_session_handler import FetchSessionHandler
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import FetchPartition, FetchPartitionResult, FetchRequest, FetchResponse

TPS = st.sampled_from([TopicPartition(t, p) for t in ("a", "b") for p in range(3)])


class FetchSessionPair(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.handler = FetchSessionHandler(2, 1)
        self.manager = FetchManager(FetchSessionCache(2, 1000, random.Random(0)))
        self.wanted: dict[TopicPartition, FetchPartition] = {}
        self.now = 0
        self.last_request: FetchRequest | None = None
        self.refused_in_a_row = 0
        self.restarts = 0

    # ---------------------------------------------------------------- what the follower fetches

    @rule(tp=TPS, epoch=st.integers(0, 3), offset=st.integers(0, 50))
    def fetch_partition(self, tp: TopicPartition, epoch: int, offset: int) -> None:
        """Added, or its leader epoch or log end offset changed."""
        self.wanted[tp] = FetchPartition(tp, epoch, offset)

    @rule(tp=TPS)
    def stop_fetching(self, tp: TopicPartition) -> None:
        self.wanted.pop(tp, None)

    # ---------------------------------------------------------------- the leader's side

    @rule()
    def leader_restarts(self) -> None:
        """An empty cache; fresh randomness, as a restarted process has (Kafka does not check that a session id
        belongs to the replica presenting it, so two processes handing out the same ids would mix sessions)."""
        self.restarts += 1
        self.manager = FetchManager(FetchSessionCache(2, 1000, random.Random(self.restarts)))

    @rule(ms=st.integers(0, 2000))
    def time_passes(self, ms: int) -> None:
        self.now += ms

    @rule()
    def another_follower_fills_the_cache(self) -> None:
        for replica in (3, 4):
            self._serve(FetchRequest(replica, (FetchPartition(TopicPartition("c", replica), 0, 0),), 100, 0, 0))

    # ---------------------------------------------------------------- exchanges

    def _serve(self, request: FetchRequest) -> tuple[FetchResponse, dict[TopicPartition, tuple[int, int]]]:
        context = self.manager.new_context(request, self.now)
        targets = list(context.targets())
        served = {t.topic_partition: (t.current_leader_epoch, t.fetch_offset) for t in targets}
        results = [FetchPartitionResult(t.topic_partition, Errors.NONE, t.fetch_offset) for t in targets]
        return context.respond(results), served

    @rule()
    def fetch(self) -> None:
        if not self.wanted:
            return  # a fetcher with nothing to fetch does not fetch
        data = self.handler.build(list(self.wanted.values()), 100)
        self.last_request = data.request
        response, served = self._serve(data.request)
        if self.handler.handle_response(response):
            self.refused_in_a_row = 0
            assert served == {tp: (p.current_leader_epoch, p.fetch_offset) for tp, p in self.wanted.items()}
            assert {r.topic_partition for r in response.partitions} <= set(self.wanted)
        else:
            self.refused_in_a_row += 1
            assert response.error is not Errors.NONE or data.request.is_full

    @rule(reached_the_leader=st.booleans())
    def exchange_lost(self, reached_the_leader: bool) -> None:
        """The request, or only its answer, is lost (a timeout or a broken connection)."""
        if not self.wanted:
            return
        data = self.handler.build(list(self.wanted.values()), 100)
        if reached_the_leader:
            self._serve(data.request)
        self.handler.handle_error()

    @rule()
    def request_replayed(self) -> None:
        """A stale copy of the last request reaches the leader again (its answer goes nowhere)."""
        if self.last_request is not None:
            self._serve(self.last_request)

    @invariant()
    def never_stuck(self) -> None:
        assert self.refused_in_a_row <= 1, "a refused fetch must be followed by one the follower accepts"


FetchSessionPair.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
TestFetchSessionPair = FetchSessionPair.TestCase
