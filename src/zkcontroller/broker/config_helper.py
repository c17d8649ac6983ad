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

A BROKER (this broker's id): ``allConfigs`` of its ``KafkaConfig``, the properties it was started with (its
server.properties, the dynamic levels over them) and every property ``KafkaConfig`` defines but its 15
``defineInternal`` ones (`KAFKA_INTERNAL_CONFIGS`, listed only when set): 218 in 2.8.2, each with its value or
default. Every key is typed as ``KafkaConfig.configType`` types it: each of KafkaConfig's 233 properties has its
type (`KAFKA_CONFIG_TYPES`), the replication throttle rates ``DynamicConfig.Broker``'s LONG, a
``listener.name.<l>.<config>`` key its base config's type. As Kafka, only a PASSWORD or a key of unknown type (a
custom config) is sensitive. Every property's default is known (`KAFKA_CONFIG_KEYS`), so a key's synonyms end with
its default's DEFAULT_CONFIG one as Kafka's do. A dynamic value (as the broker's config manager keeps it,
`broker.dynamic_broker_config`) wins over server.properties, with its source and synonyms as for a topic.

Both list their entries in the order Kafka's answer has them: ``originals ++ nonInternalValues`` is a Scala 2.13
``mutable.HashMap``, iterated by its table (`java_hash.scala_hash_order`); with configuration keys, the filtered
copy's table. Documentation, when asked (v3+), is the key's ``ConfigDef`` doc string (`kafka_config_docs`), null
for a key the ConfigDef lacks; null when not asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from zkcontroller.broker.kafka_config_docs import BROKER_CONFIG_DOCS, TOPIC_CONFIG_DOCS
from zkcontroller.broker.kafka_config_types import KAFKA_CONFIG_TYPES, KAFKA_INTERNAL_CONFIGS
from zkcontroller.broker.log_config import (
    BROKER_LOG_PROPERTIES,
    TOPIC_CONFIG_SYNONYMS,
    LogConfig,
    LogDefaults,
    broker_synonyms,
    to_config_string,
)
from zkcontroller.java_hash import java_string_hash, scala_hash_order
from zkcontroller.protocol.wire.describe_configs import ConfigEntry, Synonym
from zkcontroller.zk.log_config_def import TOPIC_CONFIG_RULES, OneOf, Range, parse_config_value

_LONG_MAX = 2**63 - 1

# ConfigResource.Type
TOPIC_RESOURCE, BROKER_RESOURCE, BROKER_LOGGER_RESOURCE = 2, 4, 8
# DescribeConfigsResponse.ConfigSource
UNKNOWN_SOURCE, TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 0, 1, 2, 3
STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 4, 5
CONFIG_TYPES = {"UNKNOWN": 0, "BOOLEAN": 1, "STRING": 2, "INT": 3, "SHORT": 4, "LONG": 5, "DOUBLE": 6, "LIST": 7,
                "CLASS": 8, "PASSWORD": 9}
"""``DescribeConfigsResponse.ConfigType`` ids (v3+)."""

_INT_MAX = 2**31 - 1

DYNAMIC_THREAD_POOL_CONFIGS: Mapping[str, tuple[str, object]] = {
    "num.io.threads": ("INT", 8),
    "num.network.threads": ("INT", 3),
    "num.replica.fetchers": ("INT", 1),
    "num.recovery.threads.per.data.dir": ("INT", 1),
    "background.threads": ("INT", 10),
}
"""``DynamicThreadPool.ReconfigurableConfigs``."""

LOG_CLEANER_CONFIGS: Mapping[str, tuple[str, object]] = {
    "log.cleaner.threads": ("INT", 1),
    "log.cleaner.dedupe.buffer.size": ("LONG", 128 * 1024 * 1024),
    "log.cleaner.io.buffer.load.factor": ("DOUBLE", 0.9),
    "log.cleaner.io.buffer.size": ("INT", 512 * 1024),
    "log.cleaner.io.max.bytes.per.second": ("DOUBLE", 1.7976931348623157e308),
    "log.cleaner.backoff.ms": ("LONG", 15000),
}
"""``LogCleaner.ReconfigurableConfigs`` (and ``message.max.bytes``, a log property)."""

