"""ListOffsets by timestamp (``offsets_for_times``) over what real clients produce with each record format, as
Kafka 2.8 answers it. A 2.8 log converts a legacy (magic 0/1) message set to one v2 batch (LogValidator's
``convertAndAssignOffsetsNonCompressed`` / ``buildRecordsAndAssignOffsets``), whose first and max timestamps are its
messages' (a gzip wrapper's inner ones); magic 0 has none (-1), so a CreateTime topic's time index gets nothing for
it and a lookup answers -1, while a LogAppendTime topic's batch carries the append time whatever the magic. A zstd
v2 batch's header carries its timestamps like any other codec's.

Before, only v2 batches reached the time index: a legacy set got no entry, so ``offsets_for_times`` over a v0.10
producer's records answered None (offset -1), and a LogAppendTime topic's legacy records too.

A legacy set's timestamps pass Kafka's checks before they get there: with ``message.timestamp.difference.max.ms``
a v0.10 producer's message out of range is refused (INVALID_TIMESTAMP), so it cannot hide the later sets from
lookups."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest
from tests.helpers import wait_until
from tests.integration.listening import Cluster

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.model import TopicPartition

from .admin_fixture import address, admin_cluster_fixture, leader  # noqa: F401 (the fixture)

LOOKUP_TIMEOUT_MS = 20_000


async def led_topic(cluster: Cluster, topic: str, configs: dict[str, str] | None = None) -> str:
    """Create ``topic`` (one partition, replication factor 2, ``configs``); its leader's listener address once
    the leader hosts it and knows its configs."""
    running, zk = cluster
    await TopicAdmin(zk, random.Random(1)).create_topic(topic, 1, 2, configs)
    tp = TopicPartition(topic, 0)

    def led() -> bool:
        return all(leader(s, topic, 0) not in (None, -1) for s in running.running_brokers())
    await wait_until(led, timeout_s=30, what=f"{topic} led in every broker's cache")
    (server,) = [s for s in running.running_brokers() if leader(s, topic, 0) == s.broker_id]
    await wait_until(lambda: server.replica_manager.partition(tp) is not None, timeout_s=30, what=f"{tp} hosted")
    return address(running, server)


@pytest.fixture
async def cluster(admin_cluster: Cluster) -> AsyncIterator[Cluster]:
    yield admin_cluster


def produce_sets(at: str, topic: str, sets: Sequence[Sequence[int | None]], compression: str | None = None,
                 **producer_config: Any) -> None:
    """kafka-python: each inner list one batch (one message set for an old protocol), sent together then flushed,
    a record per timestamp, to partition 0; ``producer_config``: more of ``KafkaProducer``'s settings."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=at, linger_ms=60_000, batch_size=1 << 20, compression_type=compression,
                             request_timeout_ms=20_000, **producer_config)
    try:
        for timestamps in sets:
            futures = [producer.send(topic, b"v", partition=0, timestamp_ms=ts) for ts in timestamps]
            producer.flush(30)
            for future in futures:
                future.get(timeout=30)
    finally:
        producer.close()


def produce_legacy(at: str, topic: str, sets: list[list[int | None]], api_version: tuple[int, ...],
                   compression: str | None = None) -> None:
    """`produce_sets` speaking an old protocol (``api_version`` (0, 10, 1): Produce v2, magic 1; (0, 9): Produce v1,
    magic 0), acks=-1."""
    produce_sets(at, topic, sets, compression, api_version=api_version, acks=-1)


def look_up(at: str, topic: str, targets: list[int]) -> list[tuple[int, int] | None]:
    """kafka-python's ``offsets_for_times`` (ListOffsets v1+ by timestamp) for each target: (offset, timestamp), or
    None when the broker answers offset -1."""
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KafkaTopicPartition

    tp = KafkaTopicPartition(topic, 0)
    consumer = KafkaConsumer(bootstrap_servers=at, request_timeout_ms=LOOKUP_TIMEOUT_MS)
    try:
        found = [consumer.offsets_for_times({tp: target})[tp] for target in targets]
    finally:
        consumer.close()
    return [None if f is None else (f.offset, f.timestamp) for f in found]


