"""Test helpers: bounded waits on conditions and watch recorders (never sleeps on wall time)."""

from __future__ import annotations

import asyncio
import inspect
import itertools
from collections.abc import Callable
from typing import Any

from zkcontroller.coordination.api import CoordinationSession, EventType, SessionState, WatchedEvent

_markers = itertools.count()


async def wait_until(
    predicate: Callable[[], Any], timeout_s: float = 20.0, what: str = "condition", poll_s: float = 0.005
) -> None:
    """Re-check ``predicate()`` (a plain or an async callable) every ``poll_s``; fail after ``timeout_s``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not await _holds(predicate):
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        await asyncio.sleep(poll_s)


async def _holds(predicate: Callable[[], Any]) -> bool:
    result = predicate()
    return bool(await result if inspect.isawaitable(result) else result)


class Recorder:
    """A watcher / session listener that queues what it is given, to be awaited with a bound."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.seen: list[Any] = []

    def __call__(self, item: Any) -> None:
        self.seen.append(item)
        self.queue.put_nowait(item)

    async def next(self, timeout_s: float = 20.0) -> Any:
        try:
            return await asyncio.wait_for(self.queue.get(), timeout_s)
        except TimeoutError:
            raise AssertionError(f"no event within {timeout_s}s (seen so far: {self.seen})") from None

    def pending(self) -> list[Any]:
        items = []
        while not self.queue.empty():
            items.append(self.queue.get_nowait())
        return items


async def settle_watches(watching: CoordinationSession, writer: CoordinationSession, base: str) -> None:
    """Return once every watch event caused by ``writer``'s earlier writes has reached ``watching``.

    ZooKeeper delivers a session's notifications in zxid order, so when a marker watch armed now fires, any
    event due from before has been delivered already. Lets a test assert that something did *not* fire.
    """
    marker = f"{base}/marker-{next(_markers)}"
    rec = Recorder()
    assert await watching.exists(marker, rec) is None
    await writer.create(marker)
    event = await rec.next()
    assert event == WatchedEvent(EventType.NODE_CREATED, SessionState.CONNECTED, marker)
    await writer.delete(marker)
