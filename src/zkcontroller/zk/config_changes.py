"""Reading ``/config/changes/config_change_<n>`` notifications, for whoever listens to them: every broker's
config manager (topic configs, `broker.topic_config_manager`) and the controller (unclean leader election).

Kafka's ``ZkNodeChangeNotificationListener``: the children of ``/config/changes`` with a sequence number above
the last one processed, each decoded to the entity it names (``topics/<t>``, ``brokers/<id>``...); a malformed
notification is reported by path and skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zkcontroller.coordination.api import Watcher
from zkcontroller.coordination.errors import NoNodeError
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes.config import ConfigEntityChangeNotificationSequenceZNode as ConfigChangeZNode

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
        sequence_numbers = await zk.get_notification_sequence_numbers(ConfigChangeZNode, watch)
    except NoNodeError:
        return ConfigChanges(after)
    new = sorted(n for n in sequence_numbers if n > after)
    if not new:
        return ConfigChanges(after)
    read = await zk.read_notifications(ConfigChangeZNode, new)
    entities = [read.values[n] for n in new if n in read.values]
    malformed = {path: error.reason for path, error in sorted(read.malformed.items())}
    return ConfigChanges(new[-1], list(dict.fromkeys(entities)), malformed)
