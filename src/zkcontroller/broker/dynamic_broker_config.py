"""A broker's dynamic broker configs (Kafka 2.8.2's ``DynamicBrokerConfig`` and ``DynamicLogConfig``, ZooKeeper
mode): ``/config/brokers/<default>`` and ``/config/brokers/<this broker's id>``.

What may be set (`validate_configs`, run by AlterConfigs and by ``configs --zookeeper``): only the properties of
``AllDynamicConfigs`` among Kafka's (`KAFKA_CONFIG_TYPES`' keys; another ``KafkaConfig`` property is refused), the SSL
keystore/truststore ones only per listener (``listener.name.<l>.ssl.keystore.location``), the listener and SSL/SASL
ones only per broker; each value parsed as its ``KafkaConfig`` type and checked by its validator. Keys Kafka does not
define are custom configs, stored as given. A broker answering AlterConfigs then runs its reconfigurables' checks
(`check_reconfiguration`: thread counts within half and double of the current ones, the log cleaner's threads,
connection limits above 0).

Kafka cleans what it reads before using it (``fromPersistentProps``): a ``KafkaConfig`` property that is not dynamic
is dropped ("Non-dynamic configs configured in ZooKeeper will be ignored"), as is an SSL config without its listener
prefix, and a per-broker one (``listeners``...) at the cluster-default level; a value ConfigDef refuses is dropped by
``removeInvalidConfigs`` with "Dynamic broker|default cluster config contains invalid values in: Set(...), these
configs will be ignored". The log-default properties among what is left (``DynamicLogConfig.ReconfigurableConfigs``)
then set the broker's topic defaults: per-broker over cluster default over server.properties over Kafka's default
(`LogDefaults.from_levels`); the rest are kept (described) but change nothing in our brokers.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from zkcontroller.broker.config_helper import (
    BROKER_CONFIG_DEFAULTS,
    BROKER_CONFIG_VALIDATORS,
    DYNAMIC_BROKER_CONFIGS,
    DYNAMIC_SECURITY_CONFIGS,
    DYNAMIC_THREAD_POOL_CONFIGS,
    LOG_CLEANER_CONFIGS,
    REPLICATION_THROTTLE_CONFIGS,
    listener_base_name,
)
from zkcontroller.broker.kafka_config_types import KAFKA_CONFIG_TYPES
from zkcontroller.broker.log_config import BROKER_LOG_PROPERTIES, parse_broker_log_properties
from zkcontroller.scala_sets import immutable_set, java_string_hash, mutable_hash_set
from zkcontroller.zk.config_values import JAVA_TRIM, java_parse_int
from zkcontroller.zk.java_properties import properties_order
from zkcontroller.zk.log_config_def import TOPIC_CONFIG_RULES, parse_config_value

log = logging.getLogger("kafka.server.DynamicBrokerConfig")

NON_DYNAMIC_CONFIGS = frozenset(KAFKA_CONFIG_TYPES) - DYNAMIC_BROKER_CONFIGS
"""``DynamicConfig.Broker.nonDynamicProps``: every other ``KafkaConfig`` property."""

DYNAMIC_LISTENER_CONFIGS = frozenset({
    "advertised.listeners", "listeners", "listener.security.protocol.map", "principal.builder.class",
    "ssl.protocol", "ssl.provider", "ssl.cipher.suites", "ssl.enabled.protocols", "ssl.keystore.type",
    "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password", "ssl.truststore.type",
    "ssl.truststore.location", "ssl.truststore.password", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
    "ssl.endpoint.identification.algorithm", "ssl.secure.random.implementation", "ssl.client.auth",
    "ssl.engine.factory.class", "sasl.mechanism.inter.broker.protocol", "sasl.jaas.config",
    "sasl.enabled.mechanisms", "sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.ticket.renew.window.factor", "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.min.time.before.relogin", "sasl.kerberos.principal.to.local.rules",
    "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter", "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.buffer.seconds", "max.connections", "max.connection.creation.rate"})
"""``DynamicListenerConfig.ReconfigurableConfigs``."""

CLUSTER_LEVEL_LISTENER_CONFIGS = frozenset({"max.connections", "max.connection.creation.rate"})

PER_BROKER_CONFIGS = (DYNAMIC_SECURITY_CONFIGS | DYNAMIC_LISTENER_CONFIGS) - CLUSTER_LEVEL_LISTENER_CONFIGS
"""``DynamicBrokerConfig.PerBrokerConfigs``: refused at the cluster-default level (with the per-listener names
of all but the cluster-level ones)."""

PASSWORD_CONFIGS = frozenset(k for k in DYNAMIC_BROKER_CONFIGS if BROKER_CONFIG_DEFAULTS[k][0] == "PASSWORD")
"""``DynamicPasswordConfigs``: a name ending with one is a password (``isPasswordConfig``)."""

_LOG_VALIDATORS = {"log.cleanup.policy": TOPIC_CONFIG_RULES["cleanup.policy"].validator,
                   "log.message.timestamp.type": TOPIC_CONFIG_RULES["message.timestamp.type"].validator}
"""``KafkaConfig``'s validators beyond type and minimum that a dynamic log property has (its topic key's)."""

_INVALID_DYNAMIC = "Invalid value org.apache.kafka.common.config.ConfigException: {} for configuration Invalid " \
                   "dynamic configuration"
"""What a reconfigurable's refusal becomes: ``processReconfiguration`` throws ``new ConfigException("Invalid
dynamic configuration", e)``, which is ConfigException's (name, value) constructor."""


