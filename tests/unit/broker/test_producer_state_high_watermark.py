"""A truncation to the high watermark (every truncation but an unclean election's) finds each producer's last batch
below it, as Kafka's ``truncateAndReload`` does, however far the oldest of the last 4 producer snapshots has moved
past it: the latest snapshot at or below the high watermark is kept (`producer_state.prune_snapshots`), up to
`MAX_UNCOMMITTED_SNAPSHOTS`, in memory, through a `Partition` and through the journal across a restart."""

from __future__ import annotations

from pathlib import Path

from zkcontroller.broker.log_offsets_journal import LogOffsetsJournal
from zkcontroller.broker.partition import Partition
from zkcontroller.broker.producer_state import (
    MAX_PRODUCER_SNAPSHOTS,
    MAX_UNCOMMITTED_SNAPSHOTS,
    NUM_BATCHES_TO_RETAIN,
    PRODUCER_SNAPSHOT_INTERVAL,
    ProducerBatch,
    ProducerStateManager,
    prune_snapshots,
)
from zkcontroller.model import TopicPartition

TP = TopicPartition("orders", 0)
P, Q = 7, 8
EXPIRATION_MS = 604_800_000
Q_BATCHES = (MAX_UNCOMMITTED_SNAPSHOTS - 1) * PRODUCER_SNAPSHOT_INTERVAL
"""As many of Q's batches after the high watermark as keep the snapshot below it: the oldest of the last 4 is far
above it."""


def _append(state: ProducerStateManager, pid: int, seq: int, offset: int) -> None:
    assert state.append([ProducerBatch(pid, 0, seq, 1, 1_000)], offset) is None


def _write(state: ProducerStateManager, set_high_watermark: object = None) -> int:
    """P's seq 0-4 at offsets 0-4, Q's seq 0-34 at 5-39 (the high watermark set to 40 after them), P's seq 5-10 at
    40-45, then `Q_BATCHES` more of Q: P's last batch below 40 is seq 4, none of its last 5 and not its last before
    the oldest of the last 4 snapshots. The log end."""
    offset = 0
    for seq in range(5):
        _append(state, P, seq, offset)
        offset += 1
    for seq in range(35):
        _append(state, Q, seq, offset)
        offset += 1
    if callable(set_high_watermark):
        set_high_watermark(offset)
    for seq in range(5, 11):
        _append(state, P, seq, offset)
        offset += 1
    for seq in range(35, 35 + Q_BATCHES):
        _append(state, Q, seq, offset)
        offset += 1
    return offset


def test_a_truncation_to_a_lagging_high_watermark_finds_a_producer_below_the_last_four_snapshots() -> None:
    """It used to keep the last 4 snapshots only: the truncation to 40, below the oldest of them, forgot P (then any
    sequence was accepted from it); Kafka loads its snapshot at 32 (P at seq 4) and replays Q's batches to 40."""
    state = ProducerStateManager(TP)

    def set_hw(offset: int) -> None:
        state.high_watermark = offset

    _write(state, set_hw)
    kept = len(state.snapshot_offsets)
    state.truncate(40)
    assert state.producers[P].last_seq == 4 and state.producers[Q].last_seq == 34
    assert state.snapshot_offsets == (32,) and kept > MAX_PRODUCER_SNAPSHOTS
    assert [b.last_seq for b in state.producers[Q].batches] == [30, 31, 32, 33, 34]


def test_the_partition_gives_its_high_watermark_to_the_producer_state() -> None:
    """`Partition.truncate_to` (a new follower without epochs truncates to its high watermark, `make_follower`)."""
    partition = Partition(TP, 1)
    partition.make_leader(1, (1, 2), (1, 2), 0, 1, 0)

    def set_hw(offset: int) -> None:
        partition.log_end_offset = offset
        partition.high_watermark = offset

    leo = _write(partition.producer_state, set_hw)
    partition.log_end_offset = leo
    partition.make_follower(2, 2, (1, 2), (1, 2), 1, 1)
    assert partition.log_end_offset == 40
    assert partition.producer_state.producers[P].last_seq == 4


def test_a_restart_keeps_the_snapshot_at_the_high_watermark(tmp_path: Path) -> None:
    """The journal keeps the same snapshots as the state (its offsets lines carry the high watermark): a restarted
    replica truncated to its high watermark finds P too."""
    journal = LogOffsetsJournal(tmp_path, compact_bytes=16 << 10)
    state = ProducerStateManager(TP)
    state.journal = journal.record_producer_batches
    state.journal_snapshot = journal.record_producer_snapshot
    state.high_watermark = 0
    journal.record(TP, 0, 0)

    def set_hw(offset: int) -> None:
        state.high_watermark = offset
        journal.record(TP, offset, offset)

    leo = _write(state, set_hw)
    journal.record(TP, leo, 40)
    journal.close()
    journal = LogOffsetsJournal(tmp_path, compact_bytes=16 << 10)
    recovered = journal.recovered()[TP]
    assert recovered == (leo, 40)
    assert recovered.producer_snapshots == state.snapshot_offsets  # type: ignore[attr-defined]
    restarted = ProducerStateManager(TP)
    restarted.high_watermark = 40
    restarted.restore(recovered.producers, leo, 2_000, EXPIRATION_MS,  # type: ignore[attr-defined]
                      recovered.producer_snapshots)  # type: ignore[attr-defined]
    restarted.truncate(40)
    assert restarted.producers[P].last_seq == 4 and restarted.producers[Q].last_seq == 34
    journal.close()


def test_a_high_watermark_in_step_keeps_the_last_four_and_a_stuck_one_is_bounded() -> None:
    """What is kept: the last 4 when the high watermark follows the log end (no more memory than before); at most
    `MAX_UNCOMMITTED_SNAPSHOTS` snapshots, and their batches, when it stays at 0."""
    snapshots = [32 * i for i in range(1, 30)]
    in_step = list(snapshots)
    prune_snapshots(in_step, snapshots[-1] + 5)
    assert in_step == snapshots[-MAX_PRODUCER_SNAPSHOTS:]
    unknown = list(snapshots)
    prune_snapshots(unknown, None)
    assert unknown == snapshots[-MAX_PRODUCER_SNAPSHOTS:]
    lagging = list(snapshots)
    prune_snapshots(lagging, snapshots[-7] + 1)
    assert lagging == snapshots[-7:]
    stuck = list(snapshots)
    prune_snapshots(stuck, 0)
    assert stuck == snapshots[-MAX_UNCOMMITTED_SNAPSHOTS:]

    state = ProducerStateManager(TP)
    state.high_watermark = 0
    for seq in range(3 * MAX_UNCOMMITTED_SNAPSHOTS * PRODUCER_SNAPSHOT_INTERVAL):
        _append(state, Q, seq, seq)
    assert len(state.snapshot_offsets) == MAX_UNCOMMITTED_SNAPSHOTS
    bound = (MAX_UNCOMMITTED_SNAPSHOTS + 1) * PRODUCER_SNAPSHOT_INTERVAL + NUM_BATCHES_TO_RETAIN + 1
    assert len(state.retained()) <= bound + bound // 4 + 16
