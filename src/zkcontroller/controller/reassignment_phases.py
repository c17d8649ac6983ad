"""The phases of one reassignment (spec §9.7.1): Kafka's ``onPartitionReassignment`` and the steps it calls.

U (record RS = ORS + TRS with adding/removing, stop replicas of a superseded reassignment), A (bump the leader
epoch, LeaderAndIsr to ORS and, as new, to the adding replicas, start them) while TRS is not all in the ISR,
then B (adding replicas online, RS = TRS in memory, leader moved if it is not in TRS or is dead, removed replicas
stopped and deleted, the topic znode finalised with the next completions flush, UpdateMetadata). The entry
points that decide what to reassign are `reassignment`; the ZooKeeper writes are `reassignment_records`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from zkcontroller.controller.assignment import render_assignment
from zkcontroller.controller.core import ControllerCore, NodeHandler
from zkcontroller.controller.election import ReassignPartitionLeaderElectionStrategy
from zkcontroller.controller.errors import IllegalControllerStateError, StateChangeFailedError
from zkcontroller.controller.event_log import render_leader_isr_and_epoch
from zkcontroller.controller.events import ApiError, ControllerEvent, PartitionReassignmentIsrChange
from zkcontroller.controller.families import TopicDeletionClient
from zkcontroller.controller.reassignment_records import ReassignmentRecords
from zkcontroller.controller.states import PartitionAndReplica, PartitionState, ReplicaState
from zkcontroller.coordination.api import EventType
from zkcontroller.model import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
    sorted_partitions,
)
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ControllerMovedError


def _isr_change_handler(tp: TopicPartition) -> NodeHandler:
    def handle(event_type: EventType) -> ControllerEvent | None:
        return PartitionReassignmentIsrChange(tp=tp) if event_type is EventType.NODE_DATA_CHANGED else None

    return handle


def _target_in_isr(assignment: ReplicaAssignment, state: LeaderIsrAndControllerEpoch | None) -> bool:
    """``isReassignmentComplete`` on a state read from ZooKeeper: not reassigning, or TRS ⊆ ISR."""
    if not assignment.is_being_reassigned:
        return True
    return state is not None and set(assignment.target_replicas) <= set(state.leader_and_isr.isr)


class ReassignmentPhases:
    def __init__(self, core: ControllerCore, deletion: TopicDeletionClient, records: ReassignmentRecords) -> None:
        self.core = core
        self.context = core.context
        self.deletion = deletion
        self.records = records

    def _log_moved(self, tp: TopicPartition) -> None:
        self.core.log.info(f"Failed completing reassignment of partition {tp} because controller has moved to "
                           "another broker")

    def _report_failures(self, failed: Mapping[TopicPartition, Exception],
                         assignments: Mapping[TopicPartition, ReplicaAssignment]) -> None:
        for tp, error in sorted(failed.items()):
            self.core.log.error(f"Error completing reassignment of partition {tp}", error)
            self._emit(tp, "failed", assignments[tp])

    async def record_started(self, reassignments: Mapping[TopicPartition, ReplicaAssignment],
                              results: dict[TopicPartition, ApiError]) -> set[TopicPartition]:
        """U1 for many partitions: each topic znode written once with all of its new assignments (Kafka writes it
        once per partition, whole). Returns the partitions recorded; a failed topic's partitions fail here."""
        changed = {tp: r for tp, r in reassignments.items() if self.context.partition_full_replica_assignment(tp) != r}
        recorded: set[TopicPartition] = set()
        for topic in sorted({tp.topic for tp in changed}):
            parts = {tp: r for tp, r in changed.items() if tp.topic == topic}
            try:
                await self.records.write_topic_assignment(topic, parts)
            except ControllerMovedError:
                raise
            except Exception as e:
                for tp in sorted_partitions(parts):
                    self.core.log.error(f"Error completing reassignment of partition {tp}", e)
                    self._emit(tp, "failed", parts[tp])
                    results[tp] = ApiError(Errors.UNKNOWN_SERVER_ERROR)
                continue
            for tp in sorted_partitions(parts):
                self.core.log.info(f"Successfully updated assignment of partition {tp} to "
                                   f"{render_assignment(parts[tp])}")
            recorded.update(parts)
        return recorded

    async def on_partition_reassignment(self, tp: TopicPartition, reassignment: ReplicaAssignment,
                                        recorded: bool = False) -> None:
        """Kafka's phases for one partition; ``recorded``: its topic znode already holds ``reassignment`` (U1)."""
        failed = await self.on_partition_reassignments({tp: (reassignment, recorded)}, report=False)
        if tp in failed:
            raise failed[tp]

    async def on_partition_reassignments(self, items: Mapping[TopicPartition, tuple[ReplicaAssignment, bool]],
                                         report: bool = True) -> dict[TopicPartition, Exception]:
        """``onPartitionReassignment`` for many partitions (each with ``recorded``: its topic znode already holds
        the assignment). Phase U and phase B run per partition as in Kafka; phase A runs for all of them at once:
        one read of their states (the completeness check, whose read also serves the leader-epoch bump), one
        pipelined batch of fenced leader-epoch writes, one LeaderAndIsr batch and one replica transition — Kafka
        does each per partition, which at 10,000 partitions is three store round trips and a request batch each.
        The same znodes are written with the same data and each partition's log lines keep their order.

        Returns the partitions that failed, with the error (logged and emitted unless ``report`` is false);
        `ControllerMovedError` propagates."""
        failed: dict[TopicPartition, Exception] = {}
        started: dict[TopicPartition, ReplicaAssignment] = {}
        for tp, (reassignment, recorded) in sorted(items.items()):
            try:
                self.deletion.mark_topic_ineligible_for_deletion({tp.topic}, "topic reassignment in progress")
                await self._update_current_reassignment(tp, reassignment, recorded)
                started[tp] = reassignment
            except ControllerMovedError:
                self._log_moved(tp)
                raise
            except Exception as e:
                failed[tp] = e
        reassigning = [tp for tp, a in started.items() if a.is_being_reassigned]
        states = (await self.core.zk.get_topic_partition_states(reassigning, self.core.on_watch)).values \
            if reassigning else {}
        awaiting = {tp: started[tp] for tp in reassigning
                    if not _target_in_isr(started[tp], states.get(tp))}
        if awaiting:
            bumped, bump_failed = await self._update_leader_epochs(awaiting, states)
            failed |= bump_failed
            self._send_leader_and_isr({tp: (state, awaiting[tp]) for tp, state in bumped.items()})  # A1
            adding = [PartitionAndReplica(tp, r) for tp in sorted_partitions(bumped)
                      for r in awaiting[tp].adding_replicas]
            await self.core.replica_state_machine.handle_state_changes(adding, ReplicaState.NEW)  # A2
            for tp in sorted_partitions(bumped):
                self._emit(tp, "awaiting_isr", awaiting[tp])
        for tp, reassignment in started.items():
            if tp in awaiting:
                continue
            try:
                await self._complete_reassignment(tp, reassignment)
            except ControllerMovedError:
                self._log_moved(tp)
                raise
            except Exception as e:
                failed[tp] = e
        if report:
            self._report_failures(failed, {tp: a for tp, (a, _r) in items.items()})
        return failed

    async def _complete_reassignment(self, tp: TopicPartition, reassignment: ReplicaAssignment) -> None:
        """Phase B: every target replica is in the ISR."""
        rsm = self.core.replica_state_machine
        adding = [PartitionAndReplica(tp, r) for r in reassignment.adding_replicas]
        await rsm.handle_state_changes(adding, ReplicaState.ONLINE)  # B1
        completed = ReplicaAssignment(reassignment.target_replicas)
        self.context.update_partition_full_replica_assignment(tp, completed)  # B2
        await self._move_leader_if_required(tp, completed)  # B3
        await self._stop_removed_replicas(tp, reassignment.removing_replicas)  # B4, B5
        if reassignment.removing_replicas:
            self._emit(tp, "removed_replicas", completed)
        self._remove_from_reassigning_partitions(tp, completed)  # B6 and B7: the flush event writes them
        self.core.send_update_metadata_request(self.context.live_or_shutting_down_broker_ids, {tp})  # B8
        self._emit(tp, "completed", completed)
        await self.deletion.resume_deletion_for_topics({tp.topic})

    async def _update_current_reassignment(self, tp: TopicPartition, reassignment: ReplicaAssignment,
                                           recorded: bool = False) -> None:
        current = self.context.partition_full_replica_assignment(tp)
        if current != reassignment:
            self.core.log.debug(f"Updating assignment of partition {tp} from {render_assignment(current)} to "
                                f"{render_assignment(reassignment)}")
            if not recorded:
                await self._update_replica_assignment(tp, reassignment)  # U1
            self.context.update_partition_full_replica_assignment(tp, reassignment)  # U2
            unneeded = [r for r in current.replicas if r not in reassignment.replicas]
            if unneeded:  # U3: adding replicas of a superseded reassignment
                await self._stop_removed_replicas(tp, unneeded)
            self._emit(tp, "started", reassignment)
        self.core.watches.register_node_handler(paths.partition_state_path(tp.topic, tp.partition),
                                                _isr_change_handler(tp))
        self.context.partitions_being_reassigned.add(tp)

    async def is_complete(self, tp: TopicPartition, assignment: ReplicaAssignment) -> bool:
        """Not being reassigned, or TRS ⊆ ISR in ZooKeeper (the read re-arms the ISR watch)."""
        if not assignment.is_being_reassigned:
            return True
        read = await self.core.zk.get_topic_partition_states([tp], self.core.on_watch)
        return _target_in_isr(assignment, read.values.get(tp))

    async def _update_replica_assignment(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        await self.records.write_topic_assignment(tp.topic, {tp: assignment})
        self.core.log.info(f"Successfully updated assignment of partition {tp} to {render_assignment(assignment)}")

    async def _update_leader_epochs(
        self, parts: Iterable[TopicPartition], states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch]
    ) -> tuple[dict[TopicPartition, LeaderIsrAndControllerEpoch], dict[TopicPartition, Exception]]:
        """Write each partition's state back with the leader epoch + 1 (conditional on the zkVersion read in
        ``states``, fenced, pipelined); a version conflict re-reads that partition and tries again."""
        core, epoch = self.core, self.context.epoch
        done: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        failed: dict[TopicPartition, Exception] = {}
        pending = sorted_partitions(parts)
        for tp in pending:
            core.log.debug(f"Updating leader epoch for partition {tp}")
        while pending:
            bumps: dict[TopicPartition, LeaderAndIsr] = {}
            for tp in pending:
                state = states.get(tp)
                if state is None:
                    failed[tp] = IllegalControllerStateError(
                        f"Cannot update leader epoch for partition {tp} as leaderAndIsr path is empty. This could "
                        "mean we somehow tried to reassign a partition that doesn't exist")
                elif state.controller_epoch > epoch:
                    failed[tp] = StateChangeFailedError(
                        "Leader and isr path written by another controller. This probably means the current "
                        f"controller with epoch {epoch} went through a soft failure and another controller was "
                        f"elected with epoch {state.controller_epoch}. Aborting state change by this controller")
                else:
                    lai = state.leader_and_isr
                    bumps[tp] = lai.new_leader_and_isr(lai.leader, lai.isr)
            if not bumps:
                break
            result = await core.zk.update_leader_and_isr(bumps, epoch, self.context.fencing.epoch_zk_version)
            failed |= result.failed
            for tp in sorted_partitions(result.finished):
                written = LeaderIsrAndControllerEpoch(result.finished[tp], epoch)
                self.context.put_partition_leadership_info(tp, written)
                lai = written.leader_and_isr  # with the zkVersion from Kafka 2.8.1 on (KAFKA-13233)
                core.log.info(f"Updated leader epoch for partition {tp} to {lai.leader_epoch}, "
                              f"zkVersion={lai.zk_version}")
                done[tp] = written
            pending = sorted_partitions(result.to_retry)
            if pending:
                states = (await core.zk.get_topic_partition_states(pending)).values
        return done, failed

    async def _update_leader_epoch_and_send_request(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        """One partition's leader-epoch bump (re-reading its state, as Kafka does) and its LeaderAndIsr."""
        states = (await self.core.zk.get_topic_partition_states([tp])).values
        done, failed = await self._update_leader_epochs([tp], states)
        if tp in failed:
            raise failed[tp]
        self._send_leader_and_isr({tp: (done[tp], assignment)})

    def _send_leader_and_isr(
        self, updates: Mapping[TopicPartition, tuple[LeaderIsrAndControllerEpoch, ReplicaAssignment]]
    ) -> None:
        """LeaderAndIsr with the new assignment to the original replicas and (as new) to the adding ones."""
        if not updates:
            return
        batch = self.core.request_batch
        batch.new_batch()
        for tp in sorted_partitions(updates):
            updated, assignment = updates[tp]
            batch.add_leader_and_isr_request_for_brokers(assignment.origin_replicas, tp, updated, assignment, False)
            batch.add_leader_and_isr_request_for_brokers(assignment.adding_replicas, tp, updated, assignment, True)
        batch.send_requests_to_brokers(self.context.fencing)
        for tp in sorted_partitions(updates):
            updated, assignment = updates[tp]
            lai = updated.leader_and_isr
            self.core.state_change_logger.info(
                f"Sent LeaderAndIsr request {render_leader_isr_and_epoch(lai, updated.controller_epoch)} with new "
                f"replica assignment {render_assignment(assignment)} to leader {lai.leader} for partition being "
                f"reassigned {tp}")

    async def _move_leader_if_required(self, tp: TopicPartition, completed: ReplicaAssignment) -> None:
        info = self.context.partition_leadership_info(tp)
        leader = -1 if info is None else info.leader_and_isr.leader
        replicas = ",".join(str(r) for r in completed.replicas)
        prefix = f"Leader {leader} for partition {tp} being reassigned, is"
        strategy = ReassignPartitionLeaderElectionStrategy()
        psm = self.core.partition_state_machine
        if leader not in completed.replicas:
            self.core.log.info(f"{prefix} not in the new list of replicas {replicas}. Re-electing leader")
            await psm.handle_state_changes([tp], PartitionState.ONLINE, strategy)
            self._emit(tp, "leader_moved", completed)
        elif self.context.is_replica_online(leader, tp):
            self.core.log.info(f"{prefix} already in the new list of replicas {replicas} and is alive")
            await self._update_leader_epoch_and_send_request(tp, completed)
        else:
            self.core.log.info(f"{prefix} already in the new list of replicas {replicas} but is dead")
            await psm.handle_state_changes([tp], PartitionState.ONLINE, strategy)
            self._emit(tp, "leader_moved", completed)

    async def _stop_removed_replicas(self, tp: TopicPartition, removed: Sequence[int]) -> None:
        """Offline (out of the ISR), DeletionStarted (StopReplica delete), Successful at once, NonExistent."""
        replicas = [PartitionAndReplica(tp, r) for r in removed]
        rsm = self.core.replica_state_machine
        for state in (ReplicaState.OFFLINE, ReplicaState.DELETION_STARTED, ReplicaState.DELETION_SUCCESSFUL,
                      ReplicaState.NON_EXISTENT):
            await rsm.handle_state_changes(replicas, state)

    def _remove_from_reassigning_partitions(self, tp: TopicPartition, completed: ReplicaAssignment) -> None:
        if tp not in self.context.partitions_being_reassigned:
            raise IllegalControllerStateError(
                "Cannot remove a reassigning partition because it is not present in memory")
        self.core.watches.unregister_node_handler(paths.partition_state_path(tp.topic, tp.partition))
        self.records.completed(tp, completed.replicas)  # B6, B7: in ZooKeeper with the next flush
        self.context.partitions_being_reassigned.discard(tp)

    def _emit(self, tp: TopicPartition, phase: str, assignment: ReplicaAssignment) -> None:
        self.core.emit("partition_reassignment", topic=tp.topic, partition=tp.partition, phase=phase,
                       replicas=list(assignment.replicas), adding_replicas=list(assignment.adding_replicas),
                       removing_replicas=list(assignment.removing_replicas))
