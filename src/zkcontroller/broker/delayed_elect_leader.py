"""Waiting for elected or new leaders to reach this broker's metadata cache (Kafka's ``DelayedElectLeader`` in the
elect-leader purgatory, and ``DelayedCreatePartitions`` in the topic purgatory).

An ElectLeaders answer waits until the cache shows each elected partition led by the broker the controller chose;
a CreatePartitions answer until every new partition has a leader. Both are checked on each cache update (Kafka's
purgatories are checked when the cache changes) and bounded by the request's timeout, the broker runtime's sleep,
so the simulator's virtual time drives it too. What is still pending at the timeout is answered
REQUEST_TIMED_OUT.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from zkcontroller.broker.metadata_cache import MetadataCache
from zkcontroller.broker.purgatory import wait_on_cache
from zkcontroller.model import NO_LEADER, TopicPartition
from zkcontroller.runtime.runtime import Runtime


async def wait_for_leaders(cache: MetadataCache, expected: Mapping[TopicPartition, int], timeout_ms: int,
                           runtime: Runtime) -> set[TopicPartition]:
    """``DelayedElectLeader``: the partitions whose cached leader is not yet the expected one at the end."""
    def pending() -> set[TopicPartition]:
        return {tp for tp, leader in expected.items()
                if (state := cache.partition_info(tp)) is None or state.leader != leader}

    return await wait_on_cache(cache, pending, timeout_ms, runtime, "elect-leader")


async def wait_for_any_leader(cache: MetadataCache, partitions: Collection[TopicPartition], timeout_ms: int,
                              runtime: Runtime) -> set[TopicPartition]:
    """``DelayedCreatePartitions``: the partitions still unknown to the cache or without a leader at the end."""
    def pending() -> set[TopicPartition]:
        return {tp for tp in partitions if (state := cache.partition_info(tp)) is None or state.leader == NO_LEADER}

    return await wait_on_cache(cache, pending, timeout_ms, runtime, "create-partitions")
