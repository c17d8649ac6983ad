"""A topic's effective log config as a Kafka 2.8.2 broker computes it (``kafka.log.LogConfig``).

The keys, types, defaults and validators are `zk.log_config_def`'s `TOPIC_CONFIG_RULES` (one table for
``kafka-topics``/``kafka-configs`` validation and for brokers). Here: the broker property each topic key falls back
to (``LogConfig.TopicConfigSynonyms``), those properties' own types and defaults (``KafkaConfig``), the broker-wide
defaults a broker derives from its ``server.properties`` (``LogConfig.extractLogConfigMap``: ``retention.ms`` from
``log.retention.ms``, else ``.minutes``, else ``.hours``...), and a topic's config as those defaults overlaid by
its ``/config/topics/<topic>`` overrides (``LogConfig.fromProps``).

Dynamic broker configs (``/config/brokers/<default>`` and ``/<id>``, `broker.dynamic_broker_config`) set the
`RECONFIGURABLE_LOG_CONFIGS` over server.properties (`LogDefaults.from_levels`), as ``DynamicLogConfig`` does. Kafka
rebuilds the defaults from the whole new ``KafkaConfig`` too, so a dynamic ``log.retention.ms`` wins over a static
``log.retention.hours``; here an unset ``log.retention.ms`` keeps falling back to the hours (Kafka's
``DynamicLogConfig.reconfigure`` drops a null one from the defaults, leaving ``LogConfig``'s 7 days).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from zkcontroller.protocol.ibp import ibp_at_least
from zkcontroller.zk.log_config_def import TOPIC_CONFIG_RULES, TopicConfigError, java_double, parse_config_value

ConfigKind = Literal["BOOLEAN", "INT", "LONG", "DOUBLE", "STRING", "LIST"]

MIN_INSYNC_REPLICAS = "min.insync.replicas"
MAX_MESSAGE_BYTES = "max.message.bytes"
MESSAGE_TIMESTAMP_TYPE = "message.timestamp.type"
MESSAGE_FORMAT_VERSION = "message.format.version"
MESSAGE_MAX_BYTES = "message.max.bytes"
DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024 + 12
"""``Defaults.MessageMaxBytes``: 1 MiB plus ``Records.LOG_OVERHEAD``."""

TOPIC_CONFIG_SYNONYMS: Mapping[str, str] = {
    "segment.bytes": "log.segment.bytes",
    "segment.ms": "log.roll.ms",
    "segment.jitter.ms": "log.roll.jitter.ms",
    "segment.index.bytes": "log.index.size.max.bytes",
    "flush.messages": "log.flush.interval.messages",
    "flush.ms": "log.flush.interval.ms",
    "retention.bytes": "log.retention.bytes",
    "retention.ms": "log.retention.ms",
    "max.message.bytes": "message.max.bytes",
    "index.interval.bytes": "log.index.interval.bytes",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "min.compaction.lag.ms": "log.cleaner.min.compaction.lag.ms",
    "max.compaction.lag.ms": "log.cleaner.max.compaction.lag.ms",
    "file.delete.delay.ms": "log.segment.delete.delay.ms",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio",
    "cleanup.policy": "log.cleanup.policy",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "min.insync.replicas": "min.insync.replicas",
    "compression.type": "compression.type",
    "preallocate": "log.preallocate",
    "message.format.version": "log.message.format.version",
    "message.timestamp.type": "log.message.timestamp.type",
    "message.timestamp.difference.max.ms": "log.message.timestamp.difference.max.ms",
    "message.downconversion.enable": "log.message.downconversion.enable",
}
"""``LogConfig.TopicConfigSynonyms``: topic key → the broker property that is its default. The two
``*.replication.throttled.replicas`` keys have none (they default to an empty list on every broker)."""

RECONFIGURABLE_LOG_CONFIGS = frozenset(TOPIC_CONFIG_SYNONYMS.values()) - {"log.message.format.version"}
"""``DynamicLogConfig.ReconfigurableConfigs``: the broker properties a dynamic broker config may set for the log
defaults (the message format version is excluded: every broker must support it first)."""


@dataclass(frozen=True)
class BrokerLogProperty:
    """A ``KafkaConfig`` property behind a topic default: its type and default (None: Kafka's ``null``)."""

    type: ConfigKind
    default: object
    minimum: int | None = None
    """``atLeast`` in ``KafkaConfig``'s definition (checked when the broker starts)."""


_LONG_MAX = 2**63 - 1
_HOUR_MS = 3600 * 1000
BROKER_LOG_PROPERTIES: Mapping[str, BrokerLogProperty] = {
    "log.segment.bytes": BrokerLogProperty("INT", 1024 * 1024 * 1024, 14),
    "log.roll.ms": BrokerLogProperty("LONG", None),
    "log.roll.hours": BrokerLogProperty("INT", 24 * 7, 1),
    "log.roll.jitter.ms": BrokerLogProperty("LONG", None),
    "log.roll.jitter.hours": BrokerLogProperty("INT", 0, 0),
    "log.index.size.max.bytes": BrokerLogProperty("INT", 10 * 1024 * 1024, 4),
    "log.flush.interval.messages": BrokerLogProperty("LONG", _LONG_MAX, 1),
    "log.flush.interval.ms": BrokerLogProperty("LONG", None),
    "log.flush.scheduler.interval.ms": BrokerLogProperty("LONG", _LONG_MAX),
    "log.retention.bytes": BrokerLogProperty("LONG", -1),
    "log.retention.ms": BrokerLogProperty("LONG", None),
    "log.retention.minutes": BrokerLogProperty("INT", None),
    "log.retention.hours": BrokerLogProperty("INT", 24 * 7),
    "message.max.bytes": BrokerLogProperty("INT", DEFAULT_MAX_MESSAGE_BYTES, 0),
    "log.index.interval.bytes": BrokerLogProperty("INT", 4096, 0),
    "log.cleaner.delete.retention.ms": BrokerLogProperty("LONG", 24 * _HOUR_MS),
    "log.cleaner.min.compaction.lag.ms": BrokerLogProperty("LONG", 0),
    "log.cleaner.max.compaction.lag.ms": BrokerLogProperty("LONG", _LONG_MAX),
    "log.segment.delete.delay.ms": BrokerLogProperty("LONG", 60000, 0),
    "log.cleaner.min.cleanable.ratio": BrokerLogProperty("DOUBLE", 0.5),
    "log.cleanup.policy": BrokerLogProperty("LIST", ["delete"]),
    "unclean.leader.election.enable": BrokerLogProperty("BOOLEAN", False),
    "min.insync.replicas": BrokerLogProperty("INT", 1, 1),
    "compression.type": BrokerLogProperty("STRING", "producer"),
    "log.preallocate": BrokerLogProperty("BOOLEAN", False),
    "log.message.format.version": BrokerLogProperty("STRING", "2.8-IV1"),
    "log.message.timestamp.type": BrokerLogProperty("STRING", "CreateTime"),
    "log.message.timestamp.difference.max.ms": BrokerLogProperty("LONG", _LONG_MAX),
    "log.message.downconversion.enable": BrokerLogProperty("BOOLEAN", True),
}
"""Kafka 2.8.2's ``KafkaConfig`` definitions of every property a topic default derives from."""

_SYNONYM_GROUPS = (
    ("log.roll.ms", "log.roll.hours"),
    ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
    ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
)


def broker_synonyms(name: str) -> list[str]:
    """``DynamicBrokerConfig.brokerConfigSynonyms``: the properties that set ``name``, most specific first."""
    for group in _SYNONYM_GROUPS:
        if name in group and (name != "log.flush.scheduler.interval.ms"):
            return list(group)
    return [name]


def to_config_string(value: object, kind: str | None) -> str | None:
    """``ConfigDef.convertToString``: a list joined with commas, booleans ``true``/``false``, a double as Java
    prints it; None stays None."""
    if value is None:
        return None
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) or kind == "DOUBLE":
        return java_double(float(value))  # type: ignore[arg-type]
    return str(value)


