"""``idempotent-failover``: an idempotent producer (`idempotent_producer`) writes acks=all to a topic of its own
while the leaders are crashed, killed right after their followers fetched a batch, paused past their session,
stopped cleanly or have their sessions expired — so that acknowledgements are lost in the middle of the acks=-1
wait and the producer retries batches the new leader may already hold.

The topic has ``--partitions`` partitions, replication factor 3 and ``min.insync.replicas=2`` (NOT_ENOUGH_REPLICAS
when two replicas are out). Restarted brokers keep their logs (a disk survives kill -9), so a broker's restart
loses nothing but what its process held in memory. After the faults everything heals, the producer drains (every
batch acknowledged, within the liveness bound) and the acknowledged sequences are checked for holes. The invariants
are in `invariants_idempotence`.

The decisive fault is ``crash-after-replication``: it waits (up to 500 ms, polling each virtual millisecond) for a
partition the victim leads where a follower's log end is past the leader's high watermark — a batch fetched whose
acks=-1 wait the leader has not completed yet — and crashes the leader then. The follower, elected, holds the
batch; the producer, which never got the answer, sends it again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from zkcontroller.admin.errors import AdminError
from zkcontroller.coordination.errors import ZkError
from zkcontroller.model import TopicPartition
from zkcontroller.sim.idempotent_producer import IdempotentProducer
from zkcontroller.sim.schedule import every, later, restart_later, up_brokers
from zkcontroller.sim.world import SimWorld

TOPIC = "idempotent"
MIN_INSYNC_REPLICAS = 2
VERBS = ("crash-after-replication", "crash-after-replication", "crash", "pause", "expire", "stop")


def _leader_of_most(world: SimWorld) -> int | None:
    up = up_brokers(world)
    if len(up) < 2:
        return None
    counts = world.leader_counts()
    most = max(counts.get(b, 0) for b in up)
    return world.rng.choice([b for b in up if counts.get(b, 0) == most])


def replicated_not_acked(world: SimWorld, broker_id: int, topic: str) -> TopicPartition | None:
    """A partition ``broker_id`` leads where a follower's log end is past the leader's high watermark."""
    server = world.host(broker_id).server
    manager = server.replica_manager if server is not None else None
    if manager is None:
        return None
    for tp in sorted(manager.leader_partitions(), key=lambda p: p.partition):
        hw = manager.high_watermark(tp)
        if tp.topic != topic or hw is None:
            continue
        for host in world.hosts:
            follower = None if host.broker_id == broker_id or not host.up or host.server is None \
                else host.server.replica_manager
            leo = None if follower is None else follower.log_end_offset(tp)
            if leo is not None and leo > hw:
                return tp
    return None


async def _crash_after_replication(world: SimWorld, broker_id: int) -> None:
    for _ in range(500):
        if not world.host(broker_id).up:
            return
        tp = replicated_not_acked(world, broker_id, TOPIC)
        if tp is not None:
            world.record("workload", f"{tp} fetched by a follower past leader {broker_id}'s high watermark")
            break
        await asyncio.sleep(0.001)
    world.crash(broker_id, expire_now=world.rng.random() < 0.5)
    restart_later(world, broker_id, 500, 2 * world.config.session_timeout_ms)


async def idempotent_failover(world: SimWorld) -> None:
    assert world.admin is not None
    rf = min(3, world.config.brokers)
    try:
        await world.admin.create_topic(TOPIC, world.config.partitions, rf,
                                       {"min.insync.replicas": str(min(MIN_INSYNC_REPLICAS, rf))})
    except (AdminError, ZkError) as e:
        world.record("workload-failed", f"create {TOPIC}: {type(e).__name__}")
        return
    world.record("workload", f"create {TOPIC} partitions={world.config.partitions} rf={rf}")
    await world.wait_stable(60_000)
    producer = IdempotentProducer(world, TOPIC, world.config.partitions)
    if not await producer.start():
        return
    await world.sleep(1000)
    timeout = world.config.session_timeout_ms

    async def act() -> None:
        victim = _leader_of_most(world)
        if victim is None:
            return
        verb = world.rng.choice(VERBS)
        if verb == "crash-after-replication":
            world.record("workload", f"wait to crash {victim} after replication")
            await _crash_after_replication(world, victim)
        elif verb == "crash":
            world.crash(victim, expire_now=world.rng.random() < 0.5)
            restart_later(world, victim, 500, 2 * timeout)
        elif verb == "pause":  # past its session: its partitions move; its answers, if any, come too late
            world.pause(victim)
            later(world, world.rng.uniform(1.2 * timeout, 2.5 * timeout), lambda: world.resume(victim))
        elif verb == "expire":
            world.expire_session(victim)
        else:
            world.stop(victim)
            restart_later(world, victim, 500, 2 * timeout)

    try:
        await every(world, world.config.fault_interval_ms, act, exponential=True)
        await world.heal_all()
        await producer.drain(world.config.liveness_bound_ms)
    finally:
        producer.stop()
    world.checker.idempotence.check_gapless()
    world.check_violations()


def _setup(world: SimWorld) -> None:
    world.keep_logs = True


IDEMPOTENCE_SCENARIOS: dict[str, Callable[[SimWorld], Awaitable[None]]] = {
    "idempotent-failover": idempotent_failover,
}

IDEMPOTENCE_SETUP: dict[str, Callable[[SimWorld], None]] = {"idempotent-failover": _setup}
