"""`ControllerContext`: the incremental gauges against a recomputation, helpers and reset (spec §4)."""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from zkcontroller.controller.assignment import reassign_to, remove_replica, render_assignment
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.errors import IllegalControllerStateError
from zkcontroller.controller.fencing_token import FencingToken
from zkcontroller.controller.leadership import has_preferred_leader
from zkcontroller.controller.states import (
    VALID_PREVIOUS_PARTITION_STATES,
    VALID_PREVIOUS_REPLICA_STATES,
    PartitionAndReplica,
    PartitionState,
    ReplicaState,
    split_by_validity,
)
from zkcontroller.model import Broker, EndPoint, LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicId
from zkcontroller.model import TopicPartition as TP

TOPICS = ("a", "b", "c")
PARTITIONS = st.builds(TP, st.sampled_from(TOPICS), st.integers(0, 2))
REPLICAS = st.lists(st.integers(0, 4), min_size=1, max_size=4, unique=True)


def _broker(i: int) -> Broker:
    return Broker(i, (EndPoint(f"h{i}", 9092, "PLAINTEXT", "PLAINTEXT"),))


def recomputed_offline_count(ctx: ControllerContext) -> int:
    return sum(1 for tp, s in ctx.partition_states.items()
               if s == PartitionState.OFFLINE and tp.topic not in ctx.topics_with_deletion_started)


def recomputed_imbalance(ctx: ControllerContext) -> int:
    count = 0
    for tp, leadership in ctx.partitions_leadership_info.items():
        assignment = ctx.partition_assignments.get(tp.topic, {}).get(tp.partition)
        if assignment is None or tp.topic in ctx.topics_to_be_deleted:
            continue
        count += 0 if has_preferred_leader(assignment, leadership) else 1
    return count


class ContextGauges(RuleBasedStateMachine):
    """Random assignment/leadership/state/deletion changes; both gauges always equal a full recount."""

    def __init__(self) -> None:
        super().__init__()
        self.ctx = ControllerContext()

    @rule(tp=PARTITIONS, replicas=REPLICAS, reassign=st.booleans(), to=REPLICAS)
    def update_assignment(self, tp: TP, replicas: list[int], reassign: bool, to: list[int]) -> None:
        assignment = ReplicaAssignment(tuple(replicas))
        if reassign:
            assignment = reassign_to(assignment, to)
        self.ctx.update_partition_full_replica_assignment(tp, assignment)

    @rule(tp=PARTITIONS, leader=st.integers(-1, 4), isr=REPLICAS)
    def put_leadership(self, tp: TP, leader: int, isr: list[int]) -> None:
        self.ctx.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 0, tuple(isr)), 1))

    @rule(items=st.lists(st.tuples(PARTITIONS, st.integers(-1, 4), REPLICAS), max_size=4))
    def put_leaderships_at_once(self, items: list[tuple[TP, int, list[int]]]) -> None:
        """A step's batch (a partition may repeat: the later one wins, as one put after another)."""
        self.ctx.put_partition_leadership_infos(
            [(tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 0, tuple(isr)), 1)) for tp, leader, isr in items])

    @rule(tp=PARTITIONS, state=st.sampled_from(PartitionState))
    def put_state(self, tp: TP, state: PartitionState) -> None:
        self.ctx.put_partition_state(tp, state)

    @rule(tps=st.lists(PARTITIONS, unique=True, max_size=4), state=st.sampled_from(PartitionState))
    def put_states_at_once(self, tps: list[TP], state: PartitionState) -> None:
        before = [self.ctx.partition_states.get(tp, PartitionState.NON_EXISTENT) for tp in tps]
        assert self.ctx.put_partition_states(tps, state) == before

    @rule(tp=PARTITIONS, state=st.sampled_from(PartitionState))
    def put_state_if_absent(self, tp: TP, state: PartitionState) -> None:
        self.ctx.put_partition_state_if_not_exists(tp, state)

    @rule(topics=st.sets(st.sampled_from(TOPICS)))
    def queue_deletion(self, topics: set[str]) -> None:
        self.ctx.queue_topic_deletion(topics)

    @rule(topic=st.sampled_from(TOPICS))
    def begin_deletion(self, topic: str) -> None:
        # Callers (the deletion manager, §9.6) first move the topic's partitions to NonExistentPartition.
        for tp in sorted(self.ctx.partition_states):
            if tp.topic == topic and self.ctx.partition_states[tp] == PartitionState.OFFLINE:
                self.ctx.put_partition_state(tp, PartitionState.NON_EXISTENT)
        self.ctx.begin_topic_deletion({topic})

    @precondition(lambda self: bool(self.ctx.partition_assignments))
    @rule(data=st.data())
    def remove_topic(self, data: st.DataObject) -> None:
        topic = data.draw(st.sampled_from(sorted(self.ctx.partition_assignments)))
        for tp in [tp for tp in self.ctx.partition_states if tp.topic == topic]:
            self.ctx.put_partition_state(tp, PartitionState.NON_EXISTENT)
            del self.ctx.partition_states[tp]
        self.ctx.remove_topic(topic)

    @invariant()
    def gauges_match_recount(self) -> None:
        assert self.ctx.offline_partition_count == recomputed_offline_count(self.ctx)
        assert self.ctx.preferred_replica_imbalance_count == recomputed_imbalance(self.ctx)


