"""Leader election: the four strategies of spec §5.7 (Kafka's ``Election`` and
``PartitionLeaderElectionAlgorithms``).

The rules are pure functions over plain values (RS, ISR, the partition's online replicas, shutting-down
brokers, the unclean flag) so they can be checked exhaustively by property tests. The ``elect_leaders_for_*``
wrappers read those values out of a `ControllerContext`, like Kafka's ``Election.leaderFor*``; the offline
wrapper is the one place that marks the unclean-election meter.

Every successful election bumps the leader epoch by exactly one and keeps the expected zkVersion (the
conditional write replaces it).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from zkcontroller.controller.assignment import EMPTY_ASSIGNMENT
from zkcontroller.controller.context import ControllerContext
from zkcontroller.model import LeaderAndIsr, ReplicaAssignment, TopicPartition

_NO_PARTITIONS: Mapping[int, ReplicaAssignment] = {}
"""A topic the context has no assignment for (in `_elect_clean_for_offline`'s inlined lookup)."""

# ---------------------------------------------------------------------- strategies (values)


@dataclass(frozen=True, slots=True)
class OfflinePartitionLeaderElectionStrategy:
    """Elect from the live ISR; ``allow_unclean`` is set only by an admin-requested UNCLEAN election."""

    allow_unclean: bool

    event_name = "offline"

    def __str__(self) -> str:
        return f"OfflinePartitionLeaderElectionStrategy({str(self.allow_unclean).lower()})"


@dataclass(frozen=True, slots=True)
class ReassignPartitionLeaderElectionStrategy:
    event_name = "reassignment"

    def __str__(self) -> str:
        return "ReassignPartitionLeaderElectionStrategy"


@dataclass(frozen=True, slots=True)
class PreferredReplicaPartitionLeaderElectionStrategy:
    event_name = "preferred"

    def __str__(self) -> str:
        return "PreferredReplicaPartitionLeaderElectionStrategy"


@dataclass(frozen=True, slots=True)
class ControlledShutdownPartitionLeaderElectionStrategy:
    event_name = "controlled_shutdown"

    def __str__(self) -> str:
        return "ControlledShutdownPartitionLeaderElectionStrategy"


PartitionLeaderElectionStrategy = (
    OfflinePartitionLeaderElectionStrategy
    | ReassignPartitionLeaderElectionStrategy
    | PreferredReplicaPartitionLeaderElectionStrategy
    | ControlledShutdownPartitionLeaderElectionStrategy
)


class ElectionResult(NamedTuple):
    """One partition's outcome: the state to write (None: no eligible leader), who gets LeaderAndIsr,
    and whether the leader came from outside the ISR. A NamedTuple: one per partition per election."""

    topic_partition: TopicPartition
    leader_and_isr: LeaderAndIsr | None
    live_replicas: tuple[int, ...]
    unclean: bool = False

    @property
    def recipients(self) -> tuple[int, ...]:
        """The brokers to send LeaderAndIsr to (Kafka calls them ``liveReplicas`` although, for the
        reassign and preferred strategies, they are not filtered by liveness)."""
        return self.live_replicas


# ---------------------------------------------------------------------- leader choice (pure)


def offline_partition_leader_election(
    assignment: Sequence[int], isr: Collection[int], live_replicas: Collection[int], unclean_enabled: bool
) -> int | None:
    """First live ISR member in RS order; failing that, if unclean is enabled, first live replica."""
    for r in assignment:  # a loop, not ``next`` over a generator: once per partition of an offline election
        if r in live_replicas and r in isr:
            return r
    if unclean_enabled:
        for r in assignment:
            if r in live_replicas:
                return r
    return None


def reassign_partition_leader_election(
    reassignment: Sequence[int], isr: Collection[int], live_replicas: Collection[int]
) -> int | None:
    """First live ISR member of the target replicas (TRS order)."""
    return next((r for r in reassignment if r in live_replicas and r in isr), None)


def preferred_replica_partition_leader_election(
    assignment: Sequence[int], isr: Collection[int], live_replicas: Collection[int]
) -> int | None:
    """RS[0] if it is live and in the ISR; nobody else."""
    if assignment and assignment[0] in live_replicas and assignment[0] in isr:
        return assignment[0]
    return None


def controlled_shutdown_partition_leader_election(
    assignment: Sequence[int], isr: Collection[int], live_replicas: Collection[int],
    shutting_down_brokers: Collection[int],
) -> int | None:
    """First ISR member that is live (shutting-down brokers count as live here) and not shutting down."""
    for r in assignment:  # a loop, not ``next`` over a generator: once per partition of a shutdown's election
        if r in live_replicas and r in isr and r not in shutting_down_brokers:
            return r
    return None


# ---------------------------------------------------------------------- per-partition results (pure)


def leader_for_offline(
    tp: TopicPartition, leader_and_isr: LeaderAndIsr | None, assignment: Sequence[int],
    online_replicas: Collection[int], unclean_enabled: bool,
) -> ElectionResult:
    """§5.7 offline row. ``online_replicas``: brokers for which ``is_replica_online(b, tp)`` holds.

    Clean: ISR filtered to online replicas (drops dead, shutting-down and failed-dir replicas).
    Unclean: ISR becomes just the new leader.
    """
    # Once per partition of an election of thousands: lists made into tuples, not generators, and the clean
    # result's NamedTuples built in C (`LeaderAndIsr.new_leader_and_isr`: the leader epoch bumped, the same
    # expected zkVersion).
    live = tuple([r for r in assignment if r in online_replicas])
    if leader_and_isr is None:
        return ElectionResult(tp, None, live)
    isr = leader_and_isr.isr
    leader = offline_partition_leader_election(assignment, isr, live, unclean_enabled)
    if leader is None:
        return ElectionResult(tp, None, live)
    if leader in isr:
        new_isr: tuple[int, ...] = tuple([r for r in isr if r in online_replicas])
        new = tuple.__new__(LeaderAndIsr, (leader, leader_and_isr.leader_epoch + 1, new_isr, leader_and_isr.zk_version))
        return tuple.__new__(ElectionResult, (tp, new, live, False))
    return ElectionResult(tp, leader_and_isr.new_leader_and_isr(leader, (leader,)), live, unclean=True)


def leader_for_reassign(
    tp: TopicPartition, leader_and_isr: LeaderAndIsr, target_replicas: Sequence[int],
    online_replicas: Collection[int],
) -> ElectionResult:
    """§5.7 reassign row: ISR unchanged; recipients = all of TRS."""
    leader = reassign_partition_leader_election(target_replicas, leader_and_isr.isr, online_replicas)
    new = None if leader is None else leader_and_isr.new_leader_and_isr(leader, leader_and_isr.isr)
    return ElectionResult(tp, new, tuple(target_replicas))


def leader_for_preferred_replica(
    tp: TopicPartition, leader_and_isr: LeaderAndIsr, assignment: Sequence[int], online_replicas: Collection[int],
) -> ElectionResult:
    """§5.7 preferred row: ISR unchanged; recipients = all of RS."""
    leader = preferred_replica_partition_leader_election(assignment, leader_and_isr.isr, online_replicas)
    new = None if leader is None else leader_and_isr.new_leader_and_isr(leader, leader_and_isr.isr)
    return ElectionResult(tp, new, tuple(assignment))


def leader_for_controlled_shutdown(
    tp: TopicPartition, leader_and_isr: LeaderAndIsr, assignment: Sequence[int],
    online_or_shutting_down_replicas: Collection[int], shutting_down_brokers: Collection[int],
) -> ElectionResult:
    """§5.7 controlled-shutdown row: the ISR loses every shutting-down broker, not only the old leader."""
    # As `leader_for_offline`: lists made into tuples, and the NamedTuples built in C.
    live = tuple([r for r in assignment if r in online_or_shutting_down_replicas])
    leader = controlled_shutdown_partition_leader_election(
        assignment, leader_and_isr.isr, live, shutting_down_brokers)
    if leader is None:
        return ElectionResult(tp, None, live)
    new_isr = tuple([r for r in leader_and_isr.isr if r not in shutting_down_brokers])
    new = tuple.__new__(LeaderAndIsr, (leader, leader_and_isr.leader_epoch + 1, new_isr, leader_and_isr.zk_version))
    return tuple.__new__(ElectionResult, (tp, new, live, False))


# ---------------------------------------------------------------------- context wrappers (Kafka's Election)


def _online(context: ControllerContext, tp: TopicPartition, candidates: Iterable[int],
            include_shutting_down: bool = False) -> frozenset[int]:
    """Which candidates are online replicas of ``tp``: asked per partition only once a log dir has failed (the
    wrappers test `ControllerContext.replica_online_brokers` otherwise; the rules only test membership)."""
    return context.online_replicas(tp, candidates, include_shutting_down)


def _candidates(context: ControllerContext, tp: TopicPartition, leader_and_isr: LeaderAndIsr | None) -> list[int]:
    isr = leader_and_isr.isr if leader_and_isr is not None else ()
    return [*context.partition_replica_assignment(tp), *isr]


def elect_leaders_for_offline(
    context: ControllerContext,
    partitions_with_leader_and_isr: Sequence[tuple[TopicPartition, LeaderAndIsr | None]],
    unclean_enabled_per_partition: Mapping[TopicPartition, bool],
) -> list[ElectionResult]:
    """Offline elections; each unclean one marks ``context.stats.unclean_leader_elections``."""
    results = []
    brokers = context.replica_online_brokers()
    assignment = context.partition_replica_assignment
    unclean_enabled = unclean_enabled_per_partition.get
    if brokers is not None and not unclean_enabled_per_partition:
        return _elect_clean_for_offline(partitions_with_leader_and_isr, context.partition_assignments, brokers)
    for tp, lai in partitions_with_leader_and_isr:
        online = brokers if brokers is not None else _online(context, tp, _candidates(context, tp, lai))
        result = leader_for_offline(tp, lai, assignment(tp), online, unclean_enabled(tp, False))
        if result.unclean:
            context.stats.unclean_leader_elections += 1
        results.append(result)
    return results


def _elect_clean_for_offline(
    partitions_with_leader_and_isr: Sequence[tuple[TopicPartition, LeaderAndIsr | None]],
    assignments: Mapping[str, Mapping[int, ReplicaAssignment]], online: Collection[int],
) -> list[ElectionResult]:
    """`leader_for_offline` of every partition, unclean off and one set of online brokers for all (no log dir
    failed): its outcome depends only on the replica set and the ISR, and a broker failure's 10,000 partitions
    share a few dozen such pairs, so each pair's live replicas, leader and new ISR are found once. The
    per-partition results are the same tuples `leader_for_offline` builds."""
    results: list[ElectionResult] = []
    append = results.append
    new_tuple = tuple.__new__
    by_sets: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], int | None, tuple[int, ...]]] = {}
    for tp, lai in partitions_with_leader_and_isr:
        # `context.partition_replica_assignment(tp)`, inlined
        replicas = assignments.get(tp[0], _NO_PARTITIONS).get(tp[1], EMPTY_ASSIGNMENT).replicas
        if lai is None:
            append(ElectionResult(tp, None, tuple([r for r in replicas if r in online])))
            continue
        key = (replicas, lai.isr)
        found = by_sets.get(key)
        if found is None:
            live = tuple([r for r in replicas if r in online])
            leader = offline_partition_leader_election(replicas, lai.isr, live, False)
            found = by_sets[key] = (live, leader, tuple([r for r in lai.isr if r in online]))
        live, leader, new_isr = found
        if leader is None:
            append(new_tuple(ElectionResult, (tp, None, live, False)))
        else:  # clean: the leader is in the ISR (`LeaderAndIsr.new_leader_and_isr` built in C)
            append(new_tuple(ElectionResult, (tp, new_tuple(LeaderAndIsr, (
                leader, lai.leader_epoch + 1, new_isr, lai.zk_version)), live, False)))
    return results


