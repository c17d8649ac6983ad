"""ControllerEventManager: one consumer task processing controller events strictly one at a time, in order.

Kafka runs this on a dedicated thread; here it is one asyncio task, so it runs unchanged on the real event
loop and on the simulator's virtual-time loop. Between the ``await`` points of a long event (each store call)
other actors run, which is exactly what the split-brain scenarios need.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from zkcontroller.controller.events import ControllerEvent, ShutdownEventThread
from zkcontroller.controller.states import ControllerState
from zkcontroller.runtime.gc_pause import gc_paused
from zkcontroller.runtime.runtime import Runtime

log = logging.getLogger("kafka.controller.ControllerEventManager$ControllerEventThread")
"""Kafka logs from the inner class ``ControllerEventThread`` (log ident ``[ControllerEventThread controllerId=N] ``),
so its logger is that class's JVM name; under ``kafka.controller`` it goes to ``controller.log``."""


class ControllerEventProcessor(Protocol):
    async def process(self, event: ControllerEvent) -> None: ...

    def preempt(self, event: ControllerEvent) -> None: ...


@dataclass(eq=False)
class QueuedEvent:
    """An event in the queue; exactly one of process/pre-empt takes it (the ``spent`` flag)."""

    event: ControllerEvent
    enqueue_time_ms: int
    started: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    taken: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the event begins processing or is dropped: what `await_processing` waits for."""
    spent: bool = False

    async def await_processing(self) -> None:
        """Kafka's ``awaitProcessing``: until the event thread has *begun* processing this event, or dropped it
        (pre-empted by a clear, or the thread shut down): a dropped event never begins, and its waiter (the session
        re-initialisation, waiting on Expire) must not wait for good. ``started`` tells the two apart."""
        await self.taken.wait()

    async def await_finished(self) -> None:
        await self.finished.wait()


ProcessedCallback = Callable[[ControllerEvent, int, int], None]
"""Called after each event with (event, queue_time_ms, processing_time_ms)."""


class ControllerEventManager:
    def __init__(
        self,
        controller_id: int,
        processor: ControllerEventProcessor,
        runtime: Runtime,
        on_processed: ProcessedCallback | None = None,
    ) -> None:
        self.controller_id = controller_id
        self._processor = processor
        self._runtime = runtime
        self._clock = runtime.now_ms
        self._on_processed = on_processed
        self._queue: asyncio.Queue[QueuedEvent] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.state = ControllerState.IDLE
        self.processed_count = 0

    @property
    def queue_size(self) -> int:
        return self._queue.qsize()

    def start(self) -> None:
        if self._task is None:
            self._task = self._runtime.spawn(self._run(), f"controller-event-thread-{self.controller_id}")

    def put(self, event: ControllerEvent) -> QueuedEvent:
        queued = QueuedEvent(event, self._clock())
        self._queue.put_nowait(queued)
        return queued

    def clear_and_put(self, event: ControllerEvent) -> QueuedEvent:
        """Drop everything queued, pre-empting each (their callbacks learn they will not run), then put."""
        while not self._queue.empty():
            queued = self._queue.get_nowait()
            if not queued.spent:
                queued.spent = True
                self._processor.preempt(queued.event)
                queued.taken.set()
                queued.finished.set()
        return self.put(event)

    async def close(self) -> None:
        """Stop after the event in progress; everything still queued is pre-empted. Logged as Kafka's
        ``ShutdownableThread`` logs it: "Shutting down" (``initiateShutdown``), the thread's "Stopped", then
        "Shutdown completed" (``awaitShutdown``)."""
        self._lifecycle("Shutting down")
        self.clear_and_put(ShutdownEventThread())
        if self._task is not None:
            await self._task
            self._task = None
        self._lifecycle("Shutdown completed")

    def abort(self) -> None:
        """Stop at once, mid-event (a crashed process): nothing more is processed."""
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def _lifecycle(self, what: str) -> None:
        log.info("[ControllerEventThread controllerId=%d] %s", self.controller_id, what)

    async def _run(self) -> None:
        self._lifecycle("Starting")
        while True:
            queued = await self._queue.get()
            if isinstance(queued.event, ShutdownEventThread):
                queued.started.set()
                queued.taken.set()
                queued.finished.set()
                self._lifecycle("Stopped")
                return
            if queued.spent:
                continue
            await self._process(queued)

    async def _process(self, queued: QueuedEvent) -> None:
        queued.spent = True
        event = queued.event
        self.state = event.state
        queued.started.set()
        queued.taken.set()
        start = self._clock()
        try:
            with gc_paused():
                await self._processor.process(event)
        except Exception as e:  # the event loop must survive any one event; Kafka logs and goes on
            log.error(
                "[ControllerEventThread controllerId=%d] Uncaught error processing event %s",
                self.controller_id,
                event,
                exc_info=e,
            )
        finally:
            end = self._clock()
            self.state = ControllerState.IDLE
            self.processed_count += 1
            queued.finished.set()
            if self._on_processed is not None:
                self._on_processed(event, start - queued.enqueue_time_ms, end - start)
