"""One task re-reading what a ZooKeeper watch guards, for the broker's watchers of ``/config/changes`` and
``/feature``.

A watch fires once per change, and a change can land while the previous read still runs: that asks for one more
pass of the same task, never a second task beside it (Kafka's change-notification and feature listeners run one
thread each). A session event (no path) is no change: Kafka's ZooKeeperClient hands those to state handlers only;
the owner re-reads from its ``on_session_reconnected`` instead of reading on the dead session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from zkcontroller.coordination.api import EventType, WatchedEvent
from zkcontroller.runtime.runtime import Runtime


class CoalescedReads:
    """Runs ``read_once`` in one task while watching, again for each change seen meanwhile. ``read_once`` returns
    whether to go on with a pass asked for meanwhile (False: the store is gone, or the read failed as a whole)."""

    def __init__(self, runtime: Runtime, name: str, read_once: Callable[[], Awaitable[bool]]) -> None:
        self.runtime = runtime
        self.name = name
        self._read_once = read_once
        self.watching = False
        self._again = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Watch from now on, with a first read."""
        self.watching = True
        self.schedule()

    def stop(self) -> None:
        self.watching = False
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def on_watch(self, event: WatchedEvent) -> None:
        """The watcher to hand the store: a change schedules a read, a session event does not (see the module)."""
        if event.type is not EventType.NONE:
            self.schedule()

    def schedule(self) -> None:
        """A read now, or one more pass of the one under way."""
        if not self.watching:
            return
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = self.runtime.spawn(self._run(), self.name)

    def again(self) -> None:
        """From ``read_once``: read once more after this pass (e.g. the node appeared between two reads)."""
        self._again = True

    async def wait(self) -> None:
        """Until the read under way (if any) is done."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def _run(self) -> None:
        self._again = True
        while self._again and self.watching:
            self._again = False
            if not await self._read_once():
                return
