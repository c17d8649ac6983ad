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

A failed write (``OSError``: a full disk, an I/O error) is reported on stderr as `logging.Handler.handleError`
reports one, never raised into the controller that logged. It loses only the lines the file refused: the lines are
buffered here, not in a `BufferedWriter` (whose failure leaves unknown which bytes reached the file), so after a
failure the rest are tried one by one, a part line left at the file's end is cut off, and the size kept for the
roll-over stays the file's own. A roll-over that fails (a rename refused) keeps writing to the current file.

A writer never closed (an abnormal exit, a forgotten ``close``) still loses nothing it buffered: lines left
pending are written when it is collected and, for writers still alive then, when the interpreter exits — what the
`BufferedWriter` this replaced did through its own finaliser.
"""

from __future__ import annotations

import asyncio
import atexit
import errno
import logging
import os
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TextIO

Namer = Callable[[str], str]
"""Maps Python's default rolled name (``events.jsonl.3``) to the one written (``events.3.jsonl``)."""

_BUFFER_BYTES = 1 << 16


class RawFile(Protocol):
    """An unbuffered binary file opened to append (`io.FileIO`): ``write`` returns how many bytes it took."""

    def write(self, data: bytes | memoryview, /) -> int | None: ...

    def truncate(self, size: int, /) -> int: ...

    def tell(self) -> int: ...

    def close(self) -> None: ...


def _open_append(path: Path) -> RawFile:
    return open(path, "ab", buffering=0)  # the caller closes it


_live: weakref.WeakSet[LineWriter] = weakref.WeakSet()
"""Path writers not yet closed, flushed at interpreter exit (a weak set: it keeps none of them alive)."""


