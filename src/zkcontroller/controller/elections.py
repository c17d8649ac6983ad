"""Replica leader elections (spec §9.8, §9.9): Kafka's ``ReplicaLeaderElection``, ``onReplicaElection`` and
``AutoPreferredReplicaLeaderElection``.

Three triggers ask for them: ``/admin/preferred_replica_election`` (watched; deleted after every ZooKeeper-
triggered election, successful or not), the admin API (`ElectionEvents.elect_leaders`, Kafka's ElectLeaders:
preferred or unclean, one result per partition), and the auto-rebalance task, which checks each broker's
share of partitions it should lead but does not every ``leader.imbalance.check.interval.seconds``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping

from zkcontroller.controller.election import (
    OfflinePartitionLeaderElectionStrategy,
    PartitionLeaderElectionStrategy,
    PreferredReplicaPartitionLeaderElectionStrategy,
)
from zkcontroller.controller.errors import StateChangeFailedError
from zkcontroller.controller.events import (
    ApiError,
    AutoPreferredReplicaLeaderElection,
    ControllerEvent,
    ElectionTrigger,
    ElectionType,
    ReplicaLeaderElection,
)
from zkcontroller.controller.families import EventFamily, Handler
from zkcontroller.controller.scala_render import scala_collection, scala_map
from zkcontroller.controller.states import PartitionState
from zkcontroller.coordination.api import EventType
from zkcontroller.model import NO_LEADER, LeaderAndIsr, TopicPartition, sorted_partitions
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ControllerMovedError, ZnodeDecodeError

AUTO_REBALANCE_FIRST_DELAY_MS = 5000
"""Kafka runs the first imbalance check 5 s after failover, whatever the interval."""


ElectLeadersResult = dict[TopicPartition, int | ApiError]
"""Per partition: the new leader's id, or why there is none."""


def _tps(partitions: Iterable[TopicPartition]) -> str:
    return ",".join(str(tp) for tp in sorted_partitions(partitions))


def _preferred_election_handler(event_type: EventType) -> ControllerEvent | None:
    if event_type is EventType.NODE_CREATED:
        return ReplicaLeaderElection(None, ElectionType.PREFERRED, ElectionTrigger.ZK_TRIGGERED)
    return None


