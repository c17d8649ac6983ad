"""Idempotent-producer state built on followers from the batches they replicate (Kafka 2.8's
``Log.appendAsFollower`` with origin Replication), so a newly elected leader knows its producers: a retry the old
leader had already replicated is answered with its original offsets, and a batch sent ahead of a missing one is
refused, as on the old leader. Before this the state was the leader's own and a new leader took any sequence: the
chaos soak's 9 OUT_OF_ORDER_SEQUENCE_NUMBER answers (docs/soak.md)."""

from __future__ import annotations

import pytest

from zkcontroller.broker.partition import Partition
from zkcontroller.broker.producer_state import ProducerBatch, ProducerStateManager
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import FetchPartition, FetchRequest, ReplicatedBatch

from .helpers import leader_and_isr
from .replica_helpers import Brokers, state
from .test_producer_state_replica_manager import NONE, OUT_OF_ORDER_SEQUENCE_NUMBER, PID, TP, idempotent, send


def elect(brokers: Brokers, leader: int, leader_epoch: int, isr: tuple[int, ...], zk_version: int) -> None:
    """The controller's LeaderAndIsr after the old leader died, delivered to the replicas still alive."""
    for broker in isr:
        response = brokers.rms[broker].handle_control_request(
            leader_and_isr(state(leader=leader, leader_epoch=leader_epoch, isr=isr, zk_version=zk_version)))
        assert response.partition_errors[0][1] is Errors.NONE


async def test_a_retry_the_old_leader_had_replicated_is_answered_with_its_original_offsets(brokers: Brokers) -> None:
    """The batch reached follower 2 before leader 1 died; its answer was lost in the failover, so the producer
    retries it to broker 2, now leader: DUPLICATE, the original offsets, nothing appended."""
    brokers.lead(state())
    first = idempotent(3, 0)
    assert await send(brokers.rms[1], first) == (NONE, 0)
    await brokers.fetch_all()
    assert brokers.rms[2].log_end_offset(TP) == 3
    elect(brokers, leader=2, leader_epoch=1, isr=(2, 3), zk_version=1)
    assert await send(brokers.rms[2], first) == (NONE, 0)  # before: appended again at 3
    assert brokers.rms[2].log_end_offset(TP) == 3
    assert await send(brokers.rms[2], idempotent(1, 3)) == (NONE, 3)  # and the next batch follows on


