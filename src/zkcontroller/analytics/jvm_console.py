"""The driver JVM's console output, minus the one start-up line a user can do nothing about.

Spark 4's launcher puts ``--add-modules=jdk.incubator.vector`` (``JavaModuleOptions``, for MLlib's vectorized
BLAS) on every driver's command line, unconditionally and after any ``spark.driver.extraJavaOptions``, so no
setting leaves the module out, and the JVM prints ``WARNING: Using incubator modules: jdk.incubator.vector`` to
stderr as it starts. This job never uses the module. PySpark starts the JVM as a child that inherits the
Python process's stderr, so while a session starts, ``filtered_jvm_stderr`` makes that stderr a pipe, read by
a thread that drops the line and passes everything else on (byte for byte once that line is gone: Spark's
progress bar rewrites its line with carriage returns).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

INCUBATOR_WARNING = b"WARNING: Using incubator modules: jdk.incubator.vector"
STDERR = 2


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _forward(source: int, target: int) -> None:
    """Copy ``source`` to ``target`` until EOF (when the last process holding the pipe exits), without the
    first ``INCUBATOR_WARNING`` line. Whole lines are checked until that line has been dropped or output
    stops mid-line (Spark's progress bar): from then on, bytes pass as soon as they are read."""
    pending, checking = b"", True
    try:
        while chunk := os.read(source, 65536):
            if checking:
                lines = (pending + chunk).split(b"\n")
                pending = lines.pop()  # what follows the last newline: nothing, or the start of a line
                for i, line in enumerate(lines):
                    if line.rstrip(b"\r") == INCUBATOR_WARNING:
                        del lines[i]
                        checking = False
                        break
                checking = checking and not pending
                chunk = b"".join(line + b"\n" for line in lines)
                if not checking:
                    chunk, pending = chunk + pending, b""
            with contextlib.suppress(OSError):  # the terminal went away: keep draining, so the JVM never blocks
                _write_all(target, chunk)
    finally:
        os.close(source)
        os.close(target)


@contextlib.contextmanager
def filtered_jvm_stderr() -> Iterator[threading.Thread | None]:
    """Within the block, fd 2 (inherited by a JVM started there, for its whole life) is a pipe whose contents
    reach the real stderr without ``INCUBATOR_WARNING``. Yields the forwarding thread, which ends when every
    process holding the pipe has exited (at once, if the block started none); None when this process has no
    stderr to filter (fd 2 closed, as under some daemons)."""
    try:
        real = os.dup(STDERR)
    except OSError:
        yield None
        return
    read_end, write_end = os.pipe()
    thread = threading.Thread(target=_forward, args=(read_end, os.dup(real)), daemon=True,
                              name="jvm-stderr")
    thread.start()
    os.dup2(write_end, STDERR)
    os.close(write_end)
    try:
        yield thread
    finally:
        os.dup2(real, STDERR)  # this process writes to the real stderr again; a child keeps the pipe
        os.close(real)
