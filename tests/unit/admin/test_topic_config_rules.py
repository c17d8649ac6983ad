"""Topic config values range- and choice-checked as Kafka 2.8's ``LogConfig`` validators do, with Kafka's messages.

The expected bounds are written out here from Kafka 2.8.2's ``LogConfig.scala`` (not read from the rule table),
so a wrong bound in the table fails these tests.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkcontroller.admin.errors import InvalidConfigError
from zkcontroller.admin.topic_rules import TOPIC_CONFIG_RULES, parse_topic_configs, validate_topic_configs

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

AT_LEAST = {  # name -> (ConfigDef type, atLeast bound) in Kafka 2.8.2
    "segment.bytes": ("INT", 14),  # LegacyRecord.RECORD_OVERHEAD_V0
    "segment.ms": ("LONG", 1),
    "segment.jitter.ms": ("LONG", 0),
    "segment.index.bytes": ("INT", 0),
    "flush.messages": ("LONG", 0),
    "flush.ms": ("LONG", 0),
    "retention.ms": ("LONG", -1),
    "max.message.bytes": ("INT", 0),
    "index.interval.bytes": ("INT", 0),
    "delete.retention.ms": ("LONG", 0),
    "min.compaction.lag.ms": ("LONG", 0),
    "max.compaction.lag.ms": ("LONG", 1),
    "file.delete.delay.ms": ("LONG", 0),
    "min.insync.replicas": ("INT", 1),
    "message.timestamp.difference.max.ms": ("LONG", 0),
}
UNCHECKED = {"retention.bytes", "unclean.leader.election.enable", "preallocate", "message.downconversion.enable"}
CHOICES = {"cleanup.policy", "compression.type", "message.timestamp.type", "message.format.version",
           "min.cleanable.dirty.ratio", "leader.replication.throttled.replicas",
           "follower.replication.throttled.replicas"}


def refusal(configs: dict[str, str]) -> str:
    with pytest.raises(InvalidConfigError) as caught:
        validate_topic_configs(configs)
    return str(caught.value)


def test_every_kafka_topic_config_has_a_rule() -> None:
    assert set(TOPIC_CONFIG_RULES) == set(AT_LEAST) | UNCHECKED | CHOICES
    assert len(TOPIC_CONFIG_RULES) == 26  # LogConfig.configNames in 2.8


@pytest.mark.parametrize("name", sorted(AT_LEAST))
def test_at_least_accepts_its_bound_and_refuses_one_below(name: str) -> None:
    kind, low = AT_LEAST[name]
    validate_topic_configs({name: str(low)})
    validate_topic_configs({name: str(INT_MAX if kind == "INT" else LONG_MAX)})
    assert refusal({name: str(low - 1)}) == (
        f"Invalid value {low - 1} for configuration {name}: Value must be at least {low}")


@given(name=st.sampled_from(sorted(AT_LEAST)), data=st.data())
def test_at_least_over_the_whole_type_range(name: str, data: st.DataObject) -> None:
    kind, low = AT_LEAST[name]
    value = data.draw(st.integers(INT_MIN, INT_MAX) if kind == "INT" else st.integers(LONG_MIN, LONG_MAX))
    if value >= low:
        validate_topic_configs({name: f" {value} "})  # trimmed, as ConfigDef.parseType does
    else:
        assert refusal({name: str(value)}).endswith(f": Value must be at least {low}")


def test_the_reported_examples() -> None:
    assert refusal({"segment.bytes": "10"}) == (
        "Invalid value 10 for configuration segment.bytes: Value must be at least 14")
    assert refusal({"min.cleanable.dirty.ratio": "2"}) == (
        "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1")


@given(st.floats(allow_nan=False, allow_infinity=False))  # repr gives "inf", which Java refuses
def test_between_zero_and_one(ratio: float) -> None:
    if 0 <= ratio <= 1:
        validate_topic_configs({"min.cleanable.dirty.ratio": repr(ratio)})
    else:
        assert refusal({"min.cleanable.dirty.ratio": repr(ratio)}).endswith(
            "Value must be at least 0" if ratio < 0 else "Value must be no more than 1")


@pytest.mark.parametrize(("value", "shown", "message"), [
    ("-0.01", "-0.01", "Value must be at least 0"),
    ("1.0000001", "1.0000001", "Value must be no more than 1"),
    ("1e10", "1.0E10", "Value must be no more than 1"),  # printed as Java's Double.toString
    ("-1e-9", "-1.0E-9", "Value must be at least 0"),
    ("Infinity", "Infinity", "Value must be no more than 1"),
])
def test_between_messages(value: str, shown: str, message: str) -> None:
    assert refusal({"min.cleanable.dirty.ratio": value}) == (
        f"Invalid value {shown} for configuration min.cleanable.dirty.ratio: {message}")


@pytest.mark.parametrize("value", ["0", "1", "0.0", "1.0", "0.5d", ".5", "5e-1"])
def test_between_accepts_bounds_and_java_double_forms(value: str) -> None:
    validate_topic_configs({"min.cleanable.dirty.ratio": value})


@pytest.mark.parametrize(("name", "good", "bad", "listed"), [
    ("compression.type", ["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"], ["GZIP", "none", ""],
     "uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("message.timestamp.type", ["CreateTime", "LogAppendTime"], ["createtime", "NoTime"],
     "CreateTime, LogAppendTime"),
])
def test_valid_string(name: str, good: list[str], bad: list[str], listed: str) -> None:
    for value in good:
        validate_topic_configs({name: value})
    for value in bad:
        assert refusal({name: value}) == (
            f"Invalid value {value} for configuration {name}: String must be one of: {listed}")


@pytest.mark.parametrize("value", ["compact", "delete", "compact,delete", "delete , compact", ""])
def test_valid_list_accepts(value: str) -> None:
    validate_topic_configs({"cleanup.policy": value})


@pytest.mark.parametrize(("value", "item"), [("shred", "shred"), ("delete,shred", "shred"), ("compact,", "")])
def test_valid_list_refuses_each_bad_item(value: str, item: str) -> None:
    assert refusal({"cleanup.policy": value}) == (
        f"Invalid value {item} for configuration cleanup.policy: String must be one of: compact, delete")


@pytest.mark.parametrize("version", ["2.8", "2.8-IV1", "2.8.2", "2.0-IV0", "1.0", "0.10.2-IV0", "0.10.0",
                                     "0.8.2.x", "0.11.0.3"])
def test_message_format_version_accepts(version: str) -> None:
    validate_topic_configs({"message.format.version": version})


@pytest.mark.parametrize("version", ["3.0", "2.9", "2.8-IV2", "0.10.3", "0.11", "1", "", "latest"])
def test_message_format_version_refuses(version: str) -> None:
    assert refusal({"message.format.version": version}) == (
        f"Invalid value {version} for configuration message.format.version: "
        f"Version `{version}` is not a valid version")


@pytest.mark.parametrize("name", ["leader.replication.throttled.replicas",
                                  "follower.replication.throttled.replicas"])
def test_throttled_replica_lists(name: str) -> None:
    for good in ["*", "", "0:1", "0:1, 1:2,2:3", " * "]:
        validate_topic_configs({name: good})
    for bad, shown in [("x", "[x]"), ("0:1,1", "[0:1, 1]"), ("*,0:1", "[*, 0:1]"), ("0:-1", "[0:-1]")]:
        assert refusal({name: bad}) == (
            f"Invalid value {shown} for configuration {name}: {name} must be the literal '*' or a list of "
            "replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")


def test_compaction_lags_must_not_cross() -> None:
    validate_topic_configs({"min.compaction.lag.ms": "5", "max.compaction.lag.ms": "5"})
    assert refusal({"min.compaction.lag.ms": "6", "max.compaction.lag.ms": "5"}) == (
        "conflict topic config setting min.compaction.lag.ms (6) > max.compaction.lag.ms (5)")
    validate_topic_configs({"min.compaction.lag.ms": str(LONG_MAX)})  # against the default maximum


def test_unbounded_retention_bytes() -> None:
    validate_topic_configs({"retention.bytes": str(LONG_MIN)})


def test_first_bad_value_in_kafkas_definition_order() -> None:
    # ConfigDef.parse walks LogConfig's definitions, where segment.bytes comes before retention.ms
    assert "segment.bytes" in refusal({"retention.ms": "-2", "segment.bytes": "1"})
    assert refusal({"segment.bytes": "1", "nope": "1"}) == "Unknown topic config name: nope"  # names first


def test_topic_creation_configs_are_range_checked() -> None:
    assert parse_topic_configs(["segment.bytes=14"]) == {"segment.bytes": "14"}
    with pytest.raises(InvalidConfigError, match=re.escape("Value must be at least 14")):
        parse_topic_configs(["segment.bytes=13"])
