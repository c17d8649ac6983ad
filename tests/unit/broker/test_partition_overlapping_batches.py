"""A follower's append of batches whose offsets overlap, as Kafka 2.8's ``Log.appendAsFollower``
(``validateAndAssignOffsets = false``) takes them: only the first batch is checked against the log end
(``UnexpectedAppendOffsetException``, the fetcher's check) and the batches' last offsets against each other
(``OffsetsOutOfOrderException``); a batch beginning inside the one before it, even below the log end, is appended
and its producer's entry takes it (origin Replication: no sequence check). Served on as the log holds it, in
process and on the wire."""

from __future__ import annotations

import pytest

from zkcontroller.broker.partition import FollowerAppendError, Partition
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.inter_broker import ReplicatedBatch
from zkcontroller.protocol.wire import fetch_codec

TP = TopicPartition("orders", 0)


def _follower(log_end_offset: int) -> Partition:
    partition = Partition(TP, 2)
    partition.make_follower(1, 1, (1, 2), (1, 2), 0, 1)
    partition.log_end_offset = log_end_offset
    return partition


def test_a_batch_beginning_below_the_log_end_inside_the_one_before_is_taken() -> None:
    """The log ends at 10; the answer's first batch is 10-19 (producer 7), the next 8-25 (producer 8): its last
    offset is after the first's, so Kafka appends both and producer 8's entry takes seq 0-17. It used to be left
    out of the producer state (taken only from the log end on)."""
    follower = _follower(10)
    first = ReplicatedBatch(10, 19, 7, 0, 0, 1_000)
    inside = ReplicatedBatch(8, 25, 8, 0, 0, 1_000)
    follower.append_as_follower(16, 26, (first, inside))
    assert follower.log_end_offset == 26
    assert follower.producer_state.producers[7].last_seq == 9
    assert follower.producer_state.producers[8].last_seq == 17
    assert follower.producer_state.retained() == (first, inside)

    # served on as the log holds it (in log order, the overlapping batch after the one it overlaps), and on the
    # wire: the record set decodes back to both
    follower.make_leader(2, (1, 2), (1, 2), 1, 1, 0)
    count, served = follower.producer_state.batches_in(10, 16)
    assert (count, served) == (16, (first, inside))
    data = fetch_codec.encode_records(10, count, served)
    assert fetch_codec.decode_batches(data)[:3] == (16, 10, (first, inside))

    # Kafka's truncation cuts at the first batch whose last offset reaches the offset: 22 keeps 10-19 only
    follower.truncate_to(22)
    assert follower.producer_state.retained() == (first,)
    assert 8 not in follower.producer_state.producers


def test_a_batch_serving_cut_keeps_what_was_served() -> None:
    """`batches_in` cut at a batch that crosses the range's end but begins inside the one served before it: the
    range ends after the served one, not at the crossing batch's base offset (before what was served)."""
    follower = _follower(0)
    first = ReplicatedBatch(0, 9, 7, 0, 0, 1_000)
    inside = ReplicatedBatch(5, 20, 8, 0, 0, 1_000)
    follower.append_as_follower(21, 21, (first, inside))
    assert follower.producer_state.batches_in(0, 15) == (10, (first,))


def test_an_overlapping_batch_cut_off_is_served_at_the_next_fetch() -> None:
    """A [0..9] served alone (B [5..12] crosses the fetch's end); the next fetch, from 10, gets B whole from 5, as
    Kafka's read starts at the first batch whose last offset reaches the fetch offset (it used to serve plain
    records 10-12, B never reaching the follower). The follower's fetcher then fails the partition with
    ``UnexpectedAppendOffsetException``, as Kafka's."""
    leader = _follower(0)
    first = ReplicatedBatch(0, 9, 7, 0, 0, 1_000)
    overlapping = ReplicatedBatch(5, 12, 8, 0, 0, 1_000)
    leader.append_as_follower(13, 13, (first, overlapping))
    assert leader.producer_state.batches_in(0, 11) == (10, (first,))
    assert leader.producer_state.batches_in(10, 3) == (8, (overlapping,))
    assert leader.producer_state.batches_in(3, 10) == (13, (first, overlapping))  # from 0: A whole, then B
    data = fetch_codec.encode_records(5, 8, (overlapping,))
    assert fetch_codec.decode_batches(data)[:3] == (8, 5, (overlapping,))


def test_last_offsets_that_do_not_increase_are_refused_in_process_too() -> None:
    """The wire's `decode_batches` refuses them (``OffsetsOutOfOrderException``); an answer handed over in process
    was appended, the producer state taking a batch before its predecessor. Nothing is appended."""
    follower = _follower(2)
    with pytest.raises(FollowerAppendError) as refused:
        follower.append_as_follower(3, 5, (ReplicatedBatch(2, 4, 7, 0, 0, 1_000), ReplicatedBatch(3, 3, 8, 0, 0, 1)))
    assert refused.value.exception == ("kafka.common.OffsetsOutOfOrderException: Out of order offsets found in append "
                                       "to orders-0: List(2, 3, 4, 3)")
    assert follower.log_end_offset == 2 and follower.producer_state.producers == {}
