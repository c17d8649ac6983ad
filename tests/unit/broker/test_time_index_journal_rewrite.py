"""The journal writes a hosted log's time index from the partition's own index (`LogOffsetsJournal.attach_time_index`)
and keeps no second copy of it; a rewrite holds what the index holds, so the file stays within twice that (or
``compact_bytes``) however many batches are produced; a record's own entry (first = max) is one ``offset:timestamp``
item, and lines of the older ``base:first:max`` form are still read."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from zkcontroller.broker.log_offsets_journal import JOURNAL_NAME, LogOffsetsJournal
from zkcontroller.broker.partition import TimeIndex
from zkcontroller.broker.produce import ProducePartition, produce
from zkcontroller.broker.replica_manager import ReplicaManager
from zkcontroller.protocol.inter_broker import TimeIndexEntry

from .replica_helpers import Brokers, state
from .test_produce_replica_manager import KNOWN
from .test_producer_state_restart import journaled, restart
from .test_time_index_journal import TP, batch, entries, look_up, produce_batches, replicate


async def produce_many(rm: ReplicaManager, n: int, step: int) -> None:
    for k in range(n):
        [answer] = await produce(8, 1, 30_000, "c", [ProducePartition("t", 0, batch([10_000 + 10 * k + step * i
                                                                                      for i in range(3)]))],
                                 cache=KNOWN, target=rm.produce_target())  # type: ignore[arg-type]
        assert answer.error == 0


async def test_a_hosted_log_s_index_is_not_copied_into_the_journal(brokers: Brokers, tmp_path: Path) -> None:
    """Leader and follower alike: the journal holds no entry of its own for a hosted log, and a rewrite writes the
    partition's index. Before: the journal kept a copy of every entry of every index (twice the memory)."""
    journals = {b: journaled(brokers, b, tmp_path / str(b)) for b in (1, 2)}
    brokers.lead(state())
    await produce_batches(brokers.rms[1])
    await replicate(brokers)
    for b, journal in journals.items():
        partition = brokers.rms[b].partition(TP)
        assert partition is not None and len(partition.time_index) == 4
        assert sum(len(times) for times in journal._times.values()) == 0, b  # before: 4
        journal._rewrite()
        journal.close()
        text = (tmp_path / str(b) / JOURNAL_NAME).read_text()
        assert "t\t0\ttimes\t0:1000,1:2000,2:4000,4:5000\n" in text, (b, text)


async def test_a_restart_from_a_rewritten_journal_answers_as_before(brokers: Brokers, tmp_path: Path) -> None:
    """Rewritten many times while producing (a small ``compact_bytes``), from the partition's index; the restarted
    leader answers every lookup as before."""
    journal = journaled(brokers, 1, tmp_path)
    journal.compact_bytes = 2_000
    journal._rewrite_at = 2_000
    brokers.lead(state())
    await produce_batches(brokers.rms[1])
    await produce_many(brokers.rms[1], 50, 1)
    await replicate(brokers)
    before = look_up(brokers.rms[1])
    targets = [10_005, 10_006, 10_251, 10_500]
    index = brokers.rms[1].partition(TP).time_index  # type: ignore[union-attr]
    kept = index.entries()
    answers = [index.lookup(t) for t in targets]
    assert answers[:3] == [(10_010, 8), (10_010, 8), (10_251, 81)]  # the records inside the batches
    journal.close()
    again = LogOffsetsJournal(tmp_path)
    assert entries(again, TP) == kept
    leader = restart(brokers, 1, again.recovered(), again)
    try:
        assert look_up(leader) == before
        assert [leader.partition(TP).time_index.lookup(t) for t in targets] == answers  # type: ignore[union-attr]
    finally:
        again.close()


