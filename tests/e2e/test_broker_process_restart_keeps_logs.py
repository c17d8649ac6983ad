"""A broker process SIGKILLed and started again keeps its logs' offsets, as Kafka's broker keeps its log segments
and high-watermark checkpoint (the page cache outlives the process). The chaos soak found the data loss this
prevents: a restarted controller broker kept its leadership, led from offset 0, and its followers truncated
acknowledged records to it. Here one broker leads a partition alone: after its restart the partition's end offset
(ListOffsets, through kafka-python) is still what was acknowledged before the kill."""

from __future__ import annotations

import asyncio
import random
import signal
from pathlib import Path

import pytest
from tests.helpers import wait_until

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.process_cluster import wait_registered

from .process_clusters import registered_zk, started_process_cluster

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(240)]

TOPIC = "kept"


def _produce(address: str, count: int) -> list[int]:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=address, acks=1, request_timeout_ms=20000, linger_ms=0,
                             enable_idempotence=False)
    try:
        futures = [producer.send(TOPIC, value=b"r%d" % i, partition=0) for i in range(count)]
        producer.flush(timeout=60)
        return [f.get(timeout=60).offset for f in futures]
    finally:
        producer.close(timeout=30)


def _end_offset(address: str) -> int | None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import KafkaError

    consumer = KafkaConsumer(bootstrap_servers=address, request_timeout_ms=10000)
    try:
        return int(consumer.end_offsets([TopicPartition(TOPIC, 0)])[TopicPartition(TOPIC, 0)])
    except KafkaError:
        return None  # not led yet
    finally:
        consumer.close()


async def _led(address: str) -> bool:
    return await asyncio.to_thread(_end_offset, address) is not None


async def test_a_sigkilled_broker_process_restarts_with_its_logs(tmp_path: Path) -> None:
    with started_process_cluster(tmp_path, [1], session_timeout_ms=6000) as cluster:
        async with registered_zk(cluster) as zk:
            await TopicAdmin(zk, random.Random(1)).create_topic_with_assignment(TOPIC, {0: [1]}, {})
            address = cluster.bootstrap
            await wait_until(lambda: _led(address), 60, "broker 1 to lead kept-0", poll_s=0.2)
            offsets = await asyncio.to_thread(_produce, address, 25)
            assert offsets == list(range(25))
            cluster.signal(1, signal.SIGKILL)
            cluster.start_broker(1)  # waits out its old session's registration, then leads again
            await wait_registered(zk, [1])
            await wait_until(lambda: _led(address), 60, "broker 1 to lead kept-0 again", poll_s=0.2)
            assert await asyncio.to_thread(_end_offset, address) == 25  # not 0: the log survived the kill
            assert (Path(tmp_path) / "kafka-logs-1" / ".lock").exists()
