"""What a broker process's "disk" keeps of its logs: each partition's log end offset and high watermark, in a
journal in its first log dir, so a restarted process leads and follows from where it stopped.

The data plane keeps offsets, not records; Kafka keeps the records in its log segments and the high watermark in
``replication-offset-checkpoint``, both in the page cache, which a SIGKILL of the process does not lose. A
broker that restarted empty and kept its leadership (its old session expired after the new process registered)
answered high watermark 0, and its followers truncated acknowledged records to it. So every change is written
through at once with a plain ``write`` (no fsync: as Kafka, a machine crash may lose the tail, a process crash
does not). The journal is one line per change (``topic<TAB>partition<TAB>leo<TAB>hw``, a deleted partition's
offsets -1), read back last-line-wins, rewritten whole when it grows past ``compact_bytes``.

It also keeps each log's leader epoch cache (Kafka's ``leader-epoch-checkpoint``), one line per change of it
(``topic<TAB>partition<TAB>epochs<TAB>epoch:start,epoch:start,...``, rare: a new epoch or a truncation), so a
restarted follower knows its last epoch and keeps its log for truncation on fetch instead of truncating to its
high watermark. A journal from before (no such lines) gives no epochs.

The log dir is locked as Kafka's ``LogManager`` locks it (``.lock``): two brokers on one machine with the same
``log.dirs`` (the default /tmp/kafka-logs) would otherwise share one journal.
"""

from __future__ import annotations

import fcntl
import logging
import os
from itertools import pairwise
from pathlib import Path

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.inter_broker import EpochEntry

JOURNAL_NAME = ".zkcontroller-log-offsets"
LOCK_NAME = ".lock"
DEFAULT_COMPACT_BYTES = 16 << 20

log = logging.getLogger("kafka.log.LogManager")


class RecoveredLog(tuple[int, int]):
    """(log end offset, high watermark) of a log a restart finds, with its leader epochs as ``epochs``: a pair
    wherever offsets are expected, carrying the epochs through to the new replica manager unchanged."""

    epochs: tuple[EpochEntry, ...]

    def __new__(cls, log_end_offset: int, high_watermark: int,
                epochs: tuple[EpochEntry, ...] = ()) -> RecoveredLog:
        log = super().__new__(cls, (log_end_offset, high_watermark))
        log.epochs = epochs
        return log


class LogDirLockedError(Exception):
    """Another process holds the log dir (Kafka's ``KafkaException`` from ``lockLogDirs``)."""


class LogOffsetsJournal:
    def __init__(self, log_dir: str | Path, compact_bytes: int = DEFAULT_COMPACT_BYTES) -> None:
        self.dir = Path(log_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock_fd = os.open(self.dir / LOCK_NAME, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock_fd)
            raise LogDirLockedError(
                f"Failed to acquire lock on file .lock in {self.dir}. A Kafka instance in another process or "
                "thread is using this directory.") from None
        self.path = self.dir / JOURNAL_NAME
        self.compact_bytes = compact_bytes
        self._epochs: dict[TopicPartition, tuple[EpochEntry, ...]] = {}
        self._offsets = self._read()
        self._fd = -1
        self._rewrite()

    def recovered(self) -> dict[TopicPartition, tuple[int, int]]:
        """(log end offset, high watermark) per partition, as the last run left them, each a `RecoveredLog`
        carrying the partition's leader epochs."""
        return {tp: RecoveredLog(leo, hw, self._epochs.get(tp, ())) for tp, (leo, hw) in self._offsets.items()}

    def record_epochs(self, tp: TopicPartition, entries: tuple[EpochEntry, ...]) -> None:
        """The partition's leader epoch cache changed (Kafka's checkpoint write), written through."""
        self._epochs[tp] = entries
        self._write(_epochs_line(tp, entries))

    def record(self, tp: TopicPartition, log_end_offset: int, high_watermark: int) -> None:
        """One change, written through (a SIGKILL right after it keeps it)."""
        self._offsets[tp] = (log_end_offset, high_watermark)
        self._write(f"{tp.topic}\t{tp.partition}\t{log_end_offset}\t{high_watermark}\n")

    def forget(self, tp: TopicPartition) -> None:
        """The partition's log was deleted (a deleting StopReplica): a restart must not bring it back."""
        self._epochs.pop(tp, None)
        if self._offsets.pop(tp, None) is not None:
            self._write(f"{tp.topic}\t{tp.partition}\t-1\t-1\n")

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._lock_fd >= 0:
            os.close(self._lock_fd)  # releases the lock
            self._lock_fd = -1

    def _write(self, line: str) -> None:
        if self._fd < 0:
            return  # closed: the broker is stopping
        os.write(self._fd, line.encode())
        self._size += len(line)
        if self._size > self.compact_bytes:
            self._rewrite()

    def _read(self) -> dict[TopicPartition, tuple[int, int]]:
        offsets: dict[TopicPartition, tuple[int, int]] = {}
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return offsets
        for number, raw in enumerate(data.split(b"\n"), 1):
            if not raw:
                continue
            try:
                topic, partition, leo, hw = raw.decode().split("\t")
                tp = TopicPartition(topic, int(partition))
                if leo == "epochs":
                    self._epochs[tp] = _parse_epochs(hw)
                    continue
                offsets_read = (int(leo), int(hw))
            except ValueError:  # a torn last line (the machine, not the process, went down mid-write)
                log.warning("Skipping unreadable line %d of %s: %r", number, self.path, raw[:80])
                continue
            if offsets_read[0] < 0:
                offsets.pop(tp, None)
                self._epochs.pop(tp, None)
            else:
                offsets[tp] = offsets_read
        return offsets

    def _rewrite(self) -> None:
        """The journal as one line per partition, replacing the old one atomically."""
        temporary = self.path.with_suffix(".tmp")
        text = "".join(f"{tp.topic}\t{tp.partition}\t{leo}\t{hw}\n" for tp, (leo, hw) in self._offsets.items())
        text += "".join(_epochs_line(tp, entries) for tp, entries in self._epochs.items()
                        if entries and tp in self._offsets)
        temporary.write_text(text)
        os.replace(temporary, self.path)
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        self._size = len(text)


def _epochs_line(tp: TopicPartition, entries: tuple[EpochEntry, ...]) -> str:
    return f"{tp.topic}\t{tp.partition}\tepochs\t{','.join(f'{e}:{s}' for e, s in entries)}\n"


def _parse_epochs(text: str) -> tuple[EpochEntry, ...]:
    """``epoch:start,...`` (empty: none); ValueError for anything else, a negative number, or epochs and starts
    that do not both increase (a cache is monotonic)."""
    entries = tuple(EpochEntry(int(e), int(s)) for e, s in (item.split(":") for item in text.split(",") if item))
    for before, after in pairwise(entries):
        if after.epoch <= before.epoch or after.start_offset <= before.start_offset:
            raise ValueError(f"leader epochs out of order: {before}, {after}")
    if any(e.epoch < 0 or e.start_offset < 0 for e in entries):
        raise ValueError("negative leader epoch or start offset")
    return entries
