"""The config rules of AlterConfigs and IncrementalAlterConfigs (Kafka 2.8.2's ``ZkAdminManager.alterConfigs``,
``incrementalAlterConfigs``, ``prepareIncrementalConfigs`` and the validation they call), free of ZooKeeper so
they can be tested alone; `cluster.admin_apis.alter_configs` reads and writes the nodes around them.

Kafka answers a resource by the exception it meets, and these keep its three kinds apart:

- `ConfigApiError` is an ``ApiException``: its own error code and message (UNKNOWN_TOPIC_OR_PARTITION,
  INVALID_REQUEST for a malformed request, INVALID_CONFIG for ``InvalidConfigurationException``: an unknown topic
  config name, or min.compaction.lag.ms above max.compaction.lag.ms);
- `InvalidConfigValue` is a ``ConfigException`` (a value ConfigDef refuses, a config that is not dynamic): Kafka
  wraps it, so the resource answers INVALID_REQUEST "Invalid config value for resource <resource>: <message>";
- anything else (`UnexpectedConfigError`: Kafka's ``NoSuchElementException`` for APPEND or SUBTRACT on a key its
  ConfigDef lacks, its ``MatchError`` for an unknown operation id) is UNKNOWN_SERVER_ERROR with no message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from zkcontroller.admin.java_numbers import java_split
from zkcontroller.admin.repeats import repeated
from zkcontroller.broker.config_helper import BROKER_LOGGER_RESOURCE, BROKER_RESOURCE, TOPIC_RESOURCE
from zkcontroller.broker.dynamic_broker_config import (
    DynamicConfigError,
    check_reconfiguration,
    is_password_config,
    validate_configs,
)
from zkcontroller.broker.log_config import to_config_string
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.wire.alter_configs import APPEND, DELETE, OP_NAMES, SET, SUBTRACT, ConfigChange
from zkcontroller.scala_sets import immutable_set, java_string_hash
from zkcontroller.zk.config_values import java_parse_int
from zkcontroller.zk.java_properties import properties_order
from zkcontroller.zk.log_config_def import (
    TOPIC_CONFIG_RULES,
    TopicConfigConflictError,
    TopicConfigError,
    validate_topic_config_names,
    validate_topic_configs,
)

INVALID_CONFIG = 40
"""``Errors.INVALID_CONFIG`` (``InvalidConfigurationException``)."""

RESOURCE_TYPE_NAMES = {TOPIC_RESOURCE: "TOPIC", BROKER_RESOURCE: "BROKER", BROKER_LOGGER_RESOURCE: "BROKER_LOGGER"}

TOPIC_CONFIG_KEYS: Mapping[str, tuple[str, object]] = {k: (r.type, r.default) for k, r in TOPIC_CONFIG_RULES.items()}
"""``LogConfig.configKeys``: type and default of each topic config."""


@dataclass(frozen=True)
class BrokerLevels:
    """A broker's config as it stands: server.properties and the dynamic levels it keeps (cleaned)."""

    static: Mapping[str, str]
    dynamic_default: Mapping[str, str]
    dynamic_broker: Mapping[str, str]


class ConfigApiError(Exception):
    """An ``ApiException``: the resource answers ``error`` with ``message``."""

    def __init__(self, error: int, message: str | None) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


class InvalidConfigValue(Exception):
    """A ``ConfigException``/``IllegalArgumentException``: INVALID_REQUEST, its message wrapped (`wrapped`)."""

    def wrapped(self, resource_type: int, resource_name: str) -> str:
        return f"Invalid config value for resource {resource_label(resource_type, resource_name)}: {self}"


class UnexpectedConfigError(Exception):
    """Not an ``ApiException``: UNKNOWN_SERVER_ERROR, logged, no message sent."""


def resource_label(resource_type: int, resource_name: str) -> str:
    """``ConfigResource.toString``."""
    return f"ConfigResource(type={RESOURCE_TYPE_NAMES.get(resource_type, 'UNKNOWN')}, name='{resource_name}')"


def invalid_request(message: str) -> ConfigApiError:
    return ConfigApiError(int(Errors.INVALID_REQUEST), message)


def check_changes(changes: Sequence[ConfigChange], *, incremental: bool) -> None:
    """The checks before any resource type's: IncrementalAlterConfigs refuses a key named twice, then a null value
    for anything but DELETE; AlterConfigs a null value."""
    names = [c.name for c in changes]
    if incremental:
        duplicates = repeated(names)
        if duplicates:
            raise invalid_request(f"Error due to duplicate config keys : {','.join(duplicates)}")
        nulls = [f"{OP_NAMES.get(c.op, 'null')}:{c.name}" for c in changes if c.value is None and c.op != DELETE]
    else:
        nulls = [c.name for c in changes if c.value is None]
    if nulls:
        raise invalid_request(f"Null value not supported for : {','.join(nulls)}")


def _scala_diff(items: list[str], removed: list[str]) -> list[str]:
    """``List.diff``: each removed value takes away one occurrence."""
    left = list(items)
    for value in removed:
        if value in left:
            left.remove(value)
    return left


