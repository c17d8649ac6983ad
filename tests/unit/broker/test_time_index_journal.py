"""The time index kept across a broker restart, as Kafka keeps it in its ``.timeindex`` files: each entry the index
keeps is journaled (`LogOffsetsJournal.record_time_index`, hooked on `TimeIndex.journal`), trimmed by a truncation,
kept by a rewrite, dropped with a deleted log, and restored into the restarted broker's partitions. Before, a restarted
broker started with an empty index and answered ListOffsets by timestamp with offset -1 for every record appended
before the restart, leader or follower."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder

from zkcontroller.broker.list_offsets import list_offsets
from zkcontroller.broker.log_offsets_journal import JOURNAL_NAME, LogOffsetsJournal
from zkcontroller.broker.produce import ProducePartition, produce
from zkcontroller.broker.replica_manager import ReplicaManager
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.inter_broker import TimeIndexEntry
from zkcontroller.protocol.wire.client_apis import OffsetAnswer, OffsetQuery

from .replica_helpers import Brokers, state
from .test_produce_replica_manager import KNOWN
from .test_producer_state_restart import journaled, restart

TP = TopicPartition("t", 0)
CONSUMER = -1
BATCHES = [[1_000], [2_000, 4_000, 3_000], [5_000]]
"""Offsets 0, 1-3 and 4: the index keeps the running maxima (0, 1000), (1, 2000), (2, 4000), (4, 5000)."""
TARGETS = [500, 1_000, 1_500, 3_500, 4_001, 5_000, 5_001]


def batch(timestamps: list[int]) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    for i, timestamp in enumerate(timestamps):
        builder.append(timestamp=timestamp, key=None, value=b"%d" % i)
    builder.close()
    return bytes(builder.buffer())


async def produce_batches(rm: ReplicaManager) -> None:
    for timestamps in BATCHES:
        [answer] = await produce(8, 1, 30_000, "c", [ProducePartition("t", 0, batch(timestamps))],
                                 cache=KNOWN, target=rm.produce_target())  # type: ignore[arg-type]
        assert answer.error == 0


async def replicate(brokers: Brokers) -> None:
    """The followers fetch the batches, then tell the leader their log end, then learn its high watermark (5)."""
    for _ in range(3):
        await brokers.fetch_all()


def look_up(rm: ReplicaManager) -> list[OffsetAnswer]:
    """ListOffsets v5 by each of `TARGETS` (one request each: a partition asked twice is refused), as a consumer
    (up to the high watermark)."""
    return [answer for t in TARGETS
            for answer in list_offsets(5, CONSUMER, 0, [OffsetQuery("t", 0, t)], partition=rm.partition, cache=None)]


FOUND = [(1_000, 0), (1_000, 0), (2_000, 1), (4_000, 2), (5_000, 4), (5_000, 4), (-1, -1)]
"""Kafka's answers: 3,500 names the record at offset 2 (4,000) inside the second batch."""


def found(answers: list[OffsetAnswer]) -> list[tuple[int, int]]:
    assert all(a.error == 0 for a in answers)
    return [(a.timestamp, a.offset) for a in answers]


async def test_a_leader_restarted_from_its_journal_answers_by_timestamp_as_before(brokers: Brokers,
                                                                                   tmp_path: Path) -> None:
    """Broker 1 leads, appends three batches, its followers fetch them (HW 5); restarted from its journal and elected
    again, it answers every lookup as before (offset, timestamp and leader epoch). Before: offset -1 for each."""
    journal = journaled(brokers, 1, tmp_path)
    brokers.lead(state())
    await produce_batches(brokers.rms[1])
    await replicate(brokers)
    before = look_up(brokers.rms[1])
    assert found(before) == FOUND
    journal.close()
    written = (tmp_path / JOURNAL_NAME).read_text()
    again = LogOffsetsJournal(tmp_path)
    leader = restart(brokers, 1, again.recovered(), again)
    try:
        assert look_up(leader) == before
    finally:
        again.close()
    assert written.count("\ttimes\t") == 3  # one line per entry, one per batch here


