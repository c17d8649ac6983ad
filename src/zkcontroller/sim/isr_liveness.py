"""Liveness of the data plane after heal: the cluster heals its ISRs (and, where promised, its leadership).

Once faults stop, every replica on a running broker whose log dir is online fetches from its leader, catches
up, and the leader expands the ISR (AlterIsr to the controller, or its own ZooKeeper write before 2.7-IV2).
So within the liveness bound every ISR must hold every live replica. A scenario that turns on frequent
automatic leader rebalancing also promises that every partition whose preferred replica is live and in the
ISR is led by it again. A cluster that only elects leaders but never heals passes the older checks and fails
these.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from zkcontroller.protocol.inter_broker import AlterIsrRequest
from zkcontroller.zk import paths
from zkcontroller.zk.znodes import TopicPartitionStateZNode

if TYPE_CHECKING:
    from zkcontroller.sim.world import SimWorld

PartitionView = tuple[int, int, tuple[int, ...], tuple[int, ...]]
"""(leader, leader epoch, ISR, replicas), as `liveness` reads them from the store."""


def offline_replicas(world: SimWorld, live: set[int]) -> set[tuple[str, int, int]]:
    """(topic, partition, broker) of replicas on a failed log dir of a running broker."""
    out: set[tuple[str, int, int]] = set()
    for broker_id in sorted(live):
        plane = world.host(broker_id).control_plane
        if plane is not None:
            out.update((tp.topic, tp.partition, broker_id) for tp in plane.offline_partitions)
    return out


def isr_problems(zk_view: dict[tuple[str, int], PartitionView], live: set[int],
                 offline: set[tuple[str, int, int]]) -> list[str]:
    """Partitions whose ISR lacks a live replica that is not on a failed log dir (``offline``)."""
    problems = []
    for (topic, partition), (_, _, isr, replicas) in sorted(zk_view.items()):
        missing = [r for r in replicas if r in live and r not in isr and (topic, partition, r) not in offline]
        if missing:
            problems.append(f"{topic}-{partition} ISR {list(isr)} lacks live replicas {missing}")
    return problems


def preferred_leader_problems(zk_view: dict[tuple[str, int], PartitionView], live: set[int]) -> list[str]:
    """Partitions not led by their preferred replica although it is live and in the ISR."""
    problems = []
    for (topic, partition), (leader, _, isr, replicas) in sorted(zk_view.items()):
        preferred = replicas[0] if replicas else None
        if preferred is not None and preferred in live and preferred in isr and leader != preferred:
            problems.append(f"{topic}-{partition} led by {leader}, preferred replica {preferred} is live and in ISR")
    return problems


def drop_isr_expansion(world: SimWorld, request: AlterIsrRequest) -> AlterIsrRequest:
    """The ``no-isr-expansion`` mutation, at the delivery seam: an AlterIsr reaching the controller keeps only
    the replicas already in the stored ISR, so shrinks land and expansions are silently lost."""
    kept = []
    for p in request.partitions:
        path = paths.partition_state_path(p.topic_partition.topic, p.topic_partition.partition)
        found = world.zk.read(path)
        if found is None:
            kept.append(p)
            continue
        stored = TopicPartitionStateZNode.decode(found[0], path, found[1].version).leader_and_isr.isr
        kept.append(dataclasses.replace(p, new_isr=tuple(r for r in p.new_isr if r in stored)))
    return dataclasses.replace(request, partitions=tuple(kept))
