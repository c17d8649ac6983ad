"""Configs altered by Kafka's own clients against two `zkcontroller broker` processes and a real ZooKeeper:
kafka-python's ``KafkaAdminClient.alter_configs`` (AlterConfigs and IncrementalAlterConfigs) and confluent-kafka's
``AdminClient.alter_configs`` / ``incremental_alter_configs`` change a topic's and a broker's configs, which the
brokers take up: a topic's ``min.insync.replicas`` raised above its replication factor makes an acks=all
produce fail with NOT_ENOUGH_REPLICAS. Every wait is on a condition with a bound."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from tests.e2e.process_clusters import registered_zk, started_process_cluster
from tests.helpers import wait_until

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.process_cluster import ProcessCluster
from zkcontroller.model import TopicPartition
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(240)]

_topics = itertools.count(1)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    with started_process_cluster(tmp_path_factory.mktemp("alter"), [1, 2], session_timeout_ms=30000) as c:
        yield c


@pytest.fixture
async def zk(cluster: ProcessCluster) -> AsyncIterator[KafkaZkClient]:
    async with registered_zk(cluster) as client:
        yield client


@pytest.fixture
async def topic(zk: KafkaZkClient) -> str:
    """A topic of the test's own (one partition, two replicas, ``retention.ms`` 12345), led with both replicas in
    sync: each test alters its configs, and one shared by the module made a test's expected configs those of
    the tests before it (run alone or in another order, it found the other test's ``retention.ms``)."""
    name = f"altered-{next(_topics)}"
    await TopicAdmin(zk, random.Random(1)).create_topic(name, 1, 2, {"retention.ms": "12345"})

    async def led() -> bool:
        state = await zk.get_topic_partition_states([TopicPartition(name, 0)])
        return bool(state.values) and all(s.leader_and_isr.leader >= 0 and len(s.leader_and_isr.isr) == 2
                                          for s in state.values.values())
    await wait_until(led, timeout_s=60, what=f"{name} led with both replicas in sync")
    return name


def _kafka_python_alter(bootstrap: str, kind: Any, name: str, configs: dict[str, Any], incremental: bool) -> Any:
    from kafka.admin import ConfigResource, KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        return client.alter_configs([ConfigResource(kind, name, configs)], incremental=incremental,
                                    raise_on_unknown=False)
    finally:
        client.close()


def _produce_all(bootstrap: str, topic: str) -> Any:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", request_timeout_ms=30000, retries=0,
                             linger_ms=0)
    try:
        # keyed: the test makes the topic compacted, which refuses keyless records (LogValidator.validateKey)
        return producer.send(topic, b"x", key=b"k", partition=0).get(timeout=60)
    finally:
        producer.close(timeout=10)


async def test_kafka_python_alters_a_topic_and_the_brokers_take_it_up(cluster: ProcessCluster, zk: KafkaZkClient,
                                                                      topic: str) -> None:
    from kafka.admin import AlterConfigOp, ConfigResourceType
    from kafka.errors import NotEnoughReplicasError

    assert (await asyncio.to_thread(_produce_all, cluster.bootstrap, topic)).offset >= 0
    # AlterConfigs: the whole config (kafka-python adds the other modified keys itself)
    result = await asyncio.to_thread(_kafka_python_alter, cluster.bootstrap, ConfigResourceType.TOPIC, topic,
                                     {"min.insync.replicas": "3"}, False)
    assert result == {"topic": {topic: "OK"}}
    assert await zk.get_entity_configs("topics", topic) == {"retention.ms": "12345", "min.insync.replicas": "3"}

    async def accepted() -> bool:
        try:
            await asyncio.to_thread(_produce_all, cluster.bootstrap, topic)
        except NotEnoughReplicasError:
            return False
        return True

    async def refused() -> bool:
        return not await accepted()
    await wait_until(refused, timeout_s=60, what="acks=all refused with min.insync.replicas above the ISR",
                     poll_s=0.2)
    # IncrementalAlterConfigs: DELETE restores the default, APPEND a list value
    result = await asyncio.to_thread(_kafka_python_alter, cluster.bootstrap, ConfigResourceType.TOPIC, topic,
                                     {"min.insync.replicas": (AlterConfigOp.DELETE, None),
                                      "cleanup.policy": (AlterConfigOp.APPEND, "compact")}, True)
    assert result == {"topic": {topic: "OK"}}
    assert await zk.get_entity_configs("topics", topic) == {"retention.ms": "12345",
                                                           "cleanup.policy": "delete,compact"}
    await wait_until(accepted, timeout_s=60, what="acks=all accepted again", poll_s=0.2)
    result = await asyncio.to_thread(_kafka_python_alter, cluster.bootstrap, ConfigResourceType.TOPIC, "nope",
                                     {"retention.ms": "1"}, True)
    assert result["topic"]["nope"].startswith("[Error 3] UnknownTopicOrPartitionError")


def _confluent_alter(bootstrap: str, topic: str) -> tuple[Any, Any, Any, Any]:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

    client = AdminClient({"bootstrap.servers": bootstrap})
    legacy = ConfigResource("topic", topic, set_config={"retention.ms": "777", "segment.ms": "60000"})
    first = client.alter_configs([legacy], request_timeout=30)[legacy].result(timeout=60)
    incremental = ConfigResource("topic", topic, incremental_configs=[
        ConfigEntry("segment.ms", None, incremental_operation=AlterConfigOpType.DELETE),
        ConfigEntry("max.message.bytes", "5000", incremental_operation=AlterConfigOpType.SET)])
    second = client.incremental_alter_configs([incremental], request_timeout=30)[incremental].result(timeout=60)
    broker = ConfigResource("broker", "2", incremental_configs=[
        ConfigEntry("log.retention.ms", "86400000", incremental_operation=AlterConfigOpType.SET)])
    third = client.incremental_alter_configs([broker], request_timeout=30)[broker].result(timeout=60)
    bad = ConfigResource("topic", topic, incremental_configs=[
        ConfigEntry("no.such.config", "1", incremental_operation=AlterConfigOpType.SET)])
    try:
        client.incremental_alter_configs([bad], request_timeout=30)[bad].result(timeout=60)
        refused: Any = None
    except KafkaException as e:
        refused = e.args[0]
    return first, second, third, refused


@pytest.mark.filterwarnings("ignore:alter_configs has been deprecated:DeprecationWarning")
async def test_confluent_kafka_alters_a_topic_and_a_broker(cluster: ProcessCluster, zk: KafkaZkClient,
                                                           topic: str) -> None:
    first, second, third, refused = await asyncio.to_thread(_confluent_alter, cluster.bootstrap, topic)
    assert first is None and second is None and third is None
    assert await zk.get_entity_configs("topics", topic) == {"retention.ms": "777", "max.message.bytes": "5000"}
    assert await zk.get_broker_configs("2") == {"log.retention.ms": "86400000"}
    assert refused is not None and refused.code() == 40  # INVALID_CONFIG
    assert "Unknown topic config name: no.such.config" in refused.str()
