"""What a broker process's "disk" keeps of its logs: each partition's log end offset and high watermark, in a
journal in its first log dir, so a restarted process leads and follows from where it stopped.

The data plane keeps offsets, not records; Kafka keeps the records in its log segments and the high watermark in
``replication-offset-checkpoint``, both in the page cache, which a SIGKILL of the process does not lose. A
broker that restarted empty and kept its leadership (its old session expired after the new process registered)
answered high watermark 0, and its followers truncated acknowledged records to it. So every change is written
through at once with a plain ``write`` (no fsync: as Kafka, a machine crash may lose the tail, a process crash
does not). The journal is one line per change (``topic<TAB>partition<TAB>leo<TAB>hw``, a deleted partition's
offsets -1), read back last-line-wins, rewritten whole when it grows past ``compact_bytes``.

The log dir is locked as Kafka's ``LogManager`` locks it (``.lock``): two brokers on one machine with the same
``log.dirs`` (the default /tmp/kafka-logs) would otherwise share one journal.
"""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path

from zkcontroller.model import TopicPartition

JOURNAL_NAME = ".zkcontroller-log-offsets"
LOCK_NAME = ".lock"
DEFAULT_COMPACT_BYTES = 16 << 20

log = logging.getLogger("kafka.log.LogManager")


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
        self._offsets = self._read()
        self._fd = -1
        self._rewrite()

    def recovered(self) -> dict[TopicPartition, tuple[int, int]]:
        """(log end offset, high watermark) per partition, as the last run left them."""
        return dict(self._offsets)

    def record(self, tp: TopicPartition, log_end_offset: int, high_watermark: int) -> None:
        """One change, written through (a SIGKILL right after it keeps it)."""
        self._offsets[tp] = (log_end_offset, high_watermark)
        self._write(f"{tp.topic}\t{tp.partition}\t{log_end_offset}\t{high_watermark}\n")

    def forget(self, tp: TopicPartition) -> None:
        """The partition's log was deleted (a deleting StopReplica): a restart must not bring it back."""
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
                tp, offsets_read = TopicPartition(topic, int(partition)), (int(leo), int(hw))
            except ValueError:  # a torn last line (the machine, not the process, went down mid-write)
                log.warning("Skipping unreadable line %d of %s: %r", number, self.path, raw[:80])
                continue
            if offsets_read[0] < 0:
                offsets.pop(tp, None)
            else:
                offsets[tp] = offsets_read
        return offsets

    def _rewrite(self) -> None:
        """The journal as one line per partition, replacing the old one atomically."""
        temporary = self.path.with_suffix(".tmp")
        text = "".join(f"{tp.topic}\t{tp.partition}\t{leo}\t{hw}\n" for tp, (leo, hw) in self._offsets.items())
        temporary.write_text(text)
        os.replace(temporary, self.path)
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        self._size = len(text)