TestContextGauges = ContextGauges.TestCase
TestContextGauges.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)


def test_offline_count_ignores_topics_whose_deletion_started() -> None:
    ctx = ControllerContext()
    tp = TP("a", 0)
    ctx.put_partition_state(tp, PartitionState.OFFLINE)
    assert ctx.offline_partition_count == 1
    ctx.put_partition_state(tp, PartitionState.NON_EXISTENT)
    ctx.begin_topic_deletion({"a"})
    ctx.put_partition_state(tp, PartitionState.OFFLINE)
    assert ctx.offline_partition_count == 0


def test_imbalance_rule_for_preferred_replica_being_added() -> None:
    ctx = ControllerContext()
    tp = TP("a", 0)
    ctx.update_partition_full_replica_assignment(tp, reassign_to(ReplicaAssignment((1, 2)), (3, 1)))
    assert ctx.partition_full_replica_assignment(tp) == ReplicaAssignment((3, 1, 2), (3,), (2,))
    ctx.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2)), 1))
    assert ctx.preferred_replica_imbalance_count == 0  # 3 is being added and not yet in the ISR
    ctx.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2, 3)), 1))
    assert ctx.preferred_replica_imbalance_count == 1
    ctx.queue_topic_deletion({"a"})
    ctx.queue_topic_deletion({"a"})
    assert ctx.preferred_replica_imbalance_count == 0


def test_assignment_helpers() -> None:
    moved = reassign_to(ReplicaAssignment((1, 2, 3)), (3, 4, 2))
    assert moved == ReplicaAssignment((3, 4, 2, 1), (4,), (1,))
    assert remove_replica(moved, 4) == ReplicaAssignment((3, 2, 1), (), (1,))
    assert render_assignment(moved) == "ReplicaAssignment(replicas=3,4,2,1, addingReplicas=4, removingReplicas=1)"
    assert render_assignment(ReplicaAssignment((1,))) == (
        "ReplicaAssignment(replicas=1, addingReplicas=, removingReplicas=)")


