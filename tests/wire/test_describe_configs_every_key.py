"""DescribeConfigs lists what Kafka 2.8.2's ``ConfigHelper`` lists, seen through real clients against in-process
brokers: for a BROKER resource every property ``KafkaConfig`` defines but its ``defineInternal`` ones
(``allConfigs`` = ``originals ++ nonInternalValues``), for a TOPIC every ``LogConfig`` key; each key's ConfigDef
documentation only when the request asks for it (v3+); and ``configs --describe --all`` printing them all.

The counts, from KafkaConfig.scala at 2.8.2: 233 properties, 218 of them defined with ``.define(`` and 15 with
``.defineInternal(`` (``process.roles``, ``node.id``, the ``controller.quorum.*`` ones...), so 218 entries for a
broker whose server.properties sets only defined, non-internal keys (an in-process broker's do); LogConfig.scala
defines 26 topic configs. Ours listed 118 broker keys (the modelled ones and the set ones) and sent every
documentation null."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from click.testing import CliRunner
from tests.integration.listening import listening_cluster
from tests.wire.admin_fixture import create

from zkcontroller.broker.config_helper import BROKER_DESCRIBED_KEYS
from zkcontroller.broker.kafka_config_docs import BROKER_CONFIG_DOCS, TOPIC_CONFIG_DOCS
from zkcontroller.broker.kafka_config_types import KAFKA_CONFIG_TYPES, KAFKA_INTERNAL_CONFIGS
from zkcontroller.cli import main
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.zk.log_config_def import TOPIC_CONFIG_RULES

pytestmark = [pytest.mark.timeout(180)]

KAFKA_NON_INTERNAL_COUNT = 218
"""``.define(`` calls in KafkaConfig.scala's ``configDef`` at 2.8.2 (counted with ``grep -c``)."""
TOPIC_COUNT = 26
BROKER, TOPIC = 4, 2


@pytest.fixture(name="brokers")
async def brokers_fixture() -> AsyncIterator[tuple[LocalCluster, str]]:
    async with listening_cluster([1, 2], ListenerPorts(base=None, host="127.0.0.1"), 4000) as (cluster, zk):
        await create(cluster, zk, "orders", {0: [1, 2]})
        yield cluster, ",".join(cluster.listeners[b].address or "" for b in (1, 2))


def test_our_data_counts_what_kafka_defines() -> None:
    assert len(KAFKA_CONFIG_TYPES) == 233 and len(KAFKA_INTERNAL_CONFIGS) == 15
    assert KAFKA_CONFIG_TYPES.keys() >= KAFKA_INTERNAL_CONFIGS
    assert len(BROKER_DESCRIBED_KEYS) == KAFKA_NON_INTERNAL_COUNT
    assert BROKER_CONFIG_DOCS.keys() == KAFKA_CONFIG_TYPES.keys()
    assert TOPIC_CONFIG_DOCS.keys() == TOPIC_CONFIG_RULES.keys() and len(TOPIC_CONFIG_RULES) == TOPIC_COUNT


def _kafka_python(bootstrap: str) -> dict[str, Any]:
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        return admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1"),
                                       ConfigResource(ConfigResourceType.TOPIC, "orders")],
                                      include_synonyms=True, config_filter="all")
    finally:
        admin.close()


async def test_kafka_python_sees_every_non_internal_broker_property(brokers: tuple[LocalCluster, str]) -> None:
    _cluster, bootstrap = brokers
    found = await asyncio.to_thread(_kafka_python, bootstrap)
    broker, topic = found["broker"]["1"], found["topic"]["orders"]
    assert len(broker) == KAFKA_NON_INTERNAL_COUNT
    assert set(broker) == set(BROKER_DESCRIBED_KEYS)
    assert not set(broker) & KAFKA_INTERNAL_CONFIGS  # node.id, process.roles... are not set here
    assert broker["broker.id"]["value"] == "1"
    assert broker["num.partitions"]["value"] == "1" and broker["num.partitions"]["read_only"]
    assert broker["socket.send.buffer.bytes"]["value"] == "102400"  # a property the project does not read
    assert broker["replica.selector.class"]["value"] is None  # a null default
    password = broker["delegation.token.master.key"]  # PASSWORD: sensitive, no value
    assert (password["value"], password["is_sensitive"], password["read_only"]) == (None, True, True)
    assert len(topic) == TOPIC_COUNT and set(topic) == set(TOPIC_CONFIG_RULES)