class ElectionEvents(EventFamily):
    def handlers(self) -> Mapping[type[ControllerEvent], Handler]:
        return {
            ReplicaLeaderElection: self.process_replica_leader_election,
            AutoPreferredReplicaLeaderElection: self.process_auto_preferred_replica_leader_election,
        }

    _rebalance_task: asyncio.Task[None] | None = None

    # ---------------------------------------------------------------- failover steps

    async def register_watches(self) -> None:
        self.core.watches.register_node_handler(paths.PREFERRED_REPLICA_ELECTION, _preferred_election_handler)
        await self.core.zk.path_exists(paths.PREFERRED_REPLICA_ELECTION, self.core.on_watch)

    async def on_failover(self) -> None:
        pending = await self.fetch_pending_preferred_replica_elections()
        await self.on_replica_election(pending, ElectionType.PREFERRED, ElectionTrigger.ZK_TRIGGERED)
        self.core.log.info("Starting the controller scheduler")
        if self.core.config.auto_leader_rebalance_enable:
            self.schedule_auto_leader_rebalance_task(self.core.config.auto_leader_rebalance_first_delay_ms)

    async def on_session_reconnected(self) -> None:
        """The znode is read again with a watch; one created meanwhile is processed (and deleted) now."""
        if await self.core.zk.path_exists(paths.PREFERRED_REPLICA_ELECTION, self.core.on_watch):
            self.core.events.put(ReplicaLeaderElection(None, ElectionType.PREFERRED, ElectionTrigger.ZK_TRIGGERED))

    def on_resignation(self) -> None:
        self.core.watches.unregister_node_handler(paths.PREFERRED_REPLICA_ELECTION)
        if self._rebalance_task is not None:
            self._rebalance_task.cancel()
            self._rebalance_task = None

    async def fetch_pending_preferred_replica_elections(self) -> set[TopicPartition]:
        context, log = self.core.context, self.core.log
        undergoing = await self._read_znode()
        completed = set()
        for tp in undergoing:
            replicas = context.partition_replica_assignment(tp)
            lai = context.partition_leader_and_isr(tp)
            if not replicas or (lai is not None and lai.leader == replicas[0]):
                completed.add(tp)
        remaining = undergoing - completed
        skipped = {tp for tp in remaining if context.is_topic_queued_up_for_deletion(tp.topic)}
        pending = remaining - skipped
        log.info(f"Partitions undergoing preferred replica election: {_tps(undergoing)}")
        log.info(f"Partitions that completed preferred replica election: {_tps(completed)}")
        log.info(f"Skipping preferred replica election for partitions due to topic deletion: {_tps(skipped)}")
        log.info(f"Resuming preferred replica election for partitions: {_tps(pending)}")
        return pending

    async def _read_znode(self, watch: bool = False) -> set[TopicPartition]:
        try:
            found = await self.core.zk.get_preferred_replica_election(self.core.on_watch if watch else None)
        except ZnodeDecodeError as e:  # Kafka's event fails on it; we say where and drop the request
            self.core.log.error(f"Ignoring malformed {paths.PREFERRED_REPLICA_ELECTION}: {e}")
            await self.core.zk.delete_preferred_replica_election(self.core.context.fencing.epoch_zk_version)
            return set()
        return set(found or ())

    # ---------------------------------------------------------------- the admin API

    async def elect_leaders(self, partitions: Iterable[TopicPartition], election_type: ElectionType
                            ) -> ElectLeadersResult:
        """Kafka's ``KafkaController.electLeaders`` (the ElectLeaders request): answered once processed."""
        answered: asyncio.Future[ElectLeadersResult] = asyncio.Future()

        def answer(results: ElectLeadersResult) -> None:
            if not answered.done():
                answered.set_result(results)

        self.core.events.put(ReplicaLeaderElection(
            frozenset(partitions), election_type, ElectionTrigger.ADMIN_CLIENT_TRIGGERED, answer))
        return await answered

    # ---------------------------------------------------------------- ReplicaLeaderElection

    async def process_replica_leader_election(self, event: ReplicaLeaderElection) -> None:
        core, context = self.core, self.core.context
        trigger, election_type = event.trigger, event.election_type
        if not core.is_active:
            event.callback({tp: ApiError(Errors.NOT_CONTROLLER) for tp in event.partitions or ()})
            return
        if event.partitions is not None:
            partitions = set(event.partitions)
        elif await core.zk.path_exists(paths.PREFERRED_REPLICA_ELECTION, core.on_watch):
            partitions = await self._read_znode()
        else:
            return
        known = {tp for tp in partitions if context.has_partition(tp)}
        unknown = partitions - known
        for tp in sorted_partitions(unknown):
            core.log.info(f"Skipping replica leader election ({election_type.name}) for partition {tp} by "
                          f"{trigger} since it doesn't exist.")
        deleting = {tp for tp in known if context.is_topic_queued_up_for_deletion(tp.topic)}
        live = known - deleting
        if deleting:
            core.log.warn(f"Skipping replica leader election ({election_type.name}) for partitions "
                          f"{_tps(deleting)} by {trigger} since the respective topics are being deleted")
        electable = {tp for tp in live if self._needs_election(tp, election_type)}
        uninitialised = {tp for tp in electable if context.partition_leader_and_isr(tp) is None}
        outcomes = await self.on_replica_election(electable, election_type, trigger)
        results: ElectLeadersResult = {}
        for tp, outcome in outcomes.items():
            if isinstance(outcome, LeaderAndIsr):
                results[tp] = outcome.leader
            elif isinstance(outcome, StateChangeFailedError):
                code = (Errors.PREFERRED_LEADER_NOT_AVAILABLE if election_type is ElectionType.PREFERRED
                        else Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE)
                results[tp] = ApiError(code, str(outcome))
            else:
                results[tp] = ApiError(Errors.UNKNOWN_SERVER_ERROR, str(outcome))
        for tp in electable - set(outcomes):  # no election ran: they had no leadership (Kafka throws on them)
            lai = context.partition_leader_and_isr(tp)
            if tp in uninitialised and lai is not None:  # the state machine initialised it (New → Online)
                results[tp] = lai.leader
            else:
                results[tp] = ApiError(Errors.UNKNOWN_SERVER_ERROR, f"No election result for {tp}")
        results.update({tp: ApiError(Errors.ELECTION_NOT_NEEDED) for tp in live - electable})
        results.update({tp: ApiError(Errors.INVALID_TOPIC_EXCEPTION, "The topic is being deleted") for tp in deleting})
        results.update({tp: ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
                        for tp in unknown})
        core.log.debug(f"Waiting for any successful result for election type ({election_type.name}) by {trigger} "
                       f"for partitions: {results}")
        event.callback(results)

    def _needs_election(self, tp: TopicPartition, election_type: ElectionType) -> bool:
        context = self.core.context
        lai = context.partition_leader_and_isr(tp)
        leader = NO_LEADER if lai is None else lai.leader
        if election_type is ElectionType.PREFERRED:
            replicas = context.partition_replica_assignment(tp)
            return bool(replicas) and leader != replicas[0]
        return leader == NO_LEADER or leader not in context.live_broker_ids

    async def on_replica_election(self, partitions: set[TopicPartition], election_type: ElectionType,
                                  trigger: ElectionTrigger) -> dict[TopicPartition, LeaderAndIsr | Exception]:
        core = self.core
        core.log.info(f"Starting replica leader election ({election_type.name}) for partitions {_tps(partitions)} "
                      f"triggered by {trigger}")
        strategy: PartitionLeaderElectionStrategy = (
            PreferredReplicaPartitionLeaderElectionStrategy() if election_type is ElectionType.PREFERRED
            else OfflinePartitionLeaderElectionStrategy(trigger is ElectionTrigger.ADMIN_CLIENT_TRIGGERED))
        try:
            results = await core.partition_state_machine.handle_state_changes(
                sorted_partitions(partitions), PartitionState.ONLINE, strategy, trigger=trigger.value)
            if trigger is not ElectionTrigger.ADMIN_CLIENT_TRIGGERED:
                for tp, result in sorted(results.items(), key=lambda item: (item[0].topic, item[0].partition)):
                    if isinstance(result, ControllerMovedError):
                        core.log.info(f"Error completing replica leader election ({election_type.name}) for "
                                      f"partition {tp} because controller has moved to another broker.")
                        raise result
                    if isinstance(result, Exception):
                        core.log.error(f"Error completing replica leader election ({election_type.name}) for "
                                       f"partition {tp}", result)
            return results
        finally:
            if trigger is not ElectionTrigger.ADMIN_CLIENT_TRIGGERED:
                await self.remove_partitions_from_preferred_replica_election(
                    partitions, trigger is ElectionTrigger.AUTO_TRIGGERED)

    async def remove_partitions_from_preferred_replica_election(self, partitions: set[TopicPartition],
                                                                auto: bool) -> None:
        core, context = self.core, self.core.context
        for tp in sorted_partitions(partitions):
            lai = context.partition_leader_and_isr(tp)
            current = NO_LEADER if lai is None else lai.leader
            preferred = context.partition_replica_assignment(tp)[0]
            if current == preferred:
                core.log.info(f"Partition {tp} completed preferred replica leader election. New leader is {preferred}")
            else:
                core.log.warn(f"Partition {tp} failed to complete preferred replica leader election to {preferred}. "
                              f"Leader is still {current}")
        if not auto:
            await core.zk.delete_preferred_replica_election(context.fencing.epoch_zk_version)
            core.events.put(ReplicaLeaderElection(None, ElectionType.PREFERRED, ElectionTrigger.ZK_TRIGGERED))

    # ---------------------------------------------------------------- auto leader rebalance (§9.9)

    def schedule_auto_leader_rebalance_task(self, delay_ms: int) -> None:
        async def enqueue_after_delay() -> None:
            await self.core.runtime.sleep_ms(delay_ms)
            self.core.events.put(AutoPreferredReplicaLeaderElection())

        self._rebalance_task = self.core.runtime.spawn(
            enqueue_after_delay(), f"auto-leader-rebalance-task-{self.core.controller_id}")

    async def process_auto_preferred_replica_leader_election(self, _event: AutoPreferredReplicaLeaderElection
                                                             ) -> None:
        if not self.core.is_active:
            return
        try:
            self.core.log.info("Processing automatic preferred replica leader election")
            await self.check_and_trigger_auto_leader_rebalance()
        finally:
            if self.core.is_active:
                self.schedule_auto_leader_rebalance_task(
                    self.core.config.leader_imbalance_check_interval_seconds * 1000)

    async def check_and_trigger_auto_leader_rebalance(self) -> None:
        core, context = self.core, self.core.context
        core.log.trace("Checking need to trigger auto leader balancing")
        by_preferred: dict[int, list[TopicPartition]] = {}
        for tp in sorted_partitions(context.all_partitions):
            replicas = context.partition_replica_assignment(tp)
            if replicas and not context.is_topic_queued_up_for_deletion(tp.topic):
                by_preferred.setdefault(replicas[0], []).append(tp)
        threshold = core.config.leader_imbalance_per_broker_percentage / 100
        for broker_id, partitions in sorted(by_preferred.items()):
            not_preferred = [tp for tp in partitions if (lai := context.partition_leader_and_isr(tp)) is not None
                             and lai.leader != broker_id]
            if core.log.is_enabled_for(logging.DEBUG):  # the group's kind (Map1-4 or HashMap) and its replicas
                shown = {tp: scala_collection("List", context.partition_replica_assignment(tp)) for tp in not_preferred}
                core.log.debug(f"Topics not in preferred replica for broker {broker_id} "
                               f"{scala_map(shown, built_from=len(partitions))}")
            ratio = len(not_preferred) / len(partitions)
            core.log.trace(f"Leader imbalance ratio for broker {broker_id} is {ratio}")
            if ratio > threshold:
                candidates = {tp for tp in not_preferred if self._can_move_to_preferred(tp, broker_id)}
                await self.on_replica_election(candidates, ElectionType.PREFERRED, ElectionTrigger.AUTO_TRIGGERED)

    def _can_move_to_preferred(self, tp: TopicPartition, preferred: int) -> bool:
        """Live (not shutting down), in the ISR, nothing being reassigned anywhere, topic not being deleted."""
        context = self.core.context
        lai = context.partition_leader_and_isr(tp)
        return (context.is_replica_online(preferred, tp) and not context.partitions_being_reassigned
                and not context.is_topic_queued_up_for_deletion(tp.topic) and tp.topic in context.all_topics
                and lai is not None and preferred in lai.isr)
