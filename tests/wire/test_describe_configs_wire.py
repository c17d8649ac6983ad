"""DescribeConfigs (API 32) v0–v3 over a real socket, as Kafka 2.8.2's ``handleDescribeConfigsRequest`` and
``ConfigHelper`` answer: a topic's overrides (read from ZooKeeper) and defaults with their sources and synonyms,
this broker's own configs, and each of Kafka's errors; the hand-written v0–v3 schema agrees with kio's (v1–v3)."""

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

from zkcontroller.admin.configs import alter_topic_config, change_broker_config
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.server_properties import broker_properties, parse_properties
from zkcontroller.protocol.wire import describe_configs as dc
from zkcontroller.protocol.wire.client_apis import API_VERSIONS, api_versions_response
from zkcontroller.protocol.wire.describe_configs import ConfigResourceQuery, DescribeConfigsQuery
from zkcontroller.protocol.wire.frames import decode_response_header

from .admin_fixture import address, admin_cluster_fixture, leader  # noqa: F401 (the fixture)
from .server_fixture import connect, read_frame, request_frame

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 1, 4, 5, 3
UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION, INVALID_REQUEST = 3, 17, 42


def _round_trip(at: str, version: int, body: bytes) -> bytes:
    with connect(int(at.rsplit(":", 1)[1]), timeout_s=60) as sock:
        sock.sendall(request_frame(dc.DESCRIBE_CONFIGS, version, 9, body))
        payload = read_frame(sock)
    assert payload is not None, "connection closed"
    return payload


async def describe(at: str, version: int, *resources: ConfigResourceQuery, synonyms: bool = False,
                   docs: bool = False) -> list[dc.ConfigResourceResult]:
    body = dc.encode_request(version, DescribeConfigsQuery(list(resources), synonyms, docs))
    payload = await asyncio.to_thread(_round_trip, at, version, body)
    correlation_id, offset = decode_response_header(payload, dc.DESCRIBE_CONFIGS, version)
    assert correlation_id == 9
    return dc.decode_response(version, payload, offset)


def by_name(result: dc.ConfigResourceResult) -> dict[str, dc.ConfigEntry]:
    return {c.name: c for c in result.configs}


@pytest.fixture
async def orders(admin_cluster: Cluster) -> Cluster:
    cluster, zk = admin_cluster
    await TopicAdmin(zk, random.Random(1)).create_topic("orders", 1, 2, {"min.insync.replicas": "2",
                                                                          "retention.ms": "1000"})
    await wait_until(lambda: all(leader(s, "orders", 0) not in (None, -1) for s in cluster.running_brokers()),
                     what="orders in every cache")
    return admin_cluster


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
async def test_a_topics_overrides_and_defaults(orders: Cluster, version: int) -> None:
    cluster, _ = orders
    server = cluster.running_brokers()[0]
    [result] = await describe(address(cluster, server), version, ConfigResourceQuery(TOPIC, "orders"),
                              synonyms=True)
    assert (result.error, result.message, result.resource_type, result.resource_name) == (0, None, TOPIC, "orders")
    configs = by_name(result)
    assert len(configs) == 26  # every LogConfig key of 2.8
    assert configs["min.insync.replicas"].value == "2" and configs["retention.ms"].value == "1000"
    assert configs["max.message.bytes"].value == "1048588" and configs["cleanup.policy"].value == "delete"
    assert configs["leader.replication.throttled.replicas"].value == ""
    assert not any(c.read_only or c.is_sensitive for c in configs.values())
    if version == 0:  # no source, no synonyms in v0
        assert {c.source for c in configs.values()} == {-1} and not any(c.synonyms for c in configs.values())
        return
    assert configs["min.insync.replicas"].source == TOPIC_CONFIG
    assert configs["min.insync.replicas"].synonyms == (
        dc.Synonym("min.insync.replicas", "2", TOPIC_CONFIG), dc.Synonym("min.insync.replicas", "1", DEFAULT_CONFIG))
    assert configs["max.message.bytes"].source == DEFAULT_CONFIG
    assert configs["max.message.bytes"].synonyms == (dc.Synonym("message.max.bytes", "1048588", DEFAULT_CONFIG),)
    # log.retention.ms has a null default: no synonym of the broker's, only the override (Kafka's dropWhile)
    assert configs["retention.ms"].synonyms == (dc.Synonym("retention.ms", "1000", TOPIC_CONFIG),)
    assert configs["segment.ms"].synonyms == () and configs["segment.ms"].source == DEFAULT_CONFIG
    assert {c.config_type for c in configs.values()} == ({0} if version < 3 else {1, 2, 3, 5, 6, 7})
    assert configs["min.cleanable.dirty.ratio"].config_type == (6 if version >= 3 else 0)
    assert all(c.documentation is None for c in configs.values())