DYNAMIC_SECURITY_CONFIGS = frozenset({
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password", "ssl.truststore.type",
    "ssl.truststore.location", "ssl.truststore.password", "ssl.keystore.certificate.chain", "ssl.keystore.key",
    "ssl.truststore.certificates"})
"""``SslConfigs.RECONFIGURABLE_CONFIGS``: dynamic only per listener (``listener.name.<l>.ssl...``)."""

DYNAMIC_KAFKA_CONFIGS: Mapping[str, tuple[str, object]] = {
    **DYNAMIC_THREAD_POOL_CONFIGS,
    **LOG_CLEANER_CONFIGS,
    "metric.reporters": ("LIST", []),
    # DynamicListenerConfig.ReconfigurableConfigs (listeners and advertised.listeners are below)
    "listener.security.protocol.map": ("STRING", "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,"
                                                 "SASL_SSL:SASL_SSL"),
    "principal.builder.class": ("CLASS", None),
    "ssl.protocol": ("STRING", "TLSv1.3"),  # the defaults Java 11 gives
    "ssl.provider": ("STRING", None),
    "ssl.cipher.suites": ("LIST", []),
    "ssl.enabled.protocols": ("LIST", ["TLSv1.2", "TLSv1.3"]),
    "ssl.keystore.type": ("STRING", "JKS"),
    "ssl.keystore.location": ("STRING", None),
    "ssl.keystore.password": ("PASSWORD", None),
    "ssl.key.password": ("PASSWORD", None),
    "ssl.keystore.key": ("PASSWORD", None),
    "ssl.keystore.certificate.chain": ("PASSWORD", None),
    "ssl.truststore.type": ("STRING", "JKS"),
    "ssl.truststore.location": ("STRING", None),
    "ssl.truststore.password": ("PASSWORD", None),
    "ssl.truststore.certificates": ("PASSWORD", None),
    "ssl.keymanager.algorithm": ("STRING", "SunX509"),
    "ssl.trustmanager.algorithm": ("STRING", "PKIX"),
    "ssl.endpoint.identification.algorithm": ("STRING", "https"),
    "ssl.secure.random.implementation": ("STRING", None),
    "ssl.client.auth": ("STRING", "none"),
    "ssl.engine.factory.class": ("CLASS", None),
    "sasl.mechanism.inter.broker.protocol": ("STRING", "GSSAPI"),
    "sasl.jaas.config": ("PASSWORD", None),
    "sasl.enabled.mechanisms": ("LIST", ["GSSAPI"]),
    "sasl.kerberos.service.name": ("STRING", None),
    "sasl.kerberos.kinit.cmd": ("STRING", "/usr/bin/kinit"),
    "sasl.kerberos.ticket.renew.window.factor": ("DOUBLE", 0.8),
    "sasl.kerberos.ticket.renew.jitter": ("DOUBLE", 0.05),
    "sasl.kerberos.min.time.before.relogin": ("LONG", 60000),
    "sasl.kerberos.principal.to.local.rules": ("LIST", ["DEFAULT"]),
    "sasl.login.refresh.window.factor": ("DOUBLE", 0.8),
    "sasl.login.refresh.window.jitter": ("DOUBLE", 0.05),
    "sasl.login.refresh.min.period.seconds": ("SHORT", 60),
    "sasl.login.refresh.buffer.seconds": ("SHORT", 300),
    # DynamicConnectionQuota (SocketServer.ReconfigurableConfigs)
    "max.connections": ("INT", _INT_MAX),
    "max.connection.creation.rate": ("INT", _INT_MAX),
    "max.connections.per.ip": ("INT", _INT_MAX),
    "max.connections.per.ip.overrides": ("STRING", ""),
}
"""The rest of Kafka 2.8.2's ``DynamicBrokerConfig.AllDynamicConfigs`` (beyond the log properties and the
listeners), with ``KafkaConfig``'s type and default. Stored, checked and described as Kafka does; our brokers do
not act on them (no thread pools, cleaner, TLS, SASL or connection limits to resize)."""

