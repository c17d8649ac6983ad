"""Reading ``/config/changes/config_change_<n>`` notifications, for whoever listens to them: every broker's
config manager (topic configs, `broker.topic_config_manager`) and the controller (unclean leader election).

Kafka's ``ZkNodeChangeNotificationListener``: the children of ``/config/changes`` with a sequence number above
the last one processed ("" at start: every one there, as Kafka's ``lastExecutedChange`` starts at -1), each decoded
as ``DynamicConfigManager``'s ``ConfigChangedNotificationHandler.processNotification`` decodes it
(`decode_notification`): the entity it names (``topics/<t>``, ``brokers/<id>``, ``ips/<ip>``...), or the exception
Kafka throws on it, with Kafka's message (its listener logs it with the notification's bytes and goes on), or, for
data that is not JSON, nothing (Kafka ignores it without a word: it may come from the old ``TopicConfigManager``).
A notification gone between the listing and the read, or holding null data, is Kafka's null data
(`Notification.null_data`).
`check_topic_config_change` is what ``TopicConfigHandler.processConfigChanges`` throws, in its order, before it
asks the controller for ``TopicUncleanLeaderElectionEnable``: the brokers and the controller both follow it.
After each pass Kafka's brokers purge the notifications older than ``changeExpirationMs`` (15 min,
`purge_obsolete_config_changes`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from zkcontroller.coordination.api import Watcher
from zkcontroller.coordination.errors import NoNodeError
from zkcontroller.protocol.ibp import KAFKA_IBPS, resolve_ibp
from zkcontroller.zk import paths
from zkcontroller.zk.config_values import java_parse_int
from zkcontroller.zk.errors import UnparseableZnodeError, ZnodeDecodeError
from zkcontroller.zk.java_text import (
    IllegalArgumentException,
    JavaException,
    JsonMappingException,
    NumberFormatException,
    StringIndexOutOfBoundsException,
    jackson_text,
    java_length,
    java_trim,
    java_utf8_decode,
)
from zkcontroller.zk.json_fields import INT32_MAX, INT32_MIN, JsonTooDeepError, holds_no_value, parse_json
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.log_config_def import TOPIC_CONFIG_RULES, TopicConfigError, parse_config_value
from zkcontroller.zk.znodes.config import ConfigEntityChangeNotificationSequenceZNode as ConfigChangeZNode
from zkcontroller.zk.znodes.config import ConfigEntityZNode

CHANGE_EXPIRATION_MS = 15 * 60 * 1000
"""``ZkNodeChangeNotificationListener.changeExpirationMs`` as ``DynamicConfigManager`` gives it."""
TOPIC_ENTITY_PREFIX = f"{paths.ConfigType.TOPIC}/"
BROKER_ENTITY_PREFIX = f"{paths.ConfigType.BROKER}/"
HANDLED_TYPES = (paths.ConfigType.TOPIC, paths.ConfigType.CLIENT, paths.ConfigType.USER, paths.ConfigType.IP,
                 paths.ConfigType.BROKER)
"""The keys of ``KafkaServer``'s ``dynamicConfigHandlers`` (every ``ConfigType``), in the iteration order of the
Scala 2.13 immutable ``HashMap`` they are in (each one's improved hash has its own low 5 bits: the root node's
order), which Kafka's refusal of another type lists them in."""
VERSION_1_TYPES = (paths.ConfigType.TOPIC, paths.ConfigType.CLIENT)
"""``processEntityConfigChangeVersion1``'s ``validConfigTypes``: an exact type, nothing else."""


