"""Reading the cluster as ``kafka-topics --zookeeper --describe/--list`` does, plus brokers and the controller.

Everything is read through `KafkaZkClient` with pipelined reads: all topic znodes, then all partition states,
configs and deletion markers, instead of Kafka's one read per topic and partition. The layout is Kafka 2.8's
``TopicCommand`` output (``TopicDescription`` / ``PartitionDescription.printDescription``), so scripts that
parse ``kafka-topics`` output parse ours.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from zkcontroller.admin.errors import AdminOperationError, UnknownTopicError
from zkcontroller.admin.java_hash_map import hash_map_order
from zkcontroller.model import NO_LEADER, TopicId, is_internal
from zkcontroller.zk import paths
from zkcontroller.zk.client_brokers import BrokerAndEpoch
from zkcontroller.zk.config_values import JAVA_TRIM
from zkcontroller.zk.java_properties import properties_order
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PartitionDescription:
    """One partition as ZooKeeper has it; ``leader`` None when there is none (-1 or no state znode)."""

    topic: str
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    marked_for_deletion: bool = False
    corrupt: str | None = None
    """``<path>: <reason>`` when the partition's state znode cannot be read (leader and ISR then unknown)."""
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    """Set while the partition is being reassigned (shown as Kafka 2.8 shows them)."""

    @property
    def is_under_replicated(self) -> bool:
        """Fewer in-sync replicas than assigned ones."""
        return len(self.replicas) - len(self.isr) > 0

    def is_unavailable(self, live_brokers: Iterable[int]) -> bool:
        """No leader, or a leader that is not a registered broker."""
        return self.leader is None or self.leader not in set(live_brokers)

    def render(self) -> str:
        leader = "unknown" if self.corrupt is not None else "none" if self.leader is None else str(self.leader)
        line = (f"\tTopic: {self.topic}\tPartition: {self.partition}\tLeader: {leader}"
                f"\tReplicas: {_ids(self.replicas)}\tIsr: {_ids(self.isr)}")
        if self.adding_replicas or self.removing_replicas:
            line += (f"\tAdding Replicas: {_ids(self.adding_replicas)}"
                     f"\tRemoving Replicas: {_ids(self.removing_replicas)}")
        line += "\tMarkedForDeletion: true" if self.marked_for_deletion else ""
        return line + (f"\tCorrupt: {self.corrupt}" if self.corrupt is not None else "")


@dataclass(frozen=True, slots=True)
class TopicDescription:
    topic: str
    topic_id: TopicId | None
    partitions: tuple[PartitionDescription, ...]
    configs: tuple[tuple[str, str], ...] = ()
    marked_for_deletion: bool = False
    configs_corrupt: str | None = None
    """``<path>: <reason>`` when ``/config/topics/<t>`` cannot be read (its overrides then unknown, not none)."""

    @property
    def partition_count(self) -> int:
        return len(self.partitions)

    @property
    def replication_factor(self) -> int:
        return len(self.partitions[0].replicas) if self.partitions else 0

    def render(self) -> str:
        line = f"Topic: {self.topic}"
        if self.topic_id is not None:
            line += f"\tTopicId: {self.topic_id}"
        line += (f"\tPartitionCount: {self.partition_count}\tReplicationFactor: {self.replication_factor}"
                 f"\tConfigs: {','.join(f'{k}={v}' for k, v in self.configs)}")
        line += "\tMarkedForDeletion: true" if self.marked_for_deletion else ""
        return line + (f"\tCorrupt: {self.configs_corrupt}" if self.configs_corrupt is not None else "")


@dataclass(frozen=True, slots=True)
class CorruptTopic:
    """A topic whose ``/brokers/topics/<t>`` cannot be read: shown, never silently dropped."""

    topic: str
    path: str
    reason: str

    def render(self) -> str:
        return f"Topic: {self.topic}\tCorrupt: {self.path}: {self.reason}"


Description = TopicDescription | CorruptTopic | None
"""What ``describe`` knows of a topic: its description, that its znode is corrupt, or (None) that it is gone."""


def count_corrupt(descriptions: dict[str, Description]) -> int:
    """Corrupt topic, topic-config and partition-state znodes: a describe that met any exits non-zero."""
    return sum(1 if isinstance(d, CorruptTopic)
               else (d.configs_corrupt is not None) + sum(p.corrupt is not None for p in d.partitions)
               for d in descriptions.values() if d is not None)