def parse_broker_log_properties(props: Mapping[str, str]) -> dict[str, object]:
    """The typed values of the `BROKER_LOG_PROPERTIES` that ``props`` (server.properties) sets; a bad value
    raises `TopicConfigError` with ConfigException's wording, as Kafka refuses to start then."""
    out: dict[str, object] = {}
    for name, prop in BROKER_LOG_PROPERTIES.items():
        if name not in props:
            continue
        value = parse_config_value(name, prop.type, props[name])
        if prop.minimum is not None and isinstance(value, int) and value < prop.minimum:
            raise TopicConfigError(f"Invalid value {value} for configuration {name}: Value must be at least "
                                     f"{prop.minimum}")
        out[name] = value
    return out


def static_default_strings() -> dict[str, str]:
    """``DynamicBrokerConfig.staticDefaultConfigs`` for these properties: defaults as strings, null ones left out
    (as ``convertToStringMapWithPasswordValues`` does)."""
    out = {}
    for name, prop in BROKER_LOG_PROPERTIES.items():
        text = to_config_string(prop.default, prop.type)
        if text is not None:
            out[name] = text
    return out


@dataclass(frozen=True)
class LogDefaults:
    """A broker's topic defaults (``LogConfig.extractLogConfigMap`` of its ``KafkaConfig``) and the
    server.properties values they came from."""

    values: Mapping[str, object]
    """Topic key → typed default value."""
    static: Mapping[str, str] = field(default_factory=dict)
    """The broker-log properties server.properties set, as given (``staticBrokerConfigs``)."""
    dynamic_default: Mapping[str, str] = field(default_factory=dict)
    """``/config/brokers/<default>`` as kept (``currentDynamicDefaultConfigs``), every key."""
    dynamic_broker: Mapping[str, str] = field(default_factory=dict)
    """``/config/brokers/<this broker's id>`` as kept (``currentDynamicBrokerConfigs``), every key."""

    @staticmethod
    def from_levels(static: Mapping[str, str], dynamic_default: Mapping[str, str] | None = None,
                    dynamic_broker: Mapping[str, str] | None = None) -> LogDefaults:
        """The defaults with the dynamic levels' `RECONFIGURABLE_LOG_CONFIGS` over ``static``: per-broker over
        cluster default over server.properties. The dynamic values must have been checked
        (`broker.dynamic_broker_config.clean_dynamic_configs`); raises `TopicConfigError` otherwise."""
        merged = dict(static)
        for level in (dynamic_default or {}, dynamic_broker or {}):
            merged.update({k: v for k, v in level.items() if k in RECONFIGURABLE_LOG_CONFIGS})
        base = LogDefaults.from_properties(merged)
        own = {k: v for k, v in static.items() if k in BROKER_LOG_PROPERTIES}
        return LogDefaults(base.values, own, dict(dynamic_default or {}), dict(dynamic_broker or {}))

    @staticmethod
    def from_properties(props: Mapping[str, str] | None = None) -> LogDefaults:
        """From server.properties (None or empty: every Kafka default). Raises `TopicConfigError`."""
        given = dict(props or {})
        parsed = parse_broker_log_properties(given)

        def get(name: str) -> object:
            return parsed.get(name, BROKER_LOG_PROPERTIES[name].default)

        def millis(ms: str, hours: str) -> int:
            value = get(ms)
            return int(value) if value is not None else int(get(hours)) * _HOUR_MS  # type: ignore[call-overload]

        values: dict[str, object] = {}
        for topic_key, broker_key in TOPIC_CONFIG_SYNONYMS.items():
            values[topic_key] = get(broker_key)
        values["segment.ms"] = millis("log.roll.ms", "log.roll.hours")
        values["segment.jitter.ms"] = millis("log.roll.jitter.ms", "log.roll.jitter.hours")
        flush_ms = get("log.flush.interval.ms")
        values["flush.ms"] = flush_ms if flush_ms is not None else get("log.flush.scheduler.interval.ms")
        retention_ms, minutes = get("log.retention.ms"), get("log.retention.minutes")
        if retention_ms is None:  # KafkaConfig.logRetentionTimeMillis; a negative value means unlimited: -1
            retention_ms = int(minutes) * 60000 if minutes is not None else int(get("log.retention.hours")) * _HOUR_MS  # type: ignore[call-overload]
        values["retention.ms"] = -1 if int(retention_ms) < 0 else retention_ms  # type: ignore[call-overload]
        for key in ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas"):
            values[key] = []
        ordered = {key: values[key] for key in TOPIC_CONFIG_RULES}
        static = {k: v for k, v in given.items() if k in BROKER_LOG_PROPERTIES}
        return LogDefaults(ordered, static)


