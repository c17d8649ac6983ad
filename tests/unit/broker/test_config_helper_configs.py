"""DescribeConfigs' entries (`broker.config_helper`, Kafka 2.8.2's ``ConfigHelper``) for a broker whose
server.properties sets some topic defaults: sources, synonyms in Kafka's order (and its dropWhile quirk),
sensitivity of keys without a type, read-only broker properties."""

from __future__ import annotations

from zkcontroller.broker.config_helper import (
    DEFAULT_CONFIG,
    KAFKA_CONFIG_KEYS,
    STATIC_BROKER_CONFIG,
    TOPIC_CONFIG,
    describe_broker,
    describe_topic,
)
from zkcontroller.broker.log_config import LogDefaults
from zkcontroller.protocol.wire.describe_configs import Synonym

STATIC = {"broker.id": "3", "min.insync.replicas": " 2 ", "log.retention.hours": "100", "log.retention.ms": "5000",
          "log.roll.hours": "2", "my.plugin.secret": "s3cr3t"}


def test_topic_sources_and_synonyms_follow_server_properties() -> None:
    defaults = LogDefaults.from_properties(STATIC)
    entries = {e.name: e for e in describe_topic(defaults, {"min.insync.replicas": "3", "x.unknown": "1"},
                                                 include_synonyms=True)}
    assert entries["min.insync.replicas"].value == "3"
    assert entries["min.insync.replicas"].synonyms == (
        Synonym("min.insync.replicas", "3", TOPIC_CONFIG), Synonym("min.insync.replicas", " 2 ", STATIC_BROKER_CONFIG),
        Synonym("min.insync.replicas", "1", DEFAULT_CONFIG))
    retention = entries["retention.ms"]
    assert (retention.value, retention.source) == ("5000", STATIC_BROKER_CONFIG)
    assert retention.synonyms == (Synonym("log.retention.ms", "5000", STATIC_BROKER_CONFIG),
                                  Synonym("log.retention.hours", "100", STATIC_BROKER_CONFIG),
                                  Synonym("log.retention.hours", "168", DEFAULT_CONFIG))
    # log.roll.ms is not set: its synonyms start at no entry named log.roll.ms, so none (Kafka's dropWhile),
    # and the value still comes from log.roll.hours
    assert (entries["segment.ms"].value, entries["segment.ms"].source, entries["segment.ms"].synonyms) == (
        str(2 * 3600 * 1000), DEFAULT_CONFIG, ())
    unknown = entries["x.unknown"]
    assert (unknown.value, unknown.is_sensitive, unknown.source, unknown.config_type) == (None, True, TOPIC_CONFIG, 0)
    assert [e.name for e in describe_topic(defaults, {}, include_synonyms=False, keys=("segment.bytes",))] == [
        "segment.bytes"]
    assert all(e.synonyms == () for e in describe_topic(defaults, {}, include_synonyms=False))


def test_broker_entries_are_server_properties_over_known_defaults() -> None:
    entries = {e.name: e for e in describe_broker(STATIC, include_synonyms=True)}
    assert (entries["broker.id"].value, entries["broker.id"].source, entries["broker.id"].read_only) == (
        "3", STATIC_BROKER_CONFIG, True)
    assert entries["min.insync.replicas"].value == "2"  # parsed, then printed
    assert not entries["min.insync.replicas"].read_only  # a dynamic broker config in Kafka
    assert entries["log.message.format.version"].read_only  # DynamicLogConfig excludes it
    assert (entries["num.partitions"].value, entries["num.partitions"].source) == ("1", DEFAULT_CONFIG)
    assert entries["zookeeper.connect"].value is None and entries["zookeeper.connect"].synonyms == ()
    secret = entries["my.plugin.secret"]
    assert (secret.value, secret.is_sensitive, secret.synonyms) == (
        None, True, (Synonym("my.plugin.secret", None, STATIC_BROKER_CONFIG),))
    assert entries["log.retention.ms"].synonyms[0] == Synonym("log.retention.ms", "5000", STATIC_BROKER_CONFIG)


def test_every_kafka_config_default_fits_its_type() -> None:
    """`KAFKA_CONFIG_KEYS` holds each property's ConfigDef-parsed default (``staticDefaultConfigs``' source)."""
    python_types = {"BOOLEAN": bool, "STRING": str, "INT": int, "SHORT": int, "LONG": int, "DOUBLE": float,
                    "LIST": list, "CLASS": str, "PASSWORD": str}
    misfits = {name: (kind, default) for name, (kind, default) in KAFKA_CONFIG_KEYS.items()
               if default is not None and (type(default) is not python_types[kind])}
    assert misfits == {}
    assert KAFKA_CONFIG_KEYS["socket.send.buffer.bytes"] == ("INT", 102400)
    assert KAFKA_CONFIG_KEYS["offsets.commit.required.acks"] == ("SHORT", -1)
    assert KAFKA_CONFIG_KEYS["zookeeper.ssl.enabled.protocols"] == ("LIST", None)