BROKER_CONFIG_VALIDATORS: Mapping[str, Range | OneOf] = {
    "num.io.threads": Range(1), "num.network.threads": Range(1), "num.recovery.threads.per.data.dir": Range(1),
    "background.threads": Range(1), "log.cleaner.threads": Range(0), "log.cleaner.io.buffer.size": Range(0),
    "log.cleaner.backoff.ms": Range(0), "max.connections": Range(0), "max.connection.creation.rate": Range(0),
    "max.connections.per.ip": Range(0), "ssl.client.auth": OneOf(("required", "requested", "none")),
    "leader.replication.throttled.rate": Range(0), "follower.replication.throttled.rate": Range(0),
    "replica.alter.log.dirs.io.max.bytes.per.second": Range(0),
}
"""``KafkaConfig``'s (and ``DynamicConfig.Broker``'s) validators of the dynamic properties above and the
replication throttles (the log properties have their own, `broker.log_config`)."""

REPLICATION_THROTTLE_CONFIGS: Mapping[str, tuple[str, object]] = {
    "leader.replication.throttled.rate": ("LONG", _LONG_MAX),
    "follower.replication.throttled.rate": ("LONG", _LONG_MAX),
    "replica.alter.log.dirs.io.max.bytes.per.second": ("LONG", _LONG_MAX),
}
"""``DynamicConfig.Broker``'s own keys: dynamic, yet not ``KafkaConfig`` properties. ``KafkaConfig.configType``
looks them up in ``DynamicConfig.Broker.brokerConfigDef`` too (KAFKA-9625), so Kafka 2.8.2 describes them as LONG,
not sensitive."""

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
    **DYNAMIC_KAFKA_CONFIGS,
}
"""The Kafka 2.8.2 ``KafkaConfig`` properties this project reads (server.properties) and every one Kafka updates
dynamically, with type and default (None: Kafka's null); `KAFKA_CONFIG_KEYS` adds the rest."""

