"""A broker's metadata cache, fed only by the controller's UpdateMetadata requests (Kafka's ``ZkMetadataCache``).

It is what a broker answers Metadata requests from: live brokers with their endpoints and racks, every
partition's leader, replicas, ISR and offline replicas, topic ids, and the active controller. Updates are
partial for partitions (only the partitions named change; leader -2 deletes one) and total for brokers and
the controller id, as in Kafka. Each update swaps in a new immutable snapshot, so a reader never sees half an
update.

The epoch checks in front of the cache (which requests may update it) live in `control_plane`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from zkcontroller.model import NO_LEADER, ZERO_TOPIC_ID, Broker, EndPoint, TopicId, TopicPartition, is_internal
from zkcontroller.protocol.control_requests import (
    LEADER_DURING_DELETE,
    Errors,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)
from zkcontroller.zk.topic_names import topic_name_problem

STATE_CHANGE_LOGGER = "state.change.logger"
REPLICA_NOT_AVAILABLE = 9


def is_valid_topic_name(topic: str) -> bool:
    """Whether Kafka's ``Topic.validate`` accepts ``topic``."""
    return topic_name_problem(topic) is None


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """One partition as a Metadata response gives it (``MetadataResponsePartition``).

    ``leader`` is -1 and ``error`` LEADER_NOT_AVAILABLE when the leader is not a live broker with an
    endpoint on the asked listener (Kafka answers LISTENER_NOT_FOUND for the latter from v6; that code is
    not in `Errors`). Replicas and ISR are filtered by liveness for v0 only, as Kafka does: there a live
    leader with a replica or ISR member left out answers REPLICA_NOT_AVAILABLE.
    """

    partition: int
    error: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    topic: str
    error: int
    """An `Errors` code, or one the control plane has no name for (INVALID_REPLICATION_FACTOR from auto-creation)."""
    topic_id: TopicId | None
    is_internal: bool
    partitions: tuple[PartitionMetadata, ...] = ()


@dataclass(frozen=True, slots=True)
class MetadataSnapshot:
    """Everything the cache knows at one instant; replaced whole on every update."""

    partition_states: Mapping[str, Mapping[int, UpdateMetadataPartitionState]] = field(
        default_factory=lambda: MappingProxyType({}))
    topic_ids: Mapping[str, TopicId] = field(default_factory=lambda: MappingProxyType({}))
    controller_id: int | None = None
    alive_brokers: Mapping[int, Broker] = field(default_factory=lambda: MappingProxyType({}))


