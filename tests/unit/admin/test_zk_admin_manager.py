"""The config rules of (Incremental)AlterConfigs (`admin.zk_admin_manager`, Kafka 2.8.2's ``ZkAdminManager``):
the request checks, the four operations with Kafka's list rules, and which error each kind of refusal becomes."""

from __future__ import annotations

import pytest

from zkcontroller.admin.zk_admin_manager import (
    INVALID_CONFIG,
    TOPIC_CONFIG_KEYS,
    ConfigApiError,
    InvalidConfigValue,
    UnexpectedConfigError,
    broker_id_of,
    check_changes,
    prepare_incremental,
    resource_label,
    validate_broker,
    validate_topic,
)
from zkcontroller.broker.config_helper import BROKER_CONFIG_DEFAULTS, KAFKA_CONFIG_KEYS
from zkcontroller.broker.kafka_config_types import KAFKA_CONFIG_TYPES
from zkcontroller.protocol.wire.alter_configs import APPEND, DELETE, SET, SUBTRACT, ConfigChange

INVALID_REQUEST = 42


def _api_error(e: pytest.ExceptionInfo[ConfigApiError]) -> tuple[int, str | None]:
    return e.value.error, e.value.message


def test_incremental_refuses_a_key_named_twice_then_null_values() -> None:
    with pytest.raises(ConfigApiError) as e:
        check_changes([ConfigChange("a", "1"), ConfigChange("b", None, DELETE), ConfigChange("a", "2")],
                      incremental=True)
    assert _api_error(e) == (INVALID_REQUEST, "Error due to duplicate config keys : a")
    with pytest.raises(ConfigApiError) as e:
        check_changes([ConfigChange("a", None, SET), ConfigChange("b", None, DELETE), ConfigChange("c", None, APPEND)],
                      incremental=True)
    assert _api_error(e) == (INVALID_REQUEST, "Null value not supported for : SET:a,APPEND:c")


def test_alter_configs_refuses_null_values_but_not_repeats() -> None:
    check_changes([ConfigChange("a", "1"), ConfigChange("a", "2")], incremental=False)
    with pytest.raises(ConfigApiError) as e:
        check_changes([ConfigChange("a", None), ConfigChange("b", "x"), ConfigChange("c", None)], incremental=False)
    assert _api_error(e) == (INVALID_REQUEST, "Null value not supported for : a,c")


def test_set_and_delete_apply_in_order_to_the_stored_configs() -> None:
    stored = {"retention.ms": "5", "segment.ms": "7"}
    out = prepare_incremental([ConfigChange("retention.ms", "9"), ConfigChange("segment.ms", None, DELETE),
                               ConfigChange("not.there", None, DELETE), ConfigChange("x.custom", "1")],
                              stored, TOPIC_CONFIG_KEYS)
    assert out == {"retention.ms": "9", "x.custom": "1"}
    assert stored == {"retention.ms": "5", "segment.ms": "7"}  # not mutated


def test_append_starts_from_the_default_and_keeps_kafkas_split() -> None:
    out = prepare_incremental([ConfigChange("cleanup.policy", "compact", APPEND)], {}, TOPIC_CONFIG_KEYS)
    assert out == {"cleanup.policy": "delete,compact"}
    # an empty default is one empty piece for Java's split: Kafka's leading comma is kept
    out = prepare_incremental([ConfigChange("leader.replication.throttled.replicas", "0:1", APPEND)], {},
                              TOPIC_CONFIG_KEYS)
    assert out == {"leader.replication.throttled.replicas": ",0:1"}
    out = prepare_incremental([ConfigChange("leader.replication.throttled.replicas", "1:2,", APPEND)],
                              {"leader.replication.throttled.replicas": "0:1"}, TOPIC_CONFIG_KEYS)
    assert out == {"leader.replication.throttled.replicas": "0:1,1:2"}


def test_subtract_takes_one_occurrence_per_value() -> None:
    stored = {"cleanup.policy": "compact,delete,compact"}
    out = prepare_incremental([ConfigChange("cleanup.policy", "compact,nope", SUBTRACT)], stored, TOPIC_CONFIG_KEYS)
    assert out == {"cleanup.policy": "delete,compact"}
    out = prepare_incremental([ConfigChange("cleanup.policy", "delete", SUBTRACT)], {}, TOPIC_CONFIG_KEYS)
    assert out == {"cleanup.policy": ""}


def test_append_to_a_scalar_is_invalid_request_to_an_unknown_key_unexpected() -> None:
    with pytest.raises(ConfigApiError) as e:
        prepare_incremental([ConfigChange("retention.ms", "1", APPEND)], {}, TOPIC_CONFIG_KEYS)
    assert _api_error(e) == (INVALID_REQUEST, "Config value append is not allowed for config key: retention.ms")
    with pytest.raises(ConfigApiError) as e:
        prepare_incremental([ConfigChange("log.retention.ms", "1", SUBTRACT)], {}, BROKER_CONFIG_DEFAULTS)
    assert _api_error(e) == (INVALID_REQUEST, "Config value subtract is not allowed for config key: log.retention.ms")
    with pytest.raises(UnexpectedConfigError):  # Kafka's configKeys(name): NoSuchElementException
        prepare_incremental([ConfigChange("no.such", "1", APPEND)], {}, TOPIC_CONFIG_KEYS)
    with pytest.raises(UnexpectedConfigError):  # OpType.forId(9) is null: a MatchError
        prepare_incremental([ConfigChange("retention.ms", "1", 9)], {}, TOPIC_CONFIG_KEYS)


def test_the_brokers_list_default_for_append() -> None:
    out = prepare_incremental([ConfigChange("log.cleanup.policy", "compact", APPEND)], {}, BROKER_CONFIG_DEFAULTS)
    assert out == {"log.cleanup.policy": "delete,compact"}