async def test_without_synonyms_and_with_keys(orders: Cluster) -> None:
    cluster, zk = orders
    at = address(cluster, cluster.running_brokers()[1])
    [result] = await describe(at, 3, ConfigResourceQuery(TOPIC, "orders", ("retention.ms", "no.such.key")))
    assert [(c.name, c.value, c.source, c.synonyms) for c in result.configs] == [
        ("retention.ms", "1000", TOPIC_CONFIG, ())]
    # a change is read from ZooKeeper at once (no broker state in between)
    await alter_topic_config(zk, "orders", {"retention.ms": "5"}, [])
    [result] = await describe(at, 1, ConfigResourceQuery(TOPIC, "orders", ("retention.ms",)))
    assert result.configs[0].value == "5"


async def test_kafkas_errors_per_resource(orders: Cluster, caplog: pytest.LogCaptureFixture) -> None:
    cluster, _ = orders
    server = cluster.running_brokers()[0]
    me = server.broker_id
    with caplog.at_level(logging.INFO, "kafka.server.ConfigHelper"):
        results = await describe(address(cluster, server), 1, ConfigResourceQuery(TOPIC, "nope"),
                                 ConfigResourceQuery(TOPIC, "bad/name"), ConfigResourceQuery(BROKER, str(me + 10)),
                                 ConfigResourceQuery(BROKER, "one"),
                                 ConfigResourceQuery(TOPIC, "orders", ("retention.ms",)),
                                 ConfigResourceQuery(BROKER_LOGGER, ""))
    # ConfigHelper.describeConfigs' catch (2.8.2): an ApiException at INFO, the resource as its data class prints
    # it, the exception under it; UNKNOWN_TOPIC_OR_PARTITION is an answer, not an exception: no line
    logged = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "kafka.server.ConfigHelper"]
    assert logged[0] == (logging.INFO, "Error processing describe configs request for resource DescribeConfigsResource("
                                       "resourceType=2, resourceName='bad/name', configurationKeys=null)\n"
                                       "org.apache.kafka.common.errors.InvalidTopicException: Topic name \"bad/name\" "
                                       "is illegal, it contains a character other than ASCII alphanumerics, '.', '_' "
                                       "and '-'")
    assert logged[1] == (logging.INFO, "Error processing describe configs request for resource DescribeConfigsResource("
                                       f"resourceType=4, resourceName='{me + 10}', configurationKeys=null)\n"
                                       "org.apache.kafka.common.errors.InvalidRequestException: Unexpected broker id, "
                                       f"expected {me} or empty string, but received {me + 10}")
    assert len(logged) == 4 and all(level == logging.INFO for level, _ in logged)
    assert [(r.resource_type, r.resource_name, r.error, r.message, len(r.configs)) for r in results] == [
        (TOPIC, "nope", UNKNOWN_TOPIC_OR_PARTITION, None, 0),
        (TOPIC, "bad/name", INVALID_TOPIC_EXCEPTION,
         "Topic name \"bad/name\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and "
         "'-'", 0),
        (BROKER, str(me + 10), INVALID_REQUEST,
         f"Unexpected broker id, expected {me} or empty string, but received {me + 10}", 0),
        (BROKER, "one", INVALID_REQUEST, "Broker id must be an integer, but it is: one", 0),
        (TOPIC, "orders", 0, None, 1),
        (BROKER_LOGGER, "", INVALID_REQUEST, "Broker id must not be empty", 0)]


