"""What a follower's fetch answer may cost: a leader serves at most `TIME_INDEX_ENTRIES_SERVED` time-index entries
(each a batch header of its own) per partition and answer, and a follower refuses a batch shorter than its own
header instead of reading it again forever (a 61-byte answer hung the follower and, collecting an index entry per
turn, filled its memory)."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from zkcontroller.broker.partition import TimeIndex
from zkcontroller.broker.replica_manager import TIME_INDEX_ENTRIES_SERVED
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.inter_broker import FetchPartition, FetchRequest, TimeIndexEntry
from zkcontroller.protocol.wire.fetch_codec import CorruptRecordError, decode_batches
from zkcontroller.protocol.wire.record_sets import BATCH_HEADER

from .replica_helpers import Brokers, state

TP = TopicPartition("t", 0)


@pytest.fixture
def one_second() -> Iterator[None]:
    """Fail, not hang, if a decode never ends (the code before the fix looped forever)."""
    def stop(*_: object) -> None:
        raise TimeoutError("the decode did not end")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(1)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("length", [-12, -1, 0, 48])
def test_a_batch_shorter_than_its_header_is_corrupt(length: int, one_second: None) -> None:
    data = BATCH_HEADER.pack(0, length, 0, 2, 0, 0, 0, 5, 5, -1, -1, -1, 1)  # the CRC of an empty range is 0
    collected: list[TimeIndexEntry] = []
    with pytest.raises(CorruptRecordError, match="smaller than the minimum allowed overhead 61"):
        decode_batches(data, collected)
    assert collected == []


async def test_a_follower_is_served_a_bounded_number_of_index_entries_and_catches_up() -> None:
    brokers = Brokers(2)
    try:
        brokers.lead(state(isr=(1, 2), replicas=(1, 2)))
        brokers.rms[2].pause_fetchers()
        leader = brokers.rms[1]
        batches = TIME_INDEX_ENTRIES_SERVED * 2 + 50
        partition = leader.partition(TP)
        assert partition is not None
        for i in range(batches):  # one-record Produce requests, each indexed (timestamps rising)
            base = partition.log_end_offset
            leader.append(TP, 1)
            partition.time_index.append(base, 1_000 + i, 1_000 + i)
        (answer,) = leader.handle_fetch(FetchRequest(2, (FetchPartition(TP, 0, 0),))).partitions
        assert (answer.records, len(answer.timestamps)) == (TIME_INDEX_ENTRIES_SERVED, TIME_INDEX_ENTRIES_SERVED)
        brokers.rms[2].resume_fetchers()
        follower = brokers.rms[2].partition(TP)
        assert follower is not None
        for _ in range(4):
            await brokers.fetch_all()
        assert follower.log_end_offset == batches
        assert follower.time_index.entries_in(0, batches) == partition.time_index.entries_in(0, batches)
    finally:
        brokers.close()


def test_a_first_timestamp_above_the_max_is_kept_as_the_max_by_every_replica() -> None:
    """A client's batch header may put its first timestamp above its max: the leader's index answered it, a
    follower's (which took the max) another, so a lookup changed with a failover."""
    index = TimeIndex()
    index.append(0, 9_000, 5_000)
    assert index.lookup(4_000) == (5_000, 0)