def elect_leaders_for_reassign(
    context: ControllerContext, leader_and_isrs: Sequence[tuple[TopicPartition, LeaderAndIsr]]
) -> list[ElectionResult]:
    results = []
    brokers = context.replica_online_brokers()
    for tp, lai in leader_and_isrs:
        target = context.partition_full_replica_assignment(tp).target_replicas
        online = brokers if brokers is not None else _online(context, tp, target)
        results.append(leader_for_reassign(tp, lai, target, online))
    return results


def elect_leaders_for_preferred_replica(
    context: ControllerContext, leader_and_isrs: Sequence[tuple[TopicPartition, LeaderAndIsr]]
) -> list[ElectionResult]:
    results = []
    brokers = context.replica_online_brokers()
    for tp, lai in leader_and_isrs:
        assignment = context.partition_replica_assignment(tp)
        online = brokers if brokers is not None else _online(context, tp, assignment)
        results.append(leader_for_preferred_replica(tp, lai, assignment, online))
    return results


def elect_leaders_for_controlled_shutdown(
    context: ControllerContext, leader_and_isrs: Sequence[tuple[TopicPartition, LeaderAndIsr]]
) -> list[ElectionResult]:
    results = []
    shutting_down = frozenset(context.shutting_down_broker_ids)
    brokers = context.replica_online_brokers(include_shutting_down_brokers=True)
    if brokers is not None:
        return _elect_for_controlled_shutdown(leader_and_isrs, context.partition_assignments, brokers, shutting_down)
    for tp, lai in leader_and_isrs:
        assignment = context.partition_replica_assignment(tp)
        online = brokers if brokers is not None else _online(context, tp, assignment, include_shutting_down=True)
        results.append(leader_for_controlled_shutdown(tp, lai, assignment, online, shutting_down))
    return results


