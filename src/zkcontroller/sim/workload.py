"""The data-plane and admin workload of a simulation: produce to the leaders, fail a log dir, ask for a
preferred-replica election — each through the code a user's request would reach (the leader's replica manager,
`KafkaServer.fail_log_dir`, the ``/admin/preferred_replica_election`` znode as `zkcontroller leader-election`
writes it).

Produce appends offsets only (no payloads), so followers have something to fetch and catch up on: without it
every replica is trivially caught up and ISR expansion is never exercised.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from zkcontroller.admin.leader_election import ElectionInProgressError, start_preferred_election
from zkcontroller.broker.replica_manager import NotLeaderError
from zkcontroller.coordination.errors import ZkError

if TYPE_CHECKING:
    from zkcontroller.sim.world import SimWorld

PRODUCE_TICK_MS = 200
"""How often the background producer appends (virtual time)."""


def produce(world: SimWorld, records: int) -> int:
    """Append ``records`` to every partition a running broker currently leads; returns partitions written."""
    written = 0
    for host in world.hosts:
        manager = None if host.server is None else host.server.replica_manager
        if not host.up or manager is None:
            continue
        for tp in sorted(manager.leader_partitions(), key=lambda p: (p.topic, p.partition)):
            with contextlib.suppress(NotLeaderError):  # leadership moved between the listing and the append
                manager.append(tp, records)
                written += 1
    return written


async def produce_while(world: SimWorld, running: asyncio.Event, records_per_tick: int) -> None:
    """A producer at a steady rate until ``running`` is cleared (the scenario's faults are over)."""
    while running.is_set():
        produce(world, records_per_tick)
        await world.sleep(PRODUCE_TICK_MS)


def start_producer(world: SimWorld, records_per_tick: int = 100) -> asyncio.Event:
    """Start the steady producer; clear the returned event to stop it."""
    running = asyncio.Event()
    running.set()
    world.record("workload", f"produce {records_per_tick} records every {PRODUCE_TICK_MS}ms")
    asyncio.get_running_loop().create_task(produce_while(world, running, records_per_tick), name="sim-producer")
    return running


def fail_log_dir(world: SimWorld, broker_id: int) -> None:
    """A disk failure on one of a running broker's online log dirs (the last one halts the broker, as Kafka)."""
    host = world.host(broker_id)
    server = host.server
    if not host.up or server is None or server.control_plane is None:
        return
    online = [d for d in server.config.log_dirs if d not in server.control_plane.offline_log_dirs]
    if not online:
        return
    log_dir = world.rng.choice(online)
    world.fault("fail-log-dir", f"{broker_id} {log_dir}")
    asyncio.get_running_loop().create_task(_fail(world, broker_id, log_dir), name=f"fail-log-dir-{broker_id}")


async def _fail(world: SimWorld, broker_id: int, log_dir: str) -> None:
    host = world.host(broker_id)
    server = host.server
    try:
        if server is not None:
            await server.fail_log_dir(log_dir)
    except (ValueError, ZkError) as e:  # stopped or cut off meanwhile: the failure changes nothing then
        world.record("fault-failed", f"fail-log-dir {broker_id}: {type(e).__name__}")
        return
    if server is not None and not server.running and host.server is server and host.state == "running":
        world.record("halt", f"{broker_id} (no online log dir left)")
        host.crash()  # Exit.halt: the process is gone, its session times out


async def preferred_election(world: SimWorld) -> None:
    """``zkcontroller leader-election --election-type preferred --all-topic-partitions``."""
    try:
        started = await start_preferred_election(world.admin_zk, None)
    except (ElectionInProgressError, ZkError) as e:
        world.record("workload-failed", f"preferred-election: {type(e).__name__}")
        return
    world.record("workload", f"preferred-election {len(started.requested)} partitions")