@pytest.mark.parametrize("step", [0, 1])
async def test_the_journal_stays_within_twice_its_rewrite(brokers: Brokers, tmp_path: Path, step: int) -> None:
    """400 batches: the file never holds more than twice what a rewrite writes (the index and the offsets), or
    ``compact_bytes``, plus the line that tipped it."""
    journal = journaled(brokers, 1, tmp_path)
    journal.compact_bytes = 4_096
    journal._rewrite_at = 4_096
    brokers.lead(state())
    path = tmp_path / JOURNAL_NAME
    for _ in range(8):
        await produce_many(brokers.rms[1], 50, step)
        size = path.stat().st_size
        rewrite_size = journal._rewrite_at // 2 if journal._rewrite_at > journal.compact_bytes else 0
        assert size <= max(journal.compact_bytes, 2 * rewrite_size) + 200, (size, rewrite_size)
    journal.close()


def test_record_entries_are_written_short_and_both_forms_read_back(tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    journal = LogOffsetsJournal(tmp_path)
    journal.record_time_index(TP, [TimeIndexEntry(0, 5, 5)])
    journal.record_time_index(TP, [TimeIndexEntry(1, 6, 9), TimeIndexEntry(3, 10, 10)])
    journal.record(TP, 5, 5)
    journal.close()
    text = (tmp_path / JOURNAL_NAME).read_text()
    assert "t\t0\ttimes\t0:5\n" in text and "t\t0\ttimes\t1:6:9,3:10\n" in text
    with (tmp_path / JOURNAL_NAME).open("a") as f:
        f.write("t\t0\ttimes\t4:11:11\n")  # the older form
        f.write("t\t0\ttimes\t4:-3\n")  # a negative timestamp: refused with its line
        f.write("t\t0\t6\t6\n")
    with caplog.at_level(logging.WARNING, "kafka.log.LogManager"):
        again = LogOffsetsJournal(tmp_path)
    assert entries(again, TP) == (TimeIndexEntry(0, 5, 5), TimeIndexEntry(1, 6, 9), TimeIndexEntry(3, 10, 10),
                                  TimeIndexEntry(4, 11, 11))
    assert any("line 5" in r.getMessage() for r in caplog.records), caplog.text
    again.close()


async def test_a_restart_copies_the_journal_s_index_as_arrays(brokers: Brokers, tmp_path: Path) -> None:
    """The index read back reaches the restarted partition as the journal's `TimeIndex` (``time_index_source``),
    copied array to array (before: a tuple of entries per log, a Python object per entry, built for every log the
    restart found), and the journal's copy goes once the partition's is attached."""
    journal = journaled(brokers, 1, tmp_path)
    brokers.lead(state())
    await produce_batches(brokers.rms[1])
    await replicate(brokers)
    before = look_up(brokers.rms[1])
    journal.close()
    again = LogOffsetsJournal(tmp_path)
    source = again.recovered()[TP].time_index_source
    assert source is not None and len(source) == 4
    leader = restart(brokers, 1, again.recovered(), again)
    try:
        index = leader.partition(TP).time_index  # type: ignore[union-attr]
        assert index.entries() == source.entries() and index._offset is not source._offset
        assert again._times == {} and again._indexes[TP] is index
        assert look_up(leader) == before
    finally:
        again.close()


def test_copy_below_keeps_the_entries_below_the_log_end() -> None:
    source = TimeIndex()
    for entry in ((0, 5, 9), (3, 10, 10), (5, 11, 20), (8, 30, 30)):
        source.append(*entry)
    copied = TimeIndex()
    copied.copy_below(source, 6)
    assert copied.entries() == (TimeIndexEntry(0, 5, 9), TimeIndexEntry(3, 10, 10), TimeIndexEntry(5, 11, 20))
    copied.truncate(5)
    assert source.entries()[2] == TimeIndexEntry(5, 11, 20)  # the source's arrays are not shared
    later = TimeIndex()
    later.append(0, 1, 1)
    later.copy_below(source, 9)  # not empty: by append's rule
    assert later.entries() == (TimeIndexEntry(0, 1, 1), TimeIndexEntry(3, 10, 10), TimeIndexEntry(5, 11, 20),
                               TimeIndexEntry(8, 30, 30))
