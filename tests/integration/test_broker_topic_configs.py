"""Brokers learn topic configs as Kafka 2.8.2's do: ``/config/topics/<t>`` is read when a LeaderAndIsr creates the
topic's log, and a ``/config/changes`` notification makes every broker holding the topic read it again; a topic
without overrides, or a config node Kafka reads as none (not JSON), has the broker defaults; one Kafka fails on
keeps the config it had. On the embedded store and on a real ZooKeeper."""

from __future__ import annotations

import logging
import random

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory

from zkcontroller.admin.configs import alter_topic_config
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.broker.topic_config_manager import OWN_LOGGER
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

LISTENER_LOGGER = "kafka.common.ZkNodeChangeNotificationListener"
CONFIG_MANAGER_LOGGER = "kafka.server.DynamicConfigManager"


def min_isr(cluster: LocalCluster, topic: str) -> list[int]:
    return [s.replica_manager.min_insync_replicas(topic) for s in cluster.running_brokers()  # type: ignore[union-attr]
            if s.replica_manager is not None]


def max_bytes(cluster: LocalCluster, topic: str) -> list[int]:
    return [s.replica_manager.topic_configs.max_message_bytes(topic)  # type: ignore[union-attr]
            for s in cluster.running_brokers()]


def hosts(cluster: LocalCluster, topic: str) -> bool:
    return all(any(tp.topic == topic for tp in s.replica_manager.partitions)  # type: ignore[union-attr]
               for s in cluster.running_brokers())


async def test_configs_are_read_at_log_creation_and_follow_changes(make_cluster: ClusterFactory,
                                                                   admin: KafkaZkClient) -> None:
    cluster = await make_cluster([1, 2])
    topics = TopicAdmin(admin, random.Random(1))
    await topics.create_topic("strict", 2, 2, {"min.insync.replicas": "2", "max.message.bytes": "2000"})
    await topics.create_topic("plain", 1, 2)
    await wait_until(lambda: hosts(cluster, "strict") and hosts(cluster, "plain"), what="logs created")
    await wait_until(lambda: min_isr(cluster, "strict") == [2, 2], what="strict's min.insync.replicas")
    assert max_bytes(cluster, "strict") == [2000, 2000]
    assert min_isr(cluster, "plain") == [1, 1] and max_bytes(cluster, "plain") == [1048588, 1048588]

    await alter_topic_config(admin, "strict", {"min.insync.replicas": "1"}, ["max.message.bytes"])
    await wait_until(lambda: min_isr(cluster, "strict") == [1, 1], what="the change notification applied")
    assert max_bytes(cluster, "strict") == [1048588, 1048588]  # the deleted override falls back to the default
    await alter_topic_config(admin, "plain", {"max.message.bytes": "10"}, [])
    await wait_until(lambda: max_bytes(cluster, "plain") == [10, 10], what="plain's max.message.bytes")


async def test_a_bad_config_node_keeps_the_config_and_is_logged(make_cluster: ClusterFactory, admin: KafkaZkClient,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    cluster = await make_cluster([1])
    topics = TopicAdmin(admin, random.Random(1))
    await topics.create_topic("t", 1, 1, {"min.insync.replicas": "2"})
    await wait_until(lambda: hosts(cluster, "t") and min_isr(cluster, "t") == [2], what="the config read")
    with caplog.at_level(logging.ERROR, OWN_LOGGER), caplog.at_level(logging.ERROR, LISTENER_LOGGER):
        refused = b'{"version":1,"config":{"min.insync.replicas":"0"}}'
        await admin.session.set_data(paths.topic_config_path("t"), refused, -1)
        await admin.create_config_change_notification("topics/t")
        await wait_until(lambda: "Ignoring the config of topic t" in caplog.text, what="the refusal logged")
        assert min_isr(cluster, "t") == [2]
        not_a_string = b'{"version":1,"config":{"min.insync.replicas":3}}'  # Kafka's decode throws
        await admin.session.set_data(paths.topic_config_path("t"), not_a_string, -1)
        failed = await admin.create_config_change_notification("topics/t")
        await wait_until(lambda: f"error processing change notification {{\"version\":2,\"entity_path\":\"topics/t\"}} "
                                 f"from {failed}" in caplog.text, what="Kafka's failure line for the malformed node")
        assert "Expected `String` value, received 3" in caplog.text
        assert min_isr(cluster, "t") == [2]
    with caplog.at_level(logging.WARNING, OWN_LOGGER):
        await admin.session.set_data(paths.topic_config_path("t"), b"not json", -1)  # Kafka: no overrides
        await admin.create_config_change_notification("topics/t")
        await wait_until(lambda: min_isr(cluster, "t") == [1], what="the node read as no overrides")
        assert "Reading the topic config /config/topics/t as no overrides" in caplog.text
    # the broker still follows later changes, logging them as Kafka's listener and DynamicConfigManager do
    caplog.clear()
    with caplog.at_level(logging.INFO, LISTENER_LOGGER), caplog.at_level(logging.INFO, CONFIG_MANAGER_LOGGER):
        await admin.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {"min.insync.replicas": "3"})
        await admin.create_config_change_notification("topics/t")
        await wait_until(lambda: min_isr(cluster, "t") == [3], what="a good change after bad ones")
    kafka_lines = [(r.name, r.getMessage()) for r in caplog.records
                   if r.name in (LISTENER_LOGGER, CONFIG_MANAGER_LOGGER)]
    assert kafka_lines == [
        (LISTENER_LOGGER, "Processing notification(s) to /config/changes"),
        (CONFIG_MANAGER_LOGGER, "Processing override for entityPath: topics/t with config: "
                                "HashMap(min.insync.replicas -> 3)"),
    ]
    # our own lines carry our logger and our class's ident, none Kafka's
    assert all(r.getMessage().startswith("[TopicConfigManager broker=1] ")
               for r in caplog.records if r.name == OWN_LOGGER)


