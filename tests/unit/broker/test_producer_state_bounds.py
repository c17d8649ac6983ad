"""What the producer state's index keeps stays bounded: an expired producer leaves nothing below the oldest
snapshot (Kafka's snapshot holds the current producers only), the index of a partition with one producer stays
within about 2.5x the 64 batches it held before snapshots, and a truncation looks at the index once, not once per
producer it touches."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, SupportsIndex

from zkcontroller.broker.producer_state import (
    MAX_PRODUCER_SNAPSHOTS,
    NUM_BATCHES_TO_RETAIN,
    PRODUCER_SNAPSHOT_INTERVAL,
    ProducerBatch,
    ProducerStateManager,
)
from zkcontroller.model import TopicPartition

TP = TopicPartition("orders", 0)
EXPIRATION_MS = 1_000
LONG_LIVED = 1


def test_expired_producers_leave_no_batch_below_the_oldest_snapshot() -> None:
    """Rounds of 200 one-batch producers (a new producer id per client restart) that expire, while one producer
    writes on: each round's expired producers used to leave their last batch in the index for ever."""
    state = ProducerStateManager(TP)
    leo = now = 0
    sizes = []
    for round_ in range(6):
        for i in range(200):
            assert state.append([ProducerBatch(1000 * (round_ + 1) + i, 0, 0, 1, now)], leo) is None
            leo += 1
        now += 2 * EXPIRATION_MS
        short_lived = set(range(1000 * (round_ + 1), 1000 * (round_ + 1) + 200))
        assert short_lived <= set(state.remove_expired(now, EXPIRATION_MS))
        for seq in range(600):
            assert state.append([ProducerBatch(LONG_LIVED, 0, 600 * round_ + seq, 1, now)], leo) is None
            leo += 1
        horizon = state.snapshot_offsets[0]
        assert [b for b in state.retained() if b.producer_id not in state.producers and b.last_offset < horizon] == []
        sizes.append(len(state.retained()))
    assert max(sizes) < 2 * MAX_PRODUCER_SNAPSHOTS * PRODUCER_SNAPSHOT_INTERVAL, sizes


def test_a_restart_drops_the_batches_of_producers_expired_meanwhile() -> None:
    """`restore` expires before it compacts: the expired producer's batch below the oldest snapshot goes."""
    state = ProducerStateManager(TP)
    assert state.append([ProducerBatch(9, 0, 0, 1, 0)], 0) is None
    leo = 1
    for seq in range(8 * PRODUCER_SNAPSHOT_INTERVAL):
        assert state.append([ProducerBatch(LONG_LIVED, 0, seq, 1, 10 * EXPIRATION_MS)], leo) is None
        leo += 1
    assert any(b.producer_id == 9 for b in state.retained())  # live until now: its last batch is kept
    restarted = ProducerStateManager(TP)
    restarted.restore(state.retained(), leo, 10 * EXPIRATION_MS, EXPIRATION_MS, state.snapshot_offsets)
    assert 9 not in restarted.producers
    assert [b for b in restarted.retained() if b.producer_id == 9] == []


def test_the_index_of_one_producer_stays_within_the_snapshot_window_plus_a_quarter() -> None:
    """One producer, 3,000 batches: the index peaked at 1,023 batches (snapshots every 128, 4 kept, compacted
    when it doubled) against 63 before snapshots; now at most the window of 4 intervals plus a quarter."""
    state = ProducerStateManager(TP)
    peak = 0
    for seq in range(3000):
        assert state.append([ProducerBatch(LONG_LIVED, 0, seq, 1, 1)], seq) is None
        peak = max(peak, len(state.retained()))
    window = MAX_PRODUCER_SNAPSHOTS * PRODUCER_SNAPSHOT_INTERVAL + NUM_BATCHES_TO_RETAIN + 1
    assert peak <= window + window // 4 + 1, peak
    assert peak <= 3 * 64


class CountingList(list[Any]):
    """A list counting the elements read through indexing and reverse iteration."""

    reads = 0

    def __getitem__(self, key: SupportsIndex | slice) -> Any:
        if not isinstance(key, slice):
            CountingList.reads += 1
        return super().__getitem__(key)

    def __reversed__(self) -> Iterator[Any]:
        for i in range(len(self) - 1, -1, -1):
            CountingList.reads += 1
            yield super().__getitem__(i)


def test_a_truncation_touching_many_producers_reads_the_index_once() -> None:
    """1,000 producers with 6 batches each, a truncation dropping each one's last: it used to scan the index from
    the end once per producer (O(producers x index))."""
    producers = 1000
    state = ProducerStateManager(TP)
    leo = 0
    for seq in range(6):
        for pid in range(producers):
            assert state.append([ProducerBatch(pid, 0, seq, 1, 1)], leo) is None
            leo += 1
    state._index = CountingList(state._index)
    size = len(state._index)
    CountingList.reads = 0
    state.truncate(leo - producers)
    assert CountingList.reads <= size + 100, (CountingList.reads, size)
    assert len(state.producers) == producers
    assert {e.last_seq for e in state.producers.values()} == {4}
