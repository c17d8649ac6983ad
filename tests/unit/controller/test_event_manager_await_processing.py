"""`QueuedEvent.await_processing` (Kafka's ``awaitProcessing``) also returns for an event that is dropped without
being processed: a clear pre-empting it, or the event thread's shutdown. The broker's session re-initialisation
waits on Expire this way; a controller shutdown that dropped a queued Expire left it waiting for good."""

from __future__ import annotations

import asyncio

from tests.unit.controller.standalone import RecordingRuntime

from zkcontroller.controller.event_manager import ControllerEventManager
from zkcontroller.controller.events import ControllerEvent, Expire, Reelect


class _Held:
    """Holds the first event it processes until released, so what is queued behind it stays queued."""

    def __init__(self) -> None:
        self.holding = asyncio.Event()
        self.release = asyncio.Event()
        self.processed: list[ControllerEvent] = []
        self.preempted: list[ControllerEvent] = []

    async def process(self, event: ControllerEvent) -> None:
        self.processed.append(event)
        self.holding.set()
        await self.release.wait()

    def preempt(self, event: ControllerEvent) -> None:
        self.preempted.append(event)


async def test_await_processing_returns_for_an_event_the_shutdown_dropped() -> None:
    held = _Held()
    events = ControllerEventManager(1, held, RecordingRuntime())
    events.start()
    events.put(Reelect())
    await asyncio.wait_for(held.holding.wait(), 10)
    expire = events.put(Expire())
    waiting = asyncio.ensure_future(expire.await_processing())
    closing = asyncio.ensure_future(events.close())  # drops Expire before the thread's next step
    held.release.set()
    await asyncio.wait_for(closing, 10)
    await asyncio.wait_for(waiting, 10)
    assert not expire.started.is_set() and expire.finished.is_set()
    assert [type(e) for e in held.processed] == [Reelect] and [type(e) for e in held.preempted] == [Expire]


async def test_await_processing_returns_once_processing_begins() -> None:
    held = _Held()
    events = ControllerEventManager(1, held, RecordingRuntime())
    events.start()
    expire = events.put(Expire())
    await asyncio.wait_for(expire.await_processing(), 10)
    assert expire.started.is_set() and not expire.finished.is_set()  # begun, still being processed
    held.release.set()
    await asyncio.wait_for(expire.await_finished(), 10)
    await events.close()
