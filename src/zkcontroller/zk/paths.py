"""Kafka 2.8's znode paths: builders, parsers, and the persistent paths every broker creates.

Names follow Kafka's ``ZkData`` objects so a reader can map ``TOPICS`` to ``TopicsZNode.path``.
"""

from __future__ import annotations

from zkcontroller.zk.errors import ZnodeDecodeError

CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"

BROKERS = "/brokers"
BROKER_IDS = "/brokers/ids"
TOPICS = "/brokers/topics"
BROKER_SEQUENCE_ID = "/brokers/seqid"

ADMIN = "/admin"
DELETE_TOPICS = "/admin/delete_topics"
REASSIGN_PARTITIONS = "/admin/reassign_partitions"
PREFERRED_REPLICA_ELECTION = "/admin/preferred_replica_election"

ISR_CHANGE_NOTIFICATION = "/isr_change_notification"
ISR_CHANGE_PREFIX = "isr_change_"
LOG_DIR_EVENT_NOTIFICATION = "/log_dir_event_notification"
LOG_DIR_EVENT_PREFIX = "log_dir_event_"

CONFIG = "/config"
CONFIG_CHANGES = "/config/changes"
CONFIG_CHANGE_PREFIX = "config_change_"

CLUSTER = "/cluster"
CLUSTER_ID = "/cluster/id"
FEATURE = "/feature"
CONSUMERS = "/consumers"
LATEST_PRODUCER_ID_BLOCK = "/latest_producer_id_block"


class ConfigType:
    """Kafka's ``ConfigType`` entity types (``/config/<type>/<name>``)."""

    TOPIC = "topics"
    CLIENT = "clients"
    USER = "users"
    BROKER = "brokers"
    IP = "ips"
    ALL = (TOPIC, CLIENT, USER, BROKER, IP)


DEFAULT_ENTITY = "<default>"
"""Kafka's ``ConfigEntityName.Default``: ``/config/brokers/<default>`` holds the cluster-wide dynamic broker
configs that each broker's ``/config/brokers/<id>`` overrides."""


PERSISTENT_PATHS: tuple[str, ...] = (
    CONSUMERS,
    BROKER_IDS,
    TOPICS,
    CONFIG_CHANGES,
    DELETE_TOPICS,
    BROKER_SEQUENCE_ID,
    ISR_CHANGE_NOTIFICATION,
    LATEST_PRODUCER_ID_BLOCK,
    LOG_DIR_EVENT_NOTIFICATION,
    *(f"{CONFIG}/{t}" for t in ConfigType.ALL),
)
"""Kafka's ``ZkData.PersistentZkPaths``: created at every broker's startup (``createTopLevelPaths``)."""


def broker_id_path(broker_id: int) -> str:
    return f"{BROKER_IDS}/{broker_id}"


def topic_path(topic: str) -> str:
    return f"{TOPICS}/{topic}"


def topic_partitions_path(topic: str) -> str:
    return f"{TOPICS}/{topic}/partitions"


def topic_partition_path(topic: str, partition: int) -> str:
    return f"{TOPICS}/{topic}/partitions/{partition}"


def partition_state_path(topic: str, partition: int) -> str:
    return f"{TOPICS}/{topic}/partitions/{partition}/state"


def delete_topic_path(topic: str) -> str:
    return f"{DELETE_TOPICS}/{topic}"


def config_entity_type_path(entity_type: str) -> str:
    return f"{CONFIG}/{entity_type}"


def config_entity_path(entity_type: str, entity_name: str) -> str:
    return f"{CONFIG}/{entity_type}/{entity_name}"


def topic_config_path(topic: str) -> str:
    return config_entity_path(ConfigType.TOPIC, topic)


def isr_change_path(sequence_number: str = "") -> str:
    """The full path of one notification; with no number, the prefix to create a sequential node at."""
    return f"{ISR_CHANGE_NOTIFICATION}/{ISR_CHANGE_PREFIX}{sequence_number}"


def log_dir_event_path(sequence_number: str = "") -> str:
    return f"{LOG_DIR_EVENT_NOTIFICATION}/{LOG_DIR_EVENT_PREFIX}{sequence_number}"


def broker_config_path(entity_name: str) -> str:
    """``/config/brokers/<id>`` or ``/config/brokers/<default>``."""
    return config_entity_path(ConfigType.BROKER, entity_name)


def config_change_path(sequence_number: str = "") -> str:
    return f"{CONFIG_CHANGES}/{CONFIG_CHANGE_PREFIX}{sequence_number}"


def sequence_number(name_or_path: str, prefix: str) -> str:
    """The 10-digit counter of a sequential node (Kafka's ``sequenceNumber``: text after the last prefix)."""
    idx = name_or_path.rfind(prefix)
    if idx < 0:
        raise ZnodeDecodeError(name_or_path, f"not a sequential node named {prefix}<N>")
    return name_or_path[idx + len(prefix):]


def parse_broker_id(child_name: str, parent: str = BROKER_IDS) -> int:
    """A child of ``/brokers/ids`` as a broker id; anything else is not a broker registration."""
    body = child_name[1:] if child_name.startswith("-") else child_name
    if not body.isascii() or not body.isdigit():
        raise ZnodeDecodeError(f"{parent}/{child_name}", "child name is not a broker id")
    return int(child_name)