async def test_an_unknown_resource_type_fails_every_resource(orders: Cluster,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    cluster, _ = orders
    server = cluster.running_brokers()[0]
    with caplog.at_level(logging.INFO, "kafka.server.ConfigHelper"):
        results = await describe(address(cluster, server), 2,
                                 ConfigResourceQuery(TOPIC, "orders"), ConfigResourceQuery(7, "x"))
    # KafkaApis throws; RequestHandlerHelper.handleError logs the request at ERROR (KafkaApis' ident), with the
    # request header's client id, correlation id and version
    [line] = [r for r in caplog.records if "Error when handling request" in r.getMessage()]
    assert (line.name, line.levelno) == ("kafka.server.RequestHandlerHelper", logging.ERROR)
    assert line.getMessage() == (
        f"[KafkaApi-{server.broker_id}] Error when handling request: clientId=test, correlationId=9, "
        "api=DESCRIBE_CONFIGS, version=2, body=DescribeConfigsRequest"
        "Data(resources=[DescribeConfigsResource(resourceType=2, resourceName='orders', configurationKeys=null), "
        "DescribeConfigsResource(resourceType=7, resourceName='x', configurationKeys=null)], includeSynonyms=false, "
        "includeDocumentation=false)\norg.apache.kafka.common.errors.InvalidRequestException: Unexpected resource "
        "type UNKNOWN for resource x")
    assert not [r for r in caplog.records if r.name == "kafka.server.ConfigHelper"]
    assert [(r.resource_name, r.error, len(r.configs)) for r in results] == [("orders", INVALID_REQUEST, 0),
                                                                            ("x", INVALID_REQUEST, 0)]
    assert results[0].message is not None and results[0].message.startswith("This most likely occurs")


@pytest.mark.parametrize("version", [0, 3])
async def test_the_broker_itself(orders: Cluster, version: int) -> None:
    cluster, zk = orders
    server = cluster.running_brokers()[0]
    at = address(cluster, server)
    [result] = await describe(at, version, ConfigResourceQuery(BROKER, f"{server.broker_id}"), synonyms=True)
    configs = by_name(result)
    assert result.error == 0
    assert configs["message.max.bytes"].value == "1048588" and not configs["message.max.bytes"].read_only
    # in-process: the server.properties it would have had (it showed broker.id -1 and log.dirs null, the defaults)
    assert configs["broker.id"].value == str(server.broker_id) and configs["broker.id"].read_only
    assert configs["log.dirs"].value == ",".join(server.config.log_dirs)
    assert configs["advertised.listeners"].value == f"PLAINTEXT://{at}"
    assert configs["zookeeper.session.timeout.ms"].value == "4000"
    assert configs["zookeeper.connect"].value is None  # the embedded store has no address
    if version == 3:
        assert configs["message.max.bytes"].source == DEFAULT_CONFIG and configs["message.max.bytes"].config_type == 3
        assert configs["log.retention.hours"].synonyms == (dc.Synonym("log.retention.hours", "168", DEFAULT_CONFIG),)
        assert {configs[k].source for k in ("broker.id", "log.dirs", "listeners")} == {STATIC_BROKER_CONFIG}
    # the cluster-wide dynamic defaults (empty name): Kafka's currentDynamicDefaultConfigs, the node as the broker
    # took it up (fromPersistentProps drops a static key, a per-broker one and an invalid value), not as it is now
    await change_broker_config(zk, "<default>", {"log.retention.ms": "99", "secret.thing": "x", "num.partitions": "3",
                                                 "listeners": "PLAINTEXT://:1", "log.segment.bytes": "lots"})
    rm = server.replica_manager
    assert rm is not None
    await wait_until(lambda: rm.topic_configs.defaults.dynamic_default.get("log.retention.ms") == "99",
                     what="the default level taken up")
    await zk.set_or_create_entity_configs("brokers", "<default>", {"log.retention.ms": "7"})  # no notification
    [result] = await describe(at, 1, ConfigResourceQuery(BROKER, ""), synonyms=True)
    assert [(c.name, c.value, c.source, c.is_sensitive, c.synonyms) for c in result.configs] == [
        ("log.retention.ms", "99", DYNAMIC_DEFAULT_BROKER_CONFIG, False,
         (dc.Synonym("log.retention.ms", "99", DYNAMIC_DEFAULT_BROKER_CONFIG),)),
        ("secret.thing", None, DYNAMIC_DEFAULT_BROKER_CONFIG, True,
         (dc.Synonym("secret.thing", None, DYNAMIC_DEFAULT_BROKER_CONFIG),))]
    [result] = await describe(at, 1, ConfigResourceQuery(BROKER_LOGGER, str(server.broker_id), ("root",)))
    assert [(c.name, c.source) for c in result.configs] == [("root", 6)]


UNMODELLED = """socket.send.buffer.bytes=204800
kafka.metrics.reporters=com.example.A , com.example.B
zookeeper.ssl.keystore.password=hunter2
ssl.keystore.password=hunter2
my.custom.key=abc
listener.name.plaintext.ssl.keystore.type=PKCS12
"""
"""KafkaConfig keys the project does not model (an INT, a LIST, a PASSWORD), a modelled PASSWORD, a key Kafka does
not define, and a per-listener key."""


async def test_every_kafka_config_key_is_typed(admin_cluster: Cluster) -> None:
    """Kafka 2.8.2's ``KafkaConfig.configType`` knows every property's type, so a key the project does not model
    shows its value (described as unknown, sensitive and null, before); only a PASSWORD or a custom key is
    sensitive, and the throttle rates are ``DynamicConfig.Broker``'s LONG, not sensitive."""
    cluster, zk = admin_cluster
    server = cluster.running_brokers()[0]
    at = address(cluster, server)
    props = broker_properties(parse_properties(f"broker.id={server.broker_id}\nzookeeper.connect=zk:2181\n"
                                               + UNMODELLED))
    server.config.static_configs.update({k: v for k, v in props.given.items() if k in UNMODELLED})  # as if given
    keys = tuple(line.split("=")[0] for line in UNMODELLED.splitlines())
    [result] = await describe(at, 3, ConfigResourceQuery(BROKER, str(server.broker_id), keys), synonyms=True)
    configs = by_name(result)
    assert result.error == 0 and sorted(configs) == sorted(keys)

    def shown(name: str) -> tuple[Any, ...]:
        c = configs[name]
        return c.value, c.source, c.is_sensitive, c.read_only, c.config_type, c.synonyms, c.documentation
    static = STATIC_BROKER_CONFIG
    assert shown("socket.send.buffer.bytes") == ("204800", static, False, True, 3, (  # INT, then its default
        dc.Synonym("socket.send.buffer.bytes", "204800", static),
        dc.Synonym("socket.send.buffer.bytes", "102400", DEFAULT_CONFIG)), None)
    assert shown("kafka.metrics.reporters") == (  # LIST: parsed and joined again; the synonym as given
        "com.example.A,com.example.B", static, False, True, 7,
        (dc.Synonym("kafka.metrics.reporters", "com.example.A , com.example.B", static),
         dc.Synonym("kafka.metrics.reporters", "", DEFAULT_CONFIG)), None)
    for password in ("zookeeper.ssl.keystore.password", "ssl.keystore.password"):
        assert shown(password) == (None, static, True, password != "ssl.keystore.password", 9,
                                   (dc.Synonym(password, None, static),), None)
    assert shown("my.custom.key") == (None, static, True, True, 0, (dc.Synonym("my.custom.key", None, static),), None)
    assert shown("listener.name.plaintext.ssl.keystore.type") == (  # its base config's type, and that as a synonym
        "PKCS12", static, False, True, 2, (dc.Synonym("listener.name.plaintext.ssl.keystore.type", "PKCS12", static),
                                           dc.Synonym("ssl.keystore.type", "JKS", DEFAULT_CONFIG)), None)
    # a throttle rate at the cluster default: LONG, its value shown, on this broker and as the default
    await change_broker_config(zk, "<default>", {"follower.replication.throttled.rate": "1000"})
    rm = server.replica_manager
    assert rm is not None
    await wait_until(lambda: "follower.replication.throttled.rate" in rm.topic_configs.defaults.dynamic_default,
                     what="the default level taken up")
    throttle = ("follower.replication.throttled.rate",)
    for name in (str(server.broker_id), ""):
        [result] = await describe(at, 3, ConfigResourceQuery(BROKER, name, throttle), synonyms=True)
        assert [(c.value, c.source, c.is_sensitive, c.config_type, c.synonyms) for c in result.configs] == [
            ("1000", DYNAMIC_DEFAULT_BROKER_CONFIG, False, 5,
             (dc.Synonym(throttle[0], "1000", DYNAMIC_DEFAULT_BROKER_CONFIG),))]


async def test_advertised_as_kafka_2_8s_0_to_4(orders: Cluster) -> None:
    """Kafka 2.8.2's DescribeConfigsRequest.json has 0–4 (v4 flexible); 0–3 made kafka-python fall back to v3."""
    cluster, _ = orders
    server = cluster.running_brokers()[0]
    versions = cluster.listeners[server.broker_id].apis.supported_versions()
    assert versions[dc.DESCRIBE_CONFIGS] == (0, 4)
    assert api_versions_response(3, versions)  # encodes


def schema_module_of(version: int, kind: str) -> Any:
    return importlib.import_module(f"kio.schema.describe_configs.v{version}.{kind}")


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_the_schema_agrees_with_kios(version: int) -> None:
    """Our v1–v4 bytes read back with kio's types, and kio's requests read with ours."""
    results = [dc.ConfigResourceResult(TOPIC, "t", 0, None, (
        dc.ConfigEntry("a", "1", TOPIC_CONFIG, False, False, 3, (dc.Synonym("a", "1", TOPIC_CONFIG),), None),
        dc.ConfigEntry("b", None, DEFAULT_CONFIG, True, True, 0, (), "doc"))),
        dc.ConfigResourceResult(BROKER, "1", INVALID_REQUEST, "no")]
    body = dc.encode_response(version, results)
    m = schema_module_of(version, "response")
    decoded, size = entity_reader(m.DescribeConfigsResponse)(memoryview(body), 0)
    assert size == len(body)
    assert [(r.resource_name, int(r.error_code), r.error_message, [(c.name, c.value, c.config_source,
                                                                     c.read_only, c.is_sensitive)
                                                                    for c in r.configs]) for r in decoded.results] == [
        ("t", 0, None, [("a", "1", 1, False, False), ("b", None, 5, True, True)]), ("1", 42, "no", [])]
    if version >= 3:
        assert [c.config_type for c in decoded.results[0].configs] == [3, 0]
        assert decoded.results[0].configs[1].documentation == "doc"
    assert dc.decode_response(version, body) == [
        results[0] if version >= 3 else dc.ConfigResourceResult(TOPIC, "t", 0, None, tuple(
            dc.ConfigEntry(c.name, c.value, c.source, c.read_only, c.is_sensitive, 0, c.synonyms, None)
            for c in results[0].configs)), results[1]]
    rm = schema_module_of(version, "request")
    request = rm.DescribeConfigsRequest(resources=(rm.DescribeConfigsResource(
        resource_type=2, resource_name="t", configuration_keys=None),), include_synonyms=True,
        **({"include_documentation": True} if version >= 3 else {}))
    buf = io.BytesIO()
    entity_writer(type(request))(buf, request)
    assert dc.decode_request(version, buf.getvalue(), 0) == DescribeConfigsQuery(
        [ConfigResourceQuery(2, "t", None)], True, version >= 3)


def test_v0_answers_is_default_false_as_kafka_2_8_2_does() -> None:
    body = dc.encode_response(0, [dc.ConfigResourceResult(TOPIC, "t", configs=(
        dc.ConfigEntry("a", "1", DEFAULT_CONFIG),))])
    # throttle, 1 result: error 0, null message, type, "t", 1 config: "a", "1", read_only, is_default, sensitive
    assert body == (b"\x00\x00\x00\x00" + b"\x00\x00\x00\x01" + b"\x00\x00" + b"\xff\xff" + b"\x02" + b"\x00\x01t"
                    + b"\x00\x00\x00\x01" + b"\x00\x01a" + b"\x00\x011" + b"\x00" + b"\x00" + b"\x00")
    assert API_VERSIONS == 18
