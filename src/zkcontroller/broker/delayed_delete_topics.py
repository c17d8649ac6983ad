"""Waiting for topic deletions to reach this broker's metadata cache (Kafka's ``DelayedDeleteTopics`` in the topic
purgatory).

A DeleteTopics is answered once every topic it marked is gone from the cache of the broker that took it (the
controller removes a deleted topic's partitions with an UpdateMetadata), or at its timeout. The check runs on
each cache update, as Kafka's purgatory is checked when the cache changes; the timeout is the broker runtime's
sleep, so the simulator's virtual time drives it too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection

from zkcontroller.broker.metadata_cache import MetadataCache
from zkcontroller.runtime.runtime import Runtime


async def wait_until_deleted(cache: MetadataCache, topics: Collection[str], timeout_ms: int,
                             runtime: Runtime) -> set[str]:
    """Wait until none of ``topics`` is in ``cache`` or ``timeout_ms`` has passed on ``runtime``; the topics still
    there (Kafka answers REQUEST_TIMED_OUT for them). A timeout <= 0 does not wait."""
    def remaining() -> set[str]:
        return {t for t in topics if cache.contains_topic(t)}

    if timeout_ms <= 0 or not remaining():
        return remaining()
    done = asyncio.Event()

    def check() -> None:
        if not remaining():
            done.set()

    unregister = cache.on_update(check)
    finished = runtime.spawn(done.wait(), "delete-topics-done")
    expired = runtime.spawn(runtime.sleep_ms(timeout_ms), "delete-topics-timeout")
    try:
        await asyncio.wait((finished, expired), return_when=asyncio.FIRST_COMPLETED)
    finally:
        unregister()
        finished.cancel()
        expired.cancel()
    return remaining()
