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
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes.config import ConfigEntityChangeNotificationSequenceZNode as ConfigChangeZNode

CHANGE_EXPIRATION_MS = 15 * 60 * 1000
"""``ZkNodeChangeNotificationListener.changeExpirationMs`` as ``DynamicConfigManager`` gives it."""
TOPIC_ENTITY_PREFIX = f"{paths.ConfigType.TOPIC}/"
BROKER_ENTITY_PREFIX = f"{paths.ConfigType.BROKER}/"


@dataclass(frozen=True)
class ConfigChanges:
    """The notifications read: the changed entities in notification order (each once)."""

    last_sequence_number: str
    """The newest one read (or the one given, if none was new): the next read starts after it."""
    entities: list[str] = field(default_factory=list)
    malformed: dict[str, str] = field(default_factory=dict)
    """Path → why it could not be decoded."""
    notified: list[tuple[str, str]] = field(default_factory=list)
    """Each new notification's (sequence number, entity), in order, repeats kept (Kafka processes each one)."""
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
    read = await zk.read_notifications(ConfigChangeZNode, new)
    notified = [(n, read.values[n]) for n in new if n in read.values]
    malformed = {path: error.reason for path, error in sorted(read.malformed.items())}
    return ConfigChanges(new[-1], list(dict.fromkeys(e for _, e in notified)), malformed, notified, seen)


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