async def test_a_config_refused_at_log_creation_leaves_the_defaults_and_is_still_followed(
        make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture) -> None:
    cluster = await make_cluster([1])
    await admin.set_or_create_entity_configs(paths.ConfigType.TOPIC, "u", {"min.insync.replicas": "0"})
    with caplog.at_level(logging.ERROR, OWN_LOGGER):
        await admin.create_topic_assignment("u", None, {TopicPartition("u", 0): ReplicaAssignment((1,))})
        await wait_until(lambda: hosts(cluster, "u") and "Ignoring the config of topic u" in caplog.text,
                         what="the log created, its config refused")
    assert min_isr(cluster, "u") == [1]
    await admin.set_or_create_entity_configs(paths.ConfigType.TOPIC, "u", {"min.insync.replicas": "2"})
    await admin.create_config_change_notification("topics/u")
    await wait_until(lambda: min_isr(cluster, "u") == [2], what="the fixed config applied")


async def test_a_recreated_topic_gets_its_new_config(make_cluster: ClusterFactory, admin: KafkaZkClient) -> None:
    cluster = await make_cluster([1, 2])
    topics = TopicAdmin(admin, random.Random(1))
    await topics.create_topic("again", 1, 2, {"min.insync.replicas": "2"})
    await wait_until(lambda: hosts(cluster, "again") and min_isr(cluster, "again") == [2, 2], what="first config")
    await topics.delete_topic("again")
    await wait_until(lambda: not any(tp.topic == "again" for s in cluster.running_brokers()  # type: ignore[union-attr]
                                     for tp in s.replica_manager.partitions), what="the logs deleted")
    assert min_isr(cluster, "again") == [1, 1]  # forgotten with its last log

    async def gone() -> bool:
        return not any([await admin.path_exists(paths.topic_path("again")),
                        await admin.path_exists(paths.delete_topic_path("again"))])
    await wait_until(gone, what="the deletion completed")
    await topics.create_topic("again", 1, 2, {"max.message.bytes": "77"})
    await wait_until(lambda: hosts(cluster, "again") and max_bytes(cluster, "again") == [77, 77],
                     what="the new config read at the new log's creation")
    assert min_isr(cluster, "again") == [1, 1]


async def test_a_session_expiry_is_no_config_change_and_changes_are_followed_after_it(
        make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture) -> None:
    """An expiry reaches the ``/config/changes`` watcher as a state event (no path), as it does Kafka's, whose
    ZooKeeperClient hands only path events to znode handlers. Read as a change, it read the znode on the dead
    session, and every ``expire`` at the prompt printed "ERROR ... Cannot read /config/changes: SESSION_EXPIRED"."""
    cluster = await make_cluster([1])
    topics = TopicAdmin(admin, random.Random(1))
    await topics.create_topic("t", 1, 1, {"min.insync.replicas": "2"})
    await wait_until(lambda: hosts(cluster, "t") and min_isr(cluster, "t") == [2], what="the config read")
    before = cluster.brokers[1].control_plane.broker_epoch  # type: ignore[union-attr]
    with caplog.at_level(logging.ERROR, LISTENER_LOGGER), caplog.at_level(logging.ERROR, OWN_LOGGER), \
            caplog.at_level(logging.ERROR, "kafka.controller"):
        await cluster.expire_broker_session(1)
        await wait_until(lambda: cluster.brokers[1].control_plane.broker_epoch != before,  # type: ignore[union-attr]
                         what="the broker registered again on a new session")
        await admin.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {"min.insync.replicas": "3"})
        await admin.create_config_change_notification("topics/t")
        await wait_until(lambda: min_isr(cluster, "t") == [3], what="a change after the expiry")
    # Kafka's "Error while processing notification change for path", from the broker's listener
    broker_lines = [r.getMessage() for r in caplog.records if r.name in (LISTENER_LOGGER, OWN_LOGGER)]
    assert not [line for line in broker_lines if "/config/changes" in line], broker_lines
    # The controller's events the lost session queued are dropped (Kafka's clearAndPut(Expire)), not each run and
    # failed on the dead session; only the one in flight when it died may fail, with one line, as Kafka's would
    controller_lines = [f"{r.getMessage()} {r.exc_info[1] if r.exc_info else ''}" for r in caplog.records
                        if r.name.startswith("kafka.controller")]
    assert len(controller_lines) <= 1, controller_lines