_OTHER_KAFKA_DEFAULTS: Mapping[str, object] = {
    "advertised.host.name": None, "advertised.port": None, "alter.config.policy.class.name": None,
    "alter.log.dirs.replication.quota.window.num": 11, "alter.log.dirs.replication.quota.window.size.seconds": 1,
    "authorizer.class.name": "", "broker.heartbeat.interval.ms": 2000, "broker.id.generation.enable": True,
    "broker.session.timeout.ms": 9000, "client.quota.callback.class": None,
    "connection.failed.authentication.delay.ms": 100, "connections.max.reauth.ms": 0,
    "control.plane.listener.name": None, "controller.listener.names": None, "controller.quorum.append.linger.ms": 25,
    "controller.quorum.election.backoff.max.ms": 1000, "controller.quorum.election.timeout.ms": 1000,
    "controller.quorum.fetch.timeout.ms": 2000, "controller.quorum.request.timeout.ms": 2000,
    "controller.quorum.retry.backoff.ms": 20, "controller.quorum.voters": [], "controller.quota.window.num": 11,
    "controller.quota.window.size.seconds": 1, "create.topic.policy.class.name": None,
    "delegation.token.expiry.check.interval.ms": 3600000, "delegation.token.expiry.time.ms": 86400000,
    "delegation.token.master.key": None, "delegation.token.max.lifetime.ms": 604800000,
    "delegation.token.secret.key": None, "delete.records.purgatory.purge.interval.requests": 1,
    "fetch.max.bytes": 55 * 1024 * 1024, "fetch.purgatory.purge.interval.requests": 1000,
    "group.initial.rebalance.delay.ms": 3000, "group.max.session.timeout.ms": 1800000, "group.max.size": _INT_MAX,
    "group.min.session.timeout.ms": 6000, "host.name": "", "initial.broker.registration.timeout.ms": 60000,
    "kafka.metrics.polling.interval.secs": 10, "kafka.metrics.reporters": [], "log.cleaner.enable": True,
    "log.flush.offset.checkpoint.interval.ms": 60000, "log.flush.start.offset.checkpoint.interval.ms": 60000,
    "log.retention.check.interval.ms": 300000, "metadata.log.dir": None, "metrics.num.samples": 2,
    "metrics.recording.level": "INFO", "metrics.sample.window.ms": 30000, "node.id": -1,
    "num.replica.alter.log.dirs.threads": None, "offset.metadata.max.bytes": 4096, "offsets.commit.required.acks": -1,
    "offsets.commit.timeout.ms": 5000, "offsets.load.buffer.size": 5 * 1024 * 1024,
    "offsets.retention.check.interval.ms": 600000, "offsets.retention.minutes": 7 * 24 * 60,
    "offsets.topic.compression.codec": 0, "password.encoder.cipher.algorithm": "AES/CBC/PKCS5Padding",
    "password.encoder.iterations": 4096, "password.encoder.key.length": 128,
    "password.encoder.keyfactory.algorithm": None, "password.encoder.old.secret": None,
    "password.encoder.secret": None, "port": 9092, "process.roles": [],
    "producer.purgatory.purge.interval.requests": 1000, "queued.max.request.bytes": -1, "queued.max.requests": 500,
    "quota.consumer.default": _LONG_MAX, "quota.producer.default": _LONG_MAX, "quota.window.num": 11,
    "quota.window.size.seconds": 1, "replica.fetch.max.bytes": 1024 * 1024, "replica.fetch.min.bytes": 1,
    "replica.fetch.response.max.bytes": 10 * 1024 * 1024, "replica.high.watermark.checkpoint.interval.ms": 5000,
    "replica.selector.class": None, "replica.socket.receive.buffer.bytes": 64 * 1024,
    "replication.quota.window.num": 11, "replication.quota.window.size.seconds": 1, "reserved.broker.max.id": 1000,
    "sasl.client.callback.handler.class": None, "sasl.login.callback.handler.class": None, "sasl.login.class": None,
    "sasl.mechanism.controller.protocol": "GSSAPI", "sasl.server.callback.handler.class": None,
    "sasl.server.max.receive.size": 524288, "security.inter.broker.protocol": "PLAINTEXT",
    "security.providers": None, "socket.connection.setup.timeout.max.ms": 30000,
    "socket.connection.setup.timeout.ms": 10000, "socket.receive.buffer.bytes": 100 * 1024,
    "socket.send.buffer.bytes": 100 * 1024, "ssl.principal.mapping.rules": "DEFAULT",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 10000, "transaction.max.timeout.ms": 900000,
    "transaction.remove.expired.transaction.cleanup.interval.ms": 3600000,
    "transaction.state.log.load.buffer.size": 5 * 1024 * 1024, "transactional.id.expiration.ms": 604800000,
    "zookeeper.clientCnxnSocket": None, "zookeeper.set.acl": False, "zookeeper.ssl.cipher.suites": None,
    "zookeeper.ssl.client.enable": False, "zookeeper.ssl.crl.enable": False, "zookeeper.ssl.enabled.protocols": None,
    "zookeeper.ssl.endpoint.identification.algorithm": "HTTPS", "zookeeper.ssl.keystore.location": None,
    "zookeeper.ssl.keystore.password": None, "zookeeper.ssl.keystore.type": None, "zookeeper.ssl.ocsp.enable": False,
    "zookeeper.ssl.protocol": "TLSv1.2", "zookeeper.ssl.truststore.location": None,
    "zookeeper.ssl.truststore.password": None, "zookeeper.ssl.truststore.type": None, "zookeeper.sync.time.ms": 2000,
}
"""Kafka 2.8.2's defaults (``KafkaConfig.Defaults`` and the constants it names; None: null) of the ``KafkaConfig``
properties `BROKER_CONFIG_DEFAULTS` lacks, as ConfigDef parses them (a LIST's ``""`` is the empty list)."""

