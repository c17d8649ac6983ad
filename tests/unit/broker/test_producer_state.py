"""The leader's idempotent-producer state (`producer_state`) against Kafka 2.8's ``ProducerStateManager`` /
``ProducerAppendInfo.checkSequence`` rules: duplicates of the last 5 batches, sequence gaps, epochs, wrap-around,
transactional batches left alone, expiry, and the state's life on a `Partition`."""

from __future__ import annotations

import asyncio

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder
from tests.helpers import until_idle

from zkcontroller.broker.partition import Partition
from zkcontroller.broker.producer_state import (
    INT_MAX,
    INVALID_PRODUCER_EPOCH,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    BatchMetadata,
    ProducerBatch,
    ProducerStateError,
    ProducerStateManager,
    decrement_sequence,
    expire_producers,
    increment_sequence,
    producer_batches,
)
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire import log_validator, record_sets

TP = TopicPartition("orders", 0)
PID = 7


def b(seq: int, count: int = 1, epoch: int = 0, pid: int = PID, ts: int = 1_000,
      transactional: bool = False) -> ProducerBatch:
    return ProducerBatch(pid, epoch, seq, count, ts, transactional)


class Log:
    """A leader's log end offset with the producer state in front of it, as `produce._append` uses them."""

    def __init__(self) -> None:
        self.state = ProducerStateManager(TP)
        self.leo = 0

    def append(self, *batches: ProducerBatch) -> int:
        """The append's base offset (the original one for a duplicate)."""
        duplicate = self.state.append(batches, self.leo)
        if duplicate is not None:
            return duplicate.first_offset
        base = self.leo
        self.leo += sum(x.count for x in batches)
        return base

    def snapshot(self) -> tuple[int, dict[int, tuple[int, list[BatchMetadata]]]]:
        return self.leo, {pid: (entry.producer_epoch, list(entry.batches))
                          for pid, entry in self.state.producers.items()}

    def refused(self, *batches: ProducerBatch) -> int:
        """The error of an append the state refuses; nothing appended, nothing recorded."""
        before = self.snapshot()
        with pytest.raises(ProducerStateError) as refusal:
            self.append(*batches)
        assert self.snapshot() == before
        return refusal.value.error


def test_sequences_wrap_as_kafkas_default_record_batch() -> None:
    assert increment_sequence(5, 3) == 8
    assert increment_sequence(INT_MAX, 1) == 0
    assert increment_sequence(INT_MAX - 1, 3) == 1
    assert decrement_sequence(1, 3) == INT_MAX - 1
    assert decrement_sequence(8, 3) == 5
    assert b(INT_MAX - 1, 4).last_sequence == 1  # INT_MAX - 1, INT_MAX, 0, 1


def test_a_producer_without_an_entry_starts_at_any_sequence_then_must_follow_on() -> None:
    log = Log()
    assert log.append(b(42, 3)) == 0
    assert log.append(b(45, 2)) == 3
    assert log.refused(b(48)) == OUT_OF_ORDER_SEQUENCE_NUMBER  # 47 missing
    assert log.refused(b(46)) == OUT_OF_ORDER_SEQUENCE_NUMBER  # overlaps the last batch, not a duplicate of it
    assert log.append(b(47)) == 5
    assert log.leo == 6


def test_a_retry_of_any_of_the_last_five_batches_answers_its_offsets_and_appends_nothing() -> None:
    log = Log()
    offsets = [log.append(b(seq * 2, 2)) for seq in range(6)]  # sequences 0-1, 2-3, ... 10-11
    assert offsets == [0, 2, 4, 6, 8, 10]
    for n in range(1, 6):  # the last five are retained
        assert log.append(b(n * 2, 2)) == offsets[n]
    assert log.leo == 12
    assert log.refused(b(0, 2)) == OUT_OF_ORDER_SEQUENCE_NUMBER  # the sixth back is forgotten
    assert log.append(b(12)) == 12  # the producer carries on after the retries


def test_a_duplicate_must_match_the_sequence_range_and_epoch_exactly() -> None:
    log = Log()
    log.append(b(0, 3))
    assert log.refused(b(0, 2)) == OUT_OF_ORDER_SEQUENCE_NUMBER
    assert log.refused(b(1, 2)) == OUT_OF_ORDER_SEQUENCE_NUMBER
    assert log.append(b(0, 3, epoch=1)) == 3  # another epoch: no duplicate, a new epoch's first batch
    assert log.leo == 6


