"""Dynamic broker configs over a broker's log defaults (`broker.dynamic_broker_config`, `LogDefaults.from_levels`,
Kafka 2.8.2's ``DynamicBrokerConfig``/``DynamicLogConfig``): per-broker over cluster default over server.properties
over Kafka's default, a topic override over all; what Kafka drops from a node; DescribeConfigs' sources and synonym
order with the dynamic levels."""

from __future__ import annotations

import logging

import pytest

from zkcontroller.broker.config_helper import (
    DEFAULT_CONFIG,
    DYNAMIC_BROKER_CONFIG,
    DYNAMIC_DEFAULT_BROKER_CONFIG,
    STATIC_BROKER_CONFIG,
    TOPIC_CONFIG,
    describe_broker,
    describe_topic,
)
from zkcontroller.broker.dynamic_broker_config import clean_dynamic_configs
from zkcontroller.broker.log_config import RECONFIGURABLE_LOG_CONFIGS, LogConfig, LogDefaults
from zkcontroller.protocol.wire.describe_configs import Synonym

MIS = "min.insync.replicas"


@pytest.mark.parametrize(("static", "default", "broker", "expected"), [
    ({}, {}, {}, 1),
    ({MIS: "2"}, {}, {}, 2),
    ({MIS: "2"}, {MIS: "3"}, {}, 3),
    ({MIS: "2"}, {MIS: "3"}, {MIS: "4"}, 4),
    ({}, {}, {MIS: "4"}, 4),
])
def test_precedence_per_broker_over_default_over_static_over_kafka_default(
        static: dict[str, str], default: dict[str, str], broker: dict[str, str], expected: int) -> None:
    defaults = LogDefaults.from_levels(static, default, broker)
    assert LogConfig(defaults.values).min_insync_replicas == expected
    assert LogConfig.from_overrides(defaults, {MIS: "7"}).min_insync_replicas == 7  # the topic override wins


def test_message_max_bytes_and_retention_follow_the_dynamic_levels() -> None:
    defaults = LogDefaults.from_levels({"log.retention.hours": "1", "message.max.bytes": "100"},
                                       {"log.retention.ms": "5000", "message.max.bytes": "200"})
    config = LogConfig(defaults.values)
    assert (config.max_message_bytes, config.values["retention.ms"]) == (200, 5000)
    assert defaults.static == {"log.retention.hours": "1", "message.max.bytes": "100"}  # server.properties only


def test_only_reconfigurable_log_configs_set_defaults() -> None:
    assert "log.message.format.version" not in RECONFIGURABLE_LOG_CONFIGS
    assert {"min.insync.replicas", "message.max.bytes", "log.retention.ms", "unclean.leader.election.enable",
            "log.cleanup.policy"} <= RECONFIGURABLE_LOG_CONFIGS
    defaults = LogDefaults.from_levels({}, {"log.message.format.version": "2.0", "log.retention.hours": "1"})
    assert defaults.values["message.format.version"] == "2.8-IV1"
    assert defaults.values["retention.ms"] == 7 * 24 * 3600 * 1000  # log.retention.hours is not dynamic


def test_clean_drops_invalid_non_dynamic_and_per_broker_at_default(caplog: pytest.LogCaptureFixture) -> None:
    node = {MIS: "0", "message.max.bytes": "x", "log.retention.ms": "9", "num.partitions": "3",
            "listeners": "PLAINTEXT://:9092", "some.plugin.key": "v"}
    with caplog.at_level(logging.ERROR, "kafka.server.DynamicBrokerConfig"):
        kept = clean_dynamic_configs(node, per_broker=False, path="/config/brokers/<default>")
    assert kept == {"log.retention.ms": "9", "some.plugin.key": "v"}
    assert "Non-dynamic configs configured in ZooKeeper will be ignored: Set(num.partitions)" in caplog.text
    assert "Per-broker configs defined at default cluster level will be ignored: Set(listeners)" in caplog.text
    assert ("Dynamic default cluster config contains invalid values in: Set(message.max.bytes, min.insync.replicas), "
            "these configs will be ignored (/config/brokers/<default>") in caplog.text
    assert clean_dynamic_configs({"listeners": "PLAINTEXT://:9092"}, per_broker=True, path="p") == {
        "listeners": "PLAINTEXT://:9092"}