class DynamicConfigError(ValueError):
    """A ``ConfigException`` from ``DynamicBrokerConfig`` (its message as Kafka words it)."""


def is_password_config(name: str) -> bool:
    """``DynamicBrokerConfig.isPasswordConfig``."""
    return any(name.endswith(p) for p in PASSWORD_CONFIGS)


def check_value(name: str, value: str) -> None:
    """``DynamicConfig.Broker``'s ConfigDef for one entry: a dynamic property's (or replication throttle's) value
    parsed as its type and checked by its validator; any other key is custom, taken as given. Raises
    `DynamicConfigError` with ConfigException's wording. A CLASS value is not looked up (no JVM here)."""
    try:
        if name in BROKER_LOG_PROPERTIES:
            if name in DYNAMIC_BROKER_CONFIGS:
                parsed = parse_broker_log_properties({name: value})[name]
                validator = _LOG_VALIDATORS.get(name)
                if validator is not None:
                    validator.check(name, parsed)
            return
        known = REPLICATION_THROTTLE_CONFIGS.get(name) or (
            BROKER_CONFIG_DEFAULTS[name] if name in DYNAMIC_BROKER_CONFIGS else None)
        if known is None:
            return
        kind = known[0]
        if kind == "SHORT":
            number = java_parse_int(value.strip(JAVA_TRIM), bits=16)  # Short.parseShort
            if number is None:
                raise DynamicConfigError(f"Invalid value {value} for configuration {name}: Not a number of type SHORT")
            return
        typed = parse_config_value(name, kind, value)
        rule = BROKER_CONFIG_VALIDATORS.get(name)
        if rule is not None:
            rule.check(name, typed)
    except DynamicConfigError:
        raise
    except ValueError as e:
        raise DynamicConfigError(str(e)) from None


def validate_types(props: Mapping[str, str]) -> None:
    """``DynamicConfig.Broker.validate`` (what ``AdminZkClient.changeBrokerConfig`` runs on a node's whole new
    content): each value parsed and checked, custom keys allowed."""
    for name, value in props.items():
        check_value(name, value)


def validate_config_types(props: Mapping[str, str]) -> None:
    """``validateConfigTypes``: as `validate_types`, a ``listener.name.<l>.<config>`` checked as its base
    config."""
    for name, value in props.items():
        check_value(listener_base_name(name) or name, value)


def validate_configs(props: Mapping[str, str], *, per_broker: bool) -> None:
    """``DynamicBrokerConfig.validateConfigs``, in its order: a static ``KafkaConfig`` property, an SSL config
    without a listener prefix, each value, then (cluster default) a per-broker config. Raises
    `DynamicConfigError` with Kafka's message."""
    def check(names: str | None, message: str) -> None:
        if names is not None:
            raise DynamicConfigError(f"{message}: {names}")

    # Kafka's sets: ``props.asScala.keySet.intersect(..)`` an immutable Set built in the Properties' order;
    # ``DynamicSecurityConfigs.filter(props.containsKey)`` a filter of a Java set's ``asScala``: a mutable.HashSet
    order = properties_order(props)
    check(_key_set([k for k in order if k in NON_DYNAMIC_CONFIGS]), "Cannot update these configs dynamically")
    security = [k for k in order if k in DYNAMIC_SECURITY_CONFIGS]
    check(mutable_hash_set(security, java_string_hash) if security else None,
          "These security configs can be dynamically updated only per-listener using the listener prefix")
    validate_config_types(props)
    if not per_broker:
        check(_key_set(_per_broker_configs(order)), "Cannot update these configs at default cluster level, broker id "
                                                     "must be specified")


def _key_set(names: list[str]) -> str | None:
    """An immutable ``Set`` of config names, or None when there are none."""
    return immutable_set(names, java_string_hash) if names else None


def _per_broker_configs(props: Iterable[str]) -> list[str]:
    """``perBrokerConfigs``: ``configNames.intersect(PerBrokerConfigs) ++ configNames.filter(perBrokerListener..)``,
    the per-broker names first, then the per-broker listener configs."""
    names = list(props)
    listener = []
    for name in names:
        base = listener_base_name(name)
        if name not in PER_BROKER_CONFIGS and base is not None and base not in CLUSTER_LEVEL_LISTENER_CONFIGS:
            listener.append(name)
    return [name for name in names if name in PER_BROKER_CONFIGS] + listener


def _int_value(props: Mapping[str, str | None] | Mapping[str, str], name: str, default: int) -> int:
    """A thread count or limit as the new ``KafkaConfig`` holds it (validated already; the default when unset)."""
    text = props.get(name)
    parsed = java_parse_int(text.strip(JAVA_TRIM)) if text is not None else None
    return default if parsed is None else parsed