@dataclass(frozen=True)
class Notification:
    """One notification read, decoded as Kafka's handler decodes it (see the module)."""

    sequence_number: str
    data: bytes
    """The znode's bytes as stored: Kafka prints them (``new String(data, UTF_8)``) when handling it fails."""
    version: int = 0
    entity_type: str = ""
    entity_name: str = ""
    """Everything after the type's ``/`` (version 2), or ``entity_name`` (version 1)."""
    failure: JavaException | None = None
    """What Kafka throws before any handler sees it (then no entity)."""
    not_json: str | None = None
    """Why the data is no JSON: Kafka skips it silently (then no entity, no failure)."""
    null_data: bool = False
    """No data read: the node holds null data (ZooKeeper's, not empty: written by a client other than Kafka's), or
    was gone when read (purged by another broker after the listing). Kafka's ``getDataAndStat`` answers None for
    both, and its listener logs ``read null data from <path>`` (WARN) and skips it (then no entity, no failure)."""

    @property
    def entity(self) -> str:
        """``<type>/<name>``, whichever version wrote it; "" if it names none."""
        return f"{self.entity_type}/{self.entity_name}" if self.entity_type else ""

    @property
    def path(self) -> str:
        return ConfigChangeZNode.path(self.sequence_number)


def _received(data: bytes) -> str:
    return f"Received: {java_utf8_decode(data)}"


def _optional_string(obj: dict[str, object], key: str) -> str | None:
    """``js.get(key).flatMap(_.to[Option[String]])``: absent or null is None, another non-string throws."""
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise JsonMappingException(f"Expected `String` value, received {jackson_text(value)}")


def _decode(sequence_number: str, data: bytes) -> Notification:
    try:
        value = parse_json(data, ConfigChangeZNode.path(sequence_number))
    except JsonTooDeepError as e:  # JSON to Kafka: a failure of ours, not data skipped as not JSON
        return Notification(sequence_number, data, failure=NotificationDecodeError(
            f"Cannot decode the config change notification {e.path}: {e.reason}"))
    except UnparseableZnodeError as e:
        if not holds_no_value(data):
            return Notification(sequence_number, data, not_json=e.reason)
        value = ()  # readTree's MissingNode: JSON, but no object
    if not isinstance(value, dict):
        return Notification(sequence_number, data, failure=IllegalArgumentException(
            "Config change notification has an unexpected value. The format is:"
            '{"version" : 1, "entity_type":"topics/clients", "entity_name" : "topic_name/client_id"} or '
            '{"version" : 2, "entity_path":"entity_type/entity_name"}. ' + _received(data)))
    try:
        return _decode_object(sequence_number, data, value)
    except JavaException as e:
        return Notification(sequence_number, data, failure=e)


class NotificationDecodeError(JavaException):
    """A failure of ours decoding a notification (a bug, or a limit of Python's): the notification is logged as
    failed, as Kafka's listener logs one its handler throws on, and the rest go on. Named as ours, not Java's."""


class ConfigNodeDecodeError(JavaException):
    """A config node Kafka reads but we cannot (JSON nested deeper than Python's parser goes): the notification's
    handling fails, logged as Kafka's listener logs a failure, and the entity keeps what it had. Named as ours."""


def decode_notification(sequence_number: str, data: bytes) -> Notification:
    """``ConfigChangedNotificationHandler.processNotification`` up to its handler call (Kafka 2.8.2's checks, in its
    order, with its exceptions and messages). Total: whatever the bytes, a `Notification` (what would raise
    otherwise, a `NotificationDecodeError`), so one notification never stops a pass."""
    try:
        return _decode(sequence_number, data)
    except Exception as e:  # any bytes at all: one bad notification must not stop the others
        failure = NotificationDecodeError(f"Cannot decode the config change notification: {type(e).__name__}: {e}")
        failure.__cause__ = e
        return Notification(sequence_number, data, failure=failure)


