"""A topic's effective config as a Kafka 2.8.2 broker computes it (`broker.log_config`): the broker's defaults
from server.properties (``LogConfig.extractLogConfigMap``) overlaid by the topic's overrides."""

from __future__ import annotations

import pytest

from zkcontroller.broker.log_config import (
    TOPIC_CONFIG_SYNONYMS,
    LogConfig,
    LogDefaults,
    broker_synonyms,
    static_default_strings,
    to_config_string,
)
from zkcontroller.zk.log_config_def import TOPIC_CONFIG_RULES, TopicConfigError


def test_every_topic_key_has_a_default_and_the_synonyms_are_kafkas() -> None:
    defaults = LogDefaults.from_properties()
    assert list(defaults.values) == list(TOPIC_CONFIG_RULES)
    assert set(TOPIC_CONFIG_SYNONYMS) == set(TOPIC_CONFIG_RULES) - {
        "leader.replication.throttled.replicas", "follower.replication.throttled.replicas"}
    assert TOPIC_CONFIG_SYNONYMS["max.message.bytes"] == "message.max.bytes"
    assert TOPIC_CONFIG_SYNONYMS["retention.ms"] == "log.retention.ms"
    # with nothing in server.properties the broker's defaults are LogConfig's own
    for key, rule in TOPIC_CONFIG_RULES.items():
        assert defaults.values[key] == rule.default, key


def test_broker_properties_become_topic_defaults() -> None:
    defaults = LogDefaults.from_properties({"min.insync.replicas": "2", "message.max.bytes": "5000",
                                            "log.retention.hours": "1", "log.roll.ms": "60000",
                                            "log.cleanup.policy": "compact, delete", "broker.id": "1"})
    assert defaults.values["min.insync.replicas"] == 2
    assert defaults.values["max.message.bytes"] == 5000
    assert defaults.values["retention.ms"] == 3600 * 1000
    assert defaults.values["segment.ms"] == 60000
    assert defaults.values["cleanup.policy"] == ["compact", "delete"]
    assert "broker.id" not in defaults.static and defaults.static["min.insync.replicas"] == "2"
    assert LogDefaults.from_properties({"log.retention.minutes": "2"}).values["retention.ms"] == 120000
    assert LogDefaults.from_properties({"log.retention.ms": "-5"}).values["retention.ms"] == -1


def test_bad_broker_property_is_refused_with_kafkas_message() -> None:
    with pytest.raises(TopicConfigError, match=r"Invalid value 0 for configuration min\.insync\.replicas: "
                                               r"Value must be at least 1"):
        LogDefaults.from_properties({"min.insync.replicas": "0"})
    with pytest.raises(TopicConfigError, match="Not a number of type INT"):
        LogDefaults.from_properties({"message.max.bytes": "big"})


def test_topic_overrides_win_and_bad_ones_are_refused() -> None:
    defaults = LogDefaults.from_properties({"min.insync.replicas": "2"})
    config = LogConfig.from_overrides(defaults, {"max.message.bytes": " 100 ", "unknown.key": "x"})
    assert (config.min_insync_replicas, config.max_message_bytes) == (2, 100)
    assert config.overrides == {"max.message.bytes": " 100 ", "unknown.key": "x"}
    assert LogConfig.from_overrides(defaults, {"min.insync.replicas": "3"}).min_insync_replicas == 3
    with pytest.raises(TopicConfigError, match="Value must be at least 1"):
        LogConfig.from_overrides(defaults, {"min.insync.replicas": "0"})


def test_strings_as_describe_configs_sends_them() -> None:
    config = LogConfig.from_overrides(LogDefaults.from_properties(), {"min.cleanable.dirty.ratio": "1e-4"})
    assert config.as_string("min.cleanable.dirty.ratio") == "1.0E-4"
    assert config.as_string("cleanup.policy") == "delete"
    assert config.as_string("preallocate") == "false"
    assert config.as_string("leader.replication.throttled.replicas") == ""
    assert to_config_string(None, "LONG") is None
    assert static_default_strings()["log.retention.hours"] == "168"
    assert "log.retention.ms" not in static_default_strings()  # a null default is left out, as Kafka does


def test_broker_synonyms_are_dynamic_broker_configs() -> None:
    assert broker_synonyms("log.retention.ms") == ["log.retention.ms", "log.retention.minutes", "log.retention.hours"]
    assert broker_synonyms("log.flush.interval.ms") == ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"]
    assert broker_synonyms("log.flush.scheduler.interval.ms") == ["log.flush.scheduler.interval.ms"]
    assert broker_synonyms("message.max.bytes") == ["message.max.bytes"]
