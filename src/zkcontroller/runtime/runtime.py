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