def _decode_object(sequence_number: str, data: bytes, obj: dict[str, object]) -> Notification:
    if "version" not in obj:
        raise JsonMappingException("No such field exists: `version`")
    version = obj["version"]
    if type(version) is not int or not INT32_MIN <= version <= INT32_MAX:  # DecodeInt: an IntNode only
        raise JsonMappingException(f"Expected `Int` value, received {jackson_text(version)}")
    if version == 1:
        entity_type = _optional_string(obj, "entity_type")
        if entity_type not in VERSION_1_TYPES:
            raise IllegalArgumentException("Version 1 config change notification must have 'entity_type' set to "
                                           f"'clients' or 'topics'. {_received(data)}")
        name = _optional_string(obj, "entity_name")
        if name is None:
            raise IllegalArgumentException("Version 1 config change notification does not specify 'entity_name'. "
                                           f"{_received(data)}")
        return Notification(sequence_number, data, 1, entity_type, name)
    if version != 2:
        raise IllegalArgumentException(f"Config change notification has unsupported version '{version}', "
                                       "supported versions are 1 and 2.")
    entity_path = _optional_string(obj, "entity_path")
    if entity_path is None:
        raise IllegalArgumentException("Version 2 config change notification must specify 'entity_path'. "
                                       f"{_received(data)}")
    if "/" not in entity_path:  # Kafka takes substring(0, indexOf('/')) before it checks the index
        raise StringIndexOutOfBoundsException(f"begin 0, end -1, length {java_length(entity_path)}")
    entity_type, _, name = entity_path.partition("/")
    if entity_type not in HANDLED_TYPES:
        listed = ", ".join(f"'{t}'/" for t in HANDLED_TYPES)
        raise IllegalArgumentException("Version 2 config change notification must have 'entity_path' starting "
                                       f"with one of {listed}. {_received(data)}")
    return Notification(sequence_number, data, 2, entity_type, name)


@dataclass(frozen=True)
class ConfigChanges:
    """The notifications read."""

    last_sequence_number: str
    """The newest one read (or the one given, if none was new): the next read starts after it."""
    notified: list[Notification] = field(default_factory=list)
    """Each new notification, in order, repeats kept (Kafka processes each one), failed ones and ones gone
    (`Notification.null_data`) too."""
    seen: tuple[str, ...] = ()
    """Every notification's sequence number under ``/config/changes`` at the read, new or not, in order: Kafka
    logs "Processing notification(s)" whenever there is one, and purges the expired among them."""


async def newest_config_change(zk: KafkaZkClient, watch: Watcher | None = None) -> str:
    """The sequence number of the newest notification ("" if none, or no ``/config/changes``), arming ``watch``."""
    try:
        return max(await zk.get_notification_sequence_numbers(ConfigChangeZNode, watch), default="")
    except NoNodeError:
        return ""


async def read_config_changes(zk: KafkaZkClient, after: str, watch: Watcher | None = None) -> ConfigChanges:
    """The notifications newer than ``after`` (sequence numbers sort as strings; "" reads them all), arming
    ``watch`` on ``/config/changes``. No ``/config/changes`` node: nothing new."""
    try:
        seen = tuple(sorted(await zk.get_notification_sequence_numbers(ConfigChangeZNode, watch)))
    except NoNodeError:
        return ConfigChanges(after)
    new = [n for n in seen if n > after]
    if not new:
        return ConfigChanges(after, seen=seen)
    wanted = [ConfigChangeZNode.path(n) for n in new]
    found = await zk.session.get_data_many(wanted, max_in_flight=zk.limits.max_in_flight)
    notified = [Notification(sequence_number, b"", null_data=True) if item is None or item[0] is None
                else decode_notification(sequence_number, item[0])  # (None: purged meanwhile, or null data)
                for sequence_number, item in zip(new, found, strict=True)]
    return ConfigChanges(new[-1], notified, seen)