@dataclass(frozen=True, slots=True)
class DescribeFilter:
    """``--under-replicated-partitions``, ``--unavailable-partitions``, ``--topics-with-overrides``."""

    under_replicated: bool = False
    unavailable: bool = False
    topics_with_overrides: bool = False

    @property
    def describe_configs(self) -> bool:
        return not self.under_replicated and not self.unavailable

    @property
    def describe_partitions(self) -> bool:
        return not self.topics_with_overrides

    def shows_partition(self, p: PartitionDescription, live_brokers: set[int]) -> bool:
        return (self.describe_configs
                or (self.under_replicated and p.is_under_replicated)
                or (self.unavailable and p.is_unavailable(live_brokers)))


@dataclass(frozen=True, slots=True)
class ControllerStatus:
    """The active controller (None if none) and ``/controller_epoch`` with its version (None if absent)."""

    controller_id: int | None
    epoch: int | None
    epoch_zk_version: int | None

    def render(self) -> str:
        who = "none" if self.controller_id is None else str(self.controller_id)
        epoch = "none" if self.epoch is None else str(self.epoch)
        version = "none" if self.epoch_zk_version is None else str(self.epoch_zk_version)
        return f"ActiveController: {who}\tControllerEpoch: {epoch}\tEpochZkVersion: {version}"


def _ids(ids: Iterable[int]) -> str:
    return ",".join(map(str, ids))


# ------------------------------------------------------------------ topics


def include_list_regex(raw: str) -> re.Pattern[str]:
    """Kafka's ``IncludeList``: trimmed (``String.trim``: chars up to U+0020, not other Unicode spaces), commas
    mean "or", spaces and surrounding quotes are dropped, full match. A bad pattern is named as rewritten, as
    TopicFilter's message names it."""
    text = re.sub(r"[\"']+$", "", re.sub(r"^[\"']+", "", raw.strip(JAVA_TRIM).replace(",", "|").replace(" ", "")))
    try:
        return re.compile(text)
    except re.error:
        raise AdminOperationError(f"{text} is an invalid regex.") from None


async def select_topics(zk: KafkaZkClient, include: str | None = None, *, exclude_internal: bool = False,
                        must_exist: bool = True) -> list[str]:
    """Sorted topic names matching ``include`` (a regex, as ``--topic`` takes); if a pattern was given,
    matched nothing and ``must_exist``: Kafka's "does not exist as expected" error."""
    topics = sorted(await zk.get_all_topics_in_cluster())
    if include is not None:
        pattern = include_list_regex(include)
        topics = [t for t in topics if pattern.fullmatch(t)]
        if must_exist and not topics:
            raise UnknownTopicError(f"Topic '{include}' does not exist as expected")
    return [t for t in topics if not (exclude_internal and is_internal(t))]


async def describe_topics(zk: KafkaZkClient, topics: Sequence[str]) -> dict[str, Description]:
    """Each topic's description (pipelined reads): corrupt topic, topic-config and partition-state znodes are
    described as such, with their path and the reason; None for a topic whose znode is gone.

    Kafka 2.8.2's ``--describe`` stops at the first topic whose znode throws (wrong shape, no data; data that is
    not JSON reads as no partitions and then fails on ``assignment.head``) or whose partition state throws, and
    reads a config znode that is not JSON as no overrides; every topic is described here, the corrupt znodes
    where they belong, and the command exits non-zero (`count_corrupt`)."""
    assignments = await zk.get_topic_assignments(topics)
    partitions = [tp for a in assignments.values.values() for tp in a.assignment]
    states = await zk.get_topic_partition_states(partitions)
    configs = await zk.get_topic_configs(assignments.values)
    deleting = await zk.get_topic_deletions()
    out: dict[str, Description] = {}
    for topic in topics:
        error = assignments.malformed.get(paths.topic_path(topic))
        if error is not None:
            out[topic] = CorruptTopic(topic, error.path, error.reason)
            continue
        found = assignments.values.get(topic)
        if found is None or not found.assignment:
            out[topic] = None
            continue
        marked = topic in deleting
        parts = []
        for tp in sorted(found.assignment, key=lambda tp: tp.partition):
            state = states.values.get(tp)
            bad = states.malformed.get(paths.partition_state_path(tp.topic, tp.partition))
            leader = None if state is None or state.leader_and_isr.leader == NO_LEADER else state.leader_and_isr.leader
            isr = () if state is None else state.leader_and_isr.isr
            a = found.assignment[tp]
            parts.append(PartitionDescription(topic, tp.partition, leader, a.replicas, isr, marked,
                                              None if bad is None else f"{bad.path}: {bad.reason}",
                                              a.adding_replicas, a.removing_replicas))
        bad_configs = configs.malformed.get(paths.topic_config_path(topic))
        stored = configs.values.get(topic, {})
        # TopicCommand: the Properties' order, then the admin client Config's HashMap keyed by name
        overrides = tuple((k, stored[k]) for k in hash_map_order(properties_order(stored)))
        out[topic] = TopicDescription(topic, found.topic_id, tuple(parts), overrides, marked,
                                      None if bad_configs is None else f"{bad_configs.path}: {bad_configs.reason}")
    return out


