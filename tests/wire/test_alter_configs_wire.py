"""AlterConfigs (API 33) v0–v1 and IncrementalAlterConfigs (API 44) v0–v1 over a real socket, as Kafka 2.8.2's
``handleAlterConfigsRequest``/``handleIncrementalAlterConfigsRequest`` and ``ZkAdminManager`` answer: a topic's
config node and change notification written as ``zkcontroller configs --alter`` writes them, the brokers taking
the change up (``min.insync.replicas``), broker-level dynamic configs, logger levels, validate_only, and Kafka's
errors per resource and for the whole request; the hand-written schemas agree with kio's."""

from __future__ import annotations

import asyncio
import importlib
import io
import logging
import random
from typing import Any

import pytest
from kio.serial import entity_reader, entity_writer
from tests.helpers import wait_until
from tests.integration.listening import Cluster

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.protocol.wire import alter_configs as ac
from zkcontroller.protocol.wire.alter_configs import (
    ALTER_CONFIGS,
    APPEND,
    DELETE,
    INCREMENTAL_ALTER_CONFIGS,
    SET,
    SUBTRACT,
    AlterConfigsQuery,
    AlterResource,
    AlterResult,
    ConfigChange,
)
from zkcontroller.protocol.wire.frames import decode_response_header
from zkcontroller.zk import paths

from .admin_fixture import address, admin_cluster_fixture, leader  # noqa: F401 (the fixture)
from .server_fixture import connect, read_frame, request_frame

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
UNKNOWN_SERVER_ERROR, UNKNOWN_TOPIC_OR_PARTITION, INVALID_CONFIG, INVALID_REQUEST = -1, 3, 40, 42


def _round_trip(at: str, api_key: int, version: int, body: bytes) -> bytes:
    with connect(int(at.rsplit(":", 1)[1]), timeout_s=60) as sock:
        sock.sendall(request_frame(api_key, version, 9, body))
        payload = read_frame(sock)
    assert payload is not None, "connection closed"
    return payload


async def alter(at: str, api_key: int, version: int, *resources: AlterResource,
                validate_only: bool = False) -> list[AlterResult]:
    body = ac.encode_request(api_key, version, AlterConfigsQuery(list(resources), validate_only))
    payload = await asyncio.to_thread(_round_trip, at, api_key, version, body)
    correlation_id, offset = decode_response_header(payload, api_key, version)
    assert correlation_id == 9
    return ac.decode_response(api_key, version, payload, offset)


def topic(name: str, *changes: ConfigChange) -> AlterResource:
    return AlterResource(TOPIC, name, changes)


def errors(results: list[AlterResult]) -> list[tuple[int, str, int, str | None]]:
    return [(r.resource_type, r.resource_name, r.error, r.message) for r in results]


@pytest.fixture
async def orders(admin_cluster: Cluster) -> Cluster:
    cluster, zk = admin_cluster
    await TopicAdmin(zk, random.Random(1)).create_topic("orders", 1, 2, {"retention.ms": "1000"})
    await wait_until(lambda: all(leader(s, "orders", 0) not in (None, -1) for s in cluster.running_brokers()),
                     what="orders in every cache")
    return admin_cluster


def _hosting(cluster: Any) -> list[Any]:
    return [s for s in cluster.running_brokers()
            if s.replica_manager is not None and "orders" in s.replica_manager.topic_configs.topics]


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_alter_configs_replaces_a_topics_config_and_the_brokers_take_it_up(orders: Cluster,
                                                                                 version: int,
                                                                                 caplog: pytest.LogCaptureFixture,
                                                                                 ) -> None:
    cluster, zk = orders
    broker = cluster.running_brokers()[0]
    at = address(cluster, broker)
    changes_before = await zk.get_children(paths.CONFIG_CHANGES)
    results = await alter(at, ALTER_CONFIGS, version, topic("orders", ConfigChange("min.insync.replicas", "2")),
                          validate_only=True)
    assert errors(results) == [(TOPIC, "orders", 0, None)]
    assert await zk.get_entity_configs("topics", "orders") == {"retention.ms": "1000"}  # nothing written
    with caplog.at_level(logging.INFO, "kafka.server.ZkAdminManager"):
        results = await alter(at, ALTER_CONFIGS, version, topic("orders", ConfigChange("min.insync.replicas", "2")))
    assert errors(results) == [(TOPIC, "orders", 0, None)]
    assert [r.getMessage() for r in caplog.records if r.name == "kafka.server.ZkAdminManager"] == [
        f"[Admin Manager on Broker {broker.broker_id}]: Updating topic orders with new configuration : "
        "min.insync.replicas=2"]
    # AlterConfigs is the whole new config: retention.ms is gone
    assert await zk.get_entity_configs("topics", "orders") == {"min.insync.replicas": "2"}
    assert len(await zk.get_children(paths.CONFIG_CHANGES)) == len(changes_before) + 1
    await wait_until(lambda: len(_hosting(cluster)) == 2, what="orders' logs on both replicas")
    hosting = _hosting(cluster)
    await wait_until(lambda: all(s.replica_manager.topic_configs.min_insync_replicas("orders") == 2
                                 for s in hosting), what="min.insync.replicas=2 on both replicas")