async def test_a_follower_restarted_from_its_journal_keeps_the_entries_it_fetched(brokers: Brokers,
                                                                                   tmp_path: Path) -> None:
    """Broker 2 fetches the leader's three batches with their index entries, then truncates to 4 (as on a diverging
    epoch); restarted from its journal and elected, it answers as the old leader did below offset 4 and finds
    nothing at or beyond the truncated batch. Before: nothing at all."""
    journal = journaled(brokers, 2, tmp_path)
    brokers.lead(state())
    await produce_batches(brokers.rms[1])
    await replicate(brokers)
    before = look_up(brokers.rms[1])
    follower = brokers.rms[2].partition(TP)
    assert follower is not None and follower.time_index.entries_in(0, 5) == (
        TimeIndexEntry(0, 1_000, 1_000), TimeIndexEntry(1, 2_000, 2_000), TimeIndexEntry(2, 4_000, 4_000),
        TimeIndexEntry(4, 5_000, 5_000))
    follower.truncate_to(4)
    journal.close()
    assert (tmp_path / JOURNAL_NAME).read_text().count("\ttimes\t") == 1  # the three batches came in one answer
    again = LogOffsetsJournal(tmp_path)
    leader = restart(brokers, 2, again.recovered(), again)
    try:
        after = look_up(leader)
        assert after[:4] == before[:4]
        assert found(after) == [*FOUND[:4], (-1, -1), (-1, -1), (-1, -1)]
    finally:
        again.close()


async def test_an_in_process_restart_keeps_the_time_index(brokers: Brokers) -> None:
    """The in-process restart (LocalCluster, the simulator: `ReplicaManager.log_offsets`) carries the index too."""
    brokers.lead(state())
    await produce_batches(brokers.rms[1])
    await replicate(brokers)
    before = look_up(brokers.rms[1])
    leader = restart(brokers, 2, brokers.rms[2].log_offsets())
    assert look_up(leader) == before


async def test_a_leader_killed_at_any_line_restarts_with_every_batch_below_its_log_end_indexed(
        brokers: Brokers, tmp_path: Path) -> None:
    """A SIGKILL may stop the journal after any line: whatever the restart reads, each batch below the log end it
    reads back is indexed (Kafka writes a batch's time index entry before it moves the log end). With the log end's
    line first, a kill between it and the batch's times line left that batch below the log end unindexed for good."""
    journal = journaled(brokers, 1, tmp_path / "live")
    brokers.lead(state())
    await produce_batches(brokers.rms[1])
    journal.close()
    lines = (tmp_path / "live" / JOURNAL_NAME).read_text().splitlines(keepends=True)
    bases = [0, 1, 2, 4]  # each running maximum's offset (`BATCHES`: 1, 3 and 1 records, every max higher)
    for cut in range(len(lines) + 1):
        crashed = tmp_path / f"cut-{cut}"
        crashed.mkdir()
        (crashed / JOURNAL_NAME).write_text("".join(lines[:cut]))
        read_back = LogOffsetsJournal(crashed)
        try:
            log_end = read_back.recovered()[TP][0] if TP in read_back.recovered() else 0
            indexed = [entry.base_offset for entry in entries(read_back, TP)] if log_end else []
        finally:
            read_back.close()
        assert indexed == [base for base in bases if base < log_end], (cut, lines[:cut])


def entries(journal: LogOffsetsJournal, tp: TopicPartition) -> tuple[TimeIndexEntry, ...]:
    return journal.recovered()[tp].time_index  # type: ignore[attr-defined, no-any-return]


def test_the_journal_keeps_the_index_through_truncation_and_rewrite(tmp_path: Path) -> None:
    """Entries read back as the index kept them: lines after their log end's line (as an older leader wrote them),
    trimmed by a lower log end
    and appended again after it; a follower's (before its log end's line), the last one dropped when its log end
    never came; a rewrite keeps them, one line per log; a deleted log's do not come back."""
    a0, a1 = TP, TopicPartition("t", 1)
    journal = LogOffsetsJournal(tmp_path, compact_bytes=2_000)
    for end, (base, first, largest) in zip((1, 4, 5), ((0, 1_000, 1_000), (1, 2_000, 4_000), (4, 5_000, 5_000)),
                                           strict=True):
        journal.record(a0, end, 0)
        journal.record_time_index(a0, [TimeIndexEntry(base, first, largest)])
    journal.record(a0, 4, 4)  # truncation: the entry at 4 goes
    journal.record(a0, 6, 4)
    # below the truncated entry's max: kept, the index having been trimmed
    journal.record_time_index(a0, [TimeIndexEntry(4, 4_500, 4_600)])
    journal.record_time_index(a1, [TimeIndexEntry(0, 10, 20)])
    journal.record(a1, 2, 2)
    journal.record_time_index(a1, [TimeIndexEntry(2, 30, 40)])  # the follower died before the log end holding it
    journal.close()
    kept = (TimeIndexEntry(0, 1_000, 1_000), TimeIndexEntry(1, 2_000, 4_000), TimeIndexEntry(4, 4_500, 4_600))
    again = LogOffsetsJournal(tmp_path, compact_bytes=2_000)
    assert entries(again, a0) == kept
    assert entries(again, a1) == (TimeIndexEntry(0, 10, 20),)
    for offset in range(6, 100):  # past compact_bytes: rewritten whole
        again.record(a0, offset, offset)
    again.close()
    text = (tmp_path / JOURNAL_NAME).read_text()
    assert text.count("\ttimes\t") == 2 and "t\t0\ttimes\t0:1000,1:2000:4000,4:4500:4600\n" in text
    third = LogOffsetsJournal(tmp_path)
    assert entries(third, a0) == kept and entries(third, a1) == (TimeIndexEntry(0, 10, 20),)
    third.forget(a0)
    third.record(a0, 1, 1)  # the log created again: its old entries do not come back
    third.close()
    fourth = LogOffsetsJournal(tmp_path)
    assert entries(fourth, a0) == () and entries(fourth, a1) == (TimeIndexEntry(0, 10, 20),)
    fourth.close()