def test_topic_sources_and_synonyms_in_kafkas_order() -> None:
    defaults = LogDefaults.from_levels({MIS: "2", "log.retention.hours": "5"}, {MIS: "3", "log.retention.ms": "60"},
                                       {MIS: "4"})
    entries = {e.name: e for e in describe_topic(defaults, {}, include_synonyms=True)}
    mis = entries[MIS]
    assert (mis.value, mis.source) == ("4", DYNAMIC_BROKER_CONFIG)
    assert mis.synonyms == (Synonym(MIS, "4", DYNAMIC_BROKER_CONFIG), Synonym(MIS, "3", DYNAMIC_DEFAULT_BROKER_CONFIG),
                            Synonym(MIS, "2", STATIC_BROKER_CONFIG), Synonym(MIS, "1", DEFAULT_CONFIG))
    retention = entries["retention.ms"]
    assert (retention.value, retention.source) == ("60", DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert retention.synonyms == (Synonym("log.retention.ms", "60", DYNAMIC_DEFAULT_BROKER_CONFIG),
                                  Synonym("log.retention.hours", "5", STATIC_BROKER_CONFIG),
                                  Synonym("log.retention.hours", "168", DEFAULT_CONFIG))
    overridden = {e.name: e for e in describe_topic(defaults, {MIS: "5"}, include_synonyms=True)}[MIS]
    assert (overridden.source, overridden.synonyms[:2]) == (
        TOPIC_CONFIG, (Synonym(MIS, "5", TOPIC_CONFIG), Synonym(MIS, "4", DYNAMIC_BROKER_CONFIG)))


def test_broker_entries_show_the_dynamic_levels() -> None:
    entries = {e.name: e for e in describe_broker({"broker.id": "1", MIS: "2"}, include_synonyms=True,
                                                  dynamic_default={MIS: "3", "message.max.bytes": "500"},
                                                  dynamic_broker={MIS: "4"})}
    assert (entries[MIS].value, entries[MIS].source) == ("4", DYNAMIC_BROKER_CONFIG)
    assert [s.source for s in entries[MIS].synonyms] == [
        DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG]
    assert (entries["message.max.bytes"].value, entries["message.max.bytes"].source) == (
        "500", DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert entries["broker.id"].source == STATIC_BROKER_CONFIG


def test_clean_drops_static_kafka_keys_unknown_here_and_unprefixed_ssl_configs(
        caplog: pytest.LogCaptureFixture) -> None:
    """Every ``KafkaConfig`` name counts (not only those this project reads); an SSL keystore key is dynamic only
    per listener; the listener-prefixed one is per-broker; a thread count with a bad value is dropped as invalid."""
    node = {"socket.send.buffer.bytes": "1", "ssl.keystore.location": "/k", "num.io.threads": "abc",
            "listener.name.plaintext.ssl.keystore.location": "/k", "listener.name.plaintext.max.connections": "9",
            "log.cleaner.threads": "2"}
    with caplog.at_level(logging.ERROR, "kafka.server.DynamicBrokerConfig"):
        kept = clean_dynamic_configs(node, per_broker=False, path="/config/brokers/<default>")
    assert kept == {"listener.name.plaintext.max.connections": "9", "log.cleaner.threads": "2"}
    assert "Non-dynamic configs configured in ZooKeeper will be ignored: Set(socket.send.buffer.bytes)" in caplog.text
    assert ("Security configs can be dynamically updated only using listener prefix, base configs will be ignored: "
            "Set(ssl.keystore.location)") in caplog.text
    assert ("Per-broker configs defined at default cluster level will be ignored: "
            "Set(listener.name.plaintext.ssl.keystore.location)") in caplog.text
    assert "invalid values in: Set(num.io.threads)" in caplog.text


def test_dynamic_kafka_configs_describe_with_type_and_only_passwords_sensitive() -> None:
    entries = {e.name: e for e in describe_broker(
        {"broker.id": "1"}, include_synonyms=True,
        dynamic_broker={"num.io.threads": "16", "listener.name.plaintext.max.connections": "5",
                        "listener.name.plaintext.ssl.keystore.password": "secret", "custom.key": "x"})}
    io = entries["num.io.threads"]
    assert (io.value, io.is_sensitive, io.read_only, io.config_type, io.source) == (
        "16", False, False, 3, DYNAMIC_BROKER_CONFIG)
    prefixed = entries["listener.name.plaintext.max.connections"]
    assert (prefixed.value, prefixed.is_sensitive, prefixed.config_type) == ("5", False, 3)  # its base key's type
    password = entries["listener.name.plaintext.ssl.keystore.password"]
    assert (password.value, password.is_sensitive, password.config_type) == (None, True, 9)
    custom = entries["custom.key"]
    assert (custom.value, custom.is_sensitive, custom.config_type) == (None, True, 0)  # unknown: may be a password
    cleaner = entries["log.cleaner.io.max.bytes.per.second"]
    assert (cleaner.value, cleaner.source, cleaner.config_type) == ("1.7976931348623157E308", DEFAULT_CONFIG, 6)
    assert (entries["ssl.enabled.protocols"].value, entries["sasl.enabled.mechanisms"].value) == (
        "TLSv1.2,TLSv1.3", "GSSAPI")
    assert entries["zookeeper.connect"].read_only and not entries["max.connections"].read_only
