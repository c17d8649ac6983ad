"""Pipelined reads: many requests outstanding on one session, at most ``max_in_flight`` at a time.

Kafka's ``ZooKeeperClient.handleRequests`` does the same with a semaphore (``zookeeper.max.in.flight
.requests``, default 10). A fixed pool of workers keeps memory flat for 100k reads instead of one task each.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from zkcontroller.runtime.tasks import run_workers

T = TypeVar("T")
R = TypeVar("R")


async def pipelined(items: Sequence[T], fn: Callable[[T], Awaitable[R]], max_in_flight: int) -> list[R]:
    """``[await fn(x) for x in items]`` with up to ``max_in_flight`` calls outstanding; order is kept.

    The first exception cancels the remaining calls and propagates (callers turn expected per-item
    outcomes, such as a missing node, into values inside ``fn``).
    """
    if max_in_flight < 1:
        raise ValueError("max_in_flight must be at least 1")
    results: list[R | None] = [None] * len(items)
    next_index = iter(range(len(items)))

    async def worker() -> None:
        for i in next_index:
            results[i] = await fn(items[i])

    await run_workers(min(max_in_flight, len(items)), worker)
    return results  # type: ignore[return-value]
