"""``zkcontroller configs ... --bootstrap-server`` for topics and brokers: Kafka 2.8.2's ConfigCommand AdminClient
path (DescribeConfigs with synonyms, IncrementalAlterConfigs for a topic, AlterConfigs for a broker) against
in-process brokers on the embedded store, running brokers included (the ZooKeeper path refuses those)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from click.testing import CliRunner, Result
from tests.integration.listening import listening_cluster
from tests.wire.admin_fixture import create

from zkcontroller.cli import main
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.paths import ConfigType

pytestmark = [pytest.mark.usefixtures("restored_logging"), pytest.mark.timeout(120)]


@pytest.fixture(name="brokers")
async def brokers_fixture() -> AsyncIterator[tuple[LocalCluster, KafkaZkClient, str]]:
    async with listening_cluster([1, 2, 3], ListenerPorts(base=None, host="127.0.0.1"), 4000) as (cluster, zk):
        yield cluster, zk, ",".join(cluster.listeners[b].address or "" for b in (1, 2, 3))


async def configs(*argv: str) -> Result:
    return await asyncio.to_thread(CliRunner().invoke, main, ["configs", *argv],
                                   env={"ZKCONTROLLER_ZOOKEEPER": None})


async def test_topic_configs(brokers: tuple[LocalCluster, KafkaZkClient, str]) -> None:
    cluster, zk, bootstrap = brokers
    await create(cluster, zk, "orders", {0: [1, 2]})
    topic = ["--entity-type", "topics", "--entity-name", "orders", "--bootstrap-server", bootstrap]
    empty = await configs("--describe", *topic)
    assert (empty.exit_code, empty.output) == (0, "Dynamic configs for topic orders are:\n")
    altered = await configs("--alter", "--add-config", "retention.ms=1000,cleanup.policy=compact", *topic)
    assert (altered.exit_code, altered.output) == (0, "Completed updating config for topic orders.\n")
    assert await zk.get_entity_configs(ConfigType.TOPIC, "orders") == {"retention.ms": "1000",
                                                                       "cleanup.policy": "compact"}
    described = await configs("--describe", *topic)
    lines = described.output.splitlines()
    assert lines[0] == "Dynamic configs for topic orders are:"
    assert sorted(line.split(" ")[2] for line in lines[1:]) == ["cleanup.policy=compact", "retention.ms=1000"]
    assert any(line.startswith("  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000")
               for line in lines)
    everything = await configs("--describe", "--all", *topic)
    assert everything.output.startswith("All configs for topic orders are:\n")
    assert "  min.insync.replicas=1 sensitive=false synonyms={DEFAULT_CONFIG:min.insync.replicas=1}" in (
        everything.output.splitlines())
    missing = await configs("--alter", "--delete-config", "nosuch", *topic)
    assert (missing.exit_code, missing.output.splitlines()[-1]) == (1, "Error: Invalid config(s): nosuch")
    deleted = await configs("--alter", "--delete-config", "retention.ms", *topic)
    assert deleted.exit_code == 0, deleted.output
    assert await zk.get_entity_configs(ConfigType.TOPIC, "orders") == {"cleanup.policy": "compact"}


async def test_running_broker_configs(brokers: tuple[LocalCluster, KafkaZkClient, str]) -> None:
    _cluster, zk, bootstrap = brokers
    one = ["--entity-type", "brokers", "--entity-name", "1", "--bootstrap-server", bootstrap]
    altered = await configs("--alter", "--add-config", "unclean.leader.election.enable=true", *one)
    assert (altered.exit_code, altered.output) == (0, "Completed updating config for broker 1.\n")
    assert await zk.get_entity_configs(ConfigType.BROKER, "1") == {"unclean.leader.election.enable": "true"}
    described = await configs("--describe", *one)
    lines = described.output.splitlines()
    assert lines[0] == "Dynamic configs for broker 1 are:"
    assert lines[1].startswith("  unclean.leader.election.enable=true sensitive=false "
                               "synonyms={DYNAMIC_BROKER_CONFIG:unclean.leader.election.enable=true"), lines
    default = await configs("--alter", "--entity-type", "brokers", "--entity-default", "--add-config",
                            "follower.replication.throttled.rate=1000", "--bootstrap-server", bootstrap)
    assert (default.exit_code, default.output) == (
        0, "Completed updating default config for brokers in the cluster.\n")
    every = await configs("--describe", "--entity-type", "brokers", "--bootstrap-server", bootstrap)
    headers = [line for line in every.output.splitlines() if not line.startswith("  ")]
    assert headers == ["Dynamic configs for broker 1 are:", "Dynamic configs for broker 2 are:",
                       "Dynamic configs for broker 3 are:", "Default configs for brokers in the cluster are:"]
    # Kafka 2.8.2's broker types the throttle rates (DynamicConfig.Broker's LONG): shown, not sensitive
    assert ("  follower.replication.throttled.rate=1000 sensitive=false "
            "synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:follower.replication.throttled.rate=1000}") in every.output
    # a key Kafka does not define is stored, and described as sensitive (its type unknown) ...
    custom = await configs("--alter", "--entity-type", "brokers", "--entity-default", "--add-config",
                           "secret.thing=x", "--bootstrap-server", bootstrap)
    assert custom.exit_code == 0, custom.output
    # ... so AlterConfigs, which replaces the whole set, cannot keep it: ConfigCommand refuses, as Kafka's does
    again = await configs("--alter", "--entity-type", "brokers", "--entity-default", "--add-config",
                          "unclean.leader.election.enable=false", "--bootstrap-server", bootstrap)
    assert (again.exit_code, again.output.splitlines()[-1]) == (
        1, "Error: All sensitive broker config entries must be specified for --alter, missing entries: "
           "Set(secret.thing)")
    assert await zk.get_entity_configs(ConfigType.BROKER, "<default>") == {
        "follower.replication.throttled.rate": "1000", "secret.thing": "x"}


async def test_refusals() -> None:
    all_zk = await configs("--describe", "--all", "--entity-type", "topics", "--zookeeper", "127.0.0.1:1")
    assert all_zk.exit_code == 1 and "Error: --bootstrap-server must be specified for --all" in all_zk.output
    both = await configs("--describe", "--entity-type", "topics", "--zookeeper", "127.0.0.1:1",
                         "--bootstrap-server", "127.0.0.1:1")
    assert both.exit_code == 1 and "Error: Only one of --bootstrap-server or --zookeeper must be specified" in (
        both.output)
    neither = await configs("--describe", "--entity-type", "topics")
    assert neither.exit_code == 1 and ("Error: One of the required --bootstrap-server or --zookeeper arguments must "
                                       "be specified.") in neither.output