def _confluent(bootstrap: str) -> dict[str, Any]:
    from confluent_kafka.admin import AdminClient, ConfigResource

    client = AdminClient({"bootstrap.servers": bootstrap})
    futures = client.describe_configs([ConfigResource("broker", "2")], request_timeout=30)
    (future,) = futures.values()
    return future.result(timeout=60)


async def test_confluent_kafka_sees_every_non_internal_broker_property(brokers: tuple[LocalCluster, str]) -> None:
    _cluster, bootstrap = brokers
    found = await asyncio.to_thread(_confluent, bootstrap)
    assert len(found) == KAFKA_NON_INTERNAL_COUNT and set(found) == set(BROKER_DESCRIBED_KEYS)
    assert found["broker.id"].value == "2" and found["offsets.retention.minutes"].value == "10080"


def _documented(bootstrap: str, version: int, include_documentation: bool) -> dict[tuple[int, str], Any]:
    """kafka-python's own DescribeConfigs request (its admin client never asks for documentation), sent through
    its admin client to broker 1."""
    from kafka.admin import KafkaAdminClient
    from kafka.protocol.admin import DescribeConfigsRequest

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    request = DescribeConfigsRequest(resources=[(BROKER, "1", None), (TOPIC, "orders", None)],
                                     include_synonyms=False, include_documentation=include_documentation,
                                     min_version=version, max_version=version)

    async def send() -> Any:
        return await admin._manager.send(request, node_id=1)

    try:
        response = admin._manager.run(send)
    finally:
        admin.close()
    return {(r.resource_type, r.resource_name): {c.name: c.documentation for c in r.configs}
            for r in response.results}


@pytest.mark.parametrize("version", [3, 4])
async def test_documentation_only_when_asked(brokers: tuple[LocalCluster, str], version: int) -> None:
    _cluster, bootstrap = brokers
    asked = await asyncio.to_thread(_documented, bootstrap, version, True)
    broker, topic = asked[(BROKER, "1")], asked[(TOPIC, "orders")]
    assert len(broker) == KAFKA_NON_INTERNAL_COUNT
    assert broker == {name: BROKER_CONFIG_DOCS[name] for name in broker}
    assert broker["num.partitions"] == "The default number of log partitions per topic"
    assert broker["log.retention.ms"] == (
        "The number of milliseconds to keep a log file before deleting it (in milliseconds), If not set, the value "
        "in log.retention.minutes is used. If set to -1, no time limit is applied.")
    assert topic == {name: TOPIC_CONFIG_DOCS[name] for name in TOPIC_CONFIG_RULES}
    assert topic["min.insync.replicas"].startswith("When a producer sets acks to \"all\" (or \"-1\"), this "
                                                   "configuration specifies the minimum number of replicas")
    not_asked = await asyncio.to_thread(_documented, bootstrap, version, False)
    assert {doc for docs in not_asked.values() for doc in docs.values()} == {None}


@pytest.mark.usefixtures("restored_logging")
async def test_configs_describe_all_prints_every_broker_property(brokers: tuple[LocalCluster, str]) -> None:
    _cluster, bootstrap = brokers
    result = await asyncio.to_thread(CliRunner().invoke, main, [
        "configs", "--describe", "--all", "--entity-type", "brokers", "--entity-name", "1",
        "--bootstrap-server", bootstrap], env={"ZKCONTROLLER_ZOOKEEPER": None})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "All configs for broker 1 are:"
    assert len(lines) == 1 + KAFKA_NON_INTERNAL_COUNT
    assert ("  socket.send.buffer.bytes=102400 sensitive=false "
            "synonyms={DEFAULT_CONFIG:socket.send.buffer.bytes=102400}") in lines
    assert "  sasl.jaas.config=null sensitive=true synonyms={}" in lines
