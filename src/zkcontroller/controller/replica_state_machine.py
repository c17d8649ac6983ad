"""`ReplicaStateMachine`: moves replicas (partition, broker) through their lifecycle (spec §6).

Most transitions only queue requests: LeaderAndIsr to a replica that (re)joins, StopReplica to one that
leaves or is deleted. OfflineReplica is the one that writes ZooKeeper: the replica is removed from the ISR
with a fenced conditional write (retried on version conflicts), never emptying the ISR (§6.5), and the
remaining replicas are told the new leadership.

Errors: `ControllerMovedError` propagates; anything else is logged and swallowed, as in Kafka.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from itertools import groupby, repeat
from operator import attrgetter, itemgetter
from typing import cast

from zkcontroller.controller.assignment import EMPTY_ASSIGNMENT, remove_replica
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.errors import StateChangeFailedError
from zkcontroller.controller.event_log import TRACE, StateChangeLogger, render_leader_isr_and_epoch
from zkcontroller.controller.request_batch import ControllerBrokerRequestBatch
from zkcontroller.controller.state_machine import StateMachine
from zkcontroller.controller.states import (
    VALID_PREVIOUS_REPLICA_STATES,
    PartitionAndReplica,
    ReplicaState,
    sorted_replicas,
    split_by_validity,
)
from zkcontroller.model import (
    NO_LEADER,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
    sorted_by_partition,
    sorted_partitions,
)
from zkcontroller.zk.errors import ControllerMovedError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

RemovalResult = LeaderIsrAndControllerEpoch | Exception

_NO_PARTITIONS: dict[int, ReplicaAssignment] = {}
"""A topic the context has no assignment for (`ControllerContext.partition_full_replica_assignment`, inlined)."""

_replica_id: Callable[[PartitionAndReplica], int] = itemgetter(1)
"""``PartitionAndReplica.replica`` in C: the key a step sorts and groups its replicas by (20,000 of them when a
broker fails)."""

_first = itemgetter(0)
_state_name = attrgetter("_value_")
"""A state's Kafka name (`Enum`'s ``_value_``, without its Python-level ``value`` property)."""


class ReplicaStateMachine(StateMachine[PartitionAndReplica, ReplicaState]):
    """Kafka's ``ZkReplicaStateMachine``; owns one of the controller's three request batches."""

    _noun = "replicas"
    _valid_previous = VALID_PREVIOUS_REPLICA_STATES
    _invalid_template = ("Replica {item} should be in the {states} states before moving to {target} state. "
                         "Instead it is in {current} state")

    def __init__(self, config: ControllerConfig, context: ControllerContext, zk: KafkaZkClient,
                 batch: ControllerBrokerRequestBatch, logger: StateChangeLogger) -> None:
        super().__init__(config, context, zk, batch, logger, "ReplicaStateMachine")

    # ------------------------------------------------------------------ startup (§6.4)

    async def startup(self) -> None:
        self._log.info("%sInitializing replica state", self._ident)
        self.initialize_replica_state()
        online, offline = self.context.online_and_offline_replicas
        self._log.info("%sTriggering online replica state changes", self._ident)
        await self.handle_state_changes(sorted_replicas(online), ReplicaState.ONLINE)
        self._log.info("%sTriggering offline replica state changes", self._ident)
        await self.handle_state_changes(sorted_replicas(offline), ReplicaState.OFFLINE)

    def initialize_replica_state(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        """Online replicas → OnlineReplica; others → ReplicaDeletionIneligible (safe for deletion); of every
        partition, or of ``partitions``."""
        for tp in sorted_partitions(self.context.all_partitions if partitions is None else partitions):
            for r in self.context.partition_replica_assignment(tp):
                state = (ReplicaState.ONLINE if self.context.is_replica_online(r, tp)
                         else ReplicaState.DELETION_INELIGIBLE)
                self.context.put_replica_state(PartitionAndReplica(tp, r), state)

    # ------------------------------------------------------------------ state changes (§6.2, §6.3)

    async def handle_state_changes(self, replicas: Iterable[PartitionAndReplica], target_state: ReplicaState, *,
                                   sorted_distinct: bool = False) -> None:
        """``sorted_distinct``: the caller promises the replicas come in order, none twice (then they are not
        de-duplicated, a hash of a nested tuple each, nor their partitions' order checked again: ~4 ms for a broker
        failure's 20,000)."""
        replicas = list(replicas) if sorted_distinct else list(dict.fromkeys(replicas))
        if not replicas:
            return

        async def step() -> None:
            by_broker = sorted(replicas, key=_replica_id)
            for broker_id, group in groupby(by_broker, key=_replica_id):
                await self._do_handle_state_changes(broker_id, list(group), target_state, sorted_distinct)

        await self._in_batch(target_state, step, lambda _e: None)

    async def _do_handle_state_changes(self, replica_id: int, replicas: list[PartitionAndReplica],
                                       target: ReplicaState, in_order: bool = False) -> None:
        """``in_order``: ``replicas`` are in partition order (a sorted step's group, which the stable sort by
        broker keeps in order)."""
        # `put_replica_state_if_not_exists` and the current state in one lookup per replica, in C
        current = list(map(self.context.replica_states.setdefault, replicas, repeat(ReplicaState.NON_EXISTENT)))
        valid, valid_states, invalid = split_by_validity(replicas, current, target, self._valid_previous)
        for r in invalid:
            self._log_invalid_transition(r, self.context.replica_state(r), target)
        if target == ReplicaState.NEW:
            self._to_new(replica_id, valid)
        elif target == ReplicaState.ONLINE:
            self._to_online(replica_id, valid)
        elif target == ReplicaState.OFFLINE:
            await self._to_offline(replica_id, valid, valid_states, in_order)
        elif target == ReplicaState.DELETION_STARTED:
            for r in valid:
                self._set_state(r, target)
                self.batch.add_stop_replica_request_for_brokers([replica_id], r.topic_partition, True)
        elif target in (ReplicaState.DELETION_INELIGIBLE, ReplicaState.DELETION_SUCCESSFUL):
            for r in valid:
                self._set_state(r, target)
        else:  # NonExistentReplica: forget the replica (ZooKeeper is not touched)
            for r in valid:
                tp = r.topic_partition
                self.context.update_partition_full_replica_assignment(
                    tp, remove_replica(self.context.partition_full_replica_assignment(tp), replica_id))
                self._log_transition(r, self.context.replica_state(r), target)
                self.context.remove_replica_state(r)

    def _to_new(self, replica_id: int, valid: list[PartitionAndReplica]) -> None:
        for r in valid:
            tp = r.topic_partition
            info = self.context.partition_leadership_info(tp)
            if info is not None and info.leader_and_isr.leader == replica_id:
                # Kafka names OfflineReplica as the target in this failure line; kept for log compatibility.
                self._log_failed_state_change(r, self.context.replica_state(r), ReplicaState.OFFLINE,
                                              StateChangeFailedError(
                    f"Replica {replica_id} for partition {tp} cannot be moved to NewReplica state as it is being "
                    "requested to become leader"))
                continue
            if info is not None:
                self.batch.add_leader_and_isr_request_for_brokers(
                    [replica_id], tp, info, self.context.partition_full_replica_assignment(tp), True)
            self._set_state(r, ReplicaState.NEW)

    def _to_online(self, replica_id: int, valid: list[PartitionAndReplica]) -> None:
        for r in valid:
            tp = r.topic_partition
            if self.context.replica_state(r) == ReplicaState.NEW:
                assignment = self.context.partition_full_replica_assignment(tp)
                if replica_id not in assignment.replicas:
                    self._log.error("%sAdding replica (%s) that is not part of the assignment %s", self._ident,
                                    replica_id, assignment)
                    self.context.update_partition_full_replica_assignment(tp, ReplicaAssignment(
                        (*assignment.replicas, replica_id), assignment.adding_replicas,
                        assignment.removing_replicas))
            else:
                info = self.context.partition_leadership_info(tp)
                if info is not None:
                    self.batch.add_leader_and_isr_request_for_brokers(
                        [replica_id], tp, info, self.context.partition_full_replica_assignment(tp), False)
            self._set_state(r, ReplicaState.ONLINE)

    async def _to_offline(self, replica_id: int, valid: list[PartitionAndReplica], states: list[ReplicaState],
                          in_order: bool = False) -> None:
        """``states``: each valid replica's current state, as `split_by_validity` found them (nothing changes a
        replica's state while its ISR removal awaits the store: the controller handles one event at a time).
        ``in_order``: ``valid`` is known to be in partition order (its order is then not checked again)."""
        context, batch = self.context, self.batch
        if replica_id in context.live_or_shutting_down_broker_ids:  # else the StopReplica would go nowhere
            batch.add_stop_replica_requests([replica_id], [r.topic_partition for r in valid], False)
        with_leadership: list[TopicPartition] = []
        infos: list[LeaderIsrAndControllerEpoch] = []  # theirs, in the same order: the first attempt's copies
        without_leadership: list[PartitionAndReplica] = []
        leadership = context.partition_leadership_info
        for r in valid:
            tp = r[0]  # `r.topic_partition`
            info = leadership(tp)
            if info is None:
                without_leadership.append(r)
            else:
                with_leadership.append(tp)
                infos.append(info)
        results = await self.remove_replicas_from_isr(replica_id, with_leadership, infos)
        updated: list[tuple[TopicPartition, LeaderIsrAndControllerEpoch]]
        every_one = len(results) == len(with_leadership) and (in_order or sorted(with_leadership) == with_leadership)
        if every_one:
            # the usual case: each partition's ISR removal came back (its keys are some of those given), and
            # `valid` came in partition order (a step's replicas are sorted; a sorted list is one pass, and the
            # comparison identity tests, in C), so the partitions in order are those given: looked up, not sorted
            updated = list(zip(with_leadership, map(results.__getitem__, with_leadership), strict=True))
        else:
            updated = sorted_by_partition(results.items())
        scl = self.state_change_logger
        offline = ReplicaState.OFFLINE
        replica_states = context.replica_states
        replicas: list[PartitionAndReplica]
        previous: list[ReplicaState]
        if every_one and not without_leadership:
            # and every replica's partition has a leadership: the replicas and their states are then the ones
            # given, not rebuilt and looked up again
            replicas, previous = valid, states
        else:
            new_tuple = tuple.__new__  # a `PartitionAndReplica` per partition without its Python `__new__`
            replicas = [new_tuple(PartitionAndReplica, (tp, replica_id)) for tp, _ in updated]
            previous = [replica_states[r] for r in replicas]
        if scl.is_enabled_for(logging.INFO):  # Kafka's lines, per partition in this order
            tracing = scl.is_enabled_for(TRACE)
            for (tp, info), current in zip(updated, previous, strict=True):
                rendered = render_leader_isr_and_epoch(info.leader_and_isr, info.controller_epoch)
                scl.info(f"Partition {tp} state changed to {rendered} after removing replica {replica_id} from the "
                         f"ISR as part of transition to {offline}")
                if tracing:
                    scl.trace(f"Changed state of replica {replica_id} for partition {tp} from {current} to {offline}")
        deleting = context.topics_to_be_deleted
        assignments = context.partition_assignments  # `partition_full_replica_assignment`, inlined
        others_of: dict[tuple[int, ...], tuple[int, ...]] = {}  # each replica set without `replica_id`, made once
        requests = []
        topic_of_parts, parts = None, _NO_PARTITIONS  # the last topic's assignments: a step's come topic by topic
        for tp, info in updated:
            topic = tp[0]
            if topic not in deleting:
                if topic != topic_of_parts:
                    topic_of_parts, parts = topic, assignments.get(topic, _NO_PARTITIONS)
                a = parts.get(tp[1], EMPTY_ASSIGNMENT)
                others = others_of.get(a.replicas)
                if others is None:
                    others = others_of[a.replicas] = tuple([b for b in a.replicas if b != replica_id])
                requests.append((others, tp, info, a))
        batch.add_leader_and_isr_requests(requests, False, led=True)  # each `info` is the context's (stored or known)
        replica_states.update(zip(replicas, repeat(offline)))
        # (partition, previous state's name) pairs made by C iterators, not a list built in Python, as the records
        # are written at once
        scl.replicas_changed(zip(map(_first, updated), map(_state_name, previous), strict=True),
                             replica_id, offline._value_)
        for r in without_leadership:
            self.batch.add_update_metadata_request_for_brokers(
                self.context.live_or_shutting_down_broker_ids, [r.topic_partition])
            self._set_state(r, ReplicaState.OFFLINE)

    # ------------------------------------------------------------------ ISR removal (§6.5)

    async def remove_replicas_from_isr(self, replica_id: int, partitions: Sequence[TopicPartition],
                                       infos: Sequence[LeaderIsrAndControllerEpoch] | None = None
                                       ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Take ``replica_id`` out of each partition's ISR in ZooKeeper, retrying version conflicts.

        ``infos``: each partition's leadership in the context, in the same order, when the caller has just looked
        them up (the first attempt starts from them instead of asking the context again).
        Returns the partitions that now have a known state (written, or already without the replica).
        """
        results: dict[TopicPartition, LeaderIsrAndControllerEpoch] | None = None
        remaining = list(partitions)
        from_cache = True  # as in `ZkPartitionStateMachine.elect_leader_for_partitions`: see `_cached_states`
        while remaining:
            finished, failures, remaining = await self._do_remove_replicas_from_isr(
                replica_id, remaining, from_cache, infos if from_cache else None)
            from_cache = False
            for tp, error in failures:
                replica = PartitionAndReplica(tp, replica_id)
                self._log_failed_state_change(replica, self.context.replica_state(replica), ReplicaState.OFFLINE,
                                              error)
            if results is None:  # the first attempt's dict is the result (a copy of 20,000 when a broker fails)
                results = finished
            else:
                results.update(finished)
        return {} if results is None else results

    async def _do_remove_replicas_from_isr(
        self, replica_id: int, partitions: list[TopicPartition], from_cache: bool = False,
        infos: Sequence[LeaderIsrAndControllerEpoch] | None = None,
    ) -> tuple[dict[TopicPartition, LeaderIsrAndControllerEpoch], list[tuple[TopicPartition, Exception]],
               list[TopicPartition]]:
        """One attempt: (each partition's known leadership, in the order met; the failures, in the order they were
        met, those without a state last; the partitions to retry). ``infos``: see `remove_replicas_from_isr`."""
        epoch = self.context.epoch
        leadership = self.context.partition_leadership_info
        finished: dict[TopicPartition, RemovalResult | LeaderAndIsr] = {}
        adjusted: dict[TopicPartition, LeaderAndIsr] = {}
        retry: list[TopicPartition] = []
        new_tuple = tuple.__new__  # NamedTuples built in C: their generated `__new__` is a Python frame
        isr_without: dict[tuple[int, ...], tuple[int, ...]] = {}  # each distinct ISR without the replica, made once

        def adjust(tp: TopicPartition, state: LeaderAndIsr) -> None:
            new_leader = NO_LEADER if state.leader == replica_id else state.leader
            isr = state.isr
            new_isr = isr_without.get(isr)
            if new_isr is None:
                new_isr = isr_without[isr] = isr if len(isr) == 1 else tuple([r for r in isr if r != replica_id])
            # `state.new_leader_and_isr(new_leader, new_isr)`: leader epoch bumped, same expected zkVersion
            adjusted[tp] = new_tuple(LeaderAndIsr, (new_leader, state.leader_epoch + 1, new_isr, state.zk_version))

        from_copy: dict[TopicPartition, RemovalResult | LeaderAndIsr] = {}
        to_read = partitions
        if from_cache and StateMachine.first_attempt_from_context:
            # The context's copy of each state (see `_cached_states`), classified as it is read, in one pass: a
            # broker failure's 20,000 partitions went through a dict of copies and a dict of states before.
            to_read = []
            may_have_widened = not self.only_controller_writes_states
            given = infos if infos is not None else map(leadership, partitions)
            for tp, info in zip(partitions, given, strict=True):
                if info is None:
                    to_read.append(tp)
                    continue
                state, controller_epoch = info
                if controller_epoch > epoch:  # written by a newer controller: re-read, or fail
                    if may_have_widened:
                        retry.append(tp)
                    else:
                        from_copy[tp] = self._unless_newer(info)
                elif replica_id in (isr := state.isr):  # `adjust(tp, state)`, inlined: a call per partition
                    new_isr = isr_without.get(isr)
                    if new_isr is None:
                        new_isr = isr_without[isr] = (isr if len(isr) == 1
                                                      else tuple([r for r in isr if r != replica_id]))
                    leader = state.leader
                    adjusted[tp] = new_tuple(LeaderAndIsr, (NO_LEADER if leader == replica_id else leader,
                                                            state.leader_epoch + 1, new_isr, state.zk_version))
                elif may_have_widened:
                    retry.append(tp)  # "not in the ISR" from our copy: a leader may have widened it since
                elif controller_epoch == epoch:
                    # already without the replica, and stamped with our epoch: the result is this very
                    # leadership (below, `known`), nothing to store
                    from_copy[tp] = info
                else:
                    from_copy[tp] = state
        if to_read:
            read, no_state = await self._get_topic_partition_states_from_zk(to_read)
            for tp, found in read.items():
                if isinstance(found, LeaderAndIsr) and replica_id in found.isr:
                    adjust(tp, found)
                else:
                    finished[tp] = found
        else:
            no_state = []
        if finished:  # states read first, then the copy's, as the two were merged before
            finished.update(from_copy)
        else:
            finished = from_copy
        if adjusted:
            fencing = self.context.fencing
            update = await self.zk.update_leader_and_isr(adjusted, fencing.epoch, fencing.epoch_zk_version)
            redo = self._redo_from_zookeeper(update.failed, from_cache)
            finished.update(update.finished)
            finished.update((tp, e) for tp, e in update.failed.items() if tp not in redo)
            retry = sorted_partitions([*retry, *update.to_retry, *redo])
        epoch = self.context.epoch
        stored: list[tuple[TopicPartition, LeaderIsrAndControllerEpoch]] = []
        failures: list[tuple[TopicPartition, Exception]] = []
        for tp, result in finished.items():  # each state's leadership in place: `finished` becomes the result
            if isinstance(result, LeaderAndIsr):
                known = leadership(tp)
                if known is not None and known.controller_epoch == epoch and known.leader_and_isr == result:
                    finished[tp] = known  # already without the replica (a leader just elected): nothing to store
                    continue
                finished[tp] = info = new_tuple(LeaderIsrAndControllerEpoch, (result, epoch))
                stored.append((tp, info))
            elif isinstance(result, Exception):
                failures.append((tp, result))
        for tp, _ in failures:  # out of the result, which keeps the others' order
            del finished[tp]
        self.context.put_partition_leadership_infos(stored)
        self.state_change_logger.isrs_changed((tp, info.leader_and_isr) for tp, info in stored if tp in adjusted)
        for tp in no_state:
            if not self.context.is_topic_queued_up_for_deletion(tp.topic):
                failures.append((tp, StateChangeFailedError(
                    f"Failed to change state of replica {replica_id} for partition {tp} since the leader and isr "
                    "path in zookeeper is empty")))
        return cast(dict[TopicPartition, LeaderIsrAndControllerEpoch], finished), failures, retry

    def _unless_newer(self, state: LeaderIsrAndControllerEpoch) -> LeaderAndIsr | Exception:
        if self._written_by_newer_controller(state):
            return StateChangeFailedError(
                "Leader and isr path written by another controller. This probably means the current controller "
                f"with epoch {self.context.epoch} went through a soft failure and another controller was "
                f"elected with epoch {state.controller_epoch}. Aborting state change by this controller")
        return state.leader_and_isr

    async def _get_topic_partition_states_from_zk(
        self, partitions: list[TopicPartition]
    ) -> tuple[dict[TopicPartition, LeaderAndIsr | Exception], list[TopicPartition]]:
        """States read, with a failure for those written by a newer controller; plus those with no state."""
        try:
            read = await self.zk.get_topic_partition_states(partitions)
        except ControllerMovedError:
            raise
        except Exception as e:
            return {tp: e for tp in partitions}, []
        result: dict[TopicPartition, LeaderAndIsr | Exception] = {}
        no_state: list[TopicPartition] = []
        for tp in partitions:
            state = read.values.get(tp)
            if state is None:
                no_state.append(tp)
            else:
                result[tp] = self._unless_newer(state)
        return result, no_state

    # ------------------------------------------------------------------ logging

    def _set_state(self, replica: PartitionAndReplica, target: ReplicaState) -> None:
        self._log_transition(replica, self.context.replica_state(replica), target)
        self.context.put_replica_state(replica, target)

    def _log_transition(self, replica: PartitionAndReplica, current: ReplicaState, target: ReplicaState) -> None:
        tp = replica.topic_partition
        if self.state_change_logger.is_enabled_for(TRACE):
            self.state_change_logger.trace(
                f"Changed state of replica {replica.replica} for partition {tp} from {current} to {target}")
        self.state_change_logger.replica_changed(tp, replica.replica, current._value_, target._value_)

    def _log_failed_state_change(self, replica: PartitionAndReplica, current: ReplicaState, target: ReplicaState,
                                 error: BaseException) -> None:
        if not self.state_change_logger.is_enabled_for(logging.ERROR):  # many at once when a broker dies
            return
        self.state_change_logger.error(
            f"Controller {self.controller_id} epoch {self.context.epoch} initiated state change of replica "
            f"{replica.replica} for partition {replica.topic_partition} from {current} to {target} failed", error)