class MetadataCache:
    """One broker's cache; `update_metadata` is called for accepted UpdateMetadata requests only."""

    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self._snapshot = MetadataSnapshot()
        self._log = logging.getLogger(STATE_CHANGE_LOGGER)
        self._listeners: list[Callable[[], None]] = []

    def on_update(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` after every update (what Kafka's topic purgatory is checked on, so a DeleteTopics
        waits on the cache rather than polling it); returns the function that unregisters it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _updated(self) -> None:
        for listener in list(self._listeners):
            listener()

    @property
    def snapshot(self) -> MetadataSnapshot:
        return self._snapshot

    # ------------------------------------------------------------------ updates

    def update_metadata(self, correlation_id: int, request: UpdateMetadataRequest) -> list[TopicPartition]:
        """Apply one UpdateMetadata; returns the partitions it deleted (those advertised with leader -2)."""
        old = self._snapshot
        brokers = {b.id: b for b in request.live_brokers}
        controller_id = request.controller_id if request.controller_id >= 0 else None
        topic_ids = dict(old.topic_ids)
        for topic, topic_id in request.topic_ids:
            # Kafka's ZkMetadataCache filters out zero ids before ``topicIds ++= newTopicIds``: a zero or absent id
            # never removes a cached one (ids only go with a topic's last partition, below).
            if topic_id is not None and topic_id != ZERO_TOPIC_ID:
                topic_ids[topic] = topic_id
        if not request.partition_states:
            self._snapshot = MetadataSnapshot(old.partition_states, MappingProxyType(topic_ids), controller_id,
                                              MappingProxyType(brokers))
            self._updated()
            return []
        # Copy-on-write per topic: only the topics this request touches are copied (copying the whole cache
        # made a stream of one-partition requests, as reassignment sends, quadratic in the partitions cached).
        touched: dict[str, dict[int, UpdateMetadataPartitionState]] = {}
        deleted: list[TopicPartition] = []
        for state in request.partition_states:
            parts = touched.get(state.topic)
            if parts is None:
                parts = touched[state.topic] = dict(old.partition_states.get(state.topic, {}))
            if state.leader == LEADER_DURING_DELETE:
                parts.pop(state.partition, None)  # Kafka's removePartitionInfo
                deleted.append(state.topic_partition)
            else:
                parts[state.partition] = state
        self._info(f"Add {len(request.partition_states) - len(deleted)} partitions and deleted {len(deleted)} "
                   f"partitions from metadata cache in response to UpdateMetadata request sent by controller "
                   f"{request.controller_id} epoch {request.controller_epoch} with correlation id {correlation_id}")
        frozen = dict(old.partition_states)
        for topic, parts in touched.items():
            if parts:
                frozen[topic] = MappingProxyType(parts)
            elif topic in frozen:  # the topic (and its id) goes with its last partition
                del frozen[topic]
                topic_ids.pop(topic, None)
        self._snapshot = MetadataSnapshot(MappingProxyType(frozen), MappingProxyType(topic_ids), controller_id,
                                          MappingProxyType(brokers))
        self._updated()
        return deleted

    def _info(self, message: str) -> None:
        self._log.info("[Broker id=%d] %s", self.broker_id, message)

    # ------------------------------------------------------------------ brokers and controller

    @property
    def controller_id(self) -> int | None:
        return self._snapshot.controller_id

    def alive_brokers(self) -> list[Broker]:
        return [self._snapshot.alive_brokers[i] for i in sorted(self._snapshot.alive_brokers)]

    def alive_broker(self, broker_id: int) -> Broker | None:
        return self._snapshot.alive_brokers.get(broker_id)

    def has_alive_broker(self, broker_id: int) -> bool:
        return broker_id in self._snapshot.alive_brokers

    def alive_endpoint(self, broker_id: int, listener_name: str) -> EndPoint | None:
        broker = self._snapshot.alive_brokers.get(broker_id)
        return None if broker is None else broker.endpoint(listener_name)

    def alive_endpoints(self, listener_name: str) -> list[EndPoint]:
        """The endpoints on ``listener_name`` of every live broker that has one, by broker id."""
        found = (self.alive_endpoint(i, listener_name) for i in sorted(self._snapshot.alive_brokers))
        return [e for e in found if e is not None]

    # ------------------------------------------------------------------ topics and partitions

    def all_topics(self) -> set[str]:
        return set(self._snapshot.partition_states)

    def contains_topic(self, topic: str) -> bool:
        return topic in self._snapshot.partition_states

    def contains(self, tp: TopicPartition) -> bool:
        return self.partition_info(tp) is not None

    def topic_id(self, topic: str) -> TopicId | None:
        return self._snapshot.topic_ids.get(topic)

    def partition_info(self, tp: TopicPartition) -> UpdateMetadataPartitionState | None:
        return self._snapshot.partition_states.get(tp.topic, {}).get(tp.partition)

    def partitions_of(self, topic: str) -> list[UpdateMetadataPartitionState]:
        parts = self._snapshot.partition_states.get(topic, {})
        return [parts[p] for p in sorted(parts)]

    def leader_endpoint(self, tp: TopicPartition, listener_name: str) -> EndPoint | None:
        """Where clients should produce to ``tp`` on ``listener_name``; None if no live leader."""
        state = self.partition_info(tp)
        return None if state is None else self.alive_endpoint(state.leader, listener_name)

    def topic_metadata(self, topics: Iterable[str] | None, listener_name: str,
                       error_unavailable_endpoints: bool = False) -> list[TopicMetadata]:
        """The topic part of a Metadata response; all cached topics when ``topics`` is None.
        ``error_unavailable_endpoints`` (Metadata v0): replicas and ISR keep only live brokers with an endpoint
        on the listener, and a partition with a live leader that lost some answers REPLICA_NOT_AVAILABLE.

        An unknown topic gets UNKNOWN_TOPIC_OR_PARTITION, or INVALID_TOPIC_EXCEPTION when its name breaks
        ``Topic.validate`` (``KafkaApis.getTopicMetadata`` without auto-creation).
        """
        names = sorted(self._snapshot.partition_states) if topics is None else list(topics)
        out = []
        for topic in names:
            parts = self._snapshot.partition_states.get(topic)
            if parts is None:
                error = Errors.UNKNOWN_TOPIC_OR_PARTITION if is_valid_topic_name(topic) \
                    else Errors.INVALID_TOPIC_EXCEPTION
                out.append(TopicMetadata(topic, error, None, is_internal(topic)))
                continue
            metadata = tuple(self._partition_metadata(parts[p], listener_name, error_unavailable_endpoints)
                             for p in sorted(parts))
            out.append(TopicMetadata(topic, Errors.NONE, self.topic_id(topic), is_internal(topic), metadata))
        return out

    def _partition_metadata(self, state: UpdateMetadataPartitionState, listener_name: str,
                            error_unavailable_endpoints: bool = False) -> PartitionMetadata:
        """``ZkMetadataCache.getPartitionMetadata`` with ``maybeFilterAliveReplicas``."""
        leader_alive = self.alive_endpoint(state.leader, listener_name) is not None
        replicas, isr = state.replicas, state.isr
        error: int = Errors.NONE if leader_alive else Errors.LEADER_NOT_AVAILABLE
        if error_unavailable_endpoints:
            replicas = tuple(b for b in state.replicas if self.alive_endpoint(b, listener_name) is not None)
            isr = tuple(b for b in state.isr if self.alive_endpoint(b, listener_name) is not None)
            if leader_alive and (len(replicas) < len(state.replicas) or len(isr) < len(state.isr)):
                error = REPLICA_NOT_AVAILABLE
        return PartitionMetadata(
            partition=state.partition,
            error=error,
            leader=state.leader if leader_alive else NO_LEADER,
            leader_epoch=state.leader_epoch,
            replicas=replicas,
            isr=isr,
            offline_replicas=state.offline_replicas,
        )
