"""Hypothesis: an idempotent producer with up to 5 requests in flight (Kafka's limit for idempotence) against a
leader's `ProducerStateManager`, over lost answers, retries in any order within the window and sequences that
wrap past ``Int.MaxValue``, new epochs (KIP-360) and re-sends of batches already answered.

The property is idempotence itself: the log holds every batch at most once, in sequence order, and every answer
the producer accepts names the offset its batch really took (a retry answers the original offset); and the
producer is never stuck: the next batch in order is always taken and a retry is always answered."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from zkcontroller.broker.producer_state import (
    INT_MAX,
    INVALID_PRODUCER_EPOCH,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    ProducerBatch,
    ProducerStateError,
    ProducerStateManager,
    increment_sequence,
)
from zkcontroller.model import TopicPartition

MAX_IN_FLIGHT = 5
PID = 3


class IdempotentProducer(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.state = ProducerStateManager(TopicPartition("t", 0))
        self.leo = 0
        self.log: list[tuple[int, int, int]] = []
        """(base offset, first sequence, count) of each batch appended."""
        self.batches: list[ProducerBatch] = []
        """Every batch the producer made, in sequence order."""
        self.acked: dict[int, int] = {}
        """Batch index: the base offset its accepted answer named."""

    @initialize(first_seq=st.one_of(st.just(0), st.integers(INT_MAX - 20, INT_MAX)))
    def start(self, first_seq: int) -> None:
        self.next_seq = first_seq
        self.epoch = 0

    @property
    def first_unacked(self) -> int:
        return next((i for i in range(len(self.batches)) if i not in self.acked), len(self.batches))

    @precondition(lambda self: len(self.batches) - self.first_unacked < MAX_IN_FLIGHT)
    @rule(count=st.integers(1, 4))
    def make_batch(self, count: int) -> None:
        self.batches.append(ProducerBatch(PID, self.epoch, self.next_seq, count, 1_000 + len(self.batches)))
        self.next_seq = increment_sequence(self.next_seq, count)

    @precondition(lambda self: self.first_unacked < len(self.batches))
    @rule(data=st.data(), answer_lost=st.booleans())
    def send(self, data: st.DataObject, answer_lost: bool) -> None:
        """Send (or re-send) an unacknowledged batch of the window; the very first request is batch 0 (a
        producer's first batch goes out alone: the leader has no entry yet and would take any sequence)."""
        window = range(self.first_unacked, len(self.batches))
        i = 0 if not self.log else data.draw(st.sampled_from(list(window)))
        batch = self.batches[i]
        try:
            duplicate = self.state.append([batch], self.leo)
        except ProducerStateError as e:
            assert e.error == OUT_OF_ORDER_SEQUENCE_NUMBER  # in flight: only the current epoch
            assert i > len(self.log)  # only a batch sent ahead of a missing one; never a retry, never the next
            return
        assert (duplicate is None) == (i == len(self.log))
        if duplicate is None:
            base = self.leo
            self.log.append((base, batch.base_sequence, batch.count))
            self.leo += batch.count
        else:
            base = duplicate.first_offset
        if not answer_lost:
            self.acked[i] = base

    @precondition(lambda self: self.batches and self.first_unacked == len(self.batches))
    @rule()
    def bump_epoch(self) -> None:
        """KIP-360: with nothing in flight the producer takes a new epoch and starts again at sequence 0."""
        self.epoch += 1
        self.next_seq = 0

    @precondition(lambda self: self.acked)
    @rule(data=st.data())
    def resend_acknowledged(self, data: st.DataObject) -> None:
        """A zombie or confused producer re-sends a batch already answered: never appended again; a stale epoch is
        fenced, a duplicate among the epoch's last five answers its offset, an older one is out of order."""
        i = data.draw(st.sampled_from(sorted(self.acked)))
        batch = self.batches[i]
        current_epoch = self.batches[len(self.log) - 1].producer_epoch
        retained = [k for k in range(len(self.log)) if self.batches[k].producer_epoch == current_epoch][-5:]
        leo = self.leo
        try:
            duplicate = self.state.append([batch], self.leo)
        except ProducerStateError as e:
            expected = INVALID_PRODUCER_EPOCH if batch.producer_epoch < current_epoch else OUT_OF_ORDER_SEQUENCE_NUMBER
            assert e.error == expected and i not in retained
        else:
            assert duplicate is not None and i in retained and duplicate.first_offset == self.acked[i]
        assert self.leo == leo

    @invariant()
    def each_batch_once_in_sequence_order(self) -> None:
        appended = [(seq, count) for _, seq, count in self.log]
        expected = [(b.base_sequence, b.count) for b in self.batches[:len(appended)]]
        assert appended == expected
        assert self.leo == sum(count for _, _, count in self.log)

    @invariant()
    def answers_name_the_offsets_taken(self) -> None:
        for i, base in self.acked.items():
            assert self.log[i][0] == base


TestIdempotentProducer = IdempotentProducer.TestCase
TestIdempotentProducer.settings = settings(max_examples=200, stateful_step_count=40, deadline=None)
