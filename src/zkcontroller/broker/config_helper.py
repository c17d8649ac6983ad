"""What DescribeConfigs answers for one resource (Kafka 2.8.2's ``ConfigHelper.describeConfigs``, ZooKeeper mode).

A TOPIC: every topic config (``LogConfig``'s keys, and any other key stored in its ``/config/topics/<t>``), the
value the topic has (its override, else the broker's default), the source of that value — TOPIC_CONFIG for an
override, else DYNAMIC_BROKER_CONFIG / DYNAMIC_DEFAULT_BROKER_CONFIG when ``/config/brokers/<id>`` /
``/config/brokers/<default>`` sets the broker property it falls back to, else STATIC_BROKER_CONFIG when
server.properties does, else DEFAULT_CONFIG — and, when asked, the synonyms in Kafka's order (the override, then
for each level in turn — per-broker, cluster default, server.properties, default — the broker property's synonym
names that level sets). Kafka's quirks are kept: a key ``LogConfig`` does not define is "sensitive"
(its value null); a broker property whose default is null (``log.retention.ms``) is no synonym, so an unset
``retention.ms`` lists none.

A BROKER (this broker's id): the properties it was started with (its server.properties) and the defaults of the
Kafka 2.8.2 properties in `BROKER_CONFIG_DEFAULTS`; the rest of Kafka's ~200 are not known here. A dynamic value
(as the broker's config manager keeps it, `broker.dynamic_broker_config`) wins over server.properties, with its
source and synonyms as for a topic.
Documentation is always null (Kafka sends each key's doc string when asked).
"""

from __future__ import annotations

from collections.abc import Mapping

from zkcontroller.broker.log_config import (
    BROKER_LOG_PROPERTIES,
    TOPIC_CONFIG_SYNONYMS,
    LogConfig,
    LogDefaults,
    broker_synonyms,
    to_config_string,
)
from zkcontroller.protocol.wire.describe_configs import ConfigEntry, Synonym
from zkcontroller.zk.log_config_def import TOPIC_CONFIG_RULES, parse_config_value

# ConfigResource.Type
TOPIC_RESOURCE, BROKER_RESOURCE, BROKER_LOGGER_RESOURCE = 2, 4, 8
# DescribeConfigsResponse.ConfigSource
UNKNOWN_SOURCE, TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 0, 1, 2, 3
STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 4, 5
CONFIG_TYPES = {"UNKNOWN": 0, "BOOLEAN": 1, "STRING": 2, "INT": 3, "SHORT": 4, "LONG": 5, "DOUBLE": 6, "LIST": 7,
                "CLASS": 8, "PASSWORD": 9}
"""``DescribeConfigsResponse.ConfigType`` ids (v3+)."""

BROKER_CONFIG_DEFAULTS: Mapping[str, tuple[str, object]] = {
    **{name: (prop.type, prop.default) for name, prop in BROKER_LOG_PROPERTIES.items()},
    "broker.id": ("INT", -1),
    "listeners": ("STRING", None),
    "advertised.listeners": ("STRING", None),
    "zookeeper.connect": ("STRING", None),
    "zookeeper.session.timeout.ms": ("INT", 18000),
    "zookeeper.connection.timeout.ms": ("INT", None),
    "zookeeper.max.in.flight.requests": ("INT", 10),
    "broker.rack": ("STRING", None),
    "log.dirs": ("STRING", None),
    "log.dir": ("STRING", "/tmp/kafka-logs"),
    "inter.broker.protocol.version": ("STRING", "2.8-IV1"),
    "inter.broker.listener.name": ("STRING", None),
    "auto.leader.rebalance.enable": ("BOOLEAN", True),
    "leader.imbalance.check.interval.seconds": ("LONG", 300),
    "leader.imbalance.per.broker.percentage": ("INT", 10),
    "delete.topic.enable": ("BOOLEAN", True),
    "controlled.shutdown.enable": ("BOOLEAN", True),
    "controlled.shutdown.max.retries": ("INT", 3),
    "controlled.shutdown.retry.backoff.ms": ("LONG", 5000),
    "controller.socket.timeout.ms": ("INT", 30000),
    "request.timeout.ms": ("INT", 30000),
    "replica.lag.time.max.ms": ("LONG", 30000),
    "replica.fetch.wait.max.ms": ("INT", 500),
    "replica.fetch.backoff.ms": ("INT", 1000),
    "replica.socket.timeout.ms": ("INT", 30000),
    "max.incremental.fetch.session.cache.slots": ("INT", 1000),
    "socket.request.max.bytes": ("INT", 104857600),
    "connections.max.idle.ms": ("LONG", 600000),
    "auto.create.topics.enable": ("BOOLEAN", True),
    "num.partitions": ("INT", 1),
    "default.replication.factor": ("INT", 1),
    "offsets.topic.num.partitions": ("INT", 50),
    "offsets.topic.replication.factor": ("SHORT", 3),
    "offsets.topic.segment.bytes": ("INT", 104857600),
    "transaction.state.log.num.partitions": ("INT", 50),
    "transaction.state.log.replication.factor": ("SHORT", 3),
    "transaction.state.log.min.isr": ("INT", 2),
    "transaction.state.log.segment.bytes": ("INT", 104857600),
}
"""The Kafka 2.8.2 ``KafkaConfig`` properties this project reads (server.properties), with type and default (None:
Kafka's null): a broker resource lists each, plus whatever else server.properties gave."""

