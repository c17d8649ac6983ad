"""The journal's producer snapshots and rewrites: a truncation drops snapshots above the log end even when no batch
lies beyond it (the snapshot line a later snapshot at the same offset made was refused on the next read, losing
all), a snapshot offset not after the last one kept is skipped with a warning naming the file and line, and once
what is kept outgrows ``compact_bytes`` the rewrites are amortized (every write used to rewrite)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zkcontroller.broker.log_offsets_journal import JOURNAL_NAME, LogOffsetsJournal
from zkcontroller.broker.producer_state import PRODUCER_SNAPSHOT_INTERVAL, ProducerBatch, ProducerStateManager
from zkcontroller.model import TopicPartition

TP = TopicPartition("t", 0)
EXPIRATION_MS = 1_000


def wired(journal: LogOffsetsJournal) -> ProducerStateManager:
    state = ProducerStateManager(TP)
    state.journal = journal.record_producer_batches
    state.journal_snapshot = journal.record_producer_snapshot
    state.journal_expired = journal.record_expired_producers
    return state


def test_snapshots_stay_right_after_expiry_restart_and_truncation(tmp_path: Path) -> None:
    """A producer's batches expire (the journal drops them: its ``end`` comes from batches only), a restart, a
    truncation below the snapshot, and a new snapshot at the same offset: the journal kept the old one too
    (``snapshots 32,32``), and the next open refused that line and lost every snapshot."""
    journal = LogOffsetsJournal(tmp_path)
    state = wired(journal)
    journal.record(TP, 0, 0)
    for seq in range(PRODUCER_SNAPSHOT_INTERVAL):
        assert state.append([ProducerBatch(7, 0, seq, 1, 1_000)], seq) is None
        journal.record(TP, seq + 1, seq + 1)
    journal.record(TP, 200, 200)
    state.remove_expired(10**12, EXPIRATION_MS)
    journal.close()
    journal = LogOffsetsJournal(tmp_path)
    recovered = journal.recovered()[TP]
    state = wired(journal)
    state.restore(recovered.producers, recovered[0], 10**12, EXPIRATION_MS,
                  recovered.producer_snapshots)
    assert state.snapshot_offsets == (PRODUCER_SNAPSHOT_INTERVAL,)
    state.truncate(0)
    journal.record(TP, 0, 0)
    assert journal.recovered()[TP].producer_snapshots == ()
    for seq in range(PRODUCER_SNAPSHOT_INTERVAL):
        assert state.append([ProducerBatch(8, 0, seq, 1, 10**12)], seq) is None
        journal.record(TP, seq + 1, seq + 1)
    assert journal.recovered()[TP].producer_snapshots == state.snapshot_offsets
    journal.close()
    for _ in range(2):  # the open rewrites: the second reads the first's rewrite
        journal = LogOffsetsJournal(tmp_path)
        assert journal.recovered()[TP].producer_snapshots == state.snapshot_offsets
        journal.close()


def test_a_snapshot_offset_not_after_the_last_kept_is_skipped_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A stale line (``32,32``) or a torn one read as a smaller offset (``12`` for ``128``): the offsets after the
    last kept are kept, the others skipped, the line is not lost whole."""
    path = tmp_path / JOURNAL_NAME
    path.write_text("t\t0\t300\t300\nt\t0\tsnapshots\t32,32,64\nt\t0\tsnapshots\t96\nt\t0\tsnapshots\t12")
    journal = LogOffsetsJournal(tmp_path)
    assert journal.recovered()[TP].producer_snapshots == (32, 64, 96)
    journal.close()
    assert (f"Skipping producer snapshot offset 32 of t-0 on line 2 of {path}: not after the last one kept (32)"
            in caplog.messages)
    assert (f"Skipping producer snapshot offset 12 of t-0 on line 4 of {path}: not after the last one kept (96)"
            in caplog.messages)


def test_rewrites_are_amortized_once_what_is_kept_outgrows_compact_bytes(tmp_path: Path) -> None:
    """``compact_bytes`` 1 KiB, a producer's kept batches several KiB: after a rewrite the next waits until the
    journal doubles, so 2,000 offset writes rewrite a handful of times, not 2,000."""
    journal = LogOffsetsJournal(tmp_path, compact_bytes=1 << 10)
    rewrites = 0
    rewrite = journal._rewrite

    def counting() -> None:
        nonlocal rewrites
        rewrites += 1
        rewrite()

    journal._rewrite = counting  # type: ignore[method-assign]
    state = wired(journal)
    journal.record(TP, 0, 0)
    leo = 0
    for seq in range(4 * PRODUCER_SNAPSHOT_INTERVAL):
        assert state.append([ProducerBatch(7, 0, seq, 1, 1_000)], leo) is None
        leo += 1
        journal.record(TP, leo, leo)
    kept = (tmp_path / JOURNAL_NAME).stat().st_size
    assert len(journal.recovered()[TP].producers) > 64
    rewrites = 0
    for _ in range(2000):
        journal.record(TP, leo, leo)
    assert rewrites <= 2000 * 16 // kept + 2, (rewrites, kept)
    assert rewrites <= 20
    journal.close()
    assert (tmp_path / JOURNAL_NAME).stat().st_size <= 4 * kept
