"""`ControllerContext`: the active controller's cache of ZooKeeper plus the state machines' states (spec §4).

Everything the controller decides is decided over this object, on the event loop, one event at a time.
Two gauges are kept incrementally, exactly as Kafka keeps them, because recomputing them over every
partition on each change would cost O(partitions) per transition:

* ``offline_partition_count``: +1 entering OfflinePartition, −1 leaving it, ignoring topics whose deletion
  has started (their partitions are moved to NonExistentPartition before deletion begins, §9.6).
* ``preferred_replica_imbalance_count`` (`imbalance.py`): topics queued for deletion contribute nothing (§4.4).

Parameterless Kafka ``def``s (``liveBrokerIds``, ``allPartitions`` ...) are properties; lookups that Kafka
does with ``map(key)`` raise `KeyError` for a missing key, as Kafka's ``NoSuchElementException``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, KeysView, Mapping
from operator import itemgetter
from types import MappingProxyType

from zkcontroller.controller.assignment import EMPTY_ASSIGNMENT
from zkcontroller.controller.errors import IllegalControllerStateError
from zkcontroller.controller.fencing_token import NOT_CONTROLLER, FencingToken
from zkcontroller.controller.imbalance import PreferredReplicaImbalance
from zkcontroller.controller.leadership import EPOCH_DURING_DELETE, NO_EPOCH, ControllerStats
from zkcontroller.controller.states import (
    PartitionAndReplica,
    PartitionState,
    ReplicaState,
)
from zkcontroller.model import (
    Broker,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicId,
    TopicPartition,
)

_first = itemgetter(0)

_NO_PARTITIONS: Mapping[int, ReplicaAssignment] = MappingProxyType({})
_NO_KEYS: Mapping[int, TopicPartition] = MappingProxyType({})
"""A topic without assignments, in per-partition lookups (no empty dict built per lookup)."""


class ControllerContext:
    """The fields and helpers of Kafka's ``ControllerContext`` in snake_case (spec §4.1–§4.4)."""

    def __init__(self) -> None:
        self.stats = ControllerStats()
        self.offline_partition_count = 0
        self._imbalance = PreferredReplicaImbalance()
        self.shutting_down_broker_ids: set[int] = set()
        self._live_brokers: dict[int, Broker] = {}
        self._live_broker_epochs: dict[int, int] = {}
        self.fencing: FencingToken = NOT_CONTROLLER
        self.all_topics: set[str] = set()
        self.topic_ids: dict[str, TopicId] = {}
        self.topic_names: dict[TopicId, str] = {}
        self.partition_assignments: dict[str, dict[int, ReplicaAssignment]] = {}
        self._partition_leadership_info: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        self.partition_leadership_info: Callable[[TopicPartition], LeaderIsrAndControllerEpoch | None] = (
            self._partition_leadership_info.get)
        """The partition's cached leadership, or None. The dict's own bound ``get`` (C) rather than a method that
        calls it: the state machines ask it about 100,000 times in a broker failure. Never stale: the dict is
        only ever cleared, never replaced."""
        self.partitions_being_reassigned: set[TopicPartition] = set()
        self.partition_states: dict[TopicPartition, PartitionState] = {}
        self._partition_keys: dict[str, dict[int, TopicPartition]] = {}
        """Per topic and partition number, the `TopicPartition` the partition's state was first stored under: the
        key object of `partition_states`, which the leadership and replica-state dicts' loaders share.
        `replicas_on_brokers` hands these out rather than new equal ones: a dict finds an identical key without
        reading the stored one (a broker failure looks each of its 20,000 replicas' partitions up several times,
        each equal-but-new key costing a read of the stored key's memory). Only ever an equal value, so never wrong
        when stale; cleared with the topic."""
        self.replica_states: dict[PartitionAndReplica, ReplicaState] = {}
        self.replicas_on_offline_dirs: dict[int, set[TopicPartition]] = {}
        self.topics_to_be_deleted: set[str] = set()
        self.topics_with_deletion_started: set[str] = set()
        self.topics_ineligible_for_deletion: set[str] = set()

    @property
    def epoch(self) -> int:
        """The controller epoch of this tenure (0 when not controller)."""
        return self.fencing.epoch

    @property
    def epoch_zk_version(self) -> int:
        return self.fencing.epoch_zk_version

    # ------------------------------------------------------------------ reset

    def reset_context(self) -> None:
        """§4.3: forget everything learnt as controller (on resignation); ``stats`` survive."""
        self.topics_to_be_deleted.clear()
        self.topics_with_deletion_started.clear()
        self.topics_ineligible_for_deletion.clear()
        self.shutting_down_broker_ids.clear()
        self.fencing = NOT_CONTROLLER
        self.all_topics.clear()
        self.topic_ids.clear()
        self.topic_names.clear()
        self.partition_assignments.clear()
        self._partition_leadership_info.clear()
        self.partitions_being_reassigned.clear()
        self.replicas_on_offline_dirs.clear()
        self.partition_states.clear()
        self._partition_keys.clear()
        self.offline_partition_count = 0
        self._imbalance = PreferredReplicaImbalance()
        self.replica_states.clear()
        self._live_brokers.clear()
        self._live_broker_epochs.clear()

    # ------------------------------------------------------------------ topics and assignments

    def add_topic_id(self, topic: str, topic_id: TopicId) -> None:
        """Record both directions; a topic we do not know or a conflicting mapping is a bug upstream."""
        if topic not in self.all_topics:
            raise IllegalControllerStateError(f"topic {topic} is not contained in all topics.")
        existing_id = self.topic_ids.get(topic)
        if existing_id is not None and existing_id != topic_id:
            raise IllegalControllerStateError(
                f"topic ID map already contained ID for topic {topic} and new ID {topic_id} did not match "
                f"existing ID {existing_id}")
        existing_name = self.topic_names.get(topic_id)
        if existing_name is not None and existing_name != topic:
            raise IllegalControllerStateError(
                f"topic name map already contained ID {topic_id} and new name {topic} did not match existing "
                f"name {existing_name}")
        self.topic_ids[topic] = topic_id
        self.topic_names[topic_id] = topic

    def topic_name(self, topic_id: TopicId) -> str | None:
        return self.topic_names.get(topic_id)

    def set_all_topics(self, topics: Iterable[str]) -> None:
        self.all_topics = set(topics)

    def partition_replica_assignment(self, tp: TopicPartition) -> tuple[int, ...]:
        """RS of the partition, or empty."""
        return self.partition_assignments.get(tp.topic, {}).get(tp.partition, EMPTY_ASSIGNMENT).replicas

    def partition_full_replica_assignment(self, tp: TopicPartition) -> ReplicaAssignment:
        return self.partition_assignments.get(tp.topic, {}).get(tp.partition, EMPTY_ASSIGNMENT)

    def update_partition_full_replica_assignment(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        previous = self.partition_assignments.setdefault(tp.topic, {}).get(tp.partition)
        self.partition_assignments[tp.topic][tp.partition] = assignment
        leadership = self._partition_leadership_info.get(tp)
        self._update_imbalance(tp, previous, leadership, assignment, leadership)

    def partition_replica_assignment_for_topic(self, topic: str) -> dict[TopicPartition, tuple[int, ...]]:
        return {TopicPartition(topic, p): a.replicas for p, a in self.partition_assignments.get(topic, {}).items()}

    def partition_full_replica_assignment_for_topic(self, topic: str) -> dict[TopicPartition, ReplicaAssignment]:
        return {TopicPartition(topic, p): a for p, a in self.partition_assignments.get(topic, {}).items()}

    @property
    def all_partitions(self) -> set[TopicPartition]:
        return {TopicPartition(t, p) for t, parts in self.partition_assignments.items() for p in parts}

    def has_partition(self, tp: TopicPartition) -> bool:
        """Membership without building ``all_partitions`` (a set of every partition) per call."""
        return tp.partition in self.partition_assignments.get(tp.topic, ())

    def partitions_for_topic(self, topic: str) -> set[TopicPartition]:
        return {TopicPartition(topic, p) for p in self.partition_assignments.get(topic, {})}

    def partitions_on_broker(self, broker_id: int) -> set[TopicPartition]:
        return {TopicPartition(t, p) for t, parts in self.partition_assignments.items()
                for p, a in parts.items() if broker_id in a.replicas}

    def replicas_on_brokers(self, broker_ids: Iterable[int]) -> list[PartitionAndReplica]:
        """The replicas on these brokers, in sorted order (topic, partition, broker).

        Generated in that order (topics sorted, each topic's partitions sorted: usually already) rather than
        collected into a set and sorted, which compared ~300,000 pairs of nested tuples in a broker failure."""
        ids = sorted(set(broker_ids))
        assignments = self.partition_assignments
        new_tuple = tuple.__new__  # both NamedTuples built in C (their `__new__` is a Python frame)
        out: list[PartitionAndReplica] = []
        for t in sorted(assignments):
            # (partition, assignment) pairs in partition order: no lookup of each assignment by its partition
            parts = sorted(assignments[t].items(), key=_first)
            key_of = self._partition_keys.get(t, _NO_KEYS).get  # the partitions' own keys (`_partition_keys`)
            if len(ids) == 1:  # a broker failure or start-up: one containment test in C per partition
                broker = ids[0]
                out += [new_tuple(PartitionAndReplica, (key_of(p) or new_tuple(TopicPartition, (t, p)), broker))
                        for p, a in parts if broker in a.replicas]
            else:
                out += [new_tuple(PartitionAndReplica, (key_of(p) or new_tuple(TopicPartition, (t, p)), r))
                        for p, a in parts for r in ids if r in a.replicas]
        return out

    def replicas_for_topic(self, topic: str) -> set[PartitionAndReplica]:
        return {PartitionAndReplica(TopicPartition(topic, p), r)
                for p, a in self.partition_assignments.get(topic, {}).items() for r in a.replicas}

    @property
    def online_and_offline_replicas(self) -> tuple[set[PartitionAndReplica], set[PartitionAndReplica]]:
        online: set[PartitionAndReplica] = set()
        offline: set[PartitionAndReplica] = set()
        for t, parts in self.partition_assignments.items():
            for p, a in parts.items():
                tp = TopicPartition(t, p)
                for r in a.replicas:
                    (online if self.is_replica_online(r, tp) else offline).add(PartitionAndReplica(tp, r))
        return online, offline

    def remove_topic(self, topic: str) -> None:
        """Forget a deleted topic (FSM states stay: the state machines removed them already)."""
        if topic not in self.topics_to_be_deleted:
            self._clean_imbalance(topic)
        self.topics_to_be_deleted.discard(topic)
        self.topics_with_deletion_started.discard(topic)
        self.all_topics.discard(topic)
        topic_id = self.topic_ids.pop(topic, None)
        if topic_id is not None:
            self.topic_names.pop(topic_id, None)
        self._partition_keys.pop(topic, None)
        for p in self.partition_assignments.pop(topic, {}):
            self._partition_leadership_info.pop(TopicPartition(topic, p), None)

    # ------------------------------------------------------------------ brokers

    def set_live_brokers(self, broker_and_epochs: Mapping[Broker, int]) -> None:
        self._live_brokers.clear()
        self._live_broker_epochs.clear()
        self.add_live_brokers(broker_and_epochs)

    def add_live_brokers(self, broker_and_epochs: Mapping[Broker, int]) -> None:
        for broker, epoch in broker_and_epochs.items():
            self._live_brokers[broker.id] = broker
            self._live_broker_epochs[broker.id] = epoch

    def remove_live_brokers(self, broker_ids: Iterable[int]) -> None:
        for broker_id in broker_ids:
            self._live_brokers.pop(broker_id, None)
            self._live_broker_epochs.pop(broker_id, None)

    def update_broker_metadata(self, old: Broker, new: Broker) -> None:
        if self._live_brokers.get(old.id) == old:
            del self._live_brokers[old.id]
        self._live_brokers[new.id] = new

    @property
    def live_broker_ids(self) -> set[int]:
        """Registered and not shutting down."""
        return set(self._live_broker_epochs) - self.shutting_down_broker_ids

    @property
    def live_or_shutting_down_broker_ids(self) -> set[int]:
        return set(self._live_broker_epochs)

    def live_or_shutting_down_broker_id_view(self) -> KeysView[int]:
        """The same ids as a live view, not a copy: for per-partition tests (``issuperset``, ``in``)."""
        return self._live_broker_epochs.keys()

    @property
    def live_or_shutting_down_brokers(self) -> list[Broker]:
        """Broker metadata, sorted by id."""
        return [self._live_brokers[b] for b in sorted(self._live_brokers)]

    @property
    def live_broker_id_and_epochs(self) -> Mapping[int, int]:
        return MappingProxyType(self._live_broker_epochs)

    def live_or_shutting_down_broker(self, broker_id: int) -> Broker | None:
        return self._live_brokers.get(broker_id)

    def is_replica_online(self, broker_id: int, tp: TopicPartition, include_shutting_down_brokers: bool = False
                          ) -> bool:
        """§0.1: the broker is live (or shutting down, if asked) and the replica is not on a failed log dir."""
        if include_shutting_down_brokers:
            broker_online = broker_id in self._live_broker_epochs
        else:
            broker_online = broker_id in self._live_broker_epochs and broker_id not in self.shutting_down_broker_ids
        return broker_online and tp not in self.replicas_on_offline_dirs.get(broker_id, ())

    def online_replicas(self, tp: TopicPartition, candidates: Iterable[int], include_shutting_down_brokers: bool = False
                        ) -> frozenset[int]:
        """The candidates for which ``is_replica_online(r, tp, include_shutting_down_brokers)`` holds, tested
        inline (every election asks this of each partition's replicas and ISR)."""
        live = self._live_broker_epochs
        shutting_down = () if include_shutting_down_brokers else self.shutting_down_broker_ids
        offline_dirs = self.replicas_on_offline_dirs
        if not offline_dirs:
            return frozenset(r for r in candidates if r in live and r not in shutting_down)
        return frozenset(r for r in candidates if r in live and r not in shutting_down
                         and tp not in offline_dirs.get(r, ()))

    def replica_online_brokers(self, include_shutting_down_brokers: bool = False) -> frozenset[int] | None:
        """While no log dir has failed a replica is online exactly when its broker is: those brokers, so that a
        step over thousands of partitions tests one set. None once a log dir has failed: ask
        `online_replicas` per partition."""
        if self.replicas_on_offline_dirs:
            return None
        live = self._live_broker_epochs.keys()
        return frozenset(live if include_shutting_down_brokers else live - self.shutting_down_broker_ids)

    # ------------------------------------------------------------------ deletion bookkeeping

    def queue_topic_deletion(self, topics: Iterable[str]) -> None:
        """Queued topics leave the imbalance gauge; only newly queued ones are subtracted (idempotent)."""
        newly = sorted(set(topics) - self.topics_to_be_deleted)
        self.topics_to_be_deleted.update(newly)
        for topic in newly:
            self._clean_imbalance(topic)

    def begin_topic_deletion(self, topics: Iterable[str]) -> None:
        self.topics_with_deletion_started.update(topics)

    def is_topic_deletion_in_progress(self, topic: str) -> bool:
        return topic in self.topics_with_deletion_started

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        return topic in self.topics_to_be_deleted

    # ------------------------------------------------------------------ replica states

    def replicas_in_state(self, topic: str, state: ReplicaState) -> set[PartitionAndReplica]:
        return {r for r in self.replicas_for_topic(topic) if self.replica_states[r] == state}

    def are_all_replicas_in_state(self, topic: str, state: ReplicaState) -> bool:
        return all(self.replica_states[r] == state for r in self.replicas_for_topic(topic))

    def is_any_replica_in_state(self, topic: str, state: ReplicaState) -> bool:
        return any(self.replica_states[r] == state for r in self.replicas_for_topic(topic))

    def put_replica_state(self, replica: PartitionAndReplica, state: ReplicaState) -> None:
        self.replica_states[replica] = state

    def remove_replica_state(self, replica: PartitionAndReplica) -> None:
        self.replica_states.pop(replica, None)

    def put_replica_state_if_not_exists(self, replica: PartitionAndReplica, state: ReplicaState) -> None:
        self.replica_states.setdefault(replica, state)

    def replica_state(self, replica: PartitionAndReplica) -> ReplicaState:
        return self.replica_states[replica]

    # ------------------------------------------------------------------ partition states

    def put_partition_state(self, tp: TopicPartition, state: PartitionState) -> None:
        self.put_partition_states((tp,), state)

    def put_partition_states(self, partitions: Iterable[TopicPartition], state: PartitionState
                             ) -> list[PartitionState]:
        """Every partition to ``state``, keeping the offline count; returns each one's previous state (a state
        machine's step moves thousands at once, so the count's test is inline)."""
        states = self.partition_states
        started = self.topics_with_deletion_started
        offline = PartitionState.OFFLINE
        non_existent = PartitionState.NON_EXISTENT
        keys = self._partition_keys
        previous: list[PartitionState] = []
        count = 0
        for tp in partitions:
            current = states.get(tp)
            states[tp] = state
            if current is None:  # the first state: ``tp`` is now the dict's key object (`_partition_keys`)
                current = non_existent
                topic_keys = keys.get(tp[0])
                if topic_keys is None:
                    topic_keys = keys[tp[0]] = {}
                topic_keys[tp[1]] = tp
            previous.append(current)
            if current is not state and tp[0] not in started:  # not counted once its topic's deletion started
                if state is offline:
                    count += 1
                elif current is offline:
                    count -= 1
        self.offline_partition_count += count
        return previous

    def put_partition_state_if_not_exists(self, tp: TopicPartition, state: PartitionState) -> None:
        if tp not in self.partition_states:
            self.put_partition_states((tp,), state)

    def partition_state(self, tp: TopicPartition) -> PartitionState:
        return self.partition_states[tp]

    def partitions_in_state(self, state: PartitionState, topic: str | None = None) -> set[TopicPartition]:
        return self.partitions_in_states({state}, topic)

    def partitions_in_states(self, states: Iterable[PartitionState], topic: str | None = None
                             ) -> set[TopicPartition]:
        """All partitions in ``states``; with ``topic``, that topic's assigned partitions (state must exist)."""
        return set(self.partitions_in_states_in_order(states, topic))

    def partitions_in_states_in_order(self, states: Iterable[PartitionState], topic: str | None = None
                                      ) -> list[TopicPartition]:
        """`partitions_in_states` in the state map's insertion order: the partitions in the order the failover
        loaded them, then those of topics created, expanded or recreated since, each at the end. Often near sorted,
        so the callers' sort of this list is nearly one pass, where sorting a set of 10,000 took ~4 ms. No order is
        promised: callers sort. With ``topic``, `partitions_for_topic`'s order."""
        wanted = tuple(set(states))  # a tuple: identity tests in C, no `Enum.__hash__` per partition
        if topic is None:
            return [tp for tp, s in self.partition_states.items() if s in wanted]
        return [tp for tp in self.partitions_for_topic(topic) if self.partition_states[tp] in wanted]

    # ------------------------------------------------------------------ leadership

    def put_partition_leadership_info(self, tp: TopicPartition, leadership: LeaderIsrAndControllerEpoch) -> None:
        self.put_partition_leadership_infos(((tp, leadership),))

    def put_partition_leadership_infos(self, items: Iterable[tuple[TopicPartition, LeaderIsrAndControllerEpoch]]
                                       ) -> None:
        """Cache each partition's leadership and keep the imbalance gauge (once per partition per election or ISR
        change: a step's partitions at once)."""
        infos = self._partition_leadership_info
        deleting = self.topics_to_be_deleted
        assignments = self.partition_assignments
        imbalance = self._imbalance
        delta = 0
        topic_of_parts, parts = None, _NO_PARTITIONS  # the last topic's assignments: a step's come topic by topic
        for tp, leadership in items:
            previous = infos.get(tp)
            infos[tp] = leadership
            topic = tp[0]
            if topic in deleting:
                continue
            if topic != topic_of_parts:
                topic_of_parts, parts = topic, assignments.get(topic, _NO_PARTITIONS)
            assignment = parts.get(tp[1])
            if assignment is None:
                continue
            replicas = assignment.replicas
            if replicas and not assignment.adding_replicas:
                # `_update_imbalance` with the assignment unchanged and `has_preferred_leader` inlined: with no
                # replica being added, led by RS[0] is balanced
                preferred = replicas[0]
                delta += ((leadership.leader_and_isr.leader != preferred)
                          - (previous is not None and previous.leader_and_isr.leader != preferred))
            else:
                imbalance.replace(assignment, previous, assignment, leadership)
        imbalance.count += delta

    def partition_leader_and_isr(self, tp: TopicPartition) -> LeaderAndIsr | None:
        info = self._partition_leadership_info.get(tp)
        return None if info is None else info.leader_and_isr

    def leader_epoch(self, tp: TopicPartition) -> int:
        """The epoch StopReplica carries: -2 while the topic is queued for deletion, -1 when unknown."""
        if self.is_topic_queued_up_for_deletion(tp.topic):
            return EPOCH_DURING_DELETE
        info = self._partition_leadership_info.get(tp)
        return NO_EPOCH if info is None else info.leader_and_isr.leader_epoch

    def leader_epochs(self, partitions: Iterable[TopicPartition]) -> list[int]:
        """`leader_epoch` of each partition, in order, in one loop (a controlled shutdown asks it of each followed
        partition twice: 20,000 calls of two Python frames each when the broker follows 10,000)."""
        deleting, get = self.topics_to_be_deleted, self._partition_leadership_info.get
        return [EPOCH_DURING_DELETE if tp.topic in deleting
                else NO_EPOCH if (info := get(tp)) is None else info.leader_and_isr.leader_epoch
                for tp in partitions]

    @property
    def partitions_leadership_info(self) -> Mapping[TopicPartition, LeaderIsrAndControllerEpoch]:
        return MappingProxyType(self._partition_leadership_info)

    @property
    def partitions_with_leaders(self) -> set[TopicPartition]:
        return {tp for tp in self._partition_leadership_info if tp.topic not in self.topics_to_be_deleted}

    @property
    def partitions_with_offline_leader(self) -> set[TopicPartition]:
        """Cached leader not an online replica (leader -1 included), topics queued for deletion excluded."""
        return set(self.partitions_with_offline_leader_in_order())

    def partitions_with_offline_leader_in_order(self) -> list[TopicPartition]:
        """`partitions_with_offline_leader` in the leadership cache's insertion order: the partitions in the order
        the failover loaded them, then those of topics created, expanded or recreated since, each at the end. Often
        near sorted, so the callers' sort of this list is nearly one pass, where sorting the set took ~4 ms per 10,000
        partitions. No order is promised: callers sort.

        `is_replica_online` inlined: a broker failure asks this of every partition of the cluster."""
        live, shutting_down = self._live_broker_epochs, self.shutting_down_broker_ids
        offline_dirs, deleting = self.replicas_on_offline_dirs, self.topics_to_be_deleted
        if not offline_dirs:  # the common case: a leader is online exactly when its broker is (one test)
            online = live.keys() - shutting_down
            return [tp for tp, info in self._partition_leadership_info.items()
                    if info.leader_and_isr.leader not in online and tp.topic not in deleting]
        return [tp for tp, info in self._partition_leadership_info.items()
                if ((leader := info.leader_and_isr.leader) not in live or leader in shutting_down
                    or tp in offline_dirs.get(leader, ()))
                and tp.topic not in deleting]

    def partition_leaders_on_broker(self, broker_id: int) -> set[TopicPartition]:
        """Partitions led by ``broker_id`` that have another replica to move leadership to."""
        deleting = self.topics_to_be_deleted
        return {tp for tp, info in self._partition_leadership_info.items()
                if info.leader_and_isr.leader == broker_id and tp.topic not in deleting
                and len(self.partition_replica_assignment(tp)) > 1}

    def clear_partition_leadership_info(self) -> None:
        """Drop the cache without touching the imbalance gauge (Kafka does the same before a reload)."""
        self._partition_leadership_info.clear()

    @property
    def partition_with_leaders_count(self) -> int:
        return len(self._partition_leadership_info)

    # ------------------------------------------------------------------ imbalance gauge

    @property
    def preferred_replica_imbalance_count(self) -> int:
        return self._imbalance.count

    def _update_imbalance(
        self,
        tp: TopicPartition,
        old_assignment: ReplicaAssignment | None,
        old_leadership: LeaderIsrAndControllerEpoch | None,
        new_assignment: ReplicaAssignment | None,
        new_leadership: LeaderIsrAndControllerEpoch | None,
    ) -> None:
        if tp.topic not in self.topics_to_be_deleted:
            self._imbalance.replace(old_assignment, old_leadership, new_assignment, new_leadership)

    def _clean_imbalance(self, topic: str) -> None:
        """Subtract a whole topic's contribution (it is being queued for deletion or removed)."""
        self._imbalance.subtract_topic(self.partition_assignments.get(topic, {}),
                                       lambda p: self._partition_leadership_info.get(TopicPartition(topic, p)))