async def purge_obsolete_config_changes(zk: KafkaZkClient, sequence_numbers: Iterable[str], now_ms: int,
                                        expiration_ms: int = CHANGE_EXPIRATION_MS) -> list[str]:
    """``purgeObsoleteNotifications``: delete each of these notifications created more than ``expiration_ms``
    before ``now_ms`` (its znode's ctime); the paths deleted. One already gone (another broker purged it first) is
    skipped, as Kafka's ``deletePath`` does, and so is one holding null data: Kafka purges only ``if
    (data.isDefined)``, and ``getDataAndStat`` reads null data as None, so such a notification stays."""
    wanted = [ConfigChangeZNode.path(n) for n in sorted(sequence_numbers)]
    found = await zk.session.get_data_many(wanted)
    purged = []
    for path, item in zip(wanted, found, strict=True):
        if item is None or item[0] is None or now_ms - item[1].ctime <= expiration_ms:
            continue
        try:
            await zk.session.delete(path)
        except NoNodeError:
            continue
        purged.append(path)
    return purged


async def fetch_entity_config(zk: KafkaZkClient, entity_type: str, name: str
                              ) -> tuple[dict[str, str], ZnodeDecodeError | None]:
    """``AdminZkClient.fetchEntityConfig`` as a notification's handler calls it: the node read as
    `KafkaZkClient.get_entity_configs_lenient` reads it, but a node Kafka's ``ConfigEntityZNode.decode`` throws on
    raises what Kafka throws, for the listener's failure line: ``JsonMappingException: Expected `String` value,
    received 3`` for the first value of ``config`` that is no string; JSON nested deeper than Python's parser goes
    (`JsonTooDeepError`) raises `ConfigNodeDecodeError` (Kafka reads it: it is no "not JSON")."""
    path = paths.config_entity_path(entity_type, name)
    found = await zk.get_data_and_stat(path)
    if found is None or not found[0]:
        return {}, None
    try:
        value = parse_json(found[0], path)
    except JsonTooDeepError as e:  # JSON Kafka reads: a failure (the entity keeps its config), not no overrides
        raise ConfigNodeDecodeError(f"Cannot decode the config {path}: {e.reason}") from e
    except UnparseableZnodeError as e:
        return {}, e
    try:
        return ConfigEntityZNode.decode_lenient_value(value, path)
    except ZnodeDecodeError as e:  # raised for nothing else
        refused = next((v for v in value["config"].values() if not isinstance(v, str)), None)
        raise JsonMappingException(f"Expected `String` value, received {jackson_text(refused)}") from e


# ---------------------------------------------------------------------- TopicConfigHandler.processConfigChanges

class ConfigException(JavaException):
    """Kafka's ``ConfigException``, as ``LogConfig.fromProps`` and ``ThrottledReplicaListValidator`` throw it."""


class ArrayIndexOutOfBoundsException(JavaException):
    pass


ConfigException.__module__ = "org.apache.kafka.common.config"
ArrayIndexOutOfBoundsException.__module__ = "java.lang"

MESSAGE_FORMAT_VERSION = "message.format.version"
LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
_THROTTLED_ITEM = re.compile(r"([0-9]+:[0-9]+)?")
_RANK = {v: i for i, v in enumerate(KAFKA_IBPS)}
_SHORT = {re.sub(r"-IV\d+$", "", v): v for v in KAFKA_IBPS}


def java_split(text: str, separator: str) -> list[str]:
    """``String.split`` on a literal one-char separator: no match gives the text itself (even ""), otherwise the
    trailing empty strings are dropped (so ``","`` gives nothing)."""
    if separator not in text:
        return [text]
    parts = text.split(separator)
    while parts and not parts[-1]:
        parts.pop()
    return parts


def api_version(text: str) -> str:
    """``ApiVersion.apply`` (untrimmed): the full version ``text`` names, or its ``IllegalArgumentException``."""
    segments = java_split(text, ".")
    key = ".".join(segments[:3 if text.startswith("0.") else 2])
    full = key if key in _RANK else _SHORT.get(key)
    if full is None:
        raise IllegalArgumentException(f"Version `{text}` is not a valid version")
    return full


