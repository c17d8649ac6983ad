"""Waiting for topic deletions to reach this broker's metadata cache (Kafka's ``DelayedDeleteTopics`` in the topic
purgatory).

A DeleteTopics is answered once every topic it marked is gone from the cache of the broker that took it (the
controller removes a deleted topic's partitions with an UpdateMetadata), or at its timeout. The check runs on
each cache update, as Kafka's purgatory is checked when the cache changes; the timeout is the broker runtime's
sleep, so the simulator's virtual time drives it too.
"""

from __future__ import annotations

from collections.abc import Collection

from zkcontroller.broker.metadata_cache import MetadataCache
from zkcontroller.broker.purgatory import wait_on_cache
from zkcontroller.runtime.runtime import Runtime


async def wait_until_deleted(cache: MetadataCache, topics: Collection[str], timeout_ms: int,
                             runtime: Runtime) -> set[str]:
    """Wait until none of ``topics`` is in ``cache`` or ``timeout_ms`` has passed on ``runtime``; the topics still
    there (Kafka answers REQUEST_TIMED_OUT for them). A timeout <= 0 does not wait."""
    def remaining() -> set[str]:
        return {t for t in topics if cache.contains_topic(t)}

    return await wait_on_cache(cache, remaining, timeout_ms, runtime, "delete-topics")