async def test_a_new_leader_refuses_a_batch_sent_ahead_then_takes_the_missing_one(brokers: Brokers) -> None:
    """The soak's order: seq 0-2 replicated, then seq 3 and seq 4 in flight when leader 1 dies; the producer's
    retries reach broker 2 with seq 4 first. With the replicated entry (last seq 2) seq 4 is a gap,
    OUT_OF_ORDER_SEQUENCE_NUMBER (the producer retries it), then seq 3 and seq 4 are taken in order. Before, the
    new leader had no entry: it took seq 4 first, then refused seq 3 for ever (its entry ended at 4)."""
    brokers.lead(state())
    assert await send(brokers.rms[1], idempotent(3, 0)) == (NONE, 0)
    await brokers.fetch_all()
    elect(brokers, leader=2, leader_epoch=1, isr=(2, 3), zk_version=1)
    new_leader = brokers.rms[2]
    assert await send(new_leader, idempotent(1, 4)) == (OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert await send(new_leader, idempotent(1, 3)) == (NONE, 3)
    assert await send(new_leader, idempotent(1, 4)) == (NONE, 4)
    assert new_leader.log_end_offset(TP) == 5


async def test_a_new_leader_takes_the_later_batch_and_deduplicates_the_earlier_one_it_had(brokers: Brokers) -> None:
    """As above, but seq 3 had reached follower 2 before leader 1 died: seq 4, sent first, follows it; the retry of
    seq 3 is a duplicate, answered its original offset. Before, seq 3 was refused (the entry ended at 4)."""
    brokers.lead(state())
    assert await send(brokers.rms[1], idempotent(3, 0)) == (NONE, 0)
    assert await send(brokers.rms[1], idempotent(1, 3)) == (NONE, 3)
    await brokers.fetch_all()
    elect(brokers, leader=2, leader_epoch=1, isr=(2, 3), zk_version=1)
    new_leader = brokers.rms[2]
    assert await send(new_leader, idempotent(1, 4)) == (NONE, 4)
    assert await send(new_leader, idempotent(1, 3)) == (NONE, 3)
    assert new_leader.log_end_offset(TP) == 5


async def test_a_truncated_batch_is_forgotten_and_the_ones_below_are_kept(brokers: Brokers) -> None:
    """Seq 0-2 (offsets 0-2) reach both followers; seq 3-4 (offsets 3-4) only follower 2. Broker 3 is elected
    (unclean) and appends 3 records of its own at 3-5; follower 2's fetch diverges and it truncates to 3, dropping
    seq 3-4's batch. Elected in turn, broker 2 deduplicates a retry of seq 0-2 but appends seq 3-4 (offsets 3-4
    now hold broker 3's records: answering them would acknowledge records that are not the producer's)."""
    brokers.lead(state())
    assert await send(brokers.rms[1], idempotent(3, 0)) == (NONE, 0)
    await brokers.fetch_all()
    brokers.rms[3].pause_fetchers()
    assert await send(brokers.rms[1], idempotent(2, 3)) == (NONE, 3)
    await brokers.rms[2].fetchers[1].fetch_once()
    follower = brokers.rms[2].partition(TP)
    assert follower is not None and follower.log_end_offset == 5
    assert [b.last_seq for b in follower.producer_state.producers[PID].batches] == [2, 4]
    brokers.rms[3].resume_fetchers()
    elect(brokers, leader=3, leader_epoch=1, isr=(2, 3), zk_version=1)
    brokers.rms[3].append(TP, 3)
    await brokers.rms[2].fetchers[3].fetch_once()  # diverging epoch: truncated to 3
    assert follower.log_end_offset == 3
    assert [b.last_seq for b in follower.producer_state.producers[PID].batches] == [2]
    await brokers.rms[2].fetchers[3].fetch_once()  # broker 3's plain records: no producer batches
    assert follower.log_end_offset == 6
    elect(brokers, leader=2, leader_epoch=2, isr=(2,), zk_version=2)
    assert await send(brokers.rms[2], idempotent(3, 0)) == (NONE, 0)
    assert await send(brokers.rms[2], idempotent(2, 3)) == (NONE, 6)


def test_truncation_rebuilds_a_producer_from_its_batches_below_the_offset() -> None:
    """`ProducerStateManager.truncate`: batches at or above the offset go; a producer is replayed from its indexed
    batches below it (an epoch bump above the offset is undone), and forgotten when none remain."""
    state = ProducerStateManager(TP)
    state.append([ProducerBatch(7, 0, 0, 2, 10)], 0)  # offsets 0-1
    state.append([ProducerBatch(8, 0, 0, 1, 11)], 2)  # offset 2
    state.append([ProducerBatch(7, 0, 2, 2, 12)], 3)  # offsets 3-4
    state.append([ProducerBatch(7, 1, 0, 1, 13)], 5)  # offset 5, a new epoch
    state.append([ProducerBatch(8, 0, 1, 1, 14)], 6)  # offset 6
    assert (state.producers[7].producer_epoch, [b.last_offset for b in state.producers[7].batches]) == (1, [5])
    state.truncate(4)  # inside 7's batch at 3-4: it goes whole, as Kafka's segment truncation
    assert (state.producers[7].producer_epoch, [(b.first_seq, b.last_seq, b.first_offset, b.last_offset)
                                                for b in state.producers[7].batches]) == (0, [(0, 1, 0, 1)])
    assert state.producers[7].last_timestamp == 10
    assert [b.last_offset for b in state.producers[8].batches] == [2]
    assert state.batches_in(0, 10) == (10, (ReplicatedBatch(0, 1, 7, 0, 0, 10), ReplicatedBatch(2, 2, 8, 0, 0, 11)))
    state.truncate(0)
    assert state.producers == {} and state.batches_in(0, 10) == (10, ())


def test_a_fetched_range_is_cut_so_that_no_batch_is_split() -> None:
    """`batches_in`: the range ends before a batch that would cross its end; a first batch longer than the range
    is served whole (Kafka's fetch always returns the first batch whole); so is a batch begun below the fetch offset
    (Kafka's read starts at the batch holding it), the count then counted from its base offset."""
    state = ProducerStateManager(TP)
    state.append([ProducerBatch(7, 0, 0, 4, 10)], 2)  # offsets 2-5
    state.append([ProducerBatch(7, 0, 4, 2, 11)], 8)  # offsets 8-9
    first, second = ReplicatedBatch(2, 5, 7, 0, 0, 10), ReplicatedBatch(8, 9, 7, 0, 4, 11)
    assert state.batches_in(0, 4) == (2, ())  # plain 0-1 only: 2-5 does not fit
    assert state.batches_in(2, 1) == (4, (first,))
    assert state.batches_in(0, 9) == (8, (first,))
    assert state.batches_in(0, 12) == (12, (first, second))
    assert state.batches_in(3, 12) == (13, (first, second))  # from 2, up to 3 + 12
    assert state.batches_in(10, 5) == (5, ())


def test_a_follower_takes_the_batches_without_checking_their_sequences(caplog: pytest.LogCaptureFixture) -> None:
    """Origin Replication: no sequence check (the leader made it), an older epoch only warned of and taken."""
    p = Partition(TP, 2)
    p.make_follower(1, 0, (1, 2), (1, 2), 0, 1)
    p.append_as_follower(6, 6, (ReplicatedBatch(0, 1, 7, 3, 10, 1), ReplicatedBatch(2, 2, 7, 3, 50, 2),
                                ReplicatedBatch(4, 4, 7, 2, 0, 3)))
    entry = p.producer_state.producers[7]
    assert (entry.producer_epoch, [(b.first_seq, b.last_seq) for b in entry.batches]) == (2, [(0, 0)])
    assert "Epoch of producer 7 at offset 4 in t-0 is 2, which is smaller than the last seen epoch 3" in caplog.text


async def test_plain_records_are_served_without_batches(brokers: Brokers) -> None:
    """Non-idempotent traffic: the fetch answer carries no batch descriptors (the default empty tuple)."""
    brokers.lead(state())
    brokers.rms[1].append(TP, 5)
    (answer,) = brokers.rms[1].handle_fetch(FetchRequest(2, (FetchPartition(TP, 0, 0),))).partitions
    assert (answer.records, answer.batches) == (5, ())


def test_a_replicated_batch_without_a_sequence_keeps_none() -> None:
    """``DefaultRecordBatch.lastSequence`` is NO_SEQUENCE when the base sequence is: a 5-record batch at base
    sequence -1 (a peer's, not ours: our leaders refuse it) does not become last sequence 3."""
    p = Partition(TP, 2)
    p.make_follower(1, 0, (1, 2), (1, 2), 0, 1)
    p.append_as_follower(5, 5, (ReplicatedBatch(0, 4, 7, 0, -1, 1),))
    assert [b.last_seq for b in p.producer_state.producers[7].batches] == [-1]
