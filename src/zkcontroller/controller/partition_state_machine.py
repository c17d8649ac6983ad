"""`PartitionStateMachine`: moves partitions between New/Online/Offline/NonExistent (spec §5).

Going Online is where leaders are chosen: a new partition gets its first leader and state znode
(§5.4); an existing one is re-elected with a strategy (§5.5–§5.7), writing the new leadership to ZooKeeper
with a conditional, controller-fenced write and retrying on version conflicts (a broker's concurrent ISR
write). The batch queued along the way is sent once per `handle_state_changes` call.

Errors: `ControllerMovedError` (we are fenced) propagates so the controller resigns; any other error fails
every partition of the call and leaves the batch as it is, as in Kafka (§12.2).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from itertools import repeat
from operator import is_, itemgetter

from zkcontroller.controller.assignment import EMPTY_ASSIGNMENT
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.dynamic_config import DynamicBrokerConfig, InvalidDynamicConfigError, parse_boolean
from zkcontroller.controller.election import (
    ControlledShutdownPartitionLeaderElectionStrategy,
    ElectionResult,
    OfflinePartitionLeaderElectionStrategy,
    PartitionLeaderElectionStrategy,
    PreferredReplicaPartitionLeaderElectionStrategy,
    ReassignPartitionLeaderElectionStrategy,
    elect_leaders_for_controlled_shutdown,
    elect_leaders_for_offline,
    elect_leaders_for_preferred_replica,
    elect_leaders_for_reassign,
)
from zkcontroller.controller.errors import StateChangeFailedError
from zkcontroller.controller.event_log import TRACE, StateChangeLogger, render_leader_and_isr
from zkcontroller.controller.request_batch import ControllerBrokerRequestBatch
from zkcontroller.controller.state_machine import StateMachine
from zkcontroller.controller.states import VALID_PREVIOUS_PARTITION_STATES, PartitionState, split_by_validity
from zkcontroller.model import (
    INITIAL_LEADER_EPOCH,
    INITIAL_PARTITION_EPOCH,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
    sorted_partitions,
)
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ControllerMovedError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import UNCLEAN_LEADER_ELECTION_ENABLE

_first = itemgetter(0)

_NO_PARTITIONS: dict[int, ReplicaAssignment] = {}
"""A topic the context has no assignment for (`ControllerContext.partition_full_replica_assignment`, inlined)."""

Result = LeaderAndIsr | Exception
"""Per partition: the new leadership (Kafka's ``Right``) or why not (``Left``)."""


def _parse_bool(value: str) -> bool:
    """The topic override as `parse_boolean` reads it; a bad value fails the partitions' state change."""
    try:
        return parse_boolean(UNCLEAN_LEADER_ELECTION_ENABLE, value)
    except InvalidDynamicConfigError as e:
        raise StateChangeFailedError(str(e)) from None


class PartitionStateMachine(StateMachine[TopicPartition, PartitionState]):
    """Kafka's ``ZkPartitionStateMachine``; owns one of the controller's three request batches."""

    _noun = "partitions"
    _valid_previous = VALID_PREVIOUS_PARTITION_STATES
    _invalid_template = ("Partition {item} should be in one of {states} states before moving to {target} state. "
                         "Instead it is in {current} state")

    def __init__(self, config: ControllerConfig, context: ControllerContext, zk: KafkaZkClient,
                 batch: ControllerBrokerRequestBatch, logger: StateChangeLogger,
                 dynamic_config: DynamicBrokerConfig | None = None) -> None:
        super().__init__(config, context, zk, batch, logger, "PartitionStateMachine")
        self.dynamic_config = dynamic_config or DynamicBrokerConfig(config.unclean_leader_election_enable)
        """The controller's broker default for unclean election (dynamic over static); shared with the
        controller, which updates it on config-change notifications."""

    # ------------------------------------------------------------------ startup and triggers

    async def startup(self) -> None:
        """§5.3: derive every partition's state from the leadership cache, then elect where needed."""
        self._log.info("%sInitializing partition state", self._ident)
        self.initialize_partition_state()
        self._log.info("%sTriggering online partition state changes", self._ident)
        await self.trigger_online_partition_state_change()

    def initialize_partition_state(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        """Every partition's state (or those of ``partitions``) from its leadership: none → New, a live leader →
        Online, else Offline."""
        for tp in sorted_partitions(self.context.all_partitions if partitions is None else partitions):
            info = self.context.partition_leadership_info(tp)
            if info is None:
                state = PartitionState.NEW
            elif self.context.is_replica_online(info.leader_and_isr.leader, tp):
                state = PartitionState.ONLINE
            else:
                state = PartitionState.OFFLINE
            self.context.put_partition_state(tp, state)

    async def trigger_online_partition_state_change(self, topic: str | None = None
                                                    ) -> dict[TopicPartition, Result]:
        """New and Offline partitions (of ``topic``, or all) not queued for deletion → Online, clean only."""
        candidates = self.context.partitions_in_states_in_order({PartitionState.OFFLINE, PartitionState.NEW}, topic)
        deleting = self.context.topics_to_be_deleted  # `is_topic_queued_up_for_deletion`, inlined: no frame each
        partitions = sorted_partitions(tp for tp in candidates if tp[0] not in deleting) if deleting else (
            sorted_partitions(candidates))
        return await self.handle_state_changes(  # distinct: a dict's keys, or a set's
            partitions, PartitionState.ONLINE, OfflinePartitionLeaderElectionStrategy(False), distinct=True)

    # ------------------------------------------------------------------ state changes

    async def handle_state_changes(
        self, partitions: Iterable[TopicPartition], target_state: PartitionState,
        strategy: PartitionLeaderElectionStrategy | None = None, *, trigger: str | None = None,
        distinct: bool = False,
    ) -> dict[TopicPartition, Result]:
        """§5.2. Only elections of already-initialised partitions appear in the result.

        ``trigger`` (e.g. ``"admin"``, ``"auto"``) is only recorded in the event log's election records.
        ``distinct``: the caller promises no partition comes twice (then they are not de-duplicated: a hash per
        partition, ~1 ms for a broker failure's 10,000, in each of its two partition steps).
        """
        partitions = list(partitions) if distinct else list(dict.fromkeys(partitions))
        if not partitions:
            return {}
        return await self._in_batch(
            target_state, lambda: self._do_handle_state_changes(partitions, target_state, strategy, trigger),
            lambda e: dict.fromkeys(partitions, e))

    async def _do_handle_state_changes(
        self, partitions: list[TopicPartition], target: PartitionState,
        strategy: PartitionLeaderElectionStrategy | None, trigger: str | None,
    ) -> dict[TopicPartition, Result]:
        # each partition's state, NonExistent if it has none, in one lookup per partition in C
        non_existent = PartitionState.NON_EXISTENT
        current = list(map(self.context.partition_states.get, partitions, repeat(non_existent)))
        if non_existent in current:  # `put_partition_state_if_not_exists` per partition, as one step
            unknown = [tp for tp, s in zip(partitions, current, strict=True) if s is non_existent]
            self.context.put_partition_states(unknown, non_existent)
        valid, valid_states, invalid = split_by_validity(partitions, current, target, self._valid_previous)
        for tp in invalid:
            self._log_invalid_transition(tp, self.context.partition_state(tp), target)
        if target == PartitionState.NEW:
            for tp in valid:
                replicas = ",".join(str(r) for r in self.context.partition_replica_assignment(tp))
                self.state_change_logger.info(f"Changed partition {tp} state from {self.context.partition_state(tp)} "
                                              f"to {target} with assigned replicas {replicas}")
            self._set_states(valid, target)
            return {}
        if target == PartitionState.ONLINE:
            return await self._move_online(valid, valid_states, strategy, trigger)
        if self.state_change_logger.is_enabled_for(TRACE):
            for tp in valid:
                self.state_change_logger.trace(
                    f"Changed partition {tp} state from {self.context.partition_state(tp)} to {target}")
        self._set_states(valid, target)
        return {}

    async def _move_online(self, valid: list[TopicPartition], states: list[PartitionState],
                           strategy: PartitionLeaderElectionStrategy | None, trigger: str | None
                           ) -> dict[TopicPartition, Result]:
        """``valid`` → Online; ``states`` are their current states, in the same order."""
        new, electable = PartitionState.NEW, (PartitionState.ONLINE, PartitionState.OFFLINE)
        uninitialized = [tp for tp, s in zip(valid, states, strict=True) if s is new]
        to_elect = [tp for tp, s in zip(valid, states, strict=True) if s in electable]
        if uninitialized:
            initialized = await self.initialize_leader_and_isr_for_partitions(uninitialized)
            leadership = self.context.partition_leader_and_isr
            self._log_online([(tp, leadership(tp)) for tp in initialized])
        if not to_elect:
            return {}
        if strategy is None:
            raise ValueError("Election strategy is a required field when the target state is OnlinePartition")
        results = await self.elect_leader_for_partitions(to_elect, strategy, trigger)
        self._log_online([(tp, result) for tp, result in results.items() if isinstance(result, LeaderAndIsr)])
        return results

    def _log_online(self, elected: list[tuple[TopicPartition, LeaderAndIsr | None]]) -> None:
        """Each partition → Online with its new leadership: Kafka's line per partition, then the step's
        state changes at once."""
        if not elected:
            return
        scl = self.state_change_logger
        if scl.is_enabled_for(logging.INFO):
            states = self.context.partition_states
            for tp, lai in elected:
                assert lai is not None
                scl.info(f"Changed partition {tp} from {states[tp]} to {PartitionState.ONLINE} with state "
                         f"{render_leader_and_isr(lai)}")
        self._set_states([tp for tp, _ in elected], PartitionState.ONLINE, [lai for _, lai in elected])

    def _set_states(self, partitions: list[TopicPartition], target: PartitionState,
                    leaderships: list[LeaderAndIsr | None] | None = None) -> None:
        """Move a step's partitions to ``target`` and record each change (with its new leadership, if given)."""
        previous = self.context.put_partition_states(partitions, target)
        # `_value_`: the Kafka name without Enum's Python-level `value` property (once per partition per move)
        self.state_change_logger.partitions_changed(
            zip(partitions, [p._value_ for p in previous], leaderships or [None] * len(partitions), strict=True),
            target._value_)

    # ------------------------------------------------------------------ new partitions (§5.4)

    async def initialize_leader_and_isr_for_partitions(self, partitions: Sequence[TopicPartition]
                                                       ) -> list[TopicPartition]:
        """First leader = first live replica, ISR = live replicas, epoch 0; returns the initialised ones."""
        states: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        for tp in partitions:
            replicas = self.context.partition_replica_assignment(tp)
            live = tuple(r for r in replicas if self.context.is_replica_online(r, tp))
            if not live:
                live_brokers = ",".join(str(b) for b in sorted(self.context.live_broker_ids))
                self._log_failed_state_change(tp, PartitionState.NEW, PartitionState.ONLINE, StateChangeFailedError(
                    f"Controller {self.controller_id} epoch {self.context.epoch} encountered error during state "
                    f"change of partition {tp} from New to Online, assigned replicas are "
                    f"[{','.join(str(r) for r in replicas)}], live brokers are [{live_brokers}]. No assigned "
                    "replica is alive."))
                continue
            lai = LeaderAndIsr(live[0], INITIAL_LEADER_EPOCH, live, INITIAL_PARTITION_EPOCH)
            states[tp] = LeaderIsrAndControllerEpoch(lai, self.context.epoch)
        if not states:
            return []
        try:
            created = await self.zk.create_topic_partition_states(states, self.context.fencing.epoch_zk_version)
        except ControllerMovedError as e:
            self._log.error("%sController moved to another broker when trying to create the topic partition "
                            "state znode", self._ident, exc_info=e)
            raise
        except Exception as e:
            for tp in states:
                self._log_failed_state_change(tp, self.context.partition_state(tp), PartitionState.NEW, e)
            return []
        initialized = []
        for tp, info in states.items():
            if tp in created.created:
                self.context.put_partition_leadership_info(tp, info)
                self.batch.add_leader_and_isr_request_for_brokers(
                    info.leader_and_isr.isr, tp, info, self.context.partition_full_replica_assignment(tp), True)
                initialized.append(tp)
            else:
                self._log_failed_state_change(tp, PartitionState.NEW, PartitionState.ONLINE, created.failed[tp])
        return initialized

    # ------------------------------------------------------------------ elections (§5.5, §5.6)

    async def elect_leader_for_partitions(
        self, partitions: Sequence[TopicPartition], strategy: PartitionLeaderElectionStrategy,
        trigger: str | None = None,
    ) -> dict[TopicPartition, Result]:
        """Retry until no partition lost a version race; every retry re-reads ZooKeeper.

        The first attempt starts from the context's states (`_cached_states`); what lost a version race there,
        and (while leaders may write states themselves) what could not be elected from the copy, is re-read
        and retried at once, without Kafka's "Retrying" line: that attempt is the one Kafka makes.
        """
        remaining = list(partitions)
        finished: dict[TopicPartition, Result] = {}
        from_cache = True
        while remaining:
            done, retry = await self._do_elect_leader_for_partitions(remaining, strategy, trigger, from_cache)
            for tp, result in done.items():
                if isinstance(result, Exception):
                    self._log_failed_state_change(tp, self.context.partition_state(tp), PartitionState.ONLINE,
                                                  result)
            finished.update(done)
            if retry and not from_cache:
                self._log.info("%sRetrying leader election with strategy %s for partitions %s", self._ident,
                               strategy, ", ".join(str(tp) for tp in retry))
            remaining, from_cache = retry, False
        return finished

    async def _do_elect_leader_for_partitions(
        self, partitions: list[TopicPartition], strategy: PartitionLeaderElectionStrategy, trigger: str | None,
        from_cache: bool = False,
    ) -> tuple[dict[TopicPartition, Result], list[TopicPartition]]:
        """One attempt: read (or take the context's copy), elect, conditionally write. Returns (finished, to
        retry)."""
        finished: dict[TopicPartition, Result] = {}
        valid: list[tuple[TopicPartition, LeaderAndIsr]] = []
        epoch = self.context.epoch
        from_context = from_cache and StateMachine.first_attempt_from_context
        if from_context:
            # the usual first attempt: every state is in the context's copy (`_cached_states`), taken as it is
            # read, without a dict of the copies; a partition without one means the general path below
            leadership = self.context.partition_leadership_info
            for tp in partitions:
                state = leadership(tp)
                if state is None:
                    from_context = False
                    break
                if state.controller_epoch > epoch:
                    finished[tp] = self._written_by_newer(tp, state)
                else:
                    valid.append((tp, state.leader_and_isr))
        if not from_context:
            finished.clear()
            valid.clear()
            states, to_read = self._cached_states(partitions) if from_cache else ({}, partitions)
            if to_read:
                try:
                    states.update((await self.zk.get_topic_partition_states(to_read)).values)
                except ControllerMovedError:
                    raise
                except Exception as e:
                    return {tp: e for tp in partitions}, []
            for tp in partitions:
                state = states.get(tp)
                if state is None:
                    finished[tp] = StateChangeFailedError(f"LeaderAndIsr information doesn't exist for partition "
                                                          f"{tp} in {self.context.partition_state(tp)} state")
                elif state.controller_epoch > epoch:  # `_written_by_newer_controller`, once per partition
                    finished[tp] = self._written_by_newer(tp, state)
                else:
                    valid.append((tp, state.leader_and_isr))
        if not valid:
            return finished, []
        results = await self._elect(valid, strategy)
        with_leaders = [r for r in results if r.leader_and_isr is not None]
        recheck: list[TopicPartition] = []
        for r in results:
            if r.leader_and_isr is not None:
                continue
            if from_cache:  # a leader may have widened the ISR since (before IBP 2.7-IV2 leaders write it, and
                # one cluster may mix IBPs during an upgrade, whatever this controller's is): ask ZooKeeper
                recheck.append(r.topic_partition)
            else:
                finished[r.topic_partition] = StateChangeFailedError(
                    f"Failed to elect leader for partition {r.topic_partition} under strategy {strategy}")
        if not with_leaders:
            return finished, sorted_partitions(recheck)
        old_leaders = {tp: lai.leader for tp, lai in valid}
        retry = await self._write_elected(with_leaders, strategy, old_leaders, trigger, finished, from_cache)
        return finished, sorted_partitions([*retry, *recheck])

    def _written_by_newer(self, tp: TopicPartition, state: LeaderIsrAndControllerEpoch) -> StateChangeFailedError:
        return StateChangeFailedError(
            f"Aborted leader election for partition {tp} since the LeaderAndIsr path was already written by "
            f"another controller. This probably means that the current controller {self.controller_id} "
            f"went through a soft failure and another controller was elected with epoch "
            f"{state.controller_epoch}.")

    async def _elect(self, valid: list[tuple[TopicPartition, LeaderAndIsr]],
                     strategy: PartitionLeaderElectionStrategy) -> list[ElectionResult]:
        if isinstance(strategy, OfflinePartitionLeaderElectionStrategy):
            brokers = self.context.replica_online_brokers()
            if brokers is not None and not any(map(brokers.isdisjoint, [lai.isr for _, lai in valid])):
                # every partition has a live ISR member (a broker failure's usual case): none can be unclean,
                # so `_collect_unclean_leader_election_state` would mark each False and change nothing
                return elect_leaders_for_offline(self.context, valid, {})
            with_unclean_state = await self._collect_unclean_leader_election_state(valid, strategy.allow_unclean)
            return elect_leaders_for_offline(
                self.context, [(tp, lai) for tp, lai, _ in with_unclean_state],
                {tp: unclean for tp, _, unclean in with_unclean_state})
        if isinstance(strategy, ReassignPartitionLeaderElectionStrategy):
            return elect_leaders_for_reassign(self.context, valid)
        if isinstance(strategy, PreferredReplicaPartitionLeaderElectionStrategy):
            return elect_leaders_for_preferred_replica(self.context, valid)
        if isinstance(strategy, ControlledShutdownPartitionLeaderElectionStrategy):
            return elect_leaders_for_controlled_shutdown(self.context, valid)
        raise TypeError(f"unknown election strategy {strategy!r}")

    async def _write_elected(
        self, elected: list[ElectionResult], strategy: PartitionLeaderElectionStrategy,
        old_leaders: dict[TopicPartition, int], trigger: str | None, finished: dict[TopicPartition, Result],
        from_cache: bool = False,
    ) -> list[TopicPartition]:
        """Fenced conditional writes; successes cached and queued as LeaderAndIsr to the recipients."""
        proposed = {r.topic_partition: r.leader_and_isr for r in elected if r.leader_and_isr is not None}
        try:
            fencing = self.context.fencing
            update = await self.zk.update_leader_and_isr(proposed, fencing.epoch, fencing.epoch_zk_version)
        except ControllerMovedError:
            raise
        except Exception as e:
            finished.update({tp: e for tp in proposed})
            return []
        written = list(update.finished.items())  # in partition order (`UpdateLeaderAndIsrResult`)
        # each written partition's election result: in the usual case every one was written and `elected` came in
        # partition order (a sorted step's), so they are `elected` itself, paired by position, not by a dict
        if len(written) == len(elected) and all(map(is_, map(_first, written), map(_first, elected))):
            results: list[ElectionResult] = elected
        else:
            by_tp = {r.topic_partition: r for r in elected}
            results = [by_tp[tp] for tp, _ in written]
        epoch = self.context.epoch
        new_tuple = tuple.__new__  # a `LeaderIsrAndControllerEpoch` per partition without its Python `__new__`
        infos = [(tp, new_tuple(LeaderIsrAndControllerEpoch, (lai, epoch))) for tp, lai in written]
        self.context.put_partition_leadership_infos(infos)
        assignments = self.context.partition_assignments  # `partition_full_replica_assignment`, inlined
        self.batch.add_leader_and_isr_requests(
            [(r.live_replicas, tp, info, assignments.get(tp[0], _NO_PARTITIONS).get(tp[1], EMPTY_ASSIGNMENT))
             for r, (tp, info) in zip(results, infos, strict=True)], False, led=True)  # just stored
        self.state_change_logger.leaders_elected(
            [(tp, old_leaders[tp], lai, not r.unclean) for r, (tp, lai) in zip(results, written, strict=True)],
            strategy.event_name, trigger)
        finished.update(written)
        redo = self._redo_from_zookeeper(update.failed, from_cache)
        finished.update((tp, e) for tp, e in update.failed.items() if tp not in redo)
        return sorted_partitions([*update.to_retry, *redo])

    async def _collect_unclean_leader_election_state(
        self, leader_and_isrs: list[tuple[TopicPartition, LeaderAndIsr]], allow_unclean: bool,
    ) -> list[tuple[TopicPartition, LeaderAndIsr | None, bool]]:
        """Unclean eligibility per partition (§5.7): only partitions with no live ISR member can be unclean;
        without ``allow_unclean``, the broker default overlaid by the topic's override decides."""
        brokers = self.context.replica_online_brokers()

        def has_live_isr(tp: TopicPartition, lai: LeaderAndIsr) -> bool:
            if brokers is not None:
                return not brokers.isdisjoint(lai.isr)
            return any(self.context.is_replica_online(r, tp) for r in lai.isr)

        out: list[tuple[TopicPartition, LeaderAndIsr | None, bool]] = []
        without_live_isr = []
        for tp, lai in leader_and_isrs:
            if has_live_isr(tp, lai):
                out.append((tp, lai, False))
            else:
                without_live_isr.append((tp, lai))
        if not without_live_isr:
            return out
        if allow_unclean:
            return out + [(tp, lai, True) for tp, lai in without_live_isr]
        enabled, failed = await self._unclean_enabled_for_topics({tp.topic for tp, _ in without_live_isr})
        for tp, lai in without_live_isr:
            if tp.topic in failed:
                self._log_failed_state_change(tp, self.context.partition_state(tp), PartitionState.ONLINE,
                                              failed[tp.topic])
                out.append((tp, None, False))
            else:
                out.append((tp, lai, enabled[tp.topic]))
        return out

    async def _unclean_enabled_for_topics(self, topics: set[str]
                                          ) -> tuple[dict[str, bool], dict[str, Exception]]:
        """Effective ``unclean.leader.election.enable`` per topic: topic override, else the broker's current one
        (dynamic per-broker, dynamic default, static). A config znode Kafka reads as no overrides (not JSON, or
        no ``config`` object) is reported and means no override; a malformed one fails the topic."""
        read = await self.zk.get_topic_configs(topics, lenient=True)
        for path, error in sorted(read.read_as_empty.items()):
            self._log.warning("%sReading the config znode %s as no overrides (as Kafka does): %s", self._ident,
                              path, error.reason)
        failed: dict[str, Exception] = {}
        enabled: dict[str, bool] = {}
        for topic in sorted(topics):
            malformed = read.malformed.get(paths.topic_config_path(topic))
            if malformed is not None:
                failed[topic] = malformed
                continue
            value = read.values.get(topic, {}).get(UNCLEAN_LEADER_ELECTION_ENABLE)
            try:
                enabled[topic] = (self.dynamic_config.unclean_leader_election_enable if value is None
                                  else _parse_bool(value))
            except StateChangeFailedError as e:
                failed[topic] = e
        return enabled, failed

    # ------------------------------------------------------------------ logging

    def _log_failed_state_change(self, tp: TopicPartition, current: PartitionState, target: PartitionState,
                                 error: BaseException) -> None:
        if not self.state_change_logger.is_enabled_for(logging.ERROR):  # many at once when a broker dies
            return
        self.state_change_logger.error(
            f"Controller {self.controller_id} epoch {self.context.epoch} failed to change state for partition {tp} "
            f"from {current} to {target}", error)
