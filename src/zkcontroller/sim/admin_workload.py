"""The admin workload of issue 13 in the simulator: delete a topic and reassign partitions the way a user's
tools would (`TopicAdmin.delete_topic` writes ``/admin/delete_topics/<t>``; `ReassignCommand.execute` — the
code behind ``zkcontroller reassign --execute`` — writes ``/admin/reassign_partitions``), on the simulator's
own admin session. Refusals (a reassignment already in progress, a topic already marked) are recorded, as a
user would see them, and change nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from zkcontroller.admin.errors import AdminError
from zkcontroller.admin.reassign import ReassignCommand
from zkcontroller.coordination.errors import ZkError
from zkcontroller.model import TopicPartition

if TYPE_CHECKING:
    from zkcontroller.sim.world import SimWorld


async def delete_topic(world: SimWorld, topic: str) -> bool:
    """Mark ``topic`` for deletion; True if the marker was written."""
    assert world.admin is not None
    try:
        await world.admin.delete_topic(topic)
    except (AdminError, ZkError) as e:
        world.record("workload-failed", f"delete {topic}: {type(e).__name__}")
        return False
    world.record("workload", f"delete {topic}")
    world.deletions_requested.add(topic)
    return True


def _targets(world: SimWorld, topic: str, count: int) -> dict[TopicPartition, tuple[int, ...]]:
    """New replica lists for up to ``count`` partitions of ``topic``: same replication factor, brokers drawn
    from the whole cluster (so some move to brokers that are down, and wait)."""
    assignment = world.checker.assignment(topic)
    brokers = [h.broker_id for h in world.hosts]
    chosen = world.rng.sample(sorted(assignment), min(count, len(assignment)))
    targets = {}
    for partition in sorted(chosen):
        rf = len(assignment[partition])
        targets[TopicPartition(topic, partition)] = tuple(world.rng.sample(brokers, rf))
    return targets


async def reassign(world: SimWorld, topic: str, count: int) -> bool:
    """``zkcontroller reassign --execute`` for up to ``count`` partitions of ``topic``; True if submitted."""
    targets = _targets(world, topic, count)
    if not targets:
        return False
    try:
        await ReassignCommand(world.admin_zk, world.rng).execute(targets)
    except (AdminError, ZkError) as e:
        world.record("workload-failed", f"reassign {topic}: {type(e).__name__}")
        return False
    world.record("workload", "reassign " + " ".join(f"{tp}->{list(r)}" for tp, r in sorted(targets.items())))
    return True