def prepare_incremental(changes: Sequence[ConfigChange], current: Mapping[str, str],
                        config_keys: Mapping[str, tuple[str, object]]) -> dict[str, str]:
    """``prepareIncrementalConfigs``: ``current`` (the stored configs) with each operation applied in order. APPEND
    and SUBTRACT need a LIST key (else INVALID_REQUEST) and start from the stored value, else the key's default;
    a key ``config_keys`` lacks fails them as Kafka's map lookup does (UNKNOWN_SERVER_ERROR)."""
    configs = dict(current)
    for change in changes:
        name = change.name
        if change.op == SET:
            assert change.value is not None  # check_changes
            configs[name] = change.value
        elif change.op == DELETE:
            configs.pop(name, None)
        elif change.op in (APPEND, SUBTRACT):
            key = config_keys.get(name)
            if key is None:
                raise UnexpectedConfigError(f"java.util.NoSuchElementException: key not found: {name}")
            if key[0] != "LIST":
                verb = "append" if change.op == APPEND else "subtract"
                raise invalid_request(f"Config value {verb} is not allowed for config key: {name}")
            old = configs.get(name)
            if old is None:
                old = to_config_string(key[1], "LIST") or ""
            assert change.value is not None
            given = java_split(change.value, ",")
            current_values = java_split(old, ",")
            values = current_values + given if change.op == APPEND else _scala_diff(current_values, given)
            configs[name] = ",".join(values)
        else:
            raise UnexpectedConfigError(f"scala.MatchError: null (operation id {change.op})")
    return configs


def validate_topic(configs: Mapping[str, str]) -> None:
    """``LogConfig.validate``: an unknown name (or the compaction-lag conflict) is INVALID_CONFIG, a value
    ConfigDef refuses an `InvalidConfigValue`."""
    try:
        validate_topic_config_names(configs)
    except TopicConfigError as e:
        raise ConfigApiError(INVALID_CONFIG, str(e)) from None
    try:
        validate_topic_configs(configs)
    except TopicConfigConflictError as e:
        raise ConfigApiError(INVALID_CONFIG, str(e)) from None
    except TopicConfigError as e:
        raise InvalidConfigValue(str(e)) from None


def check_broker_id(resource_name: str, broker_id: int, between: str) -> int:
    """``String.toInt`` of a BROKER or BROKER_LOGGER resource's name, which must then be this broker's id. Kafka's
    messages differ only in ``between`` the id and "but": ``","`` here (``getBrokerId``), ``" or empty string,"``
    and ``""`` in DescribeConfigs (``ConfigHelper``)."""
    parsed = java_parse_int(resource_name)
    if parsed is None:
        raise invalid_request(f"Broker id must be an integer, but it is: {resource_name}")
    if parsed != broker_id:
        raise invalid_request(f"Unexpected broker id, expected {broker_id}{between} but received {resource_name}")
    return parsed


def broker_id_of(resource_name: str, broker_id: int) -> int | None:
    """``getBrokerId``: None for the cluster default (the empty name), else the id, which must be this broker's."""
    if not resource_name:
        return None
    return check_broker_id(resource_name, broker_id, ",")


def validate_broker(configs: Mapping[str, str], *, per_broker: bool, levels: BrokerLevels | None = None) -> None:
    """``DynamicBrokerConfig.validate`` (`validate_configs`: a static property, an SSL config without its listener
    prefix, each value, a per-broker config at the default level), then, given the broker's ``levels`` (its
    server.properties and the dynamic levels it keeps), its reconfigurables' checks on the config ``configs``
    would make (`check_reconfiguration`). A refusal is an `InvalidConfigValue` with Kafka's message."""
    try:
        validate_configs(configs, per_broker=per_broker)
        if levels is not None:
            current = {**levels.static, **levels.dynamic_default, **levels.dynamic_broker}
            if per_broker:
                new = {**levels.static, **levels.dynamic_default, **configs}
            else:
                new = {**levels.static, **configs, **levels.dynamic_broker}
            check_reconfiguration(new, current)
    except DynamicConfigError as e:
        raise InvalidConfigValue(str(e)) from None


def check_passwords(configs: Mapping[str, str], *, per_broker: bool) -> None:
    """``toPersistentProps``, before a write: a password config (``listener.name.<l>.ssl.keystore.password``...)
    needs the broker level, then a ``password.encoder.secret`` to encrypt it with (Kafka's messages); encrypting
    is not implemented here, so one is refused even then rather than stored in clear."""
    # in the order of the Properties ``alterConfigs`` fills, as ``configProps.asScala.keySet.filter(..)`` would be
    passwords = [k for k in properties_order(configs) if is_password_config(k)]
    if not passwords:
        return
    if not per_broker:
        raise InvalidConfigValue("Password config can be defined only at broker level")
    raise InvalidConfigValue(f"Password encoder secret not configured (zkcontroller does not encrypt dynamic password "
                             f"configs; not stored: {immutable_set(passwords, java_string_hash)})")
