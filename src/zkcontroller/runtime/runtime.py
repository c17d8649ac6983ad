"""The `Runtime` port: the only way controller, broker and ZooKeeper-layer code reads time, waits, starts
tasks or draws random numbers.

Injected rather than reached for (``time.time()``, ``asyncio.sleep``, ``create_task``, module-level
``random``) so that the simulator can run the same code on virtual time with a seeded generator, and a
real run gets the wall clock and the OS's randomness. All durations are integer milliseconds.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, Protocol, TypeVar

from zkcontroller.runtime.clock import wall_clock_ms

T = TypeVar("T")


class Runtime(Protocol):
    rng: random.Random
    """Every random choice (topic ids, cluster ids, jitter) is drawn from this."""

    def now_ms(self) -> int:
        """Milliseconds since the Unix epoch (virtual in the simulator). Event stamps and back-offs read it."""
        ...

    async def sleep_ms(self, ms: int) -> None:
        """Wait ``ms`` milliseconds of this runtime's time."""
        ...

    def spawn(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        """Run ``coro`` as a task of its own (a Kafka thread: an event thread, a send thread, a scheduler)."""
        ...


class AsyncioRuntime:
    """The real runtime: the running asyncio loop, the wall clock, and ``random.SystemRandom`` unless a seeded
    generator is given (tests, the deterministic simulator)."""

    def __init__(self, rng: random.Random | None = None, clock: Callable[[], int] = wall_clock_ms) -> None:
        self.rng = rng if rng is not None else random.SystemRandom()
        self._clock = clock

    def now_ms(self) -> int:
        return self._clock()

    async def sleep_ms(self, ms: int) -> None:
        await asyncio.sleep(ms / 1000)

    def spawn(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        return asyncio.get_running_loop().create_task(coro, name=name)


TIMEOUT_TASK = "timeout"
"""The name `runtime_timeout` gives its timer's task (on a runtime other than `AsyncioRuntime`)."""


def runtime_timeout(runtime: Runtime, ms: int | None) -> AbstractAsyncContextManager[object]:
    """``asyncio.timeout`` on ``runtime``'s time: the block is cancelled once ``ms`` milliseconds of the runtime's
    time passed (its `Runtime.sleep_ms` ended), and leaves as `TimeoutError`; None is no bound. On
    `AsyncioRuntime`, whose sleeps are the loop's, it is ``asyncio.timeout`` itself (a timer handle, no task); on
    another runtime (the simulator's, whose sleeps wait while its process is paused; a test's manual clock) the
    loop's time would not be the runtime's, so a timer task sleeps on the runtime instead."""
    if ms is None or type(runtime).sleep_ms is AsyncioRuntime.sleep_ms:
        return asyncio.timeout(None if ms is None else ms / 1000)
    return _RuntimeTimeout(runtime, ms)


class _RuntimeTimeout:
    """`runtime_timeout` on a runtime's sleep: the same cancellation rules as ``asyncio.Timeout`` (only the cancel it
    made itself becomes `TimeoutError`; a cancel from outside passes through, its message kept)."""

    __slots__ = ("_cancelling", "_ms", "_runtime", "_task", "_timer", "expired")

    def __init__(self, runtime: Runtime, ms: int) -> None:
        self._runtime = runtime
        self._ms = ms
        self._task: asyncio.Task[Any] | None = None
        self._timer: asyncio.Task[None] | None = None
        self._cancelling = 0
        self.expired = False

    async def __aenter__(self) -> _RuntimeTimeout:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("runtime_timeout must be used inside a task")
        self._task, self._cancelling = task, task.cancelling()
        self._timer = self._runtime.spawn(self._runtime.sleep_ms(self._ms), TIMEOUT_TASK)
        self._timer.add_done_callback(self._expire)
        return self

    def _expire(self, timer: asyncio.Task[None]) -> None:
        # a timer that ended just as the block did may have this call queued already: the block left, no cancel
        if timer.cancelled() or self._task is None:
            return
        timer.result()  # a sleep that failed is raised here, in the loop's handler, not hidden
        self.expired = True
        self._task.cancel()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        task, self._task = self._task, None
        if self._timer is not None:
            self._timer.remove_done_callback(self._expire)
            self._timer.cancel()
        if (self.expired and task is not None and task.uncancel() <= self._cancelling
                and exc_type is asyncio.CancelledError):
            raise TimeoutError from exc
