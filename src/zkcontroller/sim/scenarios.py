"""Named scenarios: a workload, then a fault schedule drawn from the seed for ``duration_ms`` of virtual time.

After a scenario's body returns the world heals everything and checks liveness (see `world`). Faults are
undone by the schedule itself (a crashed broker restarts, a partition heals) so that most of the run sees a
cluster that is partly broken, not wholly dead.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from zkcontroller.sim.scenarios_admin import ADMIN_SCENARIOS
from zkcontroller.sim.scenarios_healing import HEALING_SCENARIOS, HEALING_SETUP
from zkcontroller.sim.scenarios_idempotence import IDEMPOTENCE_SCENARIOS, IDEMPOTENCE_SETUP
from zkcontroller.sim.scenarios_unclean import UNCLEAN_SCENARIOS, UNCLEAN_SETUP
from zkcontroller.sim.schedule import every, later, restart_later, up_brokers
from zkcontroller.sim.split_brain import split_brain
from zkcontroller.sim.workload import fail_log_dir
from zkcontroller.sim.world import SimWorld

Body = Callable[[SimWorld], Awaitable[None]]


async def workload(world: SimWorld) -> None:
    """Two topics sharing the configured number of partitions."""
    total = world.config.partitions
    for share in (total - total // 2, total // 2):
        if share > 0:
            await world.create_topic(share)
    await world.wait_stable(60_000)


# ---------------------------------------------------------------------- the scenarios


async def bounce_controller(world: SimWorld) -> None:
    await workload(world)
    timeout = world.config.session_timeout_ms

    def bounce() -> None:
        active = world.active_controllers()
        if not active:
            return
        broker_id = active[0].broker_id
        if world.rng.random() < 0.5:
            world.crash(broker_id)
        else:
            world.stop(broker_id)
        restart_later(world, broker_id, 500, 2 * timeout)

    await every(world, world.config.fault_interval_ms, bounce)


async def kill_leaders(world: SimWorld) -> None:
    await workload(world)

    def kill() -> None:
        up = up_brokers(world)
        if len(up) <= 1:
            return
        counts = world.leader_counts()
        most = max(counts.get(b, 0) for b in up)
        broker_id = world.rng.choice([b for b in up if counts.get(b, 0) == most])
        world.crash(broker_id)
        restart_later(world, broker_id, 1000, 2 * world.config.fault_interval_ms)

    await every(world, world.config.fault_interval_ms, kill)


async def rolling_restart(world: SimWorld) -> None:
    await workload(world)
    end = world.elapsed_ms() + world.config.duration_ms
    while world.elapsed_ms() < end:
        for host in world.hosts:
            if world.elapsed_ms() >= end:
                break
            stopping = world.stop(host.broker_id)
            await world.sleep(0)
            while not stopping.done() and world.elapsed_ms() < end + 60_000:
                await world.sleep(100)
            await world.sleep(world.rng.uniform(100, 1000))
            world.restart(host.broker_id)
            await world.wait_stable(max(world.config.fault_interval_ms, 5000))
            await world.sleep(world.config.fault_interval_ms / len(world.hosts))


async def session_expiry_storm(world: SimWorld) -> None:
    await workload(world)

    def storm() -> None:
        up = up_brokers(world)
        if not up:
            return
        for broker_id in world.rng.sample(up, world.rng.randint(1, len(up))):
            world.expire_session(broker_id)

    await every(world, world.config.fault_interval_ms, storm, exponential=True)


async def network_partition(world: SimWorld) -> None:
    await workload(world)
    timeout = world.config.session_timeout_ms

    def cut() -> None:
        up = up_brokers(world)
        if len(up) < 2:
            return
        broker_id = world.rng.choice(up)
        others = [h.broker_id for h in world.hosts if h.broker_id != broker_id]
        one_way = world.rng.random() < 0.3
        with_store = world.rng.random() < 0.5
        world.partition([broker_id], others, one_way=one_way, with_store=with_store)
        later(world, world.rng.uniform(500, 2 * timeout), world.heal_network)

    await every(world, world.config.fault_interval_ms, cut)


async def slow_zookeeper(world: SimWorld) -> None:
    await workload(world)

    def slow() -> None:
        world.slow_store(world.rng.choice([5, 20, 50, 200]))
        later(world, world.rng.uniform(1000, world.config.fault_interval_ms), lambda: world.slow_store(1))
        up = up_brokers(world)
        if len(up) > 1 and world.rng.random() < 0.5:
            broker_id = world.rng.choice(up)
            world.crash(broker_id)
            restart_later(world, broker_id, 1000, world.config.fault_interval_ms)
        elif up and world.rng.random() < 0.5:
            world.drop_connection(world.rng.choice(up), round(world.rng.uniform(50, 3000)))

    await every(world, world.config.fault_interval_ms, slow)


async def random_faults(world: SimWorld) -> None:
    """One fault per ``fault_interval_ms`` on average (exponential gaps), any verb, workload included."""
    await workload(world)
    timeout = world.config.session_timeout_ms
    verbs = ("crash", "stop", "pause", "expire", "drop-connection", "partition", "hold", "slow-store",
             "move-controller", "create-topic", "add-partitions", "fail-log-dir")

    async def act() -> None:
        verb = world.rng.choice(verbs)
        up = up_brokers(world)
        target = world.rng.choice(up) if up else None
        if verb in ("create-topic", "add-partitions"):
            await _workload_verb(world, verb)
        elif verb == "move-controller":
            await world.delete_controller_znode()
        elif verb == "slow-store":
            world.slow_store(world.rng.choice([5, 20, 100]))
            later(world, world.rng.uniform(500, 10_000), lambda: world.slow_store(1))
        elif target is None or len(up) < 2:
            return
        elif verb == "fail-log-dir":
            fail_log_dir(world, target)
        elif verb == "crash":
            world.crash(target)
            restart_later(world, target, 500, 3 * timeout)
        elif verb == "stop":
            world.stop(target)
            restart_later(world, target, 500, 3 * timeout)
        elif verb == "pause":
            world.pause(target)
            later(world, world.rng.uniform(50, 2 * timeout), lambda: world.resume(target))
        elif verb == "expire":
            world.expire_session(target)
        elif verb == "drop-connection":
            world.drop_connection(target, round(world.rng.uniform(10, 1.5 * timeout)))
        elif verb == "partition":
            others = [h.broker_id for h in world.hosts if h.broker_id != target]
            world.partition([target], others, one_way=world.rng.random() < 0.3,
                            with_store=world.rng.random() < 0.5)
            later(world, world.rng.uniform(200, 2 * timeout), world.heal_network)
        else:
            src = world.rng.choice(up)
            dst = world.rng.choice([b for b in up if b != src])
            world.hold(src, dst)
            later(world, world.rng.uniform(10, 5000), lambda: world.release(src, dst))

    await every(world, world.config.fault_interval_ms, act, exponential=True)


async def _workload_verb(world: SimWorld, verb: str) -> None:
    topics = world.topics()
    if verb == "create-topic" or not topics:
        await world.create_topic(world.rng.randint(1, 8))
    else:
        await world.add_partitions(world.rng.choice(topics), world.rng.randint(1, 4))


SCENARIOS: dict[str, Body] = {
    "bounce-controller": bounce_controller,
    "kill-leaders": kill_leaders,
    "rolling-restart": rolling_restart,
    "session-expiry-storm": session_expiry_storm,
    "network-partition": network_partition,
    "slow-zookeeper": slow_zookeeper,
    "split-brain": split_brain,
    "random": random_faults,
    **HEALING_SCENARIOS,
    **ADMIN_SCENARIOS,
    **UNCLEAN_SCENARIOS,
    **IDEMPOTENCE_SCENARIOS,
}

SCENARIO_SETUP: dict[str, Callable[[SimWorld], None]] = {**HEALING_SETUP, **UNCLEAN_SETUP, **IDEMPOTENCE_SETUP}
"""What a scenario changes in the world before its brokers start (broker and controller settings)."""


def scenario_body(name: str) -> Body:
    try:
        return SCENARIOS[name]
    except KeyError:
        raise ValueError(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}") from None
