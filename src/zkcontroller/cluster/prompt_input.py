"""Lines typed at a cluster prompt, read so that waiting for one never keeps the command from exiting.

``asyncio.to_thread(sys.stdin.readline)`` runs in the event loop's default executor, which ``asyncio.run`` joins
before it returns: with standard input still open (a terminal, a pipe, a FIFO), a cluster stopped by SIGTERM shut
its brokers down and then waited forever for a line nobody would type. Here each read runs in a daemon thread
that the interpreter does not wait for.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from typing import TextIO


async def read_line(stream: TextIO | None = None) -> str:
    """The next line of ``stream`` (standard input by default), ``""`` at its end."""
    source = sys.stdin if stream is None else stream
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()

    def deliver(result: str | BaseException) -> None:
        if line.done():  # the prompt was cancelled meanwhile
            return
        if isinstance(result, BaseException):
            line.set_exception(result)
        else:
            line.set_result(result)

    def read() -> None:
        try:
            result: str | BaseException = source.readline()
        except Exception as e:
            result = e
        with contextlib.suppress(RuntimeError):  # the loop closed while this thread waited for input
            loop.call_soon_threadsafe(deliver, result)

    threading.Thread(target=read, name="prompt-input", daemon=True).start()
    return await line
