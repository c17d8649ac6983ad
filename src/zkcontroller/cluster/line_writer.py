"""`LineWriter`: log lines to a size-capped rolling file (or a stream), flushed once per event-loop turn.

A broker failure of 10,000 led partitions makes the controller write about 60,000 event-log records and
20,000 ``state-change.log`` lines within one event. Through `logging.handlers.RotatingFileHandler` each line
cost 18–27 µs: it stats the file twice and seeks to its end before every record (its rollover test), formats
the record twice and flushes it — over a second per broker failure, more than the controller's own work.
Here the file's size is kept in memory, a line is formatted once, and the buffered lines reach the file when
the running event loop next turns (one flush per burst, not per line); with no running loop (start-up,
shutdown, other threads) every write is flushed at once. A line never waits longer than the event that wrote
it, and `close` flushes what is left.

Files roll as Log4j's RollingFileAppender (and `RotatingFileHandler`) roll them: before a line that would
take the file past ``max_bytes``, ``name.(N-1)`` → ``name.N`` … ``name`` → ``name.1``, oldest dropped.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TextIO

Namer = Callable[[str], str]
"""Maps Python's default rolled name (``events.jsonl.3``) to the one written (``events.3.jsonl``)."""

_BUFFER_BYTES = 1 << 16


class LineWriter:
    """Appends lines to a rolling file (``path``) or an open text ``stream``; thread-safe."""

    def __init__(self, path: Path | None = None, *, stream: TextIO | None = None, max_bytes: int = 0,
                 backups: int = 0, namer: Namer | None = None) -> None:
        if (path is None) == (stream is None):
            raise ValueError("LineWriter needs exactly one of path and stream")
        self.path = path
        self._stream = stream
        self._max_bytes = max_bytes
        self._backups = backups
        self._namer = namer
        self._lock = threading.Lock()
        self._file: BinaryIO | None = None
        self._size = 0
        self._flush_loop: asyncio.AbstractEventLoop | None = None
        """The loop a flush is queued on; a loop stopped before running it leaves it here, not running."""
        if path is not None:
            self._open()

    def _open(self) -> None:
        assert self.path is not None
        self._file = open(self.path, "ab", buffering=_BUFFER_BYTES)  # noqa: SIM115 (closed by close())
        self._size = self._file.tell()

    def write(self, line: str) -> None:
        """Append ``line`` (without its newline); it reaches the file by the end of this event-loop turn."""
        with self._lock:
            if self._stream is not None:
                self._stream.write(line + "\n")
            else:
                self._write_to_file((line + "\n").encode("utf-8", "backslashreplace"))
            self._schedule_flush()

    def write_lines(self, lines: list[str]) -> None:
        """`write` of each line, in order, under one lock with one flush queued. While the file has room for
        all of them (no roll-over due), they are encoded and written as one piece: the same bytes."""
        if not lines:
            return
        with self._lock:
            text = "\n".join(lines) + "\n"
            if self._stream is not None:
                self._stream.write(text)
            else:
                data = text.encode("utf-8", "backslashreplace")
                if self._max_bytes <= 0 or self._size + len(data) <= self._max_bytes:
                    self._write_to_file(data)
                else:  # a roll-over falls between two of them: line by line, as `write` would
                    for line in lines:
                        self._write_to_file((line + "\n").encode("utf-8", "backslashreplace"))
            self._schedule_flush()

    def _write_to_file(self, data: bytes) -> None:
        if self._file is None:
            return  # closed: a late record from a shutting-down component
        if self._max_bytes > 0 and self._size > 0 and self._size + len(data) > self._max_bytes:
            self._roll_over()
        assert self._file is not None
        self._file.write(data)
        self._size += len(data)

    def _rolled_name(self, index: int) -> str:
        assert self.path is not None
        name = f"{self.path}.{index}"
        return self._namer(name) if self._namer is not None else name

    def _roll_over(self) -> None:
        assert self._file is not None and self.path is not None
        self._file.close()
        if self._backups > 0:
            for index in range(self._backups - 1, 0, -1):
                source = self._rolled_name(index)
                if os.path.exists(source):
                    os.replace(source, self._rolled_name(index + 1))
            os.replace(self.path, self._rolled_name(1))
            self._open()
        else:  # nothing kept: start the file again
            self._file = open(self.path, "wb", buffering=_BUFFER_BYTES)  # noqa: SIM115
            self._size = 0

    def _schedule_flush(self) -> None:
        pending = self._flush_loop
        if pending is not None and pending.is_running():  # its queued flush takes this line too
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop in this thread: nothing would flush later
            self._flush_locked()
            return
        self._flush_loop = loop
        loop.call_soon(self.flush)

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        self._flush_loop = None
        target = self._stream if self._stream is not None else self._file
        if target is not None:
            target.flush()

    def close(self) -> None:
        with self._lock:
            self._flush_locked()
            if self._file is not None:
                self._file.close()
                self._file = None


class LineWriterHandler(logging.Handler):
    """A `logging` handler over a `LineWriter`: each record formatted once, written without its own flush."""

    def __init__(self, writer: LineWriter) -> None:
        super().__init__()
        self.writer = writer

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.writer.write(self.format(record))
        except Exception:  # as every logging handler: a failing log line must not fail the caller
            self.handleError(record)

    def write_direct(self, logger_name: str, levelno: int, message: str) -> bool:
        """Write the line `emit` would for a record with these fields (no exception, no arguments), without
        building the record: a broker failure logs about 20,000 per-partition lines, and `logging`'s record,
        caller lookup and dispatch cost about three times the line itself. False when this handler cannot
        (its formatter is not Kafka's layout, or it filters): the caller then logs the usual way."""
        line = getattr(self.formatter, "line", None)
        if line is None or self.filters or levelno < self.level:
            return False
        created = time.time()
        try:
            self.writer.write(line(logger_name, levelno, message, created))
        except Exception:
            self.handleError(logging.makeLogRecord(
                {"name": logger_name, "levelno": levelno, "levelname": logging.getLevelName(levelno),
                 "msg": message, "created": created}))
        return True

    def flush(self) -> None:
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()
        super().close()