KAFKA_CONFIG_KEYS: Mapping[str, tuple[str, object]] = {
    name: BROKER_CONFIG_DEFAULTS[name] if name in BROKER_CONFIG_DEFAULTS else (kind, _OTHER_KAFKA_DEFAULTS[name])
    for name, kind in KAFKA_CONFIG_TYPES.items()
}
"""``KafkaConfig.configKeys``: every property's type and default. IncrementalAlterConfigs on a BROKER
(`prepare_incremental`) looks types up here (and a LIST's default, what APPEND and SUBTRACT start from when
nothing is stored); DescribeConfigs lists the defaults as DEFAULT_CONFIG synonyms (``staticDefaultConfigs``)."""

DYNAMIC_BROKER_CONFIGS = (frozenset(TOPIC_CONFIG_SYNONYMS.values()) - {"log.message.format.version"}
                          | DYNAMIC_KAFKA_CONFIGS.keys() | {"listeners", "advertised.listeners"})
"""``DynamicBrokerConfig.AllDynamicConfigs``, each in `BROKER_CONFIG_DEFAULTS`: the rest are read-only."""

_LISTENER_CONFIG = re.compile(r"listener\.name\.[^.]*\.(.*)", re.DOTALL)
"""``DynamicBrokerConfig.ListenerConfigRegex``: a per-listener config, ``listener.name.<listener>.<config>``."""

LISTENER_MECHANISM_CONFIGS = ("sasl.jaas.config", "sasl.login.callback.handler.class", "sasl.login.class",
                              "sasl.server.callback.handler.class", "connections.max.reauth.ms")
"""``ListenerMechanismConfigs``: named ``listener.name.<listener>.<mechanism>.<config>``."""


def listener_base_name(name: str) -> str | None:
    """The config a ``listener.name.<l>.`` name overrides (``<mechanism>.`` dropped for `LISTENER_MECHANISM_CONFIGS`),
    or None for a name without the prefix."""
    match = _LISTENER_CONFIG.fullmatch(name)
    if match is None:
        return None
    base = match.group(1)
    return next((m for m in LISTENER_MECHANISM_CONFIGS if base.endswith(m)), base)


def broker_config_type(name: str) -> str | None:
    """``KafkaConfig.configType``: the name's type in ``KafkaConfig`` (`KAFKA_CONFIG_TYPES`, every property) or
    ``DynamicConfig.Broker`` (the throttle rates), else (a ``listener.name.<l>.`` name) its base config's type in
    ``KafkaConfig``; None for a name neither defines (a custom config, which Kafka then treats as sensitive)."""
    kind = KAFKA_CONFIG_TYPES.get(name)
    if kind is not None:
        return kind
    throttle = REPLICATION_THROTTLE_CONFIGS.get(name)
    if throttle is not None:
        return throttle[0]
    base = listener_base_name(name)
    return KAFKA_CONFIG_TYPES.get(base) if base is not None else None


def is_sensitive_type(kind: str | None) -> bool:
    """``KafkaConfig.maybeSensitive``: a PASSWORD, or a type not known (which might hide one)."""
    return kind is None or kind == "PASSWORD"


def _static_defaults() -> dict[str, str]:
    """``staticDefaultConfigs`` (``KafkaConfig.defaultValues``): every property's default as a string, null ones
    left out."""
    out = {}
    for name, (kind, default) in KAFKA_CONFIG_KEYS.items():
        text = to_config_string(default, kind)
        if text is not None:
            out[name] = text
    return out


_STATIC_DEFAULTS = _static_defaults()


_NO_LEVEL: Mapping[str, str] = {}


def _synonyms(name: str, static: Mapping[str, str], sensitive: bool, dynamic_broker: Mapping[str, str] = _NO_LEVEL,
              dynamic_default: Mapping[str, str] = _NO_LEVEL) -> list[Synonym]:
    """``ConfigHelper.configSynonyms``: per-broker dynamic, cluster-default dynamic, server.properties, then
    defaults, each over the synonym names (``brokerConfigSynonyms(name, matchListenerOverride = true)``: a
    ``listener.name.<l>.`` name then its base config); those before the first one named ``name`` are dropped."""
    base = listener_base_name(name)
    names = [name, base] if base is not None else broker_synonyms(name)
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


