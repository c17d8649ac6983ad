"""Topic configs seen by Kafka's own clients against two `zkcontroller broker` processes (server.properties sets
``min.insync.replicas``, ``message.max.bytes`` and ``log.retention.hours``) and a real ZooKeeper:
confluent-kafka's ``AdminClient.describe_configs`` and kafka-python's ``KafkaAdminClient.describe_configs`` read a
topic's overrides and its defaults (with Kafka's sources), and a broker's own configs; a producer's record above
the topic's ``max.message.bytes`` is refused with RECORD_TOO_LARGE. Every wait is on a condition with a bound.

Under load (other suites' JVMs and brokers on the same two cores) the start-up is the slow part, and it was billed
to the first test: the module's cluster (a ZooKeeper JVM, two broker processes) came out of that test's 240 s. So
each test's timeout covers its own body (``func_only``), and the set-up is bounded step by step instead, each
failing with what it waited for: ZooKeeper answering (60 s), both brokers registered (60 s), the topic led (60 s),
and both brokers' metadata caches listing it (60 s), which the clients need: a broker answers a topic its cache
does not know yet UNKNOWN_TOPIC_OR_PARTITION. Sessions are Kafka's default 18 s, not 6 s: a broker starved for a
few seconds would otherwise lose its session and re-register mid-test, which no test here is about."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from tests.e2e.process_clusters import registered_zk, started_process_cluster
from tests.helpers import wait_until

from zkcontroller.admin.metadata_client import MetadataUnavailableError, partition_replicas
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.process_cluster import ProcessCluster
from zkcontroller.model import TopicPartition
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(240, func_only=True)]

TOPIC = "configured"
SERVER_PROPERTIES = {"min.insync.replicas": "1", "message.max.bytes": "200000", "log.retention.hours": "100"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    with started_process_cluster(tmp_path_factory.mktemp("configs"), [1, 2], session_timeout_ms=18000,
                                 extra=SERVER_PROPERTIES) as c:
        yield c


@pytest.fixture
async def topic(cluster: ProcessCluster) -> AsyncIterator[KafkaZkClient]:
    """``TOPIC`` with two overrides, led and in both brokers' metadata caches (created once for the module)."""
    async with registered_zk(cluster) as zk:
        if TOPIC not in await zk.get_all_topics_in_cluster():
            await TopicAdmin(zk, random.Random(1)).create_topic(TOPIC, 1, 2, {"retention.ms": "12345",
                                                                               "max.message.bytes": "5000"})

        async def led() -> bool:
            state = await zk.get_topic_partition_states([TopicPartition(TOPIC, 0)])
            return bool(state.values) and all(s.leader_and_isr.leader >= 0 for s in state.values.values())
        await wait_until(led, timeout_s=60, what=f"{TOPIC} led", poll_s=0.1)
        for b in cluster.brokers.values():
            async def cached(port: int = b.port) -> bool:
                try:
                    return TopicPartition(TOPIC, 0) in await partition_replicas("127.0.0.1", port, [TOPIC])
                except MetadataUnavailableError:  # a broker slow to answer under load: asked again
                    return False
            await wait_until(cached, timeout_s=60, what=f"{TOPIC} in broker {b.broker_id}'s metadata cache",
                             poll_s=0.1)
        yield zk


def _confluent(bootstrap: str, kind: str, name: str) -> dict[str, Any]:
    from confluent_kafka.admin import AdminClient, ConfigResource

    client = AdminClient({"bootstrap.servers": bootstrap})
    futures = client.describe_configs([ConfigResource(kind, name)], request_timeout=30)
    (future,) = futures.values()
    return future.result(timeout=60)


async def test_confluent_kafka_reads_overrides_defaults_and_sources(cluster: ProcessCluster, topic: Any) -> None:
    from confluent_kafka.admin import ConfigSource

    configs = await asyncio.to_thread(_confluent, cluster.bootstrap, "topic", TOPIC)
    assert configs["retention.ms"].value == "12345"
    assert configs["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert configs["max.message.bytes"].value == "5000"
    assert configs["min.insync.replicas"].value == "1"  # server.properties
    assert configs["min.insync.replicas"].source == ConfigSource.STATIC_BROKER_CONFIG.value
    assert configs["cleanup.policy"].value == "delete"
    assert configs["cleanup.policy"].source == ConfigSource.DEFAULT_CONFIG.value
    assert configs["cleanup.policy"].is_default
    broker = await asyncio.to_thread(_confluent, cluster.bootstrap, "broker", "2")
    assert broker["message.max.bytes"].value == "200000"
    assert broker["message.max.bytes"].source == ConfigSource.STATIC_BROKER_CONFIG.value
    assert broker["broker.id"].value == "2" and broker["broker.id"].is_read_only
    assert broker["num.partitions"].value == "1"
    assert broker["num.partitions"].source == ConfigSource.DEFAULT_CONFIG.value


async def test_kafka_python_reads_overrides_and_defaults(cluster: ProcessCluster, topic: Any) -> None:
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

    def describe() -> dict[str, Any]:
        client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000)
        try:
            return client.describe_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC)], include_synonyms=True,
                                           config_filter="all")
        finally:
            client.close()

    described = await asyncio.to_thread(describe)
    configs = described["topic"][TOPIC]
    values = {name: c["value"] for name, c in configs.items()}
    assert values["retention.ms"] == "12345" and values["max.message.bytes"] == "5000"
    assert values["min.insync.replicas"] == "1" and values["segment.bytes"] == "1073741824"


async def test_a_record_above_the_topics_max_message_bytes_is_record_too_large(cluster: ProcessCluster,
                                                                                 topic: Any) -> None:
    from kafka import KafkaProducer
    from kafka.errors import MessageSizeTooLargeError

    def send(size: int) -> Any:
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000, retries=0,
                                 linger_ms=0)
        try:
            return producer.send(TOPIC, b"x" * size, partition=0).get(timeout=60)
        finally:
            producer.close(timeout=10)

    assert (await asyncio.to_thread(send, 100)).offset >= 0
    with pytest.raises(MessageSizeTooLargeError):
        await asyncio.to_thread(send, 6000)
