"""Producer snapshots (`producer_state.PRODUCER_SNAPSHOT_INTERVAL`): a truncation below all of a producer's last 5
batches finds its last batch below the truncation, as Kafka's ``truncateAndReload`` (latest snapshot at or below the
offset, then the log replayed) does, in memory and after a restart from the journal, down to the oldest snapshot
kept; the index and the journal stay bounded."""

from __future__ import annotations

from pathlib import Path

import pytest

from zkcontroller.broker.log_offsets_journal import JOURNAL_NAME, LogOffsetsJournal
from zkcontroller.broker.producer_state import (
    MAX_PRODUCER_SNAPSHOTS,
    NUM_BATCHES_TO_RETAIN,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    PRODUCER_SNAPSHOT_INTERVAL,
    ProducerBatch,
    ProducerStateError,
    ProducerStateManager,
)
from zkcontroller.model import TopicPartition

TP = TopicPartition("orders", 0)
P, Q = 7, 8
EXPIRATION_MS = 604_800_000


class Log:
    """A log end offset with its producer state, written through to a journal when given one."""

    def __init__(self, journal: LogOffsetsJournal | None = None) -> None:
        self.state = ProducerStateManager(TP)
        self.leo = 0
        self.journal = journal
        if journal is not None:
            self.state.journal = journal.record_producer_batches
            self.state.journal_snapshot = journal.record_producer_snapshot
            journal.record(TP, 0, 0)

    def append(self, pid: int, seq: int) -> None:
        assert self.state.append([ProducerBatch(pid, 0, seq, 1, 1_000)], self.leo) is None
        self.leo += 1
        if self.journal is not None:
            self.journal.record(TP, self.leo, self.leo)

    def truncate(self, offset: int) -> None:
        self.leo = offset
        if self.journal is not None:
            self.journal.record(TP, offset, offset)
        self.state.truncate(offset)

    def last_seq(self, pid: int) -> int | None:
        entry = self.state.producers.get(pid)
        return None if entry is None else entry.last_seq

    def next_is_checked(self, pid: int) -> None:
        """The producer's entry refuses a gap in its sequences (a forgotten producer would accept it)."""
        last = self.last_seq(pid)
        assert last is not None
        with pytest.raises(ProducerStateError) as refused:
            self.state.append([ProducerBatch(pid, 0, last + 2, 1, 1_000)], self.leo)
        assert refused.value.error == OUT_OF_ORDER_SEQUENCE_NUMBER


def test_a_truncation_below_a_producers_last_five_batches_keeps_its_entry_in_memory() -> None:
    """70 batches of one producer: the index used to keep its last 5 only once compacted (64), so a truncation to
    50 forgot it and it could go on at any sequence; Kafka replays its log and finds seq 49."""
    log = Log()
    for seq in range(70):
        log.append(P, seq)
    log.truncate(50)
    assert log.last_seq(P) == 49
    assert len(log.state.producers[P].batches) == NUM_BATCHES_TO_RETAIN  # seq 45-49: retries are duplicates
    log.next_is_checked(P)


def test_a_truncation_before_or_after_a_restart_keeps_the_entry(tmp_path: Path) -> None:
    """The same through the journal: it used to read back each producer's last 5 only, so a truncation below them,
    journaled before the restart or made after it, left no entry."""
    journal = LogOffsetsJournal(tmp_path)
    log = Log(journal)
    for seq in range(70):
        log.append(P, seq)
    log.truncate(60)
    journal.close()
    for truncate_after_restart in (None, 50):
        journal = LogOffsetsJournal(tmp_path)
        recovered = journal.recovered()[TP]
        restarted = Log()
        restarted.leo = recovered[0]
        restarted.state.restore(recovered.producers, restarted.leo, 2_000, EXPIRATION_MS,
                                recovered.producer_snapshots)
        assert (restarted.leo, restarted.last_seq(P)) == (60, 59)
        if truncate_after_restart is not None:
            restarted.truncate(truncate_after_restart)
            assert restarted.last_seq(P) == 49
        restarted.next_is_checked(P)
        journal.close()


def test_truncations_find_the_last_batch_down_to_the_oldest_snapshot_and_the_index_stays_bounded(
        tmp_path: Path) -> None:
    """P writes 5 batches, Q many, then P 5 more: snapshots every `PRODUCER_SNAPSHOT_INTERVAL` batches, the last
    `MAX_PRODUCER_SNAPSHOTS` kept. A truncation above the oldest finds P's seq 4 (kept as that snapshot's entry for
    it) and Q's last batch below it; the index, and the journal read back, hold about the snapshots' batches only."""
    journal = LogOffsetsJournal(tmp_path, compact_bytes=64 << 10)
    log = Log(journal)
    for seq in range(5):
        log.append(P, seq)
    q_batches = (MAX_PRODUCER_SNAPSHOTS + 3) * PRODUCER_SNAPSHOT_INTERVAL
    for seq in range(q_batches):
        log.append(Q, seq)  # Q's seq n at offset n + 5
    for seq in range(5, 10):
        log.append(P, seq)
    snapshots = log.state.snapshot_offsets
    assert len(snapshots) == MAX_PRODUCER_SNAPSHOTS
    bound = (MAX_PRODUCER_SNAPSHOTS + 1) * PRODUCER_SNAPSHOT_INTERVAL + 2 * (NUM_BATCHES_TO_RETAIN + 1)
    assert len(log.state.retained()) <= bound + bound // 4 + 16  # compacted a quarter past what it kept
    journal.close()
    journal = LogOffsetsJournal(tmp_path, compact_bytes=64 << 10)
    assert len(journal.recovered()[TP].producers) <= bound
    assert journal.recovered()[TP].producer_snapshots == snapshots
    journal.close()
    assert (tmp_path / JOURNAL_NAME).stat().st_size < 2 * (64 << 10)
    target = snapshots[0] + 3
    log.truncate(target)
    assert (log.last_seq(P), log.last_seq(Q)) == (4, target - 1 - 5)
    assert log.state.snapshot_offsets == (snapshots[0],)
    log.next_is_checked(P)