@pytest.mark.parametrize("version", [0, 1])
async def test_incremental_operations_on_a_topic(orders: Cluster, version: int) -> None:
    cluster, zk = orders
    at = address(cluster, cluster.running_brokers()[1])
    results = await alter(at, INCREMENTAL_ALTER_CONFIGS, version, topic(
        "orders", ConfigChange("min.insync.replicas", "2", SET), ConfigChange("cleanup.policy", "compact", APPEND),
        ConfigChange("retention.ms", None, DELETE)))
    assert errors(results) == [(TOPIC, "orders", 0, None)]
    assert await zk.get_entity_configs("topics", "orders") == {"min.insync.replicas": "2",
                                                               "cleanup.policy": "delete,compact"}
    results = await alter(at, INCREMENTAL_ALTER_CONFIGS, version,
                          topic("orders", ConfigChange("cleanup.policy", "delete", SUBTRACT)))
    assert errors(results) == [(TOPIC, "orders", 0, None)]
    assert (await zk.get_entity_configs("topics", "orders"))["cleanup.policy"] == "compact"
    await wait_until(lambda: len(_hosting(cluster)) == 2, what="orders' logs on both replicas")
    hosting = _hosting(cluster)
    await wait_until(lambda: all(s.replica_manager.topic_configs.config("orders").values["cleanup.policy"]
                                 == ["compact"] for s in hosting), what="cleanup.policy=compact on the replicas")


async def test_incremental_operations_read_a_node_that_is_not_json_as_no_overrides(
        orders: Cluster, caplog: pytest.LogCaptureFixture) -> None:
    """``fetchEntityConfig`` reads such a node as no overrides: the operations start from nothing (a WARN names
    the node), where a strict read would answer UNKNOWN_SERVER_ERROR."""
    cluster, zk = orders
    await zk.session.set_data(paths.topic_config_path("orders"), b"not json", -1)
    await zk.set_or_create_entity_configs("brokers", paths.DEFAULT_ENTITY, {"log.retention.ms": "1"})
    await zk.session.set_data(paths.broker_config_path(paths.DEFAULT_ENTITY), b"{oops", -1)
    at = address(cluster, cluster.running_brokers()[0])
    results = await alter(at, INCREMENTAL_ALTER_CONFIGS, 1,
                          topic("orders", ConfigChange("min.insync.replicas", "2", SET)),
                          AlterResource(BROKER, "", (ConfigChange("log.retention.ms", "5000", SET),)))
    assert errors(results) == [(TOPIC, "orders", 0, None), (BROKER, "", 0, None)]
    assert await zk.get_entity_configs("topics", "orders") == {"min.insync.replicas": "2"}
    assert await zk.get_entity_configs("brokers", paths.DEFAULT_ENTITY) == {"log.retention.ms": "5000"}
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(paths.topic_config_path("orders") in m and "as no overrides" in m for m in warned)
    assert any(paths.broker_config_path(paths.DEFAULT_ENTITY) in m and "as no overrides" in m for m in warned)