@dataclass(frozen=True)
class LogConfig:
    """A topic's effective config: the broker's defaults overlaid by the topic's overrides (``fromProps``)."""

    values: Mapping[str, object]
    overrides: Mapping[str, str] = field(default_factory=dict)
    """The ``/config/topics/<topic>`` overrides as stored."""

    @staticmethod
    def from_overrides(defaults: LogDefaults, overrides: Mapping[str, str]) -> LogConfig:
        """Raises `TopicConfigError` for a value ConfigDef refuses (Kafka's log creation fails then). An
        unknown key is kept in ``overrides`` but changes nothing, as ConfigDef ignores it."""
        values = dict(defaults.values)
        for name, raw in overrides.items():
            rule = TOPIC_CONFIG_RULES.get(name)
            if rule is None:
                continue
            value = parse_config_value(name, rule.type, raw)
            if rule.validator is not None:
                rule.validator.check(name, value)
            values[name] = value
        return LogConfig(values, dict(overrides))

    @property
    def min_insync_replicas(self) -> int:
        value = self.values[MIN_INSYNC_REPLICAS]
        assert isinstance(value, int)
        return value

    @property
    def max_message_bytes(self) -> int:
        value = self.values[MAX_MESSAGE_BYTES]
        assert isinstance(value, int)
        return value

    @property
    def log_append_time(self) -> bool:
        """``message.timestamp.type`` is LogAppendTime: the broker stamps each append with its own clock."""
        return self.values[MESSAGE_TIMESTAMP_TYPE] == "LogAppendTime"

    @property
    def timestamps_unsupported(self) -> bool:
        """``message.format.version`` before 0.10.0-IV0: messages without timestamps (magic 0), so no search by
        timestamp (``Log.fetchOffsetByTimestamp``)."""
        value = self.values.get(MESSAGE_FORMAT_VERSION)
        try:
            return isinstance(value, str) and not ibp_at_least(value, "0.10.0-IV0")
        except ValueError:  # not a version ApiVersion knows: ConfigDef refused it before it got here
            return False

    def as_string(self, name: str) -> str | None:
        """A value as DescribeConfigs sends it."""
        return to_config_string(self.values[name], TOPIC_CONFIG_RULES[name].type)
