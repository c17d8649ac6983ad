"""Kafka's purgatories for requests that wait on this broker's metadata cache (``DelayedDeleteTopics``,
``DelayedCreatePartitions``, ``DelayedElectLeader``): checked again on each cache update, as Kafka's are when the
cache changes, and bounded by the request's timeout on the broker runtime's clock, so the simulator's virtual time
drives them too."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from zkcontroller.broker.metadata_cache import MetadataCache
from zkcontroller.runtime.runtime import Runtime

T = TypeVar("T")


async def wait_on_cache(cache: MetadataCache, pending: Callable[[], set[T]], timeout_ms: int, runtime: Runtime,
                        name: str) -> set[T]:
    """Wait until ``pending()`` is empty, re-checked on each update of ``cache``, or ``timeout_ms`` has passed on
    ``runtime``; what is still pending then. A timeout <= 0 does not wait."""
    if timeout_ms <= 0 or not pending():
        return pending()
    done = asyncio.Event()

    def check() -> None:
        if not pending():
            done.set()

    unregister = cache.on_update(check)
    finished = runtime.spawn(done.wait(), f"{name}-done")
    expired = runtime.spawn(runtime.sleep_ms(timeout_ms), f"{name}-timeout")
    try:
        await asyncio.wait((finished, expired), return_when=asyncio.FIRST_COMPLETED)
    finally:
        unregister()
        finished.cancel()
        expired.cancel()
    return pending()