def _elect_for_controlled_shutdown(
    leader_and_isrs: Sequence[tuple[TopicPartition, LeaderAndIsr]],
    assignments: Mapping[str, Mapping[int, ReplicaAssignment]], online: Collection[int],
    shutting_down: Collection[int],
) -> list[ElectionResult]:
    """`leader_for_controlled_shutdown` of every partition with one set of online (or shutting-down) brokers for
    all (no log dir failed), as `_elect_clean_for_offline` does for a broker failure: the outcome depends only on
    the replica set and the ISR, which a shutdown's 10,000 partitions share a few dozen of, so each pair's live
    replicas, leader and new ISR are found once. The results are the tuples `leader_for_controlled_shutdown`
    builds."""
    results: list[ElectionResult] = []
    append = results.append
    new_tuple = tuple.__new__
    by_sets: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], int | None, tuple[int, ...]]] = {}
    for tp, lai in leader_and_isrs:
        # `context.partition_replica_assignment(tp)`, inlined
        replicas = assignments.get(tp[0], _NO_PARTITIONS).get(tp[1], EMPTY_ASSIGNMENT).replicas
        isr = lai.isr
        key = (replicas, isr)
        found = by_sets.get(key)
        if found is None:
            live = tuple([r for r in replicas if r in online])
            found = by_sets[key] = (
                live, controlled_shutdown_partition_leader_election(replicas, isr, live, shutting_down),
                tuple([r for r in isr if r not in shutting_down]))
        live, leader, new_isr = found
        if leader is None:
            append(new_tuple(ElectionResult, (tp, None, live, False)))
        else:
            append(new_tuple(ElectionResult, (tp, new_tuple(LeaderAndIsr, (
                leader, lai.leader_epoch + 1, new_isr, lai.zk_version)), live, False)))
    return results