def test_the_broker_keys_are_all_of_kafka_configs_with_the_types_known_here() -> None:
    """The incremental path's keys are every KafkaConfig property (233 in 2.8.2), agreeing with
    `BROKER_CONFIG_DEFAULTS` where it knows one; the throttle rates are DynamicConfig.Broker's, not KafkaConfig's."""
    assert len(KAFKA_CONFIG_KEYS) == 233 and KAFKA_CONFIG_KEYS.keys() == KAFKA_CONFIG_TYPES.keys()
    assert all(KAFKA_CONFIG_KEYS[name] == known for name, known in BROKER_CONFIG_DEFAULTS.items())
    assert KAFKA_CONFIG_KEYS["socket.send.buffer.bytes"][0] == "INT"
    assert "follower.replication.throttled.rate" not in KAFKA_CONFIG_KEYS
    lists = {name for name, (kind, _) in KAFKA_CONFIG_KEYS.items() if kind == "LIST"}
    assert lists == {"controller.quorum.voters", "kafka.metrics.reporters", "log.cleanup.policy", "metric.reporters",
                     "process.roles", "sasl.enabled.mechanisms", "sasl.kerberos.principal.to.local.rules",
                     "ssl.cipher.suites", "ssl.enabled.protocols", "zookeeper.ssl.cipher.suites",
                     "zookeeper.ssl.enabled.protocols"}


def test_append_on_a_static_broker_key_by_its_kafka_type() -> None:
    with pytest.raises(ConfigApiError) as e:
        prepare_incremental([ConfigChange("socket.send.buffer.bytes", "1", APPEND)], {}, KAFKA_CONFIG_KEYS)
    assert _api_error(e) == (INVALID_REQUEST,
                             "Config value append is not allowed for config key: socket.send.buffer.bytes")
    # an empty default is one empty piece ("".split(",")), a null one none at all: both start from ""
    out = prepare_incremental([ConfigChange("kafka.metrics.reporters", "a.B", APPEND),
                               ConfigChange("zookeeper.ssl.cipher.suites", "X", APPEND)], {}, KAFKA_CONFIG_KEYS)
    assert out == {"kafka.metrics.reporters": ",a.B", "zookeeper.ssl.cipher.suites": ",X"}
    with pytest.raises(UnexpectedConfigError):
        prepare_incremental([ConfigChange("listener.name.x.ssl.cipher.suites", "X", SUBTRACT)], {},
                            KAFKA_CONFIG_KEYS)


def test_topic_validation_tells_invalid_config_from_a_bad_value() -> None:
    validate_topic({"min.insync.replicas": "2", "cleanup.policy": "compact,delete"})
    with pytest.raises(ConfigApiError) as e:
        validate_topic({"min.insync.replicas": "2", "no.such.config": "1"})
    assert _api_error(e) == (INVALID_CONFIG, "Unknown topic config name: no.such.config")
    with pytest.raises(ConfigApiError) as e:
        validate_topic({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"})
    assert _api_error(e) == (INVALID_CONFIG, "conflict topic config setting min.compaction.lag.ms (10) > "
                                             "max.compaction.lag.ms (5)")
    with pytest.raises(InvalidConfigValue) as bad:
        validate_topic({"min.insync.replicas": "0"})
    assert bad.value.wrapped(2, "t") == ("Invalid config value for resource ConfigResource(type=TOPIC, name='t'): "
                                         "Invalid value 0 for configuration min.insync.replicas: Value must be at "
                                         "least 1")


def test_broker_ids() -> None:
    assert broker_id_of("", 1) is None
    assert broker_id_of("1", 1) == 1 and broker_id_of("+1", 1) == 1
    with pytest.raises(ConfigApiError) as e:
        broker_id_of("2", 1)
    assert _api_error(e) == (INVALID_REQUEST, "Unexpected broker id, expected 1, but received 2")
    with pytest.raises(ConfigApiError) as e:
        broker_id_of("one", 1)
    assert _api_error(e) == (INVALID_REQUEST, "Broker id must be an integer, but it is: one")


def test_broker_validation_in_kafkas_order() -> None:
    validate_broker({"min.insync.replicas": "2", "log.retention.ms": "100", "my.custom": "x",
                     "leader.replication.throttled.rate": "1000"}, per_broker=False)
    validate_broker({"listeners": "PLAINTEXT://:9092"}, per_broker=True)
    refusals = [
        ({"broker.id": "3", "min.insync.replicas": "x"}, True,
         "Cannot update these configs dynamically: Set(broker.id)"),
        ({"log.retention.hours": "1"}, True, "Cannot update these configs dynamically: Set(log.retention.hours)"),
        ({"min.insync.replicas": "0"}, True,
         "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
        ({"log.cleanup.policy": "compact,nope"}, True,
         "Invalid value nope for configuration log.cleanup.policy: String must be one of: compact, delete"),
        ({"leader.replication.throttled.rate": "fast"}, True,
         "Invalid value fast for configuration leader.replication.throttled.rate: Not a number of type LONG"),
        ({"listeners": "PLAINTEXT://:9092"}, False,
         "Cannot update these configs at default cluster level, broker id must be specified: Set(listeners)"),
    ]
    for configs, per_broker, message in refusals:
        with pytest.raises(InvalidConfigValue) as e:
            validate_broker(configs, per_broker=per_broker)
        assert str(e.value) == message


def test_resource_labels() -> None:
    assert resource_label(4, "") == "ConfigResource(type=BROKER, name='')"
    assert resource_label(8, "1") == "ConfigResource(type=BROKER_LOGGER, name='1')"