@atexit.register
def _flush_at_exit() -> None:
    for writer in list(_live):
        writer.flush()


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
        self._file: RawFile | None = None
        self._closed = False
        self._pending: list[bytes] = []
        """Whole lines not yet written, flushed when the loop turns or when they pass `_BUFFER_BYTES`."""
        self._pending_bytes = 0
        self._size = 0
        """The file's size once `_pending` is written: its real size whenever nothing is pending."""
        self._last_error: OSError | None = None
        """Why the file could not be opened again (after a failed roll-over), for the loss report."""
        self._torn = False
        """The file ends in a part line that could not be cut off: the next write starts a new line first."""
        self._flush_loop: asyncio.AbstractEventLoop | None = None
        """The loop a flush is queued on; a loop stopped before running it leaves it here, not running."""
        if path is not None:
            self._file = _open_append(path)
            self._size = self._file.tell()
            _live.add(self)  # a stream writer buffers nothing of its own, and its stream is its owner's to flush

    def __del__(self) -> None:
        """Collected without `close`: write what is still buffered and close the file. A stream writer has
        neither (flushing a stream its owner has closed would report lines lost that never were)."""
        if getattr(self, "path", None) is not None and not self._closed:  # a path writer, even one whose file a
            # failed roll-over left closed: `close` writes or reports what it still buffers
            self.close()

    def write(self, line: str) -> None:
        """Append ``line`` (without its newline); it reaches the file by the end of this event-loop turn."""
        with self._lock:
            if self._stream is not None:
                self._write_stream(line + "\n", 1)
            else:
                self._append((line + "\n").encode("utf-8", "backslashreplace"))
            self._schedule_flush()

    def write_lines(self, lines: list[str]) -> None:
        """`write` of each line, in order, under one lock with one flush queued. While the file has room for
        all of them (no roll-over due), they are encoded and buffered as one piece: the same bytes."""
        if not lines:
            return
        with self._lock:
            text = "\n".join(lines) + "\n"
            if self._stream is not None:
                self._write_stream(text, len(lines))
            else:
                data = text.encode("utf-8", "backslashreplace")
                if self._max_bytes <= 0 or self._size + len(data) <= self._max_bytes:
                    self._append(data)
                else:  # a roll-over falls between two of them: line by line, as `write` would
                    for line in lines:
                        self._append((line + "\n").encode("utf-8", "backslashreplace"))
            self._schedule_flush()

    def _write_stream(self, text: str, lines: int) -> None:
        assert self._stream is not None
        try:
            self._stream.write(text)
        except (OSError, ValueError) as e:  # ValueError: a closed stream
            self._report(e, f"{lines} line(s) to {self._stream!r} may be lost")

    def _append(self, data: bytes) -> None:
        """Buffer ``data`` (whole lines), rolling the file first when it would go past ``max_bytes``."""
        if self._closed:
            return  # closed: a late record from a shutting-down component
        if self._max_bytes > 0 and self._size > 0 and self._size + len(data) > self._max_bytes:
            self._write_pending()
            self._roll_over()
        self._pending.append(data)
        self._pending_bytes += len(data)
        self._size += len(data)
        if self._pending_bytes >= _BUFFER_BYTES:
            self._write_pending()

    def _write_pending(self) -> None:
        """Write the buffered lines. What the file refuses is reported, with how many lines were lost; the lines
        after a failure are tried one by one, so a failure loses only the lines it refused."""
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        self._pending_bytes = 0
        self._size -= len(data)  # now the file's size: each write adds what it kept
        if self._file is None and not self._reopen():
            self._report_loss(self._last_error, data)
            return
        kept, error = self._put(data)
        if error is None:
            return
        lost = bytearray()
        for piece in data[kept:].split(b"\n")[:-1]:  # every line ends with its newline
            line = piece + b"\n"
            if self._put(line)[1] is not None:
                lost += line
        self._report_loss(error, bytes(lost))

    def _put(self, data: bytes) -> tuple[int, OSError | None]:
        """Write ``data`` at the file's end: how much of it the file keeps, and the error that stopped it. A part
        line the failure left is cut off (when the file cannot be cut, it stays and `_torn` is set)."""
        assert self._file is not None
        if self._torn:
            try:
                if not self._file.write(b"\n"):
                    raise OSError(errno.EIO, "no byte written")
            except OSError as e:
                return 0, e
            self._torn = False
            self._size += 1
        written = 0
        view = memoryview(data)
        try:
            while written < len(data):
                n = self._file.write(view[written:])
                if not n:  # a regular file takes at least one byte or fails; never spin on it
                    raise OSError(errno.EIO, "write took no bytes")
                written += n
        except OSError as e:
            whole = data.rfind(b"\n", 0, written) + 1
            if whole < written:
                try:
                    self._file.truncate(self._size + whole)
                    written = whole
                except OSError:
                    self._torn = True
            self._size += written
            return whole, e
        self._size += written
        return written, None

    def _reopen(self) -> bool:
        """Open the file again after a failed roll-over left it closed; False (the error kept) when it cannot be."""
        assert self.path is not None
        try:
            self._file = _open_append(self.path)
            self._size = self._file.tell()
        except OSError as e:
            self._file, self._last_error = None, e
            return False
        return True

    def _rolled_name(self, index: int) -> str:
        assert self.path is not None
        name = f"{self.path}.{index}"
        return self._namer(name) if self._namer is not None else name

    def _roll_over(self) -> None:
        """Rename the files down one index (nothing kept: empty the file). A failure is reported, and the lines
        go on to the current file, which the next line's roll-over tries again."""
        assert self.path is not None
        if self._file is None and not self._reopen():
            return
        assert self._file is not None
        try:
            if self._backups <= 0:
                self._file.truncate(0)
                self._size, self._torn = 0, False
                return
            file, self._file = self._file, None  # even a failed close leaves it unusable: reopened below
            file.close()
            for index in range(self._backups - 1, 0, -1):
                source = self._rolled_name(index)
                if os.path.exists(source):
                    os.replace(source, self._rolled_name(index + 1))
            os.replace(self.path, self._rolled_name(1))
            self._torn = False
        except OSError as e:
            self._report(e, f"rolling {self.path} over failed; writing on to it")
        if self._file is None:
            self._reopen()

    def _report_loss(self, error: OSError | None, lost: bytes) -> None:
        lines = lost.count(b"\n")
        self._report(error, f"{lines} line(s) ({len(lost)} bytes) lost: not written to {self.path}; the file "
                            f"is {self._size} bytes" + (" and ends in a part line" if self._torn else "")
                     if lines else f"writing to {self.path} failed at first; the lines were written on retry")

    @staticmethod
    def _report(error: BaseException | None, what: str) -> None:
        """On stderr as `logging.Handler.handleError` does (and only when it would: `logging.raiseExceptions`, and a
        ``sys.stderr`` to write to: None under pythonw or with fd 2 closed)."""
        if not (logging.raiseExceptions and sys.stderr):
            return
        try:
            sys.stderr.write("--- Logging error ---\n")
            if error is not None:
                traceback.print_exception(type(error), error, error.__traceback__, None, sys.stderr)
            sys.stderr.write(f"LineWriter: {what}\n")
        except OSError:  # stderr gone too: nothing left to tell
            pass

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
        if self._stream is not None:
            try:
                self._stream.flush()
            except (OSError, ValueError) as e:
                self._report(e, f"flushing {self._stream!r} failed; its buffered lines may be lost")
            return
        self._write_pending()

    def close(self) -> None:
        with self._lock:
            self._flush_locked()
            self._closed = True
            _live.discard(self)
            file, self._file = self._file, None
            if file is not None:
                try:
                    file.close()
                except OSError as e:
                    self._report(e, f"closing {self.path} failed")


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