def describe_lines(
    descriptions: dict[str, Description], live_brokers: Iterable[int], filt: DescribeFilter | None = None
) -> list[str]:
    """The ``--describe`` output lines, filters applied as ``TopicCommand.DescribeOptions`` does."""
    filt = filt or DescribeFilter()
    live = set(live_brokers)
    lines: list[str] = []
    for topic, desc in descriptions.items():
        if desc is None:
            lines.append(f"Topic {topic} doesn't exist!")
            continue
        if isinstance(desc, CorruptTopic):
            lines.append(desc.render())
            continue
        if filt.describe_configs and (not filt.topics_with_overrides or desc.configs or desc.configs_corrupt):
            lines.append(desc.render())
        if filt.describe_partitions:
            lines.extend(p.render() for p in desc.partitions if filt.shows_partition(p, live))
    return lines


async def list_topic_lines(zk: KafkaZkClient, include: str | None = None, *, exclude_internal: bool = False
                           ) -> list[str]:
    """``--list``: one topic per line, ``<t> - marked for deletion`` for those queued for deletion.

    Exactly Kafka 2.8's ``ZookeeperTopicService.listTopics``: the children of ``/brokers/topics`` and of
    ``/admin/delete_topics``, never a topic znode's data. Scripts parse this list, so a topic whose znode is
    corrupt is listed plainly, as Kafka lists it; ``describe`` is the command that reads and flags it."""
    topics = await select_topics(zk, include, exclude_internal=exclude_internal, must_exist=False)
    deleting = await zk.get_topic_deletions()
    return [f"{t} - marked for deletion" if t in deleting else t for t in topics]


# ------------------------------------------------------------------ brokers and controller


async def live_brokers(zk: KafkaZkClient) -> list[BrokerAndEpoch]:
    """Registered brokers by id, with their epochs (malformed registrations logged and skipped)."""
    brokers, corrupt = await registered_brokers(zk)
    for line in corrupt.values():
        log.warning("Ignoring malformed broker registration: %s", line)
    return brokers


async def registered_brokers(zk: KafkaZkClient) -> tuple[list[BrokerAndEpoch], dict[int, str]]:
    """Registered brokers by id, with their epochs, and by id a ``Broker: <id>\tCorrupt: <path>: <reason>`` line
    for each registration that cannot be read."""
    read = await zk.get_all_brokers_and_epochs()
    corrupt = {int(path.rsplit("/", 1)[-1]): f"Broker: {path.rsplit('/', 1)[-1]}\tCorrupt: {path}: {error.reason}"
               for path, error in read.malformed.items()}
    return [read.values[i] for i in sorted(read.values)], dict(sorted(corrupt.items()))


def broker_line(b: BrokerAndEpoch) -> str:
    endpoints = ",".join(e.connection_string for e in b.broker.endpoints)
    rack = b.broker.rack if b.broker.rack is not None else "none"
    return f"Broker: {b.broker.id}\tEpoch: {b.epoch}\tRack: {rack}\tEndpoints: {endpoints}"


async def controller_status(zk: KafkaZkClient) -> ControllerStatus:
    """``/controller`` and ``/controller_epoch`` (with its version, the current fencing token)."""
    controller_id = await zk.get_controller_id()
    epoch = await zk.get_controller_epoch()
    return ControllerStatus(controller_id, None if epoch is None else epoch[0],
                            None if epoch is None else epoch[1].version)


__all__ = [
    "ControllerStatus",
    "CorruptTopic",
    "DescribeFilter",
    "PartitionDescription",
    "TopicDescription",
    "broker_line",
    "controller_status",
    "count_corrupt",
    "describe_lines",
    "describe_topics",
    "include_list_regex",
    "list_topic_lines",
    "live_brokers",
    "registered_brokers",
    "select_topics",
]