def excluded_topic_configs(configs: Mapping[str, str], inter_broker_protocol_version: str) -> set[str]:
    """``TopicConfigHandler.excludedConfigs``: ``message.format.version`` when it is newer than the broker's IBP;
    an unknown version throws (`api_version`), before anything else of the handler runs."""
    version = configs.get(MESSAGE_FORMAT_VERSION)
    if version is None:
        return set()
    if _RANK[resolve_ibp(inter_broker_protocol_version)] < _RANK[api_version(version)]:
        return {MESSAGE_FORMAT_VERSION}
    return set()


def validate_log_config(overrides: Mapping[str, str]) -> None:
    """``LogConfig.fromProps``' ``ConfigDef.parse``: each known value parsed and validated in the definition
    order (unknown names ignored, no cross-config rule), the first refused raising ``ConfigException``."""
    for name, rule in TOPIC_CONFIG_RULES.items():
        if name not in overrides:
            continue
        try:
            value = parse_config_value(name, rule.type, overrides[name])
            if rule.validator is not None:
                rule.validator.check(name, value)
        except TopicConfigError as e:
            raise ConfigException(str(e)) from None


def throttled_partitions(prop: str, value: str, broker_id: int) -> list[int] | None:
    """``TopicConfigHandler.parseThrottledPartitions``: the partitions of ``broker_id`` the list names (None for
    ``*``, every one). Throws as Kafka does: the validator's ``ConfigException`` on the items trimmed (printed as
    the Scala 2.13 ``ArraySeq`` it checks), then, on the items untrimmed, ``NumberFormatException`` (`` 1:1``
    after a comma, a number past an int) or ``ArrayIndexOutOfBoundsException`` (an empty item, ``*,``)."""
    config_value = java_trim(value)
    trimmed = [java_trim(item) for item in java_split(config_value, ",")]
    if not (all(_THROTTLED_ITEM.fullmatch(item) for item in trimmed) or java_trim("".join(trimmed)) == "*"):
        raise ConfigException(
            f"Invalid value ArraySeq({', '.join(trimmed)}) for configuration {prop}: {prop} must be the literal "
            "'*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
    if config_value == "":
        return []
    if config_value == "*":
        return None
    pairs = [java_split(item, ":") for item in java_split(config_value, ",")]
    mine = []
    for pair in pairs:  # Scala's filter runs over every pair before the map
        if len(pair) < 2:
            raise ArrayIndexOutOfBoundsException(f"Index 1 out of bounds for length {len(pair)}")
        if _to_int(pair[1]) == broker_id:
            mine.append(pair)
    return [_to_int(pair[0]) for pair in mine]


def _to_int(text: str) -> int:
    """Scala's ``String.toInt``: ``Integer.parseInt``, untrimmed."""
    value = java_parse_int(text)
    if value is None:
        raise NumberFormatException(f'For input string: "{text}"')
    return value


def check_throttled_replicas(configs: Mapping[str, str], broker_id: int) -> None:
    """``updateThrottledList`` for the leader list, then the follower list: a non-empty value is parsed."""
    for prop in (LEADER_THROTTLED_REPLICAS, FOLLOWER_THROTTLED_REPLICAS):
        value = configs.get(prop)
        if value:
            throttled_partitions(prop, value, broker_id)


def check_topic_config_change(configs: Mapping[str, str], broker_id: int, *, has_logs: bool,
                              inter_broker_protocol_version: str) -> None:
    """Raise what ``TopicConfigHandler.processConfigChanges`` throws before its last step, in its order: the
    message format version (`excluded_topic_configs`), the new ``LogConfig`` if the broker has logs of the topic
    (`validate_log_config`), the throttled replica lists (`check_throttled_replicas`). Kafka asks the controller
    for ``TopicUncleanLeaderElectionEnable`` only after all three: a throw aborts the call, and its listener logs
    ``error processing change notification``."""
    excluded = excluded_topic_configs(configs, inter_broker_protocol_version)
    if has_logs:
        validate_log_config({k: v for k, v in configs.items() if k not in excluded})
    check_throttled_replicas(configs, broker_id)
