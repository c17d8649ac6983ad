"""Reading ``/config/changes/config_change_<n>`` notifications, for whoever listens to them: every broker's
config manager (topic configs, `broker.topic_config_manager`) and the controller (unclean leader election).

Kafka's ``ZkNodeChangeNotificationListener``: the children of ``/config/changes`` with a sequence number above
the last one processed ("" at start: every one there, as Kafka's ``lastExecutedChange`` starts at -1), each decoded
to the entity it names (``topics/<t>``, ``brokers/<id>``...); a malformed notification is reported by path and
skipped. After each pass Kafka's brokers purge the notifications older than ``changeExpirationMs`` (15 min,
`purge_obsolete_config_changes`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from zkcontroller.coordination.api import Watcher
from zkcontroller.coordination.errors import NoNodeError
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes.config import ConfigEntityChangeNotificationSequenceZNode as ConfigChangeZNode

CHANGE_EXPIRATION_MS = 15 * 60 * 1000
"""``ZkNodeChangeNotificationListener.changeExpirationMs`` as ``DynamicConfigManager`` gives it."""
TOPIC_ENTITY_PREFIX = f"{paths.ConfigType.TOPIC}/"
BROKER_ENTITY_PREFIX = f"{paths.ConfigType.BROKER}/"


@dataclass(frozen=True)
class Notification:
    """One notification read: what a listener needs to handle it and to report it as Kafka does."""

    sequence_number: str
    entity: str
    """``<type>/<name>``, whichever version wrote it."""
    version: int
    data: bytes
    """The znode's bytes as stored: Kafka prints them (``new String(data, UTF_8)``) when handling it fails."""


@dataclass(frozen=True)
class ConfigChanges:
    """The notifications read: the changed entities in notification order (each once)."""

    last_sequence_number: str
    """The newest one read (or the one given, if none was new): the next read starts after it."""
    entities: list[str] = field(default_factory=list)
    malformed: dict[str, str] = field(default_factory=dict)
    """Path → why it could not be decoded."""
    notified: list[Notification] = field(default_factory=list)
    """Each new notification, in order, repeats kept (Kafka processes each one)."""
    seen: tuple[str, ...] = ()
    """Every notification's sequence number under ``/config/changes`` at the read, new or not, in order: Kafka
    logs "Processing notification(s)" whenever there is one, and purges the expired among them."""

    @property
    def topics(self) -> list[str]:
        return [e[len(TOPIC_ENTITY_PREFIX):] for e in self.entities if e.startswith(TOPIC_ENTITY_PREFIX)]

    @property
    def brokers(self) -> list[str]:
        """Broker entity names: an id, or ``<default>``."""
        return [e[len(BROKER_ENTITY_PREFIX):] for e in self.entities if e.startswith(BROKER_ENTITY_PREFIX)]


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
    notified: list[Notification] = []
    malformed: dict[str, str] = {}
    found = await zk.session.get_data_many(wanted, max_in_flight=zk.limits.max_in_flight)
    for sequence_number, path, item in zip(new, wanted, found, strict=True):
        if item is None:  # purged meanwhile
            continue
        try:
            version, entity = ConfigChangeZNode.decode_versioned(item[0], path)
        except ZnodeDecodeError as e:
            malformed[path] = e.reason
            continue
        notified.append(Notification(sequence_number, entity, version, item[0]))
    return ConfigChanges(new[-1], list(dict.fromkeys(n.entity for n in notified)), malformed, notified, seen)


async def purge_obsolete_config_changes(zk: KafkaZkClient, sequence_numbers: Iterable[str], now_ms: int,
                                        expiration_ms: int = CHANGE_EXPIRATION_MS) -> list[str]:
    """``purgeObsoleteNotifications``: delete each of these notifications created more than ``expiration_ms``
    before ``now_ms`` (its znode's ctime); the paths deleted. One already gone (another broker purged it first) is
    skipped, as Kafka's ``deletePath`` does."""
    wanted = [ConfigChangeZNode.path(n) for n in sorted(sequence_numbers)]
    found = await zk.session.get_data_many(wanted)
    purged = []
    for path, item in zip(wanted, found, strict=True):
        if item is None or now_ms - item[1].ctime <= expiration_ms:
            continue
        try:
            await zk.session.delete(path)
        except NoNodeError:
            continue
        purged.append(path)
    return purged
