"""Dynamic broker configs set a broker's log defaults (Kafka 2.8.2's ``DynamicLogConfig``): a cluster-default
``min.insync.replicas`` written to ``/config/brokers/<default>`` makes an acks=-1 produce to a topic without an
override answer NOT_ENOUGH_REPLICAS once its ISR is smaller, a per-broker value overrides it, and a topic override
still wins over both. On the embedded store and on a real ZooKeeper."""

from __future__ import annotations

import logging
import random

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory

from zkcontroller.admin.configs import alter_broker_config
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.broker.produce import ProducePartition, produce
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.model import TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

NONE, NOT_ENOUGH_REPLICAS = 0, 19


def batch() -> bytes:
    b = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    b.append(timestamp=1_000, key=None, value=b"v")
    b.close()
    return bytes(b.buffer())


async def produce_error(server: KafkaServer, topic: str) -> int:
    rm, plane = server.replica_manager, server.control_plane
    assert rm is not None and plane is not None
    answered = await produce(8, -1, 5_000, "app", [ProducePartition(topic, 0, batch())],
                             cache=plane.metadata_cache, target=rm.produce_target())
    return answered[0].error


def min_isr(server: KafkaServer, topic: str) -> int:
    assert server.replica_manager is not None
    return server.replica_manager.min_insync_replicas(topic)


async def test_dynamic_min_insync_replicas_default_then_per_broker(make_cluster: ClusterFactory,
                                                                   admin: KafkaZkClient) -> None:
    cluster = await make_cluster([1])
    server = cluster.brokers[1]
    topics = TopicAdmin(admin, random.Random(1))
    await topics.create_topic("plain", 1, 1)
    await topics.create_topic("own", 1, 1, {"min.insync.replicas": "1"})
    cache = server.control_plane.metadata_cache  # type: ignore[union-attr]
    # a produce is refused (UNKNOWN_TOPIC_OR_PARTITION) until the broker's cache has the partition, which the
    # UpdateMetadata after the LeaderAndIsr brings: leading alone is not enough
    await wait_until(lambda: bool(cluster.leaders("plain")) and bool(cluster.leaders("own"))
                     and cache.contains(TopicPartition("plain", 0)) and cache.contains(TopicPartition("own", 0)),
                     what="leaders, in the broker's metadata cache")
    assert await produce_error(server, "plain") == NONE

    await alter_broker_config(admin, paths.DEFAULT_ENTITY, {"min.insync.replicas": "2"}, [], via_broker=True)
    await wait_until(lambda: min_isr(server, "plain") == 2, what="the cluster default applied")
    assert await produce_error(server, "plain") == NOT_ENOUGH_REPLICAS  # ISR [1] < 2
    assert await produce_error(server, "own") == NONE  # the topic override wins

    await alter_broker_config(admin, "1", {"min.insync.replicas": "1"}, [], via_broker=True)
    await wait_until(lambda: min_isr(server, "plain") == 1, what="the per-broker value applied")
    assert await produce_error(server, "plain") == NONE

    await alter_broker_config(admin, "1", {}, ["min.insync.replicas"], via_broker=True)
    await wait_until(lambda: min_isr(server, "plain") == 2, what="back to the cluster default")
    assert await produce_error(server, "plain") == NOT_ENOUGH_REPLICAS


async def test_dynamic_configs_present_at_start_up_are_applied(make_cluster: ClusterFactory,
                                                               admin: KafkaZkClient) -> None:
    await admin.set_or_create_entity_configs(paths.ConfigType.BROKER, paths.DEFAULT_ENTITY,
                                             {"message.max.bytes": "5000", "min.insync.replicas": "2"})
    await admin.set_or_create_entity_configs(paths.ConfigType.BROKER, "1", {"min.insync.replicas": "3"})
    cluster = await make_cluster([1])
    server = cluster.brokers[1]
    await TopicAdmin(admin, random.Random(1)).create_topic("t", 1, 1)
    await wait_until(lambda: bool(cluster.leaders("t")), what="a leader")
    assert server.replica_manager is not None
    configs = server.replica_manager.topic_configs
    await wait_until(lambda: "t" in configs.topics, what="the topic's config read")
    assert (configs.min_insync_replicas("t"), configs.max_message_bytes("t")) == (3, 5000)


async def test_invalid_and_non_json_dynamic_configs_are_ignored(make_cluster: ClusterFactory, admin: KafkaZkClient,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    cluster = await make_cluster([1])
    server = cluster.brokers[1]
    await TopicAdmin(admin, random.Random(1)).create_topic("t", 1, 1)
    await wait_until(lambda: bool(cluster.leaders("t")), what="a leader")
    with caplog.at_level(logging.WARNING):
        await admin.set_or_create_entity_configs(paths.ConfigType.BROKER, paths.DEFAULT_ENTITY,
                                                 {"min.insync.replicas": "0", "message.max.bytes": "7000"})
        await admin.create_config_change_notification(f"brokers/{paths.DEFAULT_ENTITY}")
        assert server.replica_manager is not None
        configs = server.replica_manager.topic_configs
        await wait_until(lambda: configs.max_message_bytes("t") == 7000, what="the valid value applied")
        assert min_isr(server, "t") == 1
        assert ("Dynamic default cluster config contains invalid values in: Set(min.insync.replicas), these "
                "configs will be ignored") in caplog.text
        await admin.session.set_data(paths.broker_config_path(paths.DEFAULT_ENTITY), b"not json", -1)
        await admin.create_config_change_notification(f"brokers/{paths.DEFAULT_ENTITY}")
        await wait_until(lambda: configs.max_message_bytes("t") == 1048588, what="the level read as empty")
        assert "as no overrides" in caplog.text


async def test_another_brokers_config_is_not_applied(make_cluster: ClusterFactory, admin: KafkaZkClient) -> None:
    cluster = await make_cluster([1])
    server = cluster.brokers[1]
    await TopicAdmin(admin, random.Random(1)).create_topic("t", 1, 1)
    await wait_until(lambda: bool(cluster.leaders("t")), what="a leader")
    await admin.set_or_create_entity_configs(paths.ConfigType.BROKER, "2", {"min.insync.replicas": "3"})
    await admin.create_config_change_notification("brokers/2")
    await alter_broker_config(admin, paths.DEFAULT_ENTITY, {"message.max.bytes": "900"}, [], via_broker=True)
    assert server.replica_manager is not None
    configs = server.replica_manager.topic_configs
    await wait_until(lambda: configs.max_message_bytes("t") == 900, what="the later notification read")
    assert min_isr(server, "t") == 1 and configs.defaults.dynamic_broker == {}
