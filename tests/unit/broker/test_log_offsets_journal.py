"""A broker process's "disk" (`LogOffsetsJournal`): offsets written through survive the process, a deleted log
does not come back, a torn last line is skipped with a warning, the journal compacts, and the log dir is locked
against a second broker as Kafka's LogManager locks it."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from zkcontroller.broker.log_offsets_journal import JOURNAL_NAME, LogDirLockedError, LogOffsetsJournal
from zkcontroller.model import TopicPartition

A0 = TopicPartition("a", 0)


def test_changes_written_through_survive_a_sigkill_of_the_process(tmp_path: Path) -> None:
    """Written by a process that then SIGKILLs itself: the next run reads what it wrote, its lock gone with it."""
    script = f"""
import os, signal
from zkcontroller.broker.log_offsets_journal import LogOffsetsJournal
from zkcontroller.broker.partition import Partition
from zkcontroller.model import TopicPartition
journal = LogOffsetsJournal({str(tmp_path / "logs")!r})
partition = Partition(TopicPartition("a", 0), 1)
partition.journal = journal.record
partition.log_end_offset = 123
partition.high_watermark = 120
journal.record(TopicPartition("a", 1), 7, 7)
journal.forget(TopicPartition("a", 1))
os.kill(os.getpid(), signal.SIGKILL)
"""
    done = subprocess.run([sys.executable, "-c", script], timeout=60)
    assert done.returncode == -signal.SIGKILL
    again = LogOffsetsJournal(tmp_path / "logs")
    assert again.recovered() == {A0: (123, 120)}  # a1 was deleted: it does not come back
    again.close()


def test_a_torn_line_is_skipped_and_reported(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / JOURNAL_NAME).write_text("a\t0\t5\t5\na\t1\t9")  # the machine went down mid-line
    with caplog.at_level(logging.WARNING, "kafka.log.LogManager"):
        journal = LogOffsetsJournal(tmp_path)
    assert journal.recovered() == {A0: (5, 5)}
    assert any("Skipping unreadable line 2" in r.getMessage() for r in caplog.records)
    journal.close()


def test_it_compacts_to_one_line_per_partition(tmp_path: Path) -> None:
    journal = LogOffsetsJournal(tmp_path, compact_bytes=200)
    for offset in range(100):
        journal.record(A0, offset, offset)
    assert (tmp_path / JOURNAL_NAME).stat().st_size < 200
    journal.close()
    again = LogOffsetsJournal(tmp_path)
    assert again.recovered() == {A0: (99, 99)}
    again.close()


def test_a_second_broker_on_the_same_log_dir_is_refused(tmp_path: Path) -> None:
    first = LogOffsetsJournal(tmp_path)
    with pytest.raises(LogDirLockedError, match=r"^Failed to acquire lock on file \.lock in .*\. A Kafka instance in "
                                                r"another process or thread is using this directory\.$"):
        LogOffsetsJournal(tmp_path)
    first.close()
    LogOffsetsJournal(tmp_path).close()  # free again once the first has stopped
