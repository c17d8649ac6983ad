"""DescribeConfigs' entries (`broker.config_helper`, Kafka 2.8.2's ``ConfigHelper``) for a broker whose
server.properties sets some topic defaults: sources, synonyms in Kafka's order (and its dropWhile quirk),
sensitivity of keys without a type, read-only broker properties; every non-internal property, Kafka's entry order,
documentation when asked."""

from __future__ import annotations

from zkcontroller.broker.config_helper import (
    BROKER_DESCRIBED_KEYS,
    DEFAULT_CONFIG,
    KAFKA_CONFIG_KEYS,
    STATIC_BROKER_CONFIG,
    TOPIC_CONFIG,
    describe_broker,
    describe_topic,
)
from zkcontroller.broker.kafka_config_docs import BROKER_CONFIG_DOCS, TOPIC_CONFIG_DOCS
from zkcontroller.broker.log_config import LogDefaults
from zkcontroller.cluster.admin_apis.describe_configs import _dynamic_defaults
from zkcontroller.java_hash import java_string_hash, scala_hash_order
from zkcontroller.protocol.wire.describe_configs import Synonym
from zkcontroller.zk.log_config_def import TOPIC_CONFIG_RULES

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


def test_internal_properties_are_listed_only_when_set_and_as_given() -> None:
    """``allConfigs`` = ``originals ++ nonInternalValues``: an internal (``defineInternal``) property is only among
    the originals, its value Kafka's String as given; every other defined one is listed, set or not."""
    unset = {e.name: e for e in describe_broker({"broker.id": "3"}, include_synonyms=False)}
    assert len(unset) == len(BROKER_DESCRIBED_KEYS) == 218
    assert "node.id" not in unset and "controller.quorum.voters" not in unset
    assert unset["group.max.size"].value == str(2**31 - 1)  # a property no module of ours reads
    set_ = {e.name: e for e in describe_broker({"broker.id": "3", "node.id": " 7"}, include_synonyms=True)}
    assert len(set_) == 219
    node_id = set_["node.id"]
    assert (node_id.value, node_id.source, node_id.config_type) == (" 7", STATIC_BROKER_CONFIG, 3)


def test_entries_come_in_kafkas_hash_map_order_and_a_keys_filter_makes_a_new_table() -> None:
    everything = [e.name for e in describe_broker(STATIC, include_synonyms=False)]
    names = [*STATIC, *BROKER_DESCRIBED_KEYS]
    assert everything == scala_hash_order(names, java_string_hash)
    keys = ("num.partitions", "broker.id", "log.retention.ms", "zookeeper.connect")
    assert [e.name for e in describe_broker(STATIC, include_synonyms=False, keys=keys)] == scala_hash_order(
        [n for n in everything if n in keys], java_string_hash)
    topic = [e.name for e in describe_topic(LogDefaults.from_properties(STATIC), {"x.custom": "1"},
                                            include_synonyms=False)]
    assert topic == scala_hash_order([*TOPIC_CONFIG_RULES, "x.custom"], java_string_hash)


def test_documentation_only_when_asked_and_only_for_a_defined_key() -> None:
    defaults = LogDefaults.from_properties(STATIC)
    topic = {e.name: e.documentation for e in describe_topic(defaults, {"x.custom": "1"}, include_synonyms=False,
                                                           include_documentation=True)}
    assert topic["x.custom"] is None and topic["retention.ms"] == TOPIC_CONFIG_DOCS["retention.ms"]
    assert topic["retention.ms"].startswith("This configuration controls the maximum time we will retain a log")
    broker = {e.name: e.documentation for e in describe_broker(STATIC, include_synonyms=False,
                                                             include_documentation=True)}
    assert broker["my.plugin.secret"] is None and broker["num.io.threads"] == BROKER_CONFIG_DOCS["num.io.threads"]
    assert all(e.documentation is None for e in describe_broker(STATIC, include_synonyms=False))
    # the empty broker name (the cluster-wide dynamic defaults): documentationOf of each key too
    dynamic = _dynamic_defaults({"num.io.threads": "4", "my.custom": "x"}, False, None, True)
    assert {e.name: e.documentation for e in dynamic} == {
        "my.custom": None, "num.io.threads": BROKER_CONFIG_DOCS["num.io.threads"]}


def test_the_dynamic_defaults_come_in_their_hash_maps_order() -> None:
    configs = {name: "1" for name in ("num.io.threads", "background.threads", "log.cleaner.threads",
                                      "num.network.threads", "max.connections")}
    assert [e.name for e in _dynamic_defaults(configs, False, None)] == scala_hash_order(configs, java_string_hash)
    assert scala_hash_order(configs, java_string_hash) != sorted(configs)  # what was answered before