def test_brokers_liveness_and_online_replicas() -> None:
    ctx = ControllerContext()
    ctx.set_live_brokers({_broker(1): 10, _broker(2): 20, _broker(3): 30})
    ctx.shutting_down_broker_ids.add(2)
    tp = TP("a", 0)
    ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment((1, 2, 3, 4)))
    ctx.replicas_on_offline_dirs[3] = {tp}
    assert ctx.live_broker_ids == {1, 3} and ctx.live_or_shutting_down_broker_ids == {1, 2, 3}
    assert [ctx.is_replica_online(b, tp) for b in (1, 2, 3, 4)] == [True, False, False, False]
    assert ctx.is_replica_online(2, tp, include_shutting_down_brokers=True)
    online, offline = ctx.online_and_offline_replicas
    assert online == {PartitionAndReplica(tp, 1)} and len(offline) == 3
    ctx.remove_live_brokers({1})
    assert ctx.live_broker_id_and_epochs == {2: 20, 3: 30}
    new2 = Broker(2, (EndPoint("other", 1, "PLAINTEXT", "PLAINTEXT"),), rack="r")
    ctx.update_broker_metadata(_broker(2), new2)
    assert ctx.live_or_shutting_down_broker(2) == new2
    assert [b.id for b in ctx.live_or_shutting_down_brokers] == [2, 3]


def test_leadership_queries() -> None:
    ctx = ControllerContext()
    ctx.set_live_brokers({_broker(1): 1, _broker(2): 1})
    a0, a1, b0 = TP("a", 0), TP("a", 1), TP("b", 0)
    for tp, rs in ((a0, (1, 2)), (a1, (3,)), (b0, (1, 3))):
        ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment(rs))
    ctx.put_partition_leadership_info(a0, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 2)), 1))
    ctx.put_partition_leadership_info(a1, LeaderIsrAndControllerEpoch(LeaderAndIsr(3, 0, (3,)), 1))
    ctx.put_partition_leadership_info(b0, LeaderIsrAndControllerEpoch(LeaderAndIsr(-1, 0, (3,)), 1))
    assert ctx.partitions_with_offline_leader == {a1, b0}
    assert ctx.partition_leaders_on_broker(1) == {a0}
    assert ctx.leader_epoch(a0) == 3 and ctx.leader_epoch(TP("z", 0)) == -1
    ctx.queue_topic_deletion({"b"})
    assert ctx.partitions_with_offline_leader == {a1} and ctx.partitions_with_leaders == {a0, a1}
    assert ctx.leader_epoch(b0) == -2 and ctx.partition_with_leaders_count == 3
    asked = [b0, a0, TP("z", 0), a1, TP("b", 7)]  # the batch form gives each partition's, in order
    assert ctx.leader_epochs(asked) == [ctx.leader_epoch(tp) for tp in asked] == [-2, 3, -1, 0, -2]
    ctx.remove_topic("b")
    assert ctx.partition_leadership_info(b0) is None and ctx.all_partitions == {a0, a1}


def test_state_validation_and_replica_state_queries() -> None:
    ctx = ControllerContext()
    tp = TP("a", 0)
    ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment((1, 2)))
    for tp_, s in ((tp, PartitionState.NEW), (TP("a", 1), PartitionState.OFFLINE)):
        ctx.put_partition_state(tp_, s)
    parts = [tp, TP("a", 1)]
    valid, valid_states, invalid = split_by_validity(parts, [ctx.partition_state(p) for p in parts],
                                                     PartitionState.NON_EXISTENT, VALID_PREVIOUS_PARTITION_STATES)
    assert valid == [TP("a", 1)] and valid_states == [PartitionState.OFFLINE] and invalid == [tp]
    assert split_by_validity(parts, [PartitionState.OFFLINE] * 2, PartitionState.ONLINE,
                             VALID_PREVIOUS_PARTITION_STATES) == (parts, [PartitionState.OFFLINE] * 2, [])
    assert ctx.partitions_in_state(PartitionState.NEW, "a") == {tp}
    r1, r2 = PartitionAndReplica(tp, 1), PartitionAndReplica(tp, 2)
    ctx.put_replica_state(r1, ReplicaState.ONLINE)
    ctx.put_replica_state_if_not_exists(r2, ReplicaState.OFFLINE)
    ctx.put_replica_state_if_not_exists(r2, ReplicaState.ONLINE)
    assert ctx.replica_state(r2) == ReplicaState.OFFLINE
    assert split_by_validity([r1, r2], [ctx.replica_state(r1), ctx.replica_state(r2)], ReplicaState.DELETION_STARTED,
                             VALID_PREVIOUS_REPLICA_STATES) == ([r2], [ReplicaState.OFFLINE], [r1])
    assert ctx.is_any_replica_in_state("a", ReplicaState.OFFLINE)
    assert not ctx.are_all_replicas_in_state("a", ReplicaState.OFFLINE)
    assert ctx.are_all_replicas_in_state("none", ReplicaState.OFFLINE)
    assert ctx.replicas_in_state("a", ReplicaState.ONLINE) == {r1}
    ctx.remove_replica_state(r1)
    with pytest.raises(KeyError):
        ctx.replicas_in_state("a", ReplicaState.ONLINE)


