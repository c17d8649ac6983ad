"""DescribeConfigs on a topic whose ``/config/topics/<t>`` is corrupt, as Kafka 2.8.2 answers it: ``ConfigHelper``
reads the node with ``fetchEntityConfig`` → ``ConfigEntityZNode.decode``, for which data that is not JSON (or has no
``config`` object) is no overrides: every key at its default, with a WARN naming the node here. A value that is not
a string throws in Kafka: UNKNOWN_SERVER_ERROR without a message, and the broker keeps serving."""

from __future__ import annotations

import logging
import random

import pytest
from tests.helpers import wait_until
from tests.integration.listening import Cluster

from zkcontroller.admin.configs import change_broker_config
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.protocol.wire.describe_configs import ConfigResourceQuery
from zkcontroller.zk import paths

from .admin_fixture import address, admin_cluster_fixture, leader  # noqa: F401 (the fixture)
from .test_describe_configs_wire import BROKER, DEFAULT_CONFIG, TOPIC, by_name, describe

UNKNOWN_SERVER_ERROR = -1


@pytest.fixture
async def corrupt(admin_cluster: Cluster) -> Cluster:
    cluster, zk = admin_cluster
    await TopicAdmin(zk, random.Random(1)).create_topic("bent", 1, 2, {"min.insync.replicas": "2"})
    await wait_until(lambda: all(leader(s, "bent", 0) not in (None, -1) for s in cluster.running_brokers()),
                     what="bent in every cache")
    return admin_cluster


@pytest.mark.parametrize("data", [
    pytest.param(b"not json", id="not-json"),
    pytest.param(b'{"version":1,"config":null}', id="config-null"),
])
async def test_a_node_kafka_reads_as_no_overrides_describes_the_defaults(
        corrupt: Cluster, data: bytes, caplog: pytest.LogCaptureFixture) -> None:
    cluster, zk = corrupt
    await zk.session.set_data(paths.topic_config_path("bent"), data, -1)
    with caplog.at_level(logging.WARNING, "zkcontroller.broker.DescribeConfigs"):
        [result] = await describe(address(cluster, cluster.running_brokers()[0]), 3,
                                  ConfigResourceQuery(TOPIC, "bent"))
    assert (result.error, result.message) == (0, None)
    configs = by_name(result)
    assert configs["min.insync.replicas"].value == "1" and configs["min.insync.replicas"].source == DEFAULT_CONFIG
    assert "/config/topics/bent" in caplog.text and "as no overrides" in caplog.text


async def test_a_value_that_is_not_a_string_is_unknown_server_error(corrupt: Cluster) -> None:
    cluster, zk = corrupt
    await zk.session.set_data(paths.topic_config_path("bent"), b'{"version":1,"config":{"min.insync.replicas":2}}',
                              -1)
    at = address(cluster, cluster.running_brokers()[0])
    [result] = await describe(at, 3, ConfigResourceQuery(TOPIC, "bent"))
    assert (result.error, result.message) == (UNKNOWN_SERVER_ERROR, None)
    [still] = await describe(at, 3, ConfigResourceQuery(BROKER, ""))
    assert still.error == 0


async def test_a_default_broker_node_not_json_describes_no_dynamic_defaults(corrupt: Cluster) -> None:
    """The broker reads the node as no overrides when notified (a WARN), and answers what it keeps: nothing."""
    cluster, zk = corrupt
    server = cluster.running_brokers()[0]
    rm = server.replica_manager
    assert rm is not None
    await change_broker_config(zk, paths.DEFAULT_ENTITY, {"log.retention.ms": "99"})
    await wait_until(lambda: rm.topic_configs.defaults.dynamic_default == {"log.retention.ms": "99"},
                     what="the default level taken up")
    [result] = await describe(address(cluster, server), 3, ConfigResourceQuery(BROKER, ""))
    assert [(c.name, c.value) for c in result.configs] == [("log.retention.ms", "99")]
    await zk.session.set_data(paths.broker_config_path(paths.DEFAULT_ENTITY), b"{oops", -1)
    await zk.create_config_change_notification(f"{paths.ConfigType.BROKER}/{paths.DEFAULT_ENTITY}")
    await wait_until(lambda: not rm.topic_configs.defaults.dynamic_default, what="the level read as no overrides")
    [result] = await describe(address(cluster, server), 3, ConfigResourceQuery(BROKER, ""))
    assert (result.error, result.configs) == (0, ())
