"""DescribeConfigs (API 32) over a real socket once dynamic broker configs are set (Kafka 2.8.2's ``ConfigHelper``
with ``DynamicBrokerConfig``): sources DYNAMIC_BROKER_CONFIG / DYNAMIC_DEFAULT_BROKER_CONFIG and the synonyms in
Kafka's order (per-broker, cluster default, server.properties, default), for a TOPIC and for the BROKER."""

from __future__ import annotations

import random

from tests.helpers import wait_until
from tests.integration.listening import Cluster

from zkcontroller.admin.configs import alter_broker_config
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.protocol.wire import describe_configs as dc
from zkcontroller.protocol.wire.describe_configs import ConfigResourceQuery
from zkcontroller.zk import paths

from .admin_fixture import address, admin_cluster_fixture, leader  # noqa: F401 (the fixture)
from .test_describe_configs_wire import by_name, describe

TOPIC, BROKER = 2, 4
TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, DEFAULT_CONFIG = 1, 2, 3, 5


async def test_dynamic_sources_for_a_topic_and_the_broker(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    await TopicAdmin(zk, random.Random(1)).create_topic("orders", 1, 2, {"retention.ms": "1000"})
    await wait_until(lambda: all(leader(s, "orders", 0) not in (None, -1) for s in cluster.running_brokers()),
                     what="orders in every cache")
    server = cluster.running_brokers()[0]
    await alter_broker_config(zk, paths.DEFAULT_ENTITY, {"min.insync.replicas": "2", "message.max.bytes": "2000"},
                              [], via_broker=True)
    await alter_broker_config(zk, str(server.broker_id), {"message.max.bytes": "3000"}, [], via_broker=True)
    rm = server.replica_manager
    assert rm is not None
    await wait_until(lambda: rm.topic_configs.defaults.dynamic_broker.get("message.max.bytes") == "3000"
                     and rm.topic_configs.defaults.dynamic_default.get("min.insync.replicas") == "2",
                     what="the dynamic levels applied")

    at = address(cluster, server)
    [result] = await describe(at, 3, ConfigResourceQuery(TOPIC, "orders"), synonyms=True)
    configs = by_name(result)
    mis, mmb, retention = configs["min.insync.replicas"], configs["max.message.bytes"], configs["retention.ms"]
    assert (mis.value, mis.source, mis.synonyms) == ("2", DYNAMIC_DEFAULT_BROKER_CONFIG, (
        dc.Synonym("min.insync.replicas", "2", DYNAMIC_DEFAULT_BROKER_CONFIG),
        dc.Synonym("min.insync.replicas", "1", DEFAULT_CONFIG)))
    assert (mmb.value, mmb.source, mmb.synonyms) == ("3000", DYNAMIC_BROKER_CONFIG, (
        dc.Synonym("message.max.bytes", "3000", DYNAMIC_BROKER_CONFIG),
        dc.Synonym("message.max.bytes", "2000", DYNAMIC_DEFAULT_BROKER_CONFIG),
        dc.Synonym("message.max.bytes", "1048588", DEFAULT_CONFIG)))
    assert (retention.value, retention.source) == ("1000", TOPIC_CONFIG)  # the topic override still wins

    [result] = await describe(at, 3, ConfigResourceQuery(BROKER, str(server.broker_id)), synonyms=True)
    configs = by_name(result)
    assert (configs["message.max.bytes"].value, configs["message.max.bytes"].source) == ("3000", DYNAMIC_BROKER_CONFIG)
    assert [s.source for s in configs["message.max.bytes"].synonyms] == [
        DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, DEFAULT_CONFIG]
    assert (configs["min.insync.replicas"].value, configs["min.insync.replicas"].source) == (
        "2", DYNAMIC_DEFAULT_BROKER_CONFIG)

    # the other broker keeps only the cluster default
    other = cluster.running_brokers()[1]
    other_rm = other.replica_manager
    assert other_rm is not None
    await wait_until(lambda: other_rm.topic_configs.defaults.dynamic_default.get("message.max.bytes") == "2000",
                     what="the other broker's default level")
    [result] = await describe(address(cluster, other), 1, ConfigResourceQuery(TOPIC, "orders"), synonyms=True)
    assert (by_name(result)["max.message.bytes"].value, by_name(result)["max.message.bytes"].source) == (
        "2000", DYNAMIC_DEFAULT_BROKER_CONFIG)