async def in_thread(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return await asyncio.to_thread(call, *args, **kwargs)


async def test_a_v0_10_producers_message_sets_are_found_by_timestamp(cluster: Cluster) -> None:
    """Magic 1, uncompressed, one message per set: each set's timestamp is its converted batch's."""
    at = await led_topic(cluster, "legacy")
    await in_thread(produce_legacy, at, "legacy", [[1_000], [2_000], [3_000]], (0, 10, 1))
    assert await in_thread(look_up, at, "legacy", [500, 1_500, 3_000, 3_001]) == [
        (0, 1_000), (1, 2_000), (2, 3_000), None]


@pytest.mark.parametrize("compression", [None, "gzip"])
async def test_a_legacy_sets_max_timestamp_is_its_largest_messages(cluster: Cluster, compression: str | None
                                                                   ) -> None:
    """Magic 1 sets of several messages, plain or in one gzip wrapper (whose inner messages are read): the
    first set (1,000, 2,000, 1,200) reaches 2,000, not only its first or last message's timestamp. A target inside
    a set names the message Kafka names, offset 1 (before: the set's base offset with its max timestamp)."""
    topic = f"legacy-{compression or 'none'}"
    at = await led_topic(cluster, topic)
    await in_thread(produce_legacy, at, topic, [[1_000, 2_000, 1_200], [3_000, 2_500]], (0, 10, 1), compression)
    assert await in_thread(look_up, at, topic, [1_000, 1_900, 2_100, 3_000, 3_001]) == [
        (0, 1_000), (1, 2_000), (3, 3_000), (3, 3_000), None]


async def test_a_v0_9_producers_messages_have_no_timestamp_to_find(cluster: Cluster) -> None:
    """Magic 0 carries no timestamps: a CreateTime topic's converted batch has max timestamp -1, which the time
    index never takes, so every lookup answers -1 (kafka-python: None), as Kafka 2.8's does; latest still moves."""
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KafkaTopicPartition

    at = await led_topic(cluster, "magic0")
    await in_thread(produce_legacy, at, "magic0", [[1_000], [2_000]], (0, 9))
    assert await in_thread(look_up, at, "magic0", [0, 1_000, 2_000]) == [None, None, None]

    def end() -> int:
        consumer = KafkaConsumer(bootstrap_servers=at, request_timeout_ms=LOOKUP_TIMEOUT_MS)
        try:
            tp = KafkaTopicPartition("magic0", 0)
            return int(consumer.end_offsets([tp])[tp])
        finally:
            consumer.close()
    assert await in_thread(end) == 2


@pytest.mark.parametrize("api_version", [(0, 9), (0, 10, 1)])
async def test_a_log_append_time_topics_legacy_records_carry_the_append_time(cluster: Cluster,
                                                                              api_version: tuple[int, ...]) -> None:
    """``message.timestamp.type=LogAppendTime``: the converted batch carries the broker's clock at the append,
    whatever the message's magic (magic 0 included), so a lookup at or before that time finds it."""
    topic = f"stamped-{len(api_version)}"
    at = await led_topic(cluster, topic, {"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    await in_thread(produce_legacy, at, topic, [[1_000, 1_001]], api_version, None)
    after = int(time.time() * 1000)
    (first, beyond) = await in_thread(look_up, at, topic, [0, after + 60_000])
    assert first is not None and first[0] == 0 and before <= first[1] <= after, (first, before, after)
    assert beyond is None


async def test_a_zstd_batch_is_found_by_timestamp(cluster: Cluster) -> None:
    """librdkafka (confluent-kafka), Produce v7+ with zstd: the batch header's timestamps are used as for every
    other codec (non-monotonic within a batch: its max, not its last), and the record Kafka names inside a batch is
found by reading the zstd records. Looked up with librdkafka's own
    ``offsets_for_times`` too."""
    from confluent_kafka import Consumer, Producer
    from confluent_kafka import TopicPartition as RdTopicPartition

    at = await led_topic(cluster, "zstd")

    def produce_and_look_up() -> list[int]:
        producer = Producer({"bootstrap.servers": at, "compression.type": "zstd", "linger.ms": 10_000,
                             "acks": "all", "message.timeout.ms": 60_000})
        for batch in ([1_000], [2_000, 4_000, 3_000], [5_000]):
            for ts in batch:
                producer.produce("zstd", b"v" * 50, partition=0, timestamp=ts)
            assert producer.flush(30) == 0
        consumer = Consumer({"bootstrap.servers": at, "group.id": "timeidx"})
        try:
            return [consumer.offsets_for_times([RdTopicPartition("zstd", 0, target)], timeout=20)[0].offset
                    for target in (1_500, 3_500, 4_001, 5_001)]
        finally:
            consumer.close()
    assert await in_thread(produce_and_look_up) == [1, 2, 4, -1]  # 3,500: the record of 4,000 inside the batch
    assert await in_thread(look_up, at, "zstd", [1_500, 4_000, 4_001]) == [(1, 2_000), (2, 4_000), (4, 5_000)]


async def test_a_large_gzip_wrapper_checked_on_the_worker_gives_its_timestamps(cluster: Cluster,
                                                                               monkeypatch: pytest.MonkeyPatch
                                                                               ) -> None:
    """A wrapper inflating beyond `produce.INLINE_SCAN_BYTES` is checked on the worker thread: the timestamps
    read there reach the time index all the same (the largest one in the middle of 2,000 inner messages)."""
    from zkcontroller.runtime import blocking_worker

    hops: list[str] = []
    real_run = blocking_worker.run

    async def counted(job: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        hops.append(getattr(job, "__name__", "?"))
        return await real_run(job, *args, **kwargs)
    monkeypatch.setattr(blocking_worker, "run", counted)
    at = await led_topic(cluster, "big")
    timestamps: list[int | None] = [1_000 + i for i in range(2_000)]
    timestamps[1_000] = 50_000
    await in_thread(produce_legacy, at, "big", [timestamps], (0, 10, 1), "gzip")
    assert hops == ["_validate_outcome"]
    assert await in_thread(look_up, at, "big", [1_000, 40_000, 50_000, 50_001]) == [
        (0, 1_000), (1_000, 50_000), (1_000, 50_000), None]  # the message inside the wrapper


async def test_a_legacy_message_out_of_the_difference_is_refused_and_not_indexed(cluster: Cluster) -> None:
    """A CreateTime topic with ``message.timestamp.difference.max.ms``: kafka-python's v0.10 set at 2**62 is
    refused (its future fails with InvalidTimestampError); the sets around it are appended and found."""
    from kafka.errors import InvalidTimestampError

    at = await led_topic(cluster, "bounded", {"message.timestamp.difference.max.ms": "3600000"})
    now = int(time.time() * 1000)
    await in_thread(produce_legacy, at, "bounded", [[now]], (0, 10, 1))
    with pytest.raises(InvalidTimestampError):
        await in_thread(produce_legacy, at, "bounded", [[2**62]], (0, 10, 1), "gzip")
    await in_thread(produce_legacy, at, "bounded", [[now + 1]], (0, 10, 1))
    assert await in_thread(look_up, at, "bounded", [now, now + 1, now + 2]) == [(0, now), (1, now + 1), None]