def kafka_order(names: Iterable[str], keys: tuple[str, ...] | None) -> list[str]:
    """``createResponseConfig``'s order: ``names`` (``allConfigs``: the originals, then the defined values, a name
    in both counted twice as Kafka's ``++`` puts it twice) as the Scala ``mutable.HashMap`` holding them iterates;
    with ``keys`` (not None, not empty), the names among them as the filtered map (a new table) iterates."""
    ordered = scala_hash_order(names, java_string_hash)
    if not keys:
        return ordered
    return scala_hash_order([n for n in ordered if n in keys], java_string_hash)


def describe_topic(defaults: LogDefaults, overrides: Mapping[str, str], *, include_synonyms: bool,
                   keys: tuple[str, ...] | None = None, include_documentation: bool = False) -> list[ConfigEntry]:
    """A topic's entries (``createTopicConfigEntry`` for each of ``allConfigs``: LogConfig's keys and the
    overrides), restricted to ``keys`` unless None or empty. Raises `TopicConfigError` for an override ConfigDef
    refuses (Kafka answers the resource UNKNOWN_SERVER_ERROR then)."""
    config = LogConfig.from_overrides(defaults, overrides)
    entries = []
    for name in kafka_order([*TOPIC_CONFIG_RULES, *overrides, *TOPIC_CONFIG_RULES], keys):
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
            synonyms=tuple(found) if include_synonyms else (),
            documentation=TOPIC_CONFIG_DOCS.get(name) if include_documentation else None))
    return entries


BROKER_DESCRIBED_KEYS = tuple(name for name in KAFKA_CONFIG_KEYS if name not in KAFKA_INTERNAL_CONFIGS)
"""``KafkaConfig.nonInternalValues``' keys: what a broker resource lists beyond its originals."""


def broker_documentation(name: str) -> str | None:
    """``KafkaConfig.documentationOf``: the property's doc string (an internal one's too), None for a name
    KafkaConfig does not define."""
    return BROKER_CONFIG_DOCS.get(name)


def describe_broker(static: Mapping[str, str], *, include_synonyms: bool, keys: tuple[str, ...] | None = None,
                    dynamic_broker: Mapping[str, str] = _NO_LEVEL, dynamic_default: Mapping[str, str] = _NO_LEVEL,
                    include_documentation: bool = False) -> list[ConfigEntry]:
    """This broker's entries (``createBrokerConfigEntry`` over ``allConfigs``): every non-internal property (its
    value from the dynamic levels, else server.properties, parsed then printed as Kafka does, else its default; a
    null default is a null value), then the other properties given (an internal one shown as given; each typed by
    `broker_config_type`: a custom one is sensitive)."""
    current = {**static, **dynamic_default, **dynamic_broker}  # the current config's values
    entries = []
    for name in kafka_order([*current, *BROKER_DESCRIBED_KEYS], keys):
        kind = broker_config_type(name)
        sensitive = is_sensitive_type(kind)
        if sensitive or kind is None:
            value = None
        elif name not in KAFKA_CONFIG_KEYS or name in KAFKA_INTERNAL_CONFIGS:
            value = current[name]  # originals only: Kafka's String as it is
        elif name in current:
            try:
                value = to_config_string(parse_config_value(name, kind, current[name]), kind)
            except ValueError:  # refused at start-up already (server_properties); shown as given otherwise
                value = current[name]
        else:
            value = to_config_string(KAFKA_CONFIG_KEYS[name][1], kind)
        found = _synonyms(name, static, sensitive, dynamic_broker, dynamic_default)
        entries.append(ConfigEntry(
            name, value, found[0].source if found else DEFAULT_CONFIG, read_only=name not in DYNAMIC_BROKER_CONFIGS,
            is_sensitive=sensitive, config_type=CONFIG_TYPES[kind] if kind is not None else 0,
            synonyms=tuple(found) if include_synonyms else (),
            documentation=broker_documentation(name) if include_documentation else None))
    return entries
