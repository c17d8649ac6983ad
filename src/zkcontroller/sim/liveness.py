"""Liveness after heal: once faults stop, within a bound of virtual time the cluster must have settled.

Settled means: exactly one controller, whose epoch is the one in ``/controller_epoch`` and which owns
``/controller``, with nothing queued; every running broker registered; every partition with a live replica
(not on a failed log dir) in its last ISR led by a live broker; every running broker's metadata cache saying
what ZooKeeper holds (live brokers, controller, and each partition's leader, leader epoch, ISR and replicas);
and the data plane healed (`isr_liveness`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zkcontroller.sim.invariants_admin import admin_liveness_problems
from zkcontroller.sim.isr_liveness import PartitionView, isr_problems, offline_replicas, preferred_leader_problems
from zkcontroller.zk import paths
from zkcontroller.zk.znodes import TopicPartitionStateZNode
from zkcontroller.zk.znodes.controller import ControllerZNode

if TYPE_CHECKING:
    from zkcontroller.broker.metadata_cache import MetadataSnapshot
    from zkcontroller.sim.world import SimWorld

def liveness_problems(world: SimWorld) -> list[str]:
    active = world.active_controllers()
    if len(active) != 1:
        return [f"{len(active)} active controllers {[h.broker_id for h in active]}"]
    problems: list[str] = []
    controller_host = active[0]
    controller_id = controller_host.broker_id
    owner = world.zk.read(paths.CONTROLLER)
    if owner is None or ControllerZNode.decode(owner[0]) != controller_id:
        problems.append(f"/controller does not name broker {controller_id}")
    if not world.settled():
        problems.append(f"controller {controller_id} is not idle or not at the store's epoch")
    registered = sorted(int(x) for x in world.zk.children(paths.BROKER_IDS))
    up = sorted(h.broker_id for h in world.hosts if h.up)
    if registered != up:
        problems.append(f"registered brokers {registered} but running {up}")
    live = set(registered)
    zk_view = _partitions_in_store(world, problems)
    offline = offline_replicas(world, live)
    for tp, (leader, _, isr, _) in sorted(zk_view.items()):
        online_isr = sorted(r for r in isr if r in live and (*tp, r) not in offline)
        if online_isr and leader not in live:
            problems.append(f"{tp[0]}-{tp[1]} has live ISR members {online_isr} but leader {leader}")
    problems.extend(isr_problems(zk_view, live, offline))
    problems.extend(admin_liveness_problems(world))
    if world.expect_preferred_leaders:
        problems.extend(preferred_leader_problems(zk_view, live))
    for host in world.hosts:
        if host.up and host.control_plane is not None:
            problems.extend(_cache_problems(host.broker_id, host.control_plane.metadata_cache.snapshot,
                                            zk_view, live, controller_id))
    return problems


def _partitions_in_store(world: SimWorld, problems: list[str]) -> dict[tuple[str, int], PartitionView]:
    out: dict[tuple[str, int], PartitionView] = {}
    for topic in world.topics():
        for partition, replicas in sorted(world.checker.assignment(topic).items()):
            path = paths.partition_state_path(topic, partition)
            found = world.zk.read(path)
            if found is None:
                problems.append(f"{topic}-{partition} has no state")
                continue
            state = TopicPartitionStateZNode.decode(found[0], path, found[1].version)
            lai = state.leader_and_isr
            out[(topic, partition)] = (lai.leader, lai.leader_epoch, tuple(lai.isr), replicas)
    return out


def _cache_problems(broker_id: int, snapshot: MetadataSnapshot, zk_view: dict[tuple[str, int], PartitionView],
                    live: set[int], controller_id: int) -> list[str]:
    problems: list[str] = []
    alive = sorted(snapshot.alive_brokers)
    if alive != sorted(live):
        problems.append(f"broker {broker_id} cache has live brokers {alive}, ZooKeeper {sorted(live)}")
    if snapshot.controller_id != controller_id:
        problems.append(f"broker {broker_id} cache names controller {snapshot.controller_id}")
    states = snapshot.partition_states
    for (topic, partition), expected in sorted(zk_view.items()):
        cached = states.get(topic, {}).get(partition)
        got = None if cached is None else (cached.leader, cached.leader_epoch, tuple(cached.isr),
                                           tuple(cached.replicas))
        if got != expected:
            problems.append(f"broker {broker_id} cache has {topic}-{partition} as {got}, ZooKeeper {expected}")
            break
    return problems
