"""`ControllerBrokerRequestBatch`: gathers a state change's broker requests and sends them (spec §7.1).

A state machine calls ``new_batch()``, adds LeaderAndIsr / StopReplica / UpdateMetadata entries while it
changes state, then ``send_requests_to_brokers(fencing)``. Entries are merged per broker and partition (the
last LeaderAndIsr wins but ``is_new`` sticks; ``delete_partition`` sticks), so one transition step sends
at most one request of each kind per broker. Requests go out in Kafka's order: LeaderAndIsr, then
UpdateMetadata, then StopReplica (the v3 form carrying both delete and non-delete partitions), only to
brokers the context knows as live or shutting down.

Kafka iterates hash maps here; we sort brokers and partitions so the order of requests and log lines is
the same on every run. If sending fails, the maps are left as they are so that the next ``new_batch()``
fails too (§12.2) and the controller resigns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from zkcontroller.controller.assignment import EMPTY_ASSIGNMENT
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.errors import IllegalControllerStateError
from zkcontroller.controller.event_log import TRACE, PrefixedLogger, StateChangeLogger
from zkcontroller.controller.fencing_token import FencingToken
from zkcontroller.model import (
    INITIAL_LEADER_EPOCH,
    INITIAL_PARTITION_EPOCH,
    ZERO_TOPIC_ID,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
    sorted_by_partition,
    sorted_partitions,
)
from zkcontroller.protocol.control_requests import (
    LEADER_DURING_DELETE,
    AnyControlRequest,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)
from zkcontroller.protocol.ibp import DEFAULT_IBP, LEADER_AND_ISR, UPDATE_METADATA, request_versions

Sender = Callable[[int, AnyControlRequest], None]
"""Hands one request to the channel manager for one broker; responses come back as controller events."""

BATCH_LOGGER = "kafka.controller.ControllerBrokerRequestBatch"

_NO_PARTITIONS: dict[int, ReplicaAssignment] = {}
"""A topic the context has no assignment for (`ControllerContext.partition_replica_assignment`, inlined)."""


def _java_list(values: Iterable[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def render_leader_and_isr_partition_state(s: LeaderAndIsrPartitionState) -> str:
    """The generated message class's toString, as Kafka's TRACE lines show it."""
    return (
        f"LeaderAndIsrPartitionState(topicName='{s.topic}', partitionIndex={s.partition}, "
        f"controllerEpoch={s.controller_epoch}, leader={s.leader}, leaderEpoch={s.leader_epoch}, "
        f"isr={_java_list(s.isr)}, zkVersion={s.zk_version}, replicas={_java_list(s.replicas)}, "
        f"addingReplicas={_java_list(s.adding_replicas)}, removingReplicas={_java_list(s.removing_replicas)}, "
        f"isNew={str(s.is_new).lower()})"
    )


def render_stop_replica_partition_state(s: StopReplicaPartitionState) -> str:
    return (
        f"StopReplicaPartitionState(partitionIndex={s.partition}, leaderEpoch={s.leader_epoch}, "
        f"deletePartition={str(s.delete_partition).lower()})"
    )


class ControllerBrokerRequestBatch:
    """One of the controller's three independent batches (PSM, RSM, and the controller's own)."""

    def __init__(self, controller_id: int, context: ControllerContext, sender: Sender,
                 state_change_logger: StateChangeLogger, inter_broker_protocol_version: str = DEFAULT_IBP) -> None:
        self.controller_id = controller_id
        versions = request_versions(inter_broker_protocol_version)
        self._lai_topic_ids = versions[LEADER_AND_ISR] >= 5
        self._umd_topic_ids = versions[UPDATE_METADATA] >= 7
        """Topic ids travel in LeaderAndIsr from v5 and UpdateMetadata from v7 (IBP >= 2.8-IV1): an older
        request has no field for them, so in-process brokers get none either, as on the wire."""
        self.context = context
        self._sender = sender
        self._state_change_logger = state_change_logger
        self._log = PrefixedLogger(BATCH_LOGGER, "")  # Kafka's batch classes have no logIdent
        self.leader_and_isr_request_map: dict[int, dict[TopicPartition, LeaderAndIsrPartitionState]] = {}
        self.stop_replica_request_map: dict[int, dict[TopicPartition, StopReplicaPartitionState]] = {}
        self.update_metadata_request_broker_set: set[int] = set()
        self.update_metadata_request_partitions: dict[TopicPartition, None] = {}
        """Partitions queued for UpdateMetadata (an ordered set); their states are built once, when sent."""

    @property
    def is_empty(self) -> bool:
        return not (self.leader_and_isr_request_map or self.stop_replica_request_map
                    or self.update_metadata_request_broker_set)

    def new_batch(self) -> None:
        """Refuse to start over a batch a failed state change left behind (its requests would be lost)."""
        if self.leader_and_isr_request_map:
            raise IllegalControllerStateError(
                "Controller to broker state change requests batch is not empty while creating a new one. "
                f"Some LeaderAndIsr state changes {self.leader_and_isr_request_map} might be lost ")
        if self.stop_replica_request_map:
            raise IllegalControllerStateError(
                "Controller to broker state change requests batch is not empty while creating a new one. "
                f"Some StopReplica state changes {self.stop_replica_request_map} might be lost ")
        if self.update_metadata_request_broker_set:
            raise IllegalControllerStateError(
                "Controller to broker state change requests batch is not empty while creating a new one. "
                f"Some UpdateMetadata state changes to brokers {sorted(self.update_metadata_request_broker_set)} "
                f"for partitions {sorted_partitions(self.update_metadata_request_partitions)} might be lost ")

    def clear(self) -> None:
        self.leader_and_isr_request_map.clear()
        self.stop_replica_request_map.clear()
        self.update_metadata_request_broker_set.clear()
        self.update_metadata_request_partitions.clear()

    # ------------------------------------------------------------------ adding

    def add_leader_and_isr_request_for_brokers(
        self, broker_ids: Iterable[int], tp: TopicPartition, leader_isr_and_epoch: LeaderIsrAndControllerEpoch,
        assignment: ReplicaAssignment, is_new: bool,
    ) -> None:
        """Queue LeaderAndIsr for ``tp`` to each broker, and UpdateMetadata for it to every broker."""
        self.add_leader_and_isr_requests(((broker_ids, tp, leader_isr_and_epoch, assignment),), is_new)

    def add_leader_and_isr_requests(
        self,
        entries: Iterable[tuple[Iterable[int], TopicPartition, LeaderIsrAndControllerEpoch, ReplicaAssignment]],
        is_new: bool,
        led: bool = False,
    ) -> None:
        """``add_leader_and_isr_request_for_brokers`` for each (brokers, partition, leadership, assignment), in
        order: a state machine's step queues thousands at once, so the lookups are made once.

        ``led``: each leadership given is the partition's in the context (the caller has just stored or read it),
        so the UpdateMetadata's "leader not yet assigned" check, a lookup per partition, cannot fail and is skipped.
        """
        requests = self.leader_and_isr_request_map
        partitions = self.update_metadata_request_partitions
        leadership = self.context.partition_leadership_info
        new_tuple = tuple.__new__  # see `_update_metadata_partition_states`
        added = False
        for broker_ids, tp, leader_isr_and_epoch, assignment in entries:
            added = True
            state: LeaderAndIsrPartitionState | None = None  # one state shared by the brokers it is the same for
            for broker_id in broker_ids:
                if broker_id < 0:
                    continue
                per_broker = requests.get(broker_id)
                if per_broker is None:
                    per_broker = requests[broker_id] = {}
                if state is None:
                    lai = leader_isr_and_epoch.leader_and_isr
                    state = new_tuple(LeaderAndIsrPartitionState, (
                        tp.topic, tp.partition, leader_isr_and_epoch.controller_epoch, lai.leader, lai.leader_epoch,
                        lai.isr, lai.zk_version, assignment.replicas, assignment.adding_replicas,
                        assignment.removing_replicas, is_new))
                if is_new:
                    per_broker[tp] = state
                    continue
                # placed at once where the broker has no entry for the partition yet (the usual case: one lookup,
                # not a `get` and a store); over an entry, its `is_new` sticks
                previous = per_broker.setdefault(tp, state)
                if previous is not state:
                    per_broker[tp] = state._replace(is_new=True) if previous.is_new else state
            if led or leadership(tp) is not None:
                partitions[tp] = None
            else:
                self._log.info(f"Leader not yet assigned for partition {tp}. Skip sending UpdateMetadataRequest.")
        if added:  # and UpdateMetadata to every live or shutting-down broker (`_add_update_metadata_partition`)
            self.update_metadata_request_broker_set.update(
                b for b in self.context.live_or_shutting_down_broker_id_view() if b >= 0)

    def add_stop_replica_request_for_brokers(self, broker_ids: Iterable[int], tp: TopicPartition,
                                             delete_partition: bool) -> None:
        """Queue StopReplica; the epoch is -2 for a topic queued for deletion, else the cached one or -1.

        Only brokers the context knows as live (or shutting down) get an entry: sending would drop the others,
        and a broker failure adds one for every replica of the dead broker (the request goes nowhere).
        """
        self.add_stop_replica_requests(broker_ids, (tp,), delete_partition)

    def add_stop_replica_requests(self, broker_ids: Iterable[int], partitions: Iterable[TopicPartition],
                                  delete_partition: bool) -> None:
        """`add_stop_replica_request_for_brokers` for each partition, in order, with the lookups made once (a
        controlled shutdown queues one for each of the broker's followed partitions, twice)."""
        live = self.context.live_or_shutting_down_broker_id_view()
        brokers = [b for b in broker_ids if b in live]
        partitions = list(partitions)
        if not brokers or not partitions:  # no entry at all then, not an empty one (it would send an empty request)
            return
        per_broker = [self.stop_replica_request_map.setdefault(b, {}) for b in brokers]
        new_tuple = tuple.__new__  # as `_update_metadata_partition_states`
        for tp, epoch in zip(partitions, self.context.leader_epochs(partitions), strict=True):
            for states in per_broker:
                previous = states.get(tp)
                states[tp] = new_tuple(StopReplicaPartitionState, (
                    tp.topic, tp.partition, epoch,
                    delete_partition or (previous is not None and previous.delete_partition)))

    def add_update_metadata_request_for_brokers(self, broker_ids: Iterable[int],
                                                partitions: Iterable[TopicPartition]) -> None:
        """Queue UpdateMetadata to the brokers; partitions without leadership are skipped (logged)."""
        unique = set(partitions)
        # One partition per call is the common case (from add_leader_and_isr_request_for_brokers): no sort.
        if len(unique) == 1:
            self._add_update_metadata_partition(broker_ids, next(iter(unique)))
            return
        self.update_metadata_request_broker_set.update(b for b in broker_ids if b >= 0)
        for tp in sorted_partitions(unique):
            self._add_update_metadata_partition((), tp)

    def _add_update_metadata_partition(self, broker_ids: Iterable[int], tp: TopicPartition) -> None:
        """Kafka builds the partition's UpdateMetadata state here; we note the partition and build its state
        once per batch when sending (from the same context: a batch is built and sent within one event), so a
        partition added by both a LeaderAndIsr and an ISR change is built once, not per add."""
        brokers = self.update_metadata_request_broker_set
        if not brokers.issuperset(broker_ids):
            brokers.update(b for b in broker_ids if b >= 0)
        if self.context.partition_leader_and_isr(tp) is None:
            self._log.info(f"Leader not yet assigned for partition {tp}. Skip sending UpdateMetadataRequest.")
        else:
            self.update_metadata_request_partitions[tp] = None

    def _update_metadata_partition_states(self, partitions: Iterable[TopicPartition]
                                          ) -> tuple[UpdateMetadataPartitionState, ...]:
        """Each partition's UpdateMetadata state from the context (partitions without leadership left out).

        Once per partition per batch, tens of thousands per broker failure: the context's lookups are hoisted
        out of the loop and, while no log dir has failed, a replica's liveness is its broker's membership in one
        set, and each distinct replica set's offline replicas are found once.
        """
        context = self.context
        online = context.replica_online_brokers()  # None once a log dir has failed: then asked per partition
        deleting = context.topics_to_be_deleted
        leadership = context.partition_leadership_info
        assignments = context.partition_assignments
        # Each state built by ``tuple.__new__`` with every field in order: the NamedTuple's generated ``__new__`` is a
        # Python frame, about a third of the cost of each of the 60,000 states a broker failure builds
        # (tests/unit/controller/test_direct_tuple_builds.py keeps the field lists in step).
        new_tuple = tuple.__new__
        offline_of: dict[tuple[int, ...], tuple[int, ...]] = {}  # per distinct replica set, while `online` holds
        states = []
        topic_of_parts, parts = None, _NO_PARTITIONS  # the last topic's assignments: sorted, they come topic by topic
        for tp in partitions:
            info = leadership(tp)
            if info is None:
                continue
            lai = info.leader_and_isr
            topic = tp[0]
            if topic != topic_of_parts:
                topic_of_parts, parts = topic, assignments.get(topic, _NO_PARTITIONS)
            replicas = parts.get(tp[1], EMPTY_ASSIGNMENT).replicas
            offline: tuple[int, ...]
            if online is None:
                online_replicas = context.online_replicas(tp, replicas)
                offline = tuple(r for r in replicas if r not in online_replicas)
            else:  # a broker failure's every partition has an offline replica: one lookup, not a generator each
                found = offline_of.get(replicas)
                if found is None:
                    found = offline_of[replicas] = tuple([r for r in replicas if r not in online])
                offline = found
            if tp.topic in deleting:
                states.append(new_tuple(UpdateMetadataPartitionState, (
                    tp.topic, tp.partition, info.controller_epoch, LEADER_DURING_DELETE, INITIAL_LEADER_EPOCH,
                    lai.isr, INITIAL_PARTITION_EPOCH, replicas, offline)))
            else:
                states.append(new_tuple(UpdateMetadataPartitionState, (
                    tp.topic, tp.partition, info.controller_epoch, lai.leader, lai.leader_epoch, lai.isr,
                    lai.zk_version, replicas, offline)))
        return tuple(states)

    # ------------------------------------------------------------------ sending

    def send_requests_to_brokers(self, fencing: FencingToken) -> None:
        """LeaderAndIsr, UpdateMetadata, StopReplica, each carrying the token's epoch; any failure →
        `IllegalControllerStateError`."""
        controller_epoch = fencing.epoch
        with self._sending():
            self._send_leader_and_isr_requests(controller_epoch)
            self._send_update_metadata_requests(controller_epoch)
            self._send_stop_replica_requests(controller_epoch)

    async def send_requests_handing_leader_and_isr_first(self, fencing: FencingToken) -> None:
        """`send_requests_to_brokers`, with one turn of the loop after any LeaderAndIsr requests are queued.

        Kafka's RequestSendThreads are threads: a LeaderAndIsr is on the wire while the controller builds the
        UpdateMetadata that follows it. Here the send loops share the controller's loop and ran only once the
        event next awaited, so the LeaderAndIsr of a broker failure's last step waited behind 20,000 partitions'
        UpdateMetadata states and the rest of the event (10-15 ms on a quiet host). The requests, their order on
        each broker's channel and the controller's log lines are the same; the turn only lets ready tasks run
        (the send loops, woken by the queued requests, first). The context cannot change meanwhile: only the
        event task changes it, and it is the one waiting here.
        """
        controller_epoch = fencing.epoch
        handed = bool(self.leader_and_isr_request_map)
        with self._sending():
            self._send_leader_and_isr_requests(controller_epoch)
        if handed:
            await asyncio.sleep(0)
        with self._sending():
            self._send_update_metadata_requests(controller_epoch)
            self._send_stop_replica_requests(controller_epoch)

    @contextmanager
    def _sending(self) -> Iterator[None]:
        """Kafka's ``sendRequestsToBrokers`` catch: any failure logs what is left unsent and becomes an
        `IllegalControllerStateError`."""
        try:
            yield
        except Exception as e:
            self._log_leftovers(e)
            raise IllegalControllerStateError(e) from e

    def _log_leftovers(self, e: Exception) -> None:
        if self.leader_and_isr_request_map:
            self._log.error("Haven't been able to send leader and isr requests, current state of the map is "
                            f"{self.leader_and_isr_request_map}. Exception message: {e!r}")
        if self.update_metadata_request_broker_set:
            self._log.error("Haven't been able to send metadata update requests to brokers "
                            f"{sorted(self.update_metadata_request_broker_set)}, current state of the partition "
                            f"info is for {sorted_partitions(self.update_metadata_request_partitions)}. Exception "
                            f"message: {e!r}")
        if self.stop_replica_request_map:
            self._log.error("Haven't been able to send stop replica requests, current state of the map is "
                            f"{self.stop_replica_request_map}. Exception message: {e!r}")

    def _send_leader_and_isr_requests(self, controller_epoch: int) -> None:
        live = self.context.live_or_shutting_down_broker_ids
        epochs = self.context.live_broker_id_and_epochs
        tracing = self._state_change_logger.is_enabled_for(TRACE)
        for broker_id in sorted(self.leader_and_isr_request_map):
            if broker_id not in live:
                continue
            states = [s for _, s in sorted_by_partition(self.leader_and_isr_request_map[broker_id].items())]
            become_leaders = len([s for s in states if s.leader == broker_id])
            if tracing:
                for s in states:
                    kind = "become-leader" if s.leader == broker_id else "become-follower"
                    self._state_change_logger.trace(
                        f"Sending {kind} LeaderAndIsr request {render_leader_and_isr_partition_state(s)} to broker "
                        f"{broker_id} for partition {s.topic_partition}")
            self._state_change_logger.info(
                f"Sending LeaderAndIsr request to broker {broker_id} with {become_leaders} become-leader and "
                f"{len(states) - become_leaders} become-follower partitions")
            leader_ids = {s.leader for s in states}
            request = LeaderAndIsrRequest(
                controller_id=self.controller_id, controller_epoch=controller_epoch,
                broker_epoch=epochs[broker_id], partition_states=tuple(states),
                topic_ids=tuple((t, self.context.topic_ids.get(t, ZERO_TOPIC_ID))
                                for t in sorted({s.topic for s in states})) if self._lai_topic_ids else (),
                live_leaders=tuple(b for b in self.context.live_or_shutting_down_brokers if b.id in leader_ids),
            )
            self._sender(broker_id, request)
        self.leader_and_isr_request_map.clear()

    def _send_update_metadata_requests(self, controller_epoch: int) -> None:
        partition_states = self._update_metadata_partition_states(
            sorted_partitions(self.update_metadata_request_partitions))
        # a mutable.HashSet in Kafka 2.8 (Scala 2.13): the real logs print HashSet(1, 2), even when empty
        brokers = ", ".join(str(b) for b in sorted(self.update_metadata_request_broker_set))
        self._state_change_logger.info(
            f"Sending UpdateMetadata request to brokers HashSet({brokers}) for {len(partition_states)} partitions")
        live_brokers = tuple(self.context.live_or_shutting_down_brokers)
        topic_ids = tuple((t, self.context.topic_ids[t]) for t in sorted({s.topic for s in partition_states})
                          if t in self.context.topic_ids) if self._umd_topic_ids else ()
        epochs = self.context.live_broker_id_and_epochs
        recipients = self.update_metadata_request_broker_set & self.context.live_or_shutting_down_broker_ids
        for broker_id in sorted(recipients):
            self._sender(broker_id, UpdateMetadataRequest(
                controller_id=self.controller_id, controller_epoch=controller_epoch,
                broker_epoch=epochs[broker_id], partition_states=partition_states,
                live_brokers=live_brokers, topic_ids=topic_ids))
        self.update_metadata_request_broker_set.clear()
        self.update_metadata_request_partitions.clear()

    def _send_stop_replica_requests(self, controller_epoch: int) -> None:
        live = self.context.live_or_shutting_down_broker_ids
        epochs = self.context.live_broker_id_and_epochs
        for broker_id in sorted(self.stop_replica_request_map):
            if broker_id not in live:
                continue
            states = [s for _, s in sorted_by_partition(self.stop_replica_request_map[broker_id].items())]
            if self._state_change_logger.is_enabled_for(TRACE):
                for s in states:
                    self._state_change_logger.trace(
                        f"Sending StopReplica request {render_stop_replica_partition_state(s)} to broker "
                        f"{broker_id} for partition {s.topic_partition}")
            self._state_change_logger.info(f"Sending StopReplica request for {len(states)} replicas to broker "
                                           f"{broker_id}")
            self._sender(broker_id, StopReplicaRequest(
                controller_id=self.controller_id, controller_epoch=controller_epoch,
                broker_epoch=epochs[broker_id], partition_states=tuple(states)))
        self.stop_replica_request_map.clear()
