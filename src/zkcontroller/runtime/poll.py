"""A bounded wait for a condition, polled: the one loop the cluster tools' waits share.

They each had their own (``deadline = ...; while ...: sleep``), on two clocks (the event loop's and
``time.monotonic``) and with their own edge cases (one checked the condition a last time at the bound, another
did not). Here the condition is checked first, then every ``interval_s``, and once more at the bound, so a
condition met just as the time runs out still counts, and a bound of 0 is one check.

`poll_until` reads the given `Runtime`'s clock and sleeps on it, so a test (or the simulator) can run it on
virtual time; without one, the event loop's (monotonic). `poll_until_sync` is for the callers that run on a
thread of their own (starting a ZooKeeper server), on ``time.monotonic``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from zkcontroller.runtime.runtime import Runtime

T = TypeVar("T")


async def poll_until(condition: Callable[[], Awaitable[T]], timeout_s: float, interval_s: float,
                     runtime: Runtime | None = None) -> T:
    """Await ``condition`` until it returns a true value, at most ``timeout_s``; returns its last value (false: the
    bound ran out, and the caller says in its own words what that means). What ``condition`` raises ends the
    wait (a broker that exited while the wait was for it to register)."""
    now, sleep = _clock(runtime)
    deadline = now() + timeout_s
    while True:
        value = await condition()
        left = deadline - now()
        if value or left <= 0:
            return value
        await sleep(min(interval_s, left))


def poll_until_sync(condition: Callable[[], T], timeout_s: float, interval_s: float) -> T:
    """`poll_until` for a caller on a thread of its own: ``condition`` is called, the thread sleeps between."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        left = deadline - time.monotonic()
        if value or left <= 0:
            return value
        time.sleep(min(interval_s, left))  # a bounded wait on a condition (runtime code: wall time is allowed)


def _clock(runtime: Runtime | None) -> tuple[Callable[[], float], Callable[[float], Awaitable[None]]]:
    """Seconds now and a sleep of seconds: on ``runtime``'s time, or the running event loop's."""
    if runtime is not None:
        clock = runtime

        def sleep_s(seconds: float) -> Awaitable[None]:
            return clock.sleep_ms(max(1, round(seconds * 1000)))

        return lambda: clock.now_ms() / 1000, sleep_s
    loop = asyncio.get_running_loop()
    return loop.time, asyncio.sleep