def test_a_rewrite_after_a_truncation_in_the_same_run_keeps_the_entry_appended_again(tmp_path: Path) -> None:
    """The rewrite writes the journal's own copy of the index: the truncation must have trimmed that copy too, or
    the copy keeps the truncated batch's entry, refuses the one appended again at its offset, and a restart answers
    with the old batch's timestamps."""
    journal = LogOffsetsJournal(tmp_path, compact_bytes=400)
    journal.record(TP, 5, 5)
    journal.record_time_index(TP, [TimeIndexEntry(4, 5_000, 5_000)])
    journal.record(TP, 4, 4)  # truncation: the entry at 4 goes
    journal.record(TP, 5, 4)
    journal.record_time_index(TP, [TimeIndexEntry(4, 4_500, 4_600)])
    for offset in range(5, 40):  # past compact_bytes: rewritten whole, from the copy, in this run
        journal.record(TP, offset, offset)
    journal.close()
    text = (tmp_path / JOURNAL_NAME).read_text()
    assert "t\t0\ttimes\t4:4500:4600\n" in text and "5000" not in text
    again = LogOffsetsJournal(tmp_path)
    try:
        assert entries(again, TP) == (TimeIndexEntry(4, 4_500, 4_600),)
    finally:
        again.close()


def test_a_journal_from_before_gives_an_empty_index(tmp_path: Path) -> None:
    (tmp_path / JOURNAL_NAME).write_text("t\t0\t3\t3\nt\t0\tepochs\t0:0\n")
    journal = LogOffsetsJournal(tmp_path)
    assert journal.recovered() == {TP: (3, 3)} and entries(journal, TP) == ()
    journal.close()


def test_a_bad_times_line_is_skipped_with_a_warning_losing_nothing_else(tmp_path: Path,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    """An unreadable line (a torn tail, a first timestamp above the max, a negative offset) and an entry not after
    the last one kept (a stale line) are each reported with the file and line, and skipped; the rest is kept."""
    (tmp_path / JOURNAL_NAME).write_text(
        "t\t0\t9\t9\n"
        "t\t0\ttimes\t0:100:100\n"
        "t\t0\ttimes\t1:x:200\n"
        "t\t0\ttimes\t1:300:200\n"
        "t\t0\ttimes\t-1:100:200\n"
        "t\t0\ttimes\t2:50:50,3:300:300\n"
        "t\t0\ttimes\t5:400:400\n"
        "t\t0\ttimes\t6:1:9223372036854775808\n"  # past a Java long: once an OverflowError at start-up
        "t\t0\ttimes\t6:-9223372036854775809:500\n"
        "t\t0\ttimes\t9223372036854775808:1:500\n")
    with caplog.at_level(logging.WARNING, "kafka.log.LogManager"):
        journal = LogOffsetsJournal(tmp_path)
    try:
        assert entries(journal, TP) == (TimeIndexEntry(0, 100, 100), TimeIndexEntry(3, 300, 300),
                                        TimeIndexEntry(5, 400, 400))
        assert journal.recovered()[TP] == (9, 9)
    finally:
        journal.close()
    path = str(tmp_path / JOURNAL_NAME)
    warnings = [r.getMessage() for r in caplog.records]
    for line in (3, 4, 5, 8, 9, 10):
        assert any(f"line {line} of {path}" in w for w in warnings), warnings
    assert any("TimeIndexEntry(base_offset=2" in w and f"line 6 of {path}" in w for w in warnings), warnings
    assert len(warnings) == 7