def test_an_older_epoch_is_invalid_producer_epoch_before_any_sequence_check() -> None:
    log = Log()
    log.append(b(0, epoch=3))
    assert log.refused(b(1, epoch=2)) == INVALID_PRODUCER_EPOCH
    assert log.refused(b(0, epoch=2)) == INVALID_PRODUCER_EPOCH  # not a duplicate either: another epoch
    with pytest.raises(ProducerStateError) as e:
        log.append(b(1, epoch=2))
    assert e.value.exception == "InvalidProducerEpochException"
    assert str(e.value) == ("Epoch of producer 7 at offset 1 in orders-0 is 2, which is smaller than the last seen "
                            "epoch 3")


def test_a_new_epoch_starts_at_zero_and_forgets_the_old_epochs_batches() -> None:
    log = Log()
    log.append(b(0, 2))
    log.append(b(2, 2))
    assert log.refused(b(4, epoch=1)) == OUT_OF_ORDER_SEQUENCE_NUMBER
    with pytest.raises(ProducerStateError, match=r"Invalid sequence number for new epoch of producer 7 at offset 4 in "
                                                 r"partition orders-0: 1 \(request epoch\), 4 \(seq. number\), 0 "
                                                 r"\(current producer epoch\)"):
        log.append(b(4, epoch=1))
    assert log.append(b(0, epoch=1)) == 4
    assert log.refused(b(2, 2)) == INVALID_PRODUCER_EPOCH  # the old epoch's retry is fenced
    assert log.append(b(1, epoch=1)) == 5


def test_an_entry_of_unknown_epoch_lets_a_new_epoch_start_anywhere_and_accepts_any_sequence() -> None:
    """``checkSequence``: with the entry's epoch NO_PRODUCER_EPOCH (-1), a new epoch need not start at 0; and as
    long as the entry before the append has no epoch, a same-epoch batch is not checked either."""
    log = Log()
    log.append(b(5, epoch=-1))
    log.append(b(9, epoch=-1))  # the entry's epoch is still unknown: any sequence
    assert log.append(b(3, epoch=0)) == 2
    assert log.refused(b(5, epoch=0)) == OUT_OF_ORDER_SEQUENCE_NUMBER  # now the epoch is known


def test_sequences_wrap_at_int_max() -> None:
    log = Log()
    log.append(b(INT_MAX - 2, 3))  # ends at Int.MaxValue
    assert log.append(b(0, 2)) == 3
    log2 = Log()
    log2.append(b(INT_MAX - 5, 5))
    assert log2.append(b(INT_MAX, 3)) == 5  # INT_MAX, 0, 1
    assert log2.append(b(INT_MAX, 3)) == 5  # its retry, found across the wrap
    assert log2.append(b(2)) == 8
    assert log2.append(b(INT_MAX - 5, 5)) == 0  # still among the last five: a duplicate
    assert log2.leo == 9


def test_batches_of_one_append_are_checked_against_each_other_and_a_duplicate_drops_the_set() -> None:
    """Kafka's analyzeAndValidateProducerState: sequences follow on within a set; a duplicate (looked up in the
    state before the append) anywhere returns at once, so the whole set is answered as that duplicate."""
    log = Log()
    assert log.append(b(0, 2), b(2, 3), b(0, pid=8)) == 0
    assert log.leo == 6
    assert log.state.producers[PID].last_seq == 4 and log.state.producers[8].last_seq == 0
    assert log.refused(b(5), b(7)) == OUT_OF_ORDER_SEQUENCE_NUMBER
    assert log.refused(b(5), b(5)) == OUT_OF_ORDER_SEQUENCE_NUMBER  # the same batch twice in one set
    assert log.append(b(5), b(2, 3)) == 2  # a new batch, then a duplicate: nothing appended
    assert log.leo == 6
    assert log.append(b(5)) == 6


def test_transactional_batches_and_batches_without_a_producer_id_are_left_alone() -> None:
    log = Log()
    log.append(b(0))
    assert log.append(b(9, transactional=True)) == 1  # not checked ...
    assert log.append(b(9, transactional=True)) == 2  # ... nor recorded: appended again
    assert log.append(b(-1, pid=-1), b(-1, pid=-1)) == 3
    assert log.append(b(1)) == 5
    assert set(log.state.producers) == {PID}