async def test_kafkas_errors_per_resource(orders: Cluster) -> None:
    cluster, zk = orders
    server = cluster.running_brokers()[0]
    me = server.broker_id
    at = address(cluster, server)
    results = await alter(at, INCREMENTAL_ALTER_CONFIGS, 1,
                          topic("nope", ConfigChange("retention.ms", "1")),
                          topic("orders", ConfigChange("no.such.config", "1")),
                          AlterResource(BROKER, str(me + 10), (ConfigChange("log.retention.ms", "1"),)),
                          AlterResource(BROKER, "one", (ConfigChange("log.retention.ms", "1"),)))
    assert errors(results) == [
        (TOPIC, "nope", UNKNOWN_TOPIC_OR_PARTITION, "The topic 'nope' does not exist."),
        (TOPIC, "orders", INVALID_CONFIG, "Unknown topic config name: no.such.config"),
        (BROKER, str(me + 10), INVALID_REQUEST, f"Unexpected broker id, expected {me}, but received {me + 10}"),
        (BROKER, "one", INVALID_REQUEST, "Broker id must be an integer, but it is: one")]
    results = await alter(at, INCREMENTAL_ALTER_CONFIGS, 0,
                          topic("orders", ConfigChange("min.insync.replicas", "0")),
                          topic("orders2", ConfigChange("a", "1"), ConfigChange("a", None, DELETE)),
                          topic("orders3", ConfigChange("retention.ms", "1", APPEND)),
                          topic("orders4", ConfigChange("no.such", "1", APPEND)),
                          AlterResource(BROKER, str(me), (ConfigChange("broker.id", "7"),)))
    assert errors(results) == [
        (TOPIC, "orders", INVALID_REQUEST, "Invalid config value for resource ConfigResource(type=TOPIC, "
         "name='orders'): Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
        (TOPIC, "orders2", INVALID_REQUEST, "Error due to duplicate config keys : a"),
        (TOPIC, "orders3", INVALID_REQUEST, "Config value append is not allowed for config key: retention.ms"),
        (TOPIC, "orders4", UNKNOWN_SERVER_ERROR, None),
        (BROKER, str(me), INVALID_REQUEST, f"Invalid config value for resource ConfigResource(type=BROKER, "
         f"name='{me}'): Cannot update these configs dynamically: Set(broker.id)")]
    results = await alter(at, ALTER_CONFIGS, 1, topic("orders", ConfigChange("retention.ms", None)))
    assert errors(results) == [(TOPIC, "orders", INVALID_REQUEST, "Null value not supported for : retention.ms")]
    assert await zk.get_entity_configs("topics", "orders") == {"retention.ms": "1000"}  # all refused


async def test_a_resource_type_the_api_does_not_take_fails_the_request(orders: Cluster,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    """Thrown by KafkaApis' handler: every resource answers it, and ``RequestHandlerHelper.handleError`` logs it
    with KafkaApis' ``[KafkaApi-<id>] `` prefix."""
    cluster, zk = orders
    broker = cluster.running_brokers()[0]
    at = address(cluster, broker)
    ok = topic("orders", ConfigChange("retention.ms", "5"))
    with caplog.at_level(logging.ERROR, "kafka.server.RequestHandlerHelper"):
        results = await alter(at, ALTER_CONFIGS, 0, ok, AlterResource(BROKER_LOGGER, "1", ()))
    [line] = [r.getMessage() for r in caplog.records if r.name == "kafka.server.RequestHandlerHelper"]
    assert line.startswith(f"[KafkaApi-{broker.broker_id}] Error when handling request: clientId=test, "
                           "correlationId=9, api=ALTER_CONFIGS, version=0, body=AlterConfigsRequestData(resources=["
                           "AlterConfigsResource(resourceType=2, resourceName='orders', configs=[AlterableConfig("
                           "name='retention.ms', value='5')]), AlterConfigsResource(resourceType=8, resourceName='1', "
                           "configs=[])], validateOnly=false)\n")  # AlterConfigsRequest.json's toString
    assert line.endswith("\norg.apache.kafka.common.errors.InvalidRequestException: AlterConfigs is deprecated "
                         "and does not support the resource type BROKER_LOGGER")
    message = "AlterConfigs is deprecated and does not support the resource type BROKER_LOGGER"
    assert errors(results) == [(TOPIC, "orders", INVALID_REQUEST, message), (BROKER_LOGGER, "1", INVALID_REQUEST,
                                                                             message)]
    results = await alter(at, INCREMENTAL_ALTER_CONFIGS, 1, ok, AlterResource(7, "x", ()))
    assert errors(results) == [(TOPIC, "orders", INVALID_REQUEST, "Unexpected resource type UNKNOWN"),
                               (7, "x", INVALID_REQUEST, "Unexpected resource type UNKNOWN")]
    assert await zk.get_entity_configs("topics", "orders") == {"retention.ms": "1000"}


async def test_broker_configs_per_broker_and_cluster_default(orders: Cluster) -> None:
    cluster, zk = orders
    server = cluster.running_brokers()[0]
    me = server.broker_id
    at = address(cluster, server)
    results = await alter(at, INCREMENTAL_ALTER_CONFIGS, 1,
                          AlterResource(BROKER, "", (ConfigChange("log.retention.ms", "4000", SET),
                                                     ConfigChange("my.custom", "x", SET))),
                          AlterResource(BROKER, str(me), (ConfigChange("min.insync.replicas", "2", SET),)))
    assert errors(results) == [(BROKER, "", 0, None), (BROKER, str(me), 0, None)]
    assert await zk.get_broker_configs(paths.DEFAULT_ENTITY) == {"log.retention.ms": "4000", "my.custom": "x"}
    assert await zk.get_broker_configs(str(me)) == {"min.insync.replicas": "2"}
    assert server.replica_manager is not None
    manager = server.replica_manager.topic_configs
    await wait_until(lambda: manager.defaults.values["min.insync.replicas"] == 2
                     and manager.defaults.values["retention.ms"] == 4000, what="the broker's new defaults")
    others = [s for s in cluster.running_brokers() if s is not server]
    assert others[0].replica_manager is not None
    other = others[0].replica_manager.topic_configs
    await wait_until(lambda: other.defaults.values["retention.ms"] == 4000, what="the cluster default elsewhere")
    assert other.defaults.values["min.insync.replicas"] == 1  # per-broker: only broker `me`
    # AlterConfigs replaces the node; the per-broker `listeners` is refused at the default level
    results = await alter(at, ALTER_CONFIGS, 0,
                          AlterResource(BROKER, "", (ConfigChange("listeners", "PLAINTEXT://:1"),)))
    assert results[0].error == INVALID_REQUEST and results[0].message is not None
    assert results[0].message.endswith("Cannot update these configs at default cluster level, broker id must be "
                                       "specified: Set(listeners)")
    results = await alter(at, ALTER_CONFIGS, 1, AlterResource(BROKER, "", (ConfigChange("log.retention.ms", "9"),)))
    assert errors(results) == [(BROKER, "", 0, None)]
    assert await zk.get_broker_configs(paths.DEFAULT_ENTITY) == {"log.retention.ms": "9"}


async def test_append_and_subtract_on_a_broker_key_go_by_kafka_configs_type(orders: Cluster) -> None:
    """``prepareIncrementalConfigs`` looks the key up in all of ``KafkaConfig.configKeys``, not only the keys this
    project models: a static non-LIST key is refused as not appendable, a static LIST key is prepared and then
    refused as not dynamic; a dynamic LIST key takes the operation; a key KafkaConfig lacks fails the lookup."""
    cluster, zk = orders
    server = cluster.running_brokers()[0]
    me = str(server.broker_id)
    at = address(cluster, server)
    results = await alter(at, INCREMENTAL_ALTER_CONFIGS, 1,
                          AlterResource(BROKER, me, (ConfigChange("socket.send.buffer.bytes", "1", APPEND),)),
                          AlterResource(BROKER, "", (ConfigChange("num.partitions", "1", SUBTRACT),)))
    assert errors(results) == [
        (BROKER, me, INVALID_REQUEST, "Config value append is not allowed for config key: socket.send.buffer.bytes"),
        (BROKER, "", INVALID_REQUEST, "Config value subtract is not allowed for config key: num.partitions")]
    results = await alter(at, INCREMENTAL_ALTER_CONFIGS, 0,
                          AlterResource(BROKER, me, (ConfigChange("kafka.metrics.reporters", "a.B", APPEND),)))
    assert errors(results) == [(BROKER, me, INVALID_REQUEST, f"Invalid config value for resource "
                                f"ConfigResource(type=BROKER, name='{me}'): Cannot update these configs "
                                "dynamically: Set(kafka.metrics.reporters)")]
    results = await alter(at, INCREMENTAL_ALTER_CONFIGS, 1,
                          AlterResource(BROKER, me, (ConfigChange("no.such.config", "x", SUBTRACT),)),
                          AlterResource(BROKER, "", (ConfigChange("follower.replication.throttled.rate", "1",
                                                                  APPEND),)))
    assert errors(results) == [(BROKER, me, UNKNOWN_SERVER_ERROR, None), (BROKER, "", UNKNOWN_SERVER_ERROR, None)]
    assert await zk.get_broker_configs(me) == {}  # all refused
    assert await zk.get_broker_configs(paths.DEFAULT_ENTITY) == {}
    results = await alter(at, INCREMENTAL_ALTER_CONFIGS, 1,
                          AlterResource(BROKER, "", (ConfigChange("log.cleanup.policy", "compact", APPEND),)))
    assert errors(results) == [(BROKER, "", 0, None)]
    assert await zk.get_broker_configs(paths.DEFAULT_ENTITY) == {"log.cleanup.policy": "delete,compact"}


async def test_broker_logger_levels(orders: Cluster) -> None:
    cluster, _ = orders
    server = cluster.running_brokers()[0]
    at = address(cluster, server)
    name = "kafka.server.ZkAdminManager"
    logger = logging.getLogger(name)
    before = logger.level
    try:
        results = await alter(at, INCREMENTAL_ALTER_CONFIGS, 1,
                              AlterResource(BROKER_LOGGER, str(server.broker_id), (ConfigChange(name, "ERROR"),)),
                              validate_only=True)
        assert errors(results) == [(BROKER_LOGGER, str(server.broker_id), 0, None)] and logger.level == before
        results = await alter(at, INCREMENTAL_ALTER_CONFIGS, 1,
                              AlterResource(BROKER_LOGGER, "", (ConfigChange(name, "ERROR"),)))
        assert errors(results) == [(BROKER_LOGGER, "", 0, None)] and logger.level == logging.ERROR
        results = await alter(at, INCREMENTAL_ALTER_CONFIGS, 0,
                              AlterResource(BROKER_LOGGER, "", (ConfigChange("no.such.logger", "ERROR"),)))
        assert errors(results) == [(BROKER_LOGGER, "", INVALID_REQUEST, "Invalid config value for resource "
                                    "ConfigResource(type=BROKER_LOGGER, name=''): Logger no.such.logger does not "
                                    "exist!")]
    finally:
        logger.setLevel(before)


async def test_advertised_as_kafka_2_8s(orders: Cluster) -> None:
    """Kafka 2.8.2's AlterConfigsRequest.json has 0–2 (v2 flexible), IncrementalAlterConfigsRequest.json 0–1."""
    cluster, _ = orders
    versions = cluster.listeners[cluster.running_brokers()[0].broker_id].apis.supported_versions()
    assert versions[ALTER_CONFIGS] == (0, 2) and versions[INCREMENTAL_ALTER_CONFIGS] == (0, 1)


def _kio(api: str, version: int, kind: str) -> Any:
    return importlib.import_module(f"kio.schema.{api}.v{version}.{kind}")


@pytest.mark.parametrize(("api_key", "api", "version"), [
    (ALTER_CONFIGS, "alter_configs", 0), (ALTER_CONFIGS, "alter_configs", 1), (ALTER_CONFIGS, "alter_configs", 2),
    (INCREMENTAL_ALTER_CONFIGS, "incremental_alter_configs", 0),
    (INCREMENTAL_ALTER_CONFIGS, "incremental_alter_configs", 1)])
def test_the_schemas_agree_with_kios(api_key: int, api: str, version: int) -> None:
    incremental = api_key == INCREMENTAL_ALTER_CONFIGS
    rm = _kio(api, version, "request")
    request_cls = rm.IncrementalAlterConfigsRequest if incremental else rm.AlterConfigsRequest
    config = rm.AlterableConfig(name="a", value=None, **({"config_operation": 1} if incremental else {}))
    request = request_cls(resources=(rm.AlterConfigsResource(resource_type=2, resource_name="t", configs=(config,)),),
                          validate_only=True)
    buf = io.BytesIO()
    entity_writer(request_cls)(buf, request)
    assert ac.decode_request(api_key, version, buf.getvalue(), 0) == AlterConfigsQuery(
        [AlterResource(2, "t", (ConfigChange("a", None, DELETE if incremental else SET),))], True, incremental)
    results = [AlterResult(2, "t"), AlterResult(4, "1", INVALID_REQUEST, "no")]
    body = ac.encode_response(api_key, version, results)
    sm = _kio(api, version, "response")
    decoded, size = entity_reader(sm.IncrementalAlterConfigsResponse if incremental else sm.AlterConfigsResponse)(
        memoryview(body), 0)
    assert size == len(body)
    assert [(r.resource_type, r.resource_name, int(r.error_code), r.error_message) for r in decoded.responses] == [
        (2, "t", 0, None), (4, "1", INVALID_REQUEST, "no")]
    assert ac.decode_response(api_key, version, body) == results
