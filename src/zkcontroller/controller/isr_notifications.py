"""ISR changes made by partition leaders (spec §9.11, §9.14): Kafka's ``IsrChangeNotification`` and
``AlterIsrReceived``.

Brokers before IBP 2.7-IV2 write the new ISR to the partition state znode themselves and leave a sequential
``/isr_change_notification/isr_change_<n>`` naming the partitions; the controller re-reads those states,
tells every broker (UpdateMetadata), and deletes the notifications. Newer brokers send AlterIsr instead: the
controller checks the broker epoch, the leader epoch and the state's zkVersion, writes ZooKeeper fenced, answers
per partition, and sends UpdateMetadata. Both can complete a reassignment waiting for its targets to join the
ISR; that part belongs to the reassignment family, reached through `ReassignmentCompletionClient`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from zkcontroller.controller.events import AlterIsrReceived, ControllerEvent, IsrChangeNotification
from zkcontroller.controller.families import EventFamily, Handler
from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition, sorted_partitions
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import AlterIsrPartitionResult, AlterIsrRequest, AlterIsrResponse
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ControllerMovedError


class ReassignmentCompletionClient(Protocol):
    """What ISR changes need of reassignment: finish one whose targets may now all be in the ISR."""

    async def maybe_complete_reassignment(self, tp: TopicPartition) -> None: ...


def _tps(partitions: Iterable[TopicPartition]) -> str:
    return ",".join(str(tp) for tp in sorted_partitions(partitions))


class IsrChangeEvents(EventFamily):
    reassignments: ReassignmentCompletionClient | None = None
    """Set by the controller: the reassignment family, told of ISR changes of partitions being reassigned."""

    def handlers(self) -> Mapping[type[ControllerEvent], Handler]:
        return {IsrChangeNotification: self.process_isr_change_notification, AlterIsrReceived: self.process_alter_isr}

    # ---------------------------------------------------------------- failover steps

    async def register_watches(self) -> None:
        """Steps 1–2: watch the notifications, and delete those left from before unread (the context load that
        follows reads the states they announce)."""
        self.core.watches.register_child_handler(paths.ISR_CHANGE_NOTIFICATION, IsrChangeNotification)
        self.core.log.info("Deleting isr change notifications")
        zk = self.core.zk
        stale = await zk.get_all_isr_change_notifications(self.core.on_watch)  # arms the child watch
        if stale:
            await zk.delete_isr_change_notifications(stale, self.core.context.fencing.epoch_zk_version)

    def on_resignation(self) -> None:
        self.core.watches.unregister_child_handler(paths.ISR_CHANGE_NOTIFICATION)

    async def on_session_reconnected(self) -> None:
        self.core.events.put(IsrChangeNotification())

    # ---------------------------------------------------------------- shared

    async def update_leader_and_isr_cache(self, partitions: Iterable[TopicPartition]) -> None:
        """Kafka's ``updateLeaderAndIsrCache``: re-read the states from ZooKeeper into the context."""
        wanted = sorted_partitions(partitions)
        if not wanted:
            return
        read = await self.core.zk.get_topic_partition_states(wanted)
        for path, error in sorted(read.malformed.items()):
            self.core.log.error(f"Skipping malformed partition state at {path}: {error.reason}")
        for tp in wanted:
            state = read.values.get(tp)
            if state is not None and self.core.context.has_partition(tp):
                self.core.context.put_partition_leadership_info(tp, state)

    async def _maybe_complete_reassignments(self, partitions: Iterable[TopicPartition]) -> None:
        if self.reassignments is None:
            return
        for tp in sorted_partitions(partitions):
            if tp in self.core.context.partitions_being_reassigned:
                await self.reassignments.maybe_complete_reassignment(tp)

    # ---------------------------------------------------------------- IsrChangeNotification (§9.11)

    async def process_isr_change_notification(self, _event: IsrChangeNotification) -> None:
        core = self.core
        if not core.is_active:
            return
        sequence_numbers = await core.zk.get_all_isr_change_notifications(core.on_watch)
        try:
            read = await core.zk.get_partitions_from_isr_change_notifications(sequence_numbers)
            for path, error in sorted(read.malformed.items()):
                core.log.error(f"Ignoring malformed ISR change notification {path}: {error.reason}")
            partitions = set().union(*read.values.values()) if read.values else set()
            if partitions:
                await self.update_leader_and_isr_cache(partitions)
                live = sorted(core.context.live_or_shutting_down_broker_ids)
                core.log.debug(f"Sending MetadataRequest to Brokers: {live} for TopicPartitions: {_tps(partitions)}")
                core.send_update_metadata_request(live, partitions)
                await self._maybe_complete_reassignments(partitions)
        finally:
            if sequence_numbers:
                await core.zk.delete_isr_change_notifications(sequence_numbers,
                                                              core.context.fencing.epoch_zk_version)

    # ---------------------------------------------------------------- AlterIsr (§9.14)

    async def process_alter_isr(self, event: AlterIsrReceived) -> None:
        request: AlterIsrRequest = event.request
        core, context = self.core, self.core.context
        if not core.is_active:
            event.callback(AlterIsrResponse(Errors.NOT_CONTROLLER))
            return
        cached_epoch = context.live_broker_id_and_epochs.get(request.broker_id)
        if cached_epoch is None:
            core.log.info(f"Ignoring AlterIsr due to unknown broker {request.broker_id}")
            event.callback(AlterIsrResponse(Errors.STALE_BROKER_EPOCH))
            return
        if cached_epoch != request.broker_epoch:
            core.log.info(f"Ignoring AlterIsr due to stale broker epoch {request.broker_epoch} for broker "
                          f"{request.broker_id}")
            event.callback(AlterIsrResponse(Errors.STALE_BROKER_EPOCH))
            return
        try:
            results = await self._alter_isr(request)
        except Exception as e:
            core.log.error(f"Error when processing AlterIsr for partitions: "
                           f"{_tps(p.topic_partition for p in request.partitions)}", e)
            event.callback(AlterIsrResponse(Errors.UNKNOWN_SERVER_ERROR))
            if isinstance(e, ControllerMovedError):
                raise
            return
        event.callback(AlterIsrResponse(Errors.NONE, tuple(results[tp] for tp in sorted_partitions(results))))
        await self._maybe_complete_reassignments(tp for tp, r in results.items() if r.error is Errors.NONE)

    async def _alter_isr(self, request: AlterIsrRequest) -> dict[TopicPartition, AlterIsrPartitionResult]:
        core, context = self.core, self.core.context
        results: dict[TopicPartition, AlterIsrPartitionResult] = {}
        adjusted: dict[TopicPartition, LeaderAndIsr] = {}
        for p in request.partitions:
            tp = p.topic_partition
            proposed = LeaderAndIsr(request.broker_id, p.leader_epoch, tuple(p.new_isr), p.current_isr_version)
            current = context.partition_leader_and_isr(tp)
            if current is None:
                results[tp] = AlterIsrPartitionResult(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION)
            elif proposed.leader_epoch < current.leader_epoch:
                results[tp] = AlterIsrPartitionResult(tp, Errors.FENCED_LEADER_EPOCH)
            elif proposed.equals_ignoring_zk_version(current):
                results[tp] = _result(tp, current)
            elif ineligible := sorted((set(p.new_isr) - set(current.isr)) - context.live_broker_ids):
                # Beyond 2.8 (KIP-841, Kafka 3.3): a replica on a broker that is shutting down (or gone) does not
                # rejoin the ISR, so a fetch it sent just before its StopReplica cannot undo the controlled
                # shutdown's ISR removal.
                core.log.info(f"Rejecting AlterIsr of {tp}: replicas {ineligible} are on brokers that are shutting "
                              "down or not live")
                results[tp] = AlterIsrPartitionResult(tp, Errors.INELIGIBLE_REPLICA)
            else:
                adjusted[tp] = proposed
        core.log.debug(f"Updating ISRs for partitions: {_tps(adjusted)}.")
        succeeded: list[TopicPartition] = []
        if adjusted:
            await self._write(adjusted, results, succeeded)
        await self.update_leader_and_isr_cache(succeeded)
        core.send_update_metadata_request(context.live_or_shutting_down_broker_ids,
                                          [p.topic_partition for p in request.partitions])
        return results

    async def _write(self, adjusted: dict[TopicPartition, LeaderAndIsr],
                     results: dict[TopicPartition, AlterIsrPartitionResult], succeeded: list[TopicPartition]) -> None:
        core, context = self.core, self.core.context
        fencing = context.fencing
        update = await core.zk.update_leader_and_isr(adjusted, fencing.epoch, fencing.epoch_zk_version)
        for tp, outcome in update.finished.items():
            core.log.debug(f"ISR for partition {tp} updated to [{','.join(map(str, outcome.isr))}] and zkVersion "
                           f"updated to [{outcome.zk_version}]")
            results[tp] = _result(tp, outcome)
            context.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(outcome, fencing.epoch))
            core.state_change_logger.isr_changed(tp, outcome)
            succeeded.append(tp)
        for tp, error in update.failed.items():
            core.log.error(f"Failed to update ISR for partition {tp}", error)
            results[tp] = AlterIsrPartitionResult(tp, Errors.UNKNOWN_SERVER_ERROR)
        for tp in update.to_retry:
            core.log.info(f"Failed to update ISR to {adjusted[tp]} for partition {tp}, bad ZK version.")
            results[tp] = AlterIsrPartitionResult(tp, Errors.INVALID_UPDATE_VERSION)


def _result(tp: TopicPartition, lai: LeaderAndIsr) -> AlterIsrPartitionResult:
    return AlterIsrPartitionResult(tp, Errors.NONE, lai.leader, lai.leader_epoch, tuple(lai.isr), lai.zk_version)
