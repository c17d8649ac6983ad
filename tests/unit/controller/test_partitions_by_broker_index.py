"""`ControllerContext.replicas_on_brokers` answers one broker from an index of partitions by broker, kept in step
by the assignment's three writers: it must answer as the scan of the assignment does, after any history of
assignments, reassignments, topic removals and resets."""

from __future__ import annotations

import random

from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.states import PartitionAndReplica
from zkcontroller.model import ReplicaAssignment, TopicPartition


def _scan(ctx: ControllerContext, broker: int) -> list[PartitionAndReplica]:
    return [PartitionAndReplica(TopicPartition(t, p), broker) for t in sorted(ctx.partition_assignments)
            for p in sorted(ctx.partition_assignments[t]) if broker in ctx.partition_assignments[t][p].replicas]


def test_one_brokers_replicas_follow_every_assignment_change() -> None:
    rng = random.Random(15)
    ctx = ControllerContext()
    brokers = range(1, 7)
    for step in range(3000):
        roll = rng.random()
        topic = f"t{rng.randint(0, 5)}"
        if roll < 0.85:  # creation, expansion or reassignment (adding/removing replicas included)
            replicas = tuple(rng.sample(brokers, rng.randint(0, 4)))
            adding = tuple(r for r in replicas if rng.random() < 0.2)
            ctx.update_partition_full_replica_assignment(TopicPartition(topic, rng.randint(0, 12)),
                                                         ReplicaAssignment(replicas, adding, ()))
        elif roll < 0.98:
            ctx.remove_topic(topic)
        else:
            ctx.reset_context()
        if step % 50 == 0 or roll >= 0.85:
            for b in (*brokers, 99):
                assert ctx.replicas_on_brokers([b]) == _scan(ctx, b)
                assert ctx.replicas_on_brokers({b, b}) == _scan(ctx, b)
    several = ctx.replicas_on_brokers([3, 1])
    assert several == sorted([*_scan(ctx, 1), *_scan(ctx, 3)])