DYNAMIC_BROKER_CONFIGS = frozenset(TOPIC_CONFIG_SYNONYMS.values()) - {"log.message.format.version"} | {
    "listeners", "advertised.listeners"}
"""``DynamicBrokerConfig.AllDynamicConfigs`` among `BROKER_CONFIG_DEFAULTS`: the rest are read-only."""


def _static_defaults() -> dict[str, str]:
    """``staticDefaultConfigs``: the defaults as strings, null ones left out."""
    out = {}
    for name, (kind, default) in BROKER_CONFIG_DEFAULTS.items():
        text = to_config_string(default, kind)
        if text is not None:
            out[name] = text
    return out


_STATIC_DEFAULTS = _static_defaults()


_NO_LEVEL: Mapping[str, str] = {}


def _synonyms(name: str, static: Mapping[str, str], sensitive: bool, dynamic_broker: Mapping[str, str] = _NO_LEVEL,
              dynamic_default: Mapping[str, str] = _NO_LEVEL) -> list[Synonym]:
    """``ConfigHelper.configSynonyms``: per-broker dynamic, cluster-default dynamic, server.properties, then
    defaults, each over the synonym names; those before the first one named ``name`` are dropped."""
    names = broker_synonyms(name)
    found = []
    for level, source in ((dynamic_broker, DYNAMIC_BROKER_CONFIG), (dynamic_default, DYNAMIC_DEFAULT_BROKER_CONFIG),
                          (static, STATIC_BROKER_CONFIG)):
        found += [Synonym(n, None if sensitive else level[n], source) for n in names if n in level]
    found += [Synonym(n, None if sensitive else _STATIC_DEFAULTS[n], DEFAULT_CONFIG) for n in names
              if n in _STATIC_DEFAULTS]
    for i, synonym in enumerate(found):
        if synonym.name == name:
            return found[i:]
    return []


def _wanted(keys: tuple[str, ...] | None, name: str) -> bool:
    return not keys or name in keys


def describe_topic(defaults: LogDefaults, overrides: Mapping[str, str], *, include_synonyms: bool,
                   keys: tuple[str, ...] | None = None) -> list[ConfigEntry]:
    """A topic's entries (``createTopicConfigEntry`` for each of ``allConfigs``), restricted to ``keys`` unless
    None or empty. Raises `TopicConfigError` for an override ConfigDef refuses (Kafka answers the resource
    UNKNOWN_SERVER_ERROR then)."""
    config = LogConfig.from_overrides(defaults, overrides)
    names = [*TOPIC_CONFIG_RULES, *sorted(k for k in overrides if k not in TOPIC_CONFIG_RULES)]
    entries = []
    for name in names:
        if not _wanted(keys, name):
            continue
        rule = TOPIC_CONFIG_RULES.get(name)
        sensitive = rule is None  # KafkaConfig.maybeSensitive: an unknown type may hide a password
        value = None if sensitive else config.as_string(name)
        broker_name = TOPIC_CONFIG_SYNONYMS.get(name)
        found = (_synonyms(broker_name, defaults.static, sensitive, defaults.dynamic_broker, defaults.dynamic_default)
                 if broker_name is not None else [])
        if name in overrides:
            found.insert(0, Synonym(name, value, TOPIC_CONFIG))
        entries.append(ConfigEntry(
            name, value, found[0].source if found else DEFAULT_CONFIG, read_only=False, is_sensitive=sensitive,
            config_type=CONFIG_TYPES[rule.type] if rule is not None else 0,
            synonyms=tuple(found) if include_synonyms else ()))
    return entries


def describe_broker(static: Mapping[str, str], *, include_synonyms: bool, keys: tuple[str, ...] | None = None,
                    dynamic_broker: Mapping[str, str] = _NO_LEVEL,
                    dynamic_default: Mapping[str, str] = _NO_LEVEL) -> list[ConfigEntry]:
    """This broker's entries (``createBrokerConfigEntry`` over ``allConfigs``): every known property (its value
    from the dynamic levels, else server.properties, parsed then printed as Kafka does, else its default; a null
    default is a null value), then the other properties given (unknown to Kafka's ConfigDef, hence sensitive)."""
    current = {**static, **dynamic_default, **dynamic_broker}  # the current config's values
    names = [*BROKER_CONFIG_DEFAULTS, *sorted(k for k in current if k not in BROKER_CONFIG_DEFAULTS)]
    entries = []
    for name in names:
        if not _wanted(keys, name):
            continue
        known = BROKER_CONFIG_DEFAULTS.get(name)
        sensitive = known is None
        if known is None:
            value = None
        elif name in current:
            try:
                value = to_config_string(parse_config_value(name, known[0], current[name]), known[0])
            except ValueError:  # refused at start-up already (server_properties); shown as given otherwise
                value = current[name]
        else:
            value = to_config_string(known[1], known[0])
        found = _synonyms(name, static, sensitive, dynamic_broker, dynamic_default)
        entries.append(ConfigEntry(
            name, value, found[0].source if found else DEFAULT_CONFIG, read_only=name not in DYNAMIC_BROKER_CONFIGS,
            is_sensitive=sensitive, config_type=CONFIG_TYPES[known[0]] if known is not None else 0,
            synonyms=tuple(found) if include_synonyms else ()))
    return entries
