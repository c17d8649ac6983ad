"""Partition reassignment (KIP-455, spec §9.7): Kafka's ``onPartitionReassignment`` and its entry points.

Entry points: the legacy ``/admin/reassign_partitions`` znode (``ZkPartitionReassignment``), the admin API
(``ApiPartitionReassignment`` with cancellation, ``ListPartitionReassignments``), an ISR change of a partition
being reassigned (``PartitionReassignmentIsrChange``: a data watch on its state znode, as Kafka does without
AlterIsr; `maybe_complete_reassignment` is there for AlterIsr / ISR-change notifications too), a broker start
(`maybe_resume_reassignments_on_brokers`) and failover (everything ZooKeeper says is being reassigned).
The phases themselves are `reassignment_phases`; what reaches ZooKeeper, and the batching of completions, is
`reassignment_records`.

ZooKeeper holds the only durable copy of the original replicas: RS = TRS + ORS with adding/removing is written
first (phase U), RS = TRS last (B6), so a controller that dies anywhere in between leaves a topic znode from
which the next one resumes.

``Target replicas .. have all caught up`` prints Kafka's ``targetReplicas`` Seq by its runtime class: an
assignment ``reassignTo`` built from a requested target (the API's ``replicas.asScala.map(_.toInt)``, the znode's
``replicas.asScala``: a Java list seen as a Buffer, whose ``++``/``distinct`` build an ``ArrayBuffer``) prints
``ArrayBuffer(4, 5)``; one decoded from the topic znode (a failover resuming it) is a ``List``: ``List(4, 5)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from zkcontroller.controller.assignment import reassign_to
from zkcontroller.controller.core import ControllerCore
from zkcontroller.controller.errors import UnusableReplicaError
from zkcontroller.controller.event_manager import ControllerEventManager
from zkcontroller.controller.events import (
    AdminRequestEvent,
    ApiError,
    ApiPartitionReassignment,
    CompletedReassignmentsFlush,
    ControllerEvent,
    ListPartitionReassignments,
    PartitionReassignmentIsrChange,
    ZkPartitionReassignment,
)
from zkcontroller.controller.families import EventFamily, Handler, TopicDeletionClient
from zkcontroller.controller.reassignment_phases import ReassignmentPhases
from zkcontroller.controller.reassignment_records import (
    BoundPartition,
    ReassignmentRecords,
    read_zk_reassignment,
    shown_partition,
)
from zkcontroller.controller.reassignment_rules import validate_replicas
from zkcontroller.controller.scala_render import scala_collection
from zkcontroller.coordination.api import EventType
from zkcontroller.model import (
    ReplicaAssignment,
    TopicPartition,
    sorted_partitions,
)
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.zk import paths
from zkcontroller.zk.errors import NullDereferenceError, NullZnodeDataError, ZnodeDecodeError
from zkcontroller.zk.json_fields import INT32_MAX, INT32_MIN

NONE = ApiError(Errors.NONE)
NO_PARTITION = ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")


async def submit_admin_request(events: ControllerEventManager,
                               make: Callable[[Callable[[Any], None]], AdminRequestEvent]) -> Any:
    """Queue an admin event and wait for the answer its callback gives (NOT_CONTROLLER if it is dropped)."""
    answered: asyncio.Future[Any] = asyncio.Future()

    def answer(result: Any) -> None:
        if not answered.done():
            answered.set_result(result)

    events.put(make(answer))
    return await answered


def _zk_reassignment_handler(event_type: EventType) -> ControllerEvent | None:
    """Creation starts a ZooKeeper reassignment (Kafka). Beyond Kafka, a deletion by someone else also queues
    the event, which only re-arms the watch, so a re-created znode (our --cancel) is seen."""
    return ZkPartitionReassignment() if event_type in (EventType.NODE_CREATED, EventType.NODE_DELETED) else None


class PartitionReassignments(EventFamily):
    def __init__(self, core: ControllerCore, deletion: TopicDeletionClient) -> None:
        super().__init__(core)
        self.context = core.context
        self.deletion = deletion
        self.records = ReassignmentRecords(core, self.context, deletion)
        self.phases = ReassignmentPhases(core, deletion, self.records)
        self._built: dict[TopicPartition, ReplicaAssignment] = {}
        """The assignment `_build` last made from a requested target, per partition: while the context holds that
        very object, Kafka's holds an ArrayBuffer-backed one (see the module docstring); anything else, such as
        the fresh objects a failover decodes from ZooKeeper, is List-backed."""

    def handlers(self) -> Mapping[type[ControllerEvent], Handler]:
        return {
            ZkPartitionReassignment: self.process_zk_partition_reassignment,
            ApiPartitionReassignment: self.process_api_partition_reassignment,
            ListPartitionReassignments: self.process_list_partition_reassignments,
            PartitionReassignmentIsrChange: self.process_partition_reassignment_isr_change,
            CompletedReassignmentsFlush: self.records.flush,
        }

    # ---------------------------------------------------------------- failover steps

    async def register_watches(self) -> None:
        self.core.watches.register_node_handler(paths.REASSIGN_PARTITIONS, _zk_reassignment_handler)

    async def on_failover(self) -> None:
        """``initializePartitionReassignments``: the znode's, then the API's still in the topic znodes.

        A znode Kafka's ``getPartitionReassignment`` throws on (null data, or JSON whose nulls its decoder
        dereferences) fails Kafka's failover, at every election; here it is logged at ERROR, left as it is for the
        operator, and the failover goes on (as with a topic znode Kafka cannot decode)."""
        try:
            from_zk = await self.process_zk_partition_reassignment(ZkPartitionReassignment())
        except (NullZnodeDataError, NullDereferenceError) as e:
            self.core.log.error(f"Ignoring the partition reassignment at {paths.REASSIGN_PARTITIONS}, which Kafka "
                                f"2.8 cannot read either (its failover fails there): {e}")
            from_zk = set()
        await self._maybe_resume(lambda tp, _a: tp not in from_zk)

    async def on_session_reconnected(self) -> None:
        """Re-arm the ISR watch of every partition being reassigned (each re-read may complete it), and the
        znode's creation watch; a znode created meanwhile (it lists partitions not being reassigned) is
        processed now. One that only lists running reassignments is not re-triggered."""
        core = self.core
        for tp in sorted_partitions(self.context.partitions_being_reassigned):
            core.events.put(PartitionReassignmentIsrChange(tp=tp))
        if not await core.zk.path_exists(paths.REASSIGN_PARTITIONS, core.on_watch):
            return
        try:
            bound = await core.zk.get_bound_partition_reassignment()
        except ZnodeDecodeError:
            bound = None  # the event reports it, with its path
        if bound is None or bound.unusable or any(tp not in self.context.partitions_being_reassigned
                                                  for tp in bound.targets):
            core.events.put(ZkPartitionReassignment())

    def on_resignation(self) -> None:
        self.records.clear()
        self.core.watches.unregister_node_handler(paths.REASSIGN_PARTITIONS)
        for tp in self.context.partitions_being_reassigned:
            self.core.watches.unregister_node_handler(paths.partition_state_path(tp.topic, tp.partition))

    # ---------------------------------------------------------------- entry points

    async def process_zk_partition_reassignment(self, _event: ZkPartitionReassignment) -> set[TopicPartition]:
        core = self.core
        if not core.is_active:
            return set()
        core.watches.register_node_handler(paths.REASSIGN_PARTITIONS, _zk_reassignment_handler)
        if not await core.zk.path_exists(paths.REASSIGN_PARTITIONS, core.on_watch):
            return set()
        # a JSON error is logged and read as none; null data raises, as in Kafka (`on_failover` reports it and goes on)
        requested = await read_zk_reassignment(core.zk)
        self._forget_built()
        results: dict[TopicPartition, ApiError] = {}
        to_reassign: dict[TopicPartition, ReplicaAssignment] = {}
        for tp, target in sorted(requested.targets.items()):
            built = self._build(tp, target)
            if built is None:
                results[tp] = ApiError(Errors.NO_REASSIGNMENT_IN_PROGRESS)
            else:
                to_reassign[tp] = built
        results |= await self._maybe_trigger(to_reassign)
        failed: dict[BoundPartition, ApiError] = {tp: e for tp, e in results.items() if e.error is not Errors.NONE}
        failed |= self._fail_unusable(requested.unusable)
        if failed:
            shown = sorted((shown_partition(key), e) for key, e in failed.items())
            core.log.warn("Failed reassignment through zk with the following errors: "
                          f"Map({', '.join(f'{tp} -> {e}' for tp, e in shown)})")
            await self.records.maybe_remove_from_zk(lambda key, _r: key in failed)
        return {tp for tp, e in results.items() if e.error is Errors.NONE}

    def _fail_unusable(self, unusable: Mapping[BoundPartition, Sequence[Any]]) -> dict[BoundPartition, ApiError]:
        """Entries Kafka binds but cannot reassign (`BoundReassignment`), failed alone as its
        ``maybeTriggerPartitionReassignment`` fails them: a null topic's partition does not exist; a partition
        of a topic being deleted is skipped; an existing partition's reassignment throws on its first replica
        that is not a broker id (Kafka's ClassCastException, after it has written and cached the target, which
        is not done here) and answers UNKNOWN_SERVER_ERROR."""
        failed: dict[BoundPartition, ApiError] = {}
        for key, replicas in unusable.items():
            topic, partition = key
            if topic is None:
                failed[key] = NO_PARTITION
                continue
            tp = TopicPartition(topic, partition)
            if self.deletion.is_topic_queued_up_for_deletion(topic):
                self.core.log.info(f"Skipping reassignment of {tp} since the topic is currently being deleted")
                failed[key] = NO_PARTITION
            elif not self.context.partition_replica_assignment(tp):
                failed[key] = NO_PARTITION
            else:
                bad = next(r for r in replicas if type(r) is not int or not INT32_MIN <= r <= INT32_MAX)
                self.core.log.error(f"Error completing reassignment of partition {tp}",
                                    UnusableReplicaError(f"replica {bad!r} of the target of {tp} in "
                                                         f"{paths.REASSIGN_PARTITIONS} is not a broker id"))
                failed[key] = ApiError(Errors.UNKNOWN_SERVER_ERROR)
        return failed

    async def process_api_partition_reassignment(self, event: ApiPartitionReassignment) -> None:
        if not self.core.is_active:
            event.callback(ApiError(Errors.NOT_CONTROLLER))
            return
        self._forget_built()
        results: dict[TopicPartition, ApiError] = {}
        to_reassign: dict[TopicPartition, ReplicaAssignment] = {}
        for tp, target in sorted(event.reassignments, key=lambda item: (item[0].topic, item[0].partition)):
            current = self.context.partition_full_replica_assignment(tp)
            error = None if target is None else validate_replicas(target, current, self.context.live_broker_ids)
            if error is not None:
                results[tp] = error
                continue
            built = self._build(tp, target)
            if built is None:
                results[tp] = ApiError(Errors.NO_REASSIGNMENT_IN_PROGRESS)
            else:
                to_reassign[tp] = built
                if target is None:
                    self.core.emit("partition_reassignment", topic=tp.topic, partition=tp.partition,
                                   phase="cancelled", replicas=list(current.origin_replicas))
        await self.records.maybe_remove_from_zk(lambda tp, _r: tp in to_reassign)  # the latest request wins
        results |= await self._maybe_trigger(to_reassign)
        event.callback(results)

    async def process_list_partition_reassignments(self, event: ListPartitionReassignments) -> None:
        if not self.core.is_active:
            event.callback(ApiError(Errors.NOT_CONTROLLER))
            return
        wanted = self.context.partitions_being_reassigned if event.partitions is None else set(event.partitions)
        found = {tp: self.context.partition_full_replica_assignment(tp) for tp in sorted_partitions(wanted)}
        event.callback({tp: a for tp, a in found.items() if a.is_being_reassigned})

    async def process_partition_reassignment_isr_change(self, event: PartitionReassignmentIsrChange) -> None:
        if self.core.is_active and event.tp in self.context.partitions_being_reassigned:
            await self.maybe_complete_reassignment(event.tp)

    async def maybe_complete_reassignment(self, tp: TopicPartition) -> None:
        assignment = self.context.partition_full_replica_assignment(tp)
        if await self.phases.is_complete(tp, assignment):
            seq = "ArrayBuffer" if self._built.get(tp) is assignment else "List"
            self.core.log.info(f"Target replicas {scala_collection(seq, assignment.target_replicas)} have all "
                               f"caught up with the leader for reassigning partition {tp}")
            await self.phases.on_partition_reassignment(tp, assignment)

    async def maybe_resume_reassignments_on_brokers(self, broker_ids: set[int]) -> None:
        await self._maybe_resume(lambda _tp, a: bool(set(a.target_replicas) & broker_ids))

    async def _maybe_resume(self, should: Callable[[TopicPartition, ReplicaAssignment], bool]) -> None:
        """``maybeResumeReassignments``. Beyond Kafka 2.8, a partition whose topic is queued for deletion is not
        resumed: its partitions get no leader while queued, so the reassignment could never complete and the
        deletion, held back by it, never start (a deadlock the simulator found); the deletion goes ahead instead
        and takes the reassignment state with the topic znode."""
        abandoned: set[str] = set()
        resumed: dict[TopicPartition, tuple[ReplicaAssignment, bool]] = {}
        for tp in sorted_partitions(self.context.partitions_being_reassigned):
            if self.deletion.is_topic_queued_up_for_deletion(tp.topic):
                self.core.log.info(f"Skipping reassignment of {tp} since the topic is currently being deleted")
                abandoned.add(tp.topic)
                continue
            current = self.context.partition_full_replica_assignment(tp)
            if should(tp, current):
                resumed[tp] = (current, True)
        await self.phases.on_partition_reassignments(resumed)
        if abandoned:
            dropped = {tp for tp in self.context.partitions_being_reassigned if tp.topic in abandoned}
            self.context.partitions_being_reassigned.difference_update(dropped)
            for tp in dropped:  # as a completed one's; resignation only unregisters those still being reassigned
                self.core.watches.unregister_node_handler(paths.partition_state_path(tp.topic, tp.partition))
            await self.deletion.resume_deletion_for_topics(abandoned)

    def _build(self, tp: TopicPartition, target: Sequence[int] | None) -> ReplicaAssignment | None:
        """``maybeBuildReassignment``: no target cancels a running one (back to ORS); none running → None."""
        current = self.context.partition_full_replica_assignment(tp)
        if target is None:  # a cancellation: back to ORS, a Seq of the current one's class (never logged caught up)
            return reassign_to(current, current.origin_replicas) if current.is_being_reassigned else None
        built = reassign_to(current, target)
        if self._built.get(tp) != built:  # an equal one leaves the context's object in place (updateCurrent...)
            self._built[tp] = built
        return built

    def _forget_built(self) -> None:
        """Drop what `_build` recorded for partitions no longer being reassigned (once per request)."""
        being = self.context.partitions_being_reassigned
        for tp in [tp for tp in self._built if tp not in being]:
            del self._built[tp]

    async def _maybe_trigger(self, reassignments: Mapping[TopicPartition, ReplicaAssignment]
                             ) -> dict[TopicPartition, ApiError]:
        results: dict[TopicPartition, ApiError] = {}
        eligible: dict[TopicPartition, ReplicaAssignment] = {}
        for tp, reassignment in sorted(reassignments.items()):
            if self.deletion.is_topic_queued_up_for_deletion(tp.topic):
                self.core.log.info(f"Skipping reassignment of {tp} since the topic is currently being deleted")
                results[tp] = NO_PARTITION
            elif not self.context.partition_replica_assignment(tp):
                results[tp] = NO_PARTITION
            else:
                eligible[tp] = reassignment
        recorded = await self.phases.record_started(eligible, results)
        pending = {tp: (r, tp in recorded) for tp, r in eligible.items() if tp not in results}
        failed = await self.phases.on_partition_reassignments(pending)
        for tp in pending:
            results[tp] = ApiError(Errors.UNKNOWN_SERVER_ERROR) if tp in failed else NONE
        return results