def _listener_names(props: Mapping[str, str]) -> list[str]:
    """The listener names of ``listeners`` (``PLAINTEXT`` when unset, as Kafka's default ``PLAINTEXT://:9092``)."""
    text = props.get("listeners") or "PLAINTEXT://:9092"
    return [item.strip(JAVA_TRIM).split("://", 1)[0] for item in text.split(",") if "://" in item]


def check_reconfiguration(new: Mapping[str, str], current: Mapping[str, str]) -> None:
    """``processReconfiguration(validateOnly = true)``'s checks of the reconfigurables whose configs change between
    the broker's ``current`` config and the ``new`` one (server.properties with the dynamic levels over it), in
    Kafka's order: each listener's connection quota (``max.connections``, ``max.connection.creation.rate``, its
    ``listener.name.<l>.`` override first), ``DynamicThreadPool``, then the log cleaner (``log.cleaner.enable``).
    A refusal raises `DynamicConfigError` with the message Kafka's wrapping gives it."""
    def changed(names: Iterable[str]) -> bool:
        return any(new.get(n) != current.get(n) for n in names)

    try:
        for listener in _listener_names(current):
            prefix = f"listener.name.{listener.lower()}."  # ListenerName.configPrefix
            new_limits = {n: new.get(prefix + n, new.get(n)) for n in CLUSTER_LEVEL_LISTENER_CONFIGS}
            if any(v != current.get(prefix + n, current.get(n)) for n, v in new_limits.items()):
                for name in ("max.connections", "max.connection.creation.rate"):
                    value = _int_value(new_limits, name, 2**31 - 1)
                    if value <= 0:
                        raise DynamicConfigError(f"Invalid {name} {value}")
        if changed(DYNAMIC_THREAD_POOL_CONFIGS):
            for name, (_, default) in DYNAMIC_THREAD_POOL_CONFIGS.items():
                assert isinstance(default, int)
                new_value, old_value = _int_value(new, name, default), _int_value(current, name, default)
                if new_value == old_value:
                    continue
                error = f"Dynamic thread count update validation failed for {name}={new_value}"
                if new_value <= 0:
                    raise DynamicConfigError(f"{error}, value should be at least 1")
                if new_value < old_value // 2:
                    raise DynamicConfigError(f"{error}, value should be at least half the current value {old_value}")
                if new_value > old_value * 2:
                    raise DynamicConfigError(f"{error}, value should not be greater than double the current value "
                                             f"{old_value}")
        cleaner = current.get("log.cleaner.enable", "true").strip(JAVA_TRIM).lower() != "false"
        if cleaner and changed([*LOG_CLEANER_CONFIGS, "message.max.bytes"]):
            threads, now = _int_value(new, "log.cleaner.threads", 1), _int_value(current, "log.cleaner.threads", 1)
            if threads < 1:
                raise DynamicConfigError("Log cleaner threads should be at least 1")
            if threads < now // 2:
                raise DynamicConfigError(f"Log cleaner threads cannot be reduced to less than half the current value "
                                         f"{now}")
            if threads > now * 2:
                raise DynamicConfigError(f"Log cleaner threads cannot be increased to more than double the current "
                                         f"value {now}")
    except DynamicConfigError as e:
        raise DynamicConfigError(_INVALID_DYNAMIC.format(e)) from None


def _invalid_reason(name: str, value: str) -> str | None:
    """Why ``validateConfigTypes`` refuses ``value`` for ``name`` (None: accepted, or a custom key)."""
    try:
        check_value(listener_base_name(name) or name, value)
    except DynamicConfigError as e:
        return str(e)
    return None


def clean_dynamic_configs(configs: Mapping[str, str], *, per_broker: bool, path: str,
                          report: bool = True) -> dict[str, str]:
    """What Kafka keeps of a ``/config/brokers/...`` node's configs; each dropped group is logged at ERROR when the
    broker takes the node up (``report``), not when it is only read to answer a request."""
    kept = dict(configs)
    source = "broker" if per_broker else "default cluster"

    def drop(names: list[str], message: str) -> None:
        if names:
            for name in names:
                del kept[name]
            if report:
                log.error("%s: Set(%s) (%s)", message, ", ".join(names), path)

    drop(sorted(k for k in kept if k in NON_DYNAMIC_CONFIGS),
         "Non-dynamic configs configured in ZooKeeper will be ignored")
    drop(sorted(k for k in kept if k in DYNAMIC_SECURITY_CONFIGS),
         "Security configs can be dynamically updated only using listener prefix, base configs will be ignored")
    if not per_broker:
        drop(sorted(_per_broker_configs(kept)),
             "Per-broker configs defined at default cluster level will be ignored")
    reasons = {k: r for k, v in kept.items() if (r := _invalid_reason(k, v)) is not None}
    if reasons:
        for name in reasons:
            del kept[name]
    if reasons and report:
        log.error("Dynamic %s config contains invalid values in: Set(%s), these configs will be ignored (%s: %s)",
                  source, ", ".join(sorted(reasons)), path, "; ".join(reasons[k] for k in sorted(reasons)))
    return kept
