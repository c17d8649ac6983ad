"""``unclean-election-under-faults``: whole ISRs go offline while an operator turns unclean leader election on
and off at runtime, the way ``kafka-configs.sh --alter`` does it through ZooKeeper.

A steady producer runs throughout. Each episode isolates one broker F — its outgoing links are held, so its
fetches stall and its leaders shrink it out of their ISRs after ``replica.lag.time.max.ms`` (⅔ of the session
timeout here) — then takes down every ISR member of one partition F follows out of sync: crashed (sometimes
with the session expired at once) or frozen past its session. F's links are released at that moment, so F
is a live replica outside the ISR, and the partition (with every other whose ISR went down with it) is
offline until an old ISR member returns — or, where unclean election is enabled, F is elected with ISR [F].

Between episodes, and sometimes during one, ``unclean.leader.election.enable`` is set to true or false or
deleted on a topic (`admin.configs.alter_topic_config`: ``/config/topics/<t>`` and a ``topics/<t>``
notification), on the dynamic broker default or on one broker (`alter_broker_config` with ``via_broker``, as
a running broker applies AlterConfigs: ``/config/brokers/<default|id>`` and a ``brokers/...`` notification).
Now and then an operator deletes ``/controller``: the next controller reads the broker-level configs and elects
the offline partitions at its failover.

Restarted brokers keep their logs (`SimWorld.keep_logs`), so a deposed leader comes back with more offsets
than the partition's new leader and must truncate (``OFFSET_OUT_OF_RANGE``) before it can rejoin the ISR: the
ISR liveness check after heal covers that. The unclean-election invariants are in `invariants_unclean`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from zkcontroller.admin.configs import alter_broker_config, alter_topic_config
from zkcontroller.admin.errors import AdminError
from zkcontroller.coordination.errors import ZkError
from zkcontroller.sim.schedule import every, later, up_brokers
from zkcontroller.sim.workload import start_producer
from zkcontroller.sim.world import SimWorld
from zkcontroller.zk import paths
from zkcontroller.zk.znodes import UNCLEAN_LEADER_ELECTION_ENABLE, TopicPartitionStateZNode

UNCLEAN = UNCLEAN_LEADER_ELECTION_ENABLE


# ---------------------------------------------------------------------- the operator's config changes


async def set_unclean(world: SimWorld, entity: str, value: str | None, *, topic: bool) -> None:
    """``kafka-configs --alter --entity-type topics|brokers ... --add-config unclean.leader.election.enable=V``
    (``--delete-config`` when ``value`` is None; skipped if the key is not set)."""
    kind = paths.ConfigType.TOPIC if topic else paths.ConfigType.BROKER
    label = f"{kind}/{entity}"
    try:
        current = await world.admin_zk.get_entity_configs(kind, entity)
        if value is None and UNCLEAN not in current:
            return
        add = {} if value is None else {UNCLEAN: value}
        delete = [UNCLEAN] if value is None else []
        if topic:
            await alter_topic_config(world.admin_zk, entity, add, delete)
        else:
            await alter_broker_config(world.admin_zk, entity, add, delete, via_broker=True)
    except (AdminError, ZkError) as e:
        world.record("workload-failed", f"configs {label} {UNCLEAN}={value}: {type(e).__name__}")
        return
    world.record("workload", f"configs {label} {UNCLEAN}={'<deleted>' if value is None else value}")


async def toggle_unclean(world: SimWorld) -> None:
    """One config change: mostly a topic's override, else the broker default or one broker's value."""
    rng = world.rng
    value = rng.choice(["true", "true", "false", None])
    roll = rng.random()
    topics = world.topics()
    if roll < 0.6 and topics:
        await set_unclean(world, rng.choice(topics), value, topic=True)
    elif roll < 0.85:
        await set_unclean(world, paths.DEFAULT_ENTITY, value, topic=False)
    else:
        await set_unclean(world, str(rng.choice(world.hosts).broker_id), value, topic=False)


# ---------------------------------------------------------------------- the faults


def _out_of_sync(world: SimWorld, broker_id: int) -> list[tuple[str, int, tuple[int, ...]]]:
    """(topic, partition, ISR) of the partitions that have ``broker_id`` as a replica outside the ISR."""
    out = []
    for topic in world.topics():
        for partition, replicas in sorted(world.checker.assignment(topic).items()):
            path = paths.partition_state_path(topic, partition)
            found = world.zk.read(path)
            if broker_id not in replicas or found is None:
                continue
            lai = TopicPartitionStateZNode.decode(found[0], path, 0).leader_and_isr
            if lai.leader >= 0 and broker_id not in lai.isr:
                out.append((topic, partition, lai.isr))
    return out


def _spawn(coro: Awaitable[None]) -> None:
    asyncio.get_running_loop().create_task(coro, name="sim-unclean-config")  # type: ignore[arg-type]


def isolate_then_kill_isr(world: SimWorld) -> None:
    """One episode (see the module doc)."""
    rng = world.rng
    up = up_brokers(world)
    if len(up) < 2:
        return
    timeout = world.config.session_timeout_ms
    lag = int(world.replication_overrides["replica_lag_time_max_ms"])
    isolated = rng.choice(up)
    others = [h.broker_id for h in world.hosts if h.broker_id != isolated]
    for other in others:
        world.hold(isolated, other)

    def kill() -> None:
        candidates = [p for p in _out_of_sync(world, isolated) if all(world.host(b).up for b in p[2])]
        if candidates:
            topic, partition, isr = rng.choice(candidates)
            world.record("workload", f"take down the ISR {list(isr)} of {topic}-{partition}")
            for broker_id in isr:
                _take_down(world, broker_id, timeout)
            if rng.random() < 0.6:  # the operator reacts: unclean election for that topic, a while later
                later(world, rng.uniform(0.5 * timeout, 3 * timeout),
                      lambda: _spawn(set_unclean(world, topic, "true", topic=True)))
        for other in others:
            world.release(isolated, other)

    later(world, rng.uniform(1.5 * lag, 3 * lag), kill)


def _take_down(world: SimWorld, broker_id: int, timeout: int) -> None:
    rng = world.rng
    if rng.random() < 0.3:
        world.pause(broker_id)  # past its session: it returns as a zombie with its longer log
        later(world, rng.uniform(1.2 * timeout, 4 * timeout), lambda: world.resume(broker_id))
        return
    world.crash(broker_id, expire_now=rng.random() < 0.5)
    later(world, rng.uniform(1.5 * timeout, 5 * timeout), lambda: world.restart(broker_id))


async def unclean_election_under_faults(world: SimWorld) -> None:
    total = world.config.partitions
    for share in (total - total // 2, total // 2):
        if share > 0:
            await world.create_topic(share)
    await world.wait_stable(60_000)
    producing = start_producer(world)

    async def act() -> None:
        roll = world.rng.random()
        if roll < 0.4:
            await toggle_unclean(world)
        elif roll < 0.5:
            await world.delete_controller_znode()  # the next controller reads the configs at its failover
        else:
            isolate_then_kill_isr(world)

    await every(world, world.config.fault_interval_ms / 2, act, exponential=True)
    producing.clear()


def _setup(world: SimWorld) -> None:
    world.keep_logs = True
    world.replication_overrides["replica_lag_time_max_ms"] = world.config.session_timeout_ms * 2 // 3


UNCLEAN_SCENARIOS: dict[str, Callable[[SimWorld], Awaitable[None]]] = {
    "unclean-election-under-faults": unclean_election_under_faults,
}

UNCLEAN_SETUP: dict[str, Callable[[SimWorld], None]] = {"unclean-election-under-faults": _setup}