def test_expired_producers_are_forgotten_and_may_start_anew() -> None:
    log = Log()
    log.append(b(0, ts=1_000))
    log.append(b(0, pid=8, ts=5_000))
    assert log.state.remove_expired(now_ms=10_999, expiration_ms=10_000) == []
    assert log.state.remove_expired(now_ms=11_000, expiration_ms=10_000) == [PID]
    assert log.append(b(17)) == 2  # no entry: any sequence
    assert set(log.state.producers) == {PID, 8}


def builder_batch(n: int, pid: int = -1, epoch: int = -1, seq: int = -1, transactional: bool = False,
                  timestamps: tuple[int, ...] = (1_000,)) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20, transactional=transactional,
                                   producer_id=pid, producer_epoch=epoch, base_sequence=seq)
    for i in range(n):
        builder.append(timestamp=timestamps[i % len(timestamps)], key=None, value=b"v%d" % i)
    builder.close()
    return bytes(builder.buffer())


def test_producer_batches_reads_the_v2_headers_of_a_validated_record_set() -> None:
    for data, count, expected in ((builder_batch(3, 11, 2, 40, timestamps=(5, 9, 7)), 3,
                                   ProducerBatch(11, 2, 40, 3, 9, False)),
                                  (builder_batch(1, 11, 2, 43, transactional=True), 1,
                                   ProducerBatch(11, 2, 43, 1, 1_000, True))):
        entries = record_sets.inspect(data, 3)  # one batch per set: Kafka refuses more (LogValidator)
        assert log_validator.validate(data, entries) == count
        assert producer_batches(data, entries) == [expected]
    legacy = MemoryRecordsBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    legacy.append(timestamp=1, key=None, value=b"x")
    legacy.close()
    data = bytes(legacy.buffer())
    assert producer_batches(data, record_sets.inspect(data, 2)) == []


def test_a_partition_keeps_its_producers_across_leadership_changes() -> None:
    """As Kafka's log keeps its ``ProducerStateManager``: a broker that follows, or is left without a leader, keeps
    its entries (a follower goes on building them from the batches it replicates)."""
    p = Partition(TP, 1)
    p.make_leader(1, (1,), (1,), 0, 1, now_ms=0)
    p.producer_state.append([b(0)], 0)
    p.append_as_leader(1, now_ms=0)
    p.make_leader(2, (1,), (1,), 1, 1, now_ms=0)  # a new epoch, still leading: kept
    assert set(p.producer_state.producers) == {PID}
    p.make_follower(2, 3, (2, 1), (1, 2), 2, 1)
    assert set(p.producer_state.producers) == {PID}
    p.make_leader(4, (1,), (1,), 3, 1, now_ms=0)
    p.make_offline()
    assert set(p.producer_state.producers) == {PID}


class StepClock:
    """A runtime whose ``sleep_ms`` returns once the test moves the clock past it."""

    def __init__(self) -> None:
        self.now = 0
        self.sleeping: asyncio.Future[None] | None = None
        self.wake_at = 0

    def now_ms(self) -> int:
        return self.now

    async def sleep_ms(self, ms: int) -> None:
        self.wake_at = self.now + ms
        self.sleeping = asyncio.get_running_loop().create_future()
        await self.sleeping

    async def advance_to_wake(self) -> None:
        assert self.sleeping is not None
        self.now = self.wake_at
        self.sleeping.set_result(None)
        await until_idle()  # the expiration ran and sleeps again (or ended)


async def test_expire_producers_runs_every_interval_over_the_brokers_partitions() -> None:
    clock = StepClock()
    state = ProducerStateManager(TP)
    state.append([b(0, ts=0)], 0)
    state.append([b(0, pid=8, ts=700)], 1)
    task = asyncio.get_running_loop().create_task(
        expire_producers(clock, lambda: [state], lambda: 1_000, interval_ms=600))  # type: ignore[arg-type]
    try:
        await until_idle()
        assert clock.wake_at == 600 and set(state.producers) == {PID, 8}
        await clock.advance_to_wake()  # at 600: neither is 1000 ms old
        assert set(state.producers) == {PID, 8} and clock.wake_at == 1200  # checked, and asleep until the next
        await clock.advance_to_wake()  # at 1200: PID's last batch is
        assert set(state.producers) == {8} and clock.wake_at == 1800
        await clock.advance_to_wake()  # at 1800: so is 8's
        assert state.producers == {}
    finally:
        task.cancel()