def test_topic_ids_must_not_conflict() -> None:
    ctx = ControllerContext()
    id1, id2 = TopicId(bytes(range(16))), TopicId(bytes(range(1, 17)))
    with pytest.raises(IllegalControllerStateError):
        ctx.add_topic_id("a", id1)
    ctx.set_all_topics({"a", "b"})
    ctx.add_topic_id("a", id1)
    ctx.add_topic_id("a", id1)
    with pytest.raises(IllegalControllerStateError):
        ctx.add_topic_id("a", id2)
    with pytest.raises(IllegalControllerStateError):
        ctx.add_topic_id("b", id1)
    assert ctx.topic_name(id1) == "a"


def test_reset_context_forgets_everything_but_stats() -> None:
    ctx = ControllerContext()
    ctx.fencing = FencingToken(3, 4)
    ctx.set_live_brokers({_broker(1): 1})
    ctx.shutting_down_broker_ids.add(1)
    ctx.set_all_topics({"a"})
    tp = TP("a", 0)
    ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment((2, 1)))
    ctx.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1,)), 3))
    ctx.put_partition_state(tp, PartitionState.OFFLINE)
    ctx.put_replica_state(PartitionAndReplica(tp, 1), ReplicaState.ONLINE)
    ctx.queue_topic_deletion({"a"})
    ctx.topics_ineligible_for_deletion.add("a")
    ctx.stats.unclean_leader_elections = 2
    ctx.reset_context()
    fresh = ControllerContext()
    fresh.stats.unclean_leader_elections = 2
    assert vars_of(ctx) == vars_of(fresh)
    assert ctx.partition_leadership_info(tp) is None  # the accessor reads the cleared table, not a stale one


def vars_of(ctx: ControllerContext) -> dict[str, object]:
    """The context's state; bound accessors (``partition_leadership_info``: a dict's ``get``) compare by the
    identity of their dict, so they are left out and tested by what they return."""
    return {k: v for k, v in vars(ctx).items() if not callable(v)}


def test_replicas_on_brokers_hand_out_the_partition_states_own_keys() -> None:
    """The dicts then find each key by identity; a partition without a state yet gets a new, equal one, and a
    removed topic's keys are forgotten."""
    ctx = ControllerContext()
    stored = [TP("a", 0), TP("a", 300), TP("b", 1)]
    for tp in stored:
        ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment((1, 2)))
    ctx.update_partition_full_replica_assignment(TP("b", 2), ReplicaAssignment((2, 3)))
    ctx.put_partition_states(stored, PartitionState.NEW)
    ctx.put_partition_states([TP("a", 0)], PartitionState.ONLINE)  # an equal key later changes nothing
    on_2 = ctx.replicas_on_brokers([2])
    assert on_2 == [PartitionAndReplica(tp, 2) for tp in [*stored, TP("b", 2)]]
    assert [r.topic_partition is tp for r, tp in zip(on_2, stored, strict=False)] == [True] * 3
    assert [r.topic_partition for r in ctx.replicas_on_brokers([1, 3])] == [*stored, TP("b", 2)]
    assert all(r.topic_partition is tp for r, tp in zip(ctx.replicas_on_brokers([1]), stored, strict=True))
    ctx.remove_topic("a")
    assert list(ctx._partition_keys) == ["b"]
    ctx.reset_context()
    assert not ctx._partition_keys
