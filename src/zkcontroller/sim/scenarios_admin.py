"""The deletion and reassignment scenarios (issue 13): admin operations that must finish, exactly once, while
brokers fail and the controller moves. Topics here have replication factor 2 on 3+ brokers, so a
reassignment really moves replicas (with RF = brokers it could only reorder them).

- ``delete-with-broker-down``: a broker is crashed and, while it is down, a topic with replicas on it is
  deleted (the deletion must wait for it: ineligible, then resumed when it returns); new topics keep coming.
- ``reassign-under-faults``: partitions reassigned to random targets (sometimes onto a broker that is down)
  while brokers crash, pause, expire and get cut off; some reassignments are superseded by the next one.
- ``controller-moves-mid-operation``: a deletion or reassignment is requested and, a few milliseconds to a
  second later, the controller is crashed, stopped or made to resign (``/controller`` deleted), so the next
  controller must resume what it finds in ZooKeeper.

Liveness after heal adds: every requested deletion completed, every reassignment completed or cancelled.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from zkcontroller.sim.admin_workload import delete_topic, reassign
from zkcontroller.sim.schedule import every, later, restart_later, up_brokers
from zkcontroller.sim.world import SimWorld

ADMIN_RF = 2


async def _topics(world: SimWorld, count: int = 2) -> None:
    share = max(world.config.partitions // count, 1)
    for _ in range(count):
        await world.create_topic(share, ADMIN_RF)
    await world.wait_stable(60_000)


def _live_topics(world: SimWorld) -> list[str]:
    """Topics not yet marked for deletion."""
    return [t for t in world.topics() if t not in world.deletions_requested]


def _topic_on(world: SimWorld, broker_id: int) -> str | None:
    """A live topic with a replica on ``broker_id`` (else any live topic)."""
    topics = _live_topics(world)
    on = [t for t in topics if any(broker_id in r for r in world.checker.assignment(t).values())]
    pool = on or topics
    return world.rng.choice(pool) if pool else None


async def delete_with_broker_down(world: SimWorld) -> None:
    await _topics(world, 3)
    timeout = world.config.session_timeout_ms

    async def act() -> None:
        up = up_brokers(world)
        if len(up) >= 2:
            victim = world.rng.choice(up)
            world.crash(victim, expire_now=world.rng.random() < 0.5)
            restart_later(world, victim, timeout, 3 * timeout)
            await world.sleep(world.rng.uniform(0, timeout))
            topic = _topic_on(world, victim)
            if topic is not None:
                await delete_topic(world, topic)
        await world.create_topic(max(world.config.partitions // 3, 1), ADMIN_RF)

    await every(world, world.config.fault_interval_ms, act, exponential=True)


async def reassign_under_faults(world: SimWorld) -> None:
    await _topics(world)
    timeout = world.config.session_timeout_ms

    async def act() -> None:
        topics = _live_topics(world)
        if topics:
            await reassign(world, world.rng.choice(topics), world.rng.randint(1, 4))
        up = up_brokers(world)
        if len(up) < 2:
            return
        target = world.rng.choice(up)
        roll = world.rng.random()
        if roll < 0.35:
            world.crash(target)
            restart_later(world, target, 500, 2 * timeout)
        elif roll < 0.55:
            world.pause(target)
            later(world, world.rng.uniform(100, 1.5 * timeout), lambda: world.resume(target))
        elif roll < 0.7:
            world.expire_session(target)
        elif roll < 0.85:
            others = [h.broker_id for h in world.hosts if h.broker_id != target]
            world.partition([target], others, one_way=False, with_store=world.rng.random() < 0.5)
            later(world, world.rng.uniform(200, 2 * timeout), world.heal_network)

    await every(world, world.config.fault_interval_ms, act, exponential=True)


async def controller_moves_mid_operation(world: SimWorld) -> None:
    await _topics(world, 3)
    timeout = world.config.session_timeout_ms

    async def act() -> None:
        topics = _live_topics(world)
        if not topics:
            await world.create_topic(max(world.config.partitions // 3, 1), ADMIN_RF)
            return
        if world.rng.random() < 0.4 and len(topics) > 1:
            await delete_topic(world, world.rng.choice(topics))
        else:
            await reassign(world, world.rng.choice(topics), world.rng.randint(1, 6))
        await world.sleep(world.rng.choice([0, 1, 5, 20, 100, 1000]))
        active = world.active_controllers()
        if not active:
            return
        controller = active[0].broker_id
        roll = world.rng.random()
        if roll < 0.4:
            await world.delete_controller_znode()
        elif roll < 0.7:
            world.crash(controller)
            restart_later(world, controller, 500, 2 * timeout)
        else:
            world.stop(controller)
            restart_later(world, controller, 500, 2 * timeout)
        if world.rng.random() < 0.5:
            await world.create_topic(max(world.config.partitions // 3, 1), ADMIN_RF)

    await every(world, world.config.fault_interval_ms, act, exponential=True)


ADMIN_SCENARIOS: dict[str, Callable[[SimWorld], Awaitable[None]]] = {
    "delete-with-broker-down": delete_with_broker_down,
    "reassign-under-faults": reassign_under_faults,
    "controller-moves-mid-operation": controller_moves_mid_operation,
}
