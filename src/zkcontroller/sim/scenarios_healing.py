"""The healing scenarios (issue 12): faults a self-healing cluster must recover from with full ISRs.

Each runs a steady producer, so followers have offsets to catch up on, and ends with the data-plane liveness
check of `isr_liveness`: every live replica back in its ISR (and, for the preferred-election scenario, every
partition led by its preferred replica again).

- ``controlled-shutdown-storm``: several brokers stopped at once through ControlledShutdown (leadership
  moved away, followers out of the ISR, retries when the controller cannot move everything), then restarted;
  sometimes the controller itself is among them.
- ``paused-follower``: a follower frozen (GC-style) or cut off from its leaders for longer than
  ``replica.lag.time.max.ms`` but (mostly) shorter than its session: the leader shrinks the ISR through
  AlterIsr, and expands it again when the follower catches up.
- ``paused-follower-ibp-2.6``: the same faults with ``inter.broker.protocol.version=2.6-IV0`` on every broker,
  so leaders write ISR changes to ZooKeeper themselves and publish ``/isr_change_notification`` znodes that
  the controller reads, propagates and deletes (Kafka before KIP-497's AlterIsr).
- ``preferred-election-under-faults``: preferred-replica elections requested through
  ``/admin/preferred_replica_election`` while brokers crash and the controller moves; automatic leader
  rebalancing runs every few seconds, so after heal leadership must be back on the preferred replicas.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from zkcontroller.sim.schedule import every, later, restart_later, up_brokers
from zkcontroller.sim.workload import fail_log_dir, preferred_election, start_producer
from zkcontroller.sim.world import SimWorld

REBALANCE_INTERVAL_S = 5
"""``leader.imbalance.check.interval.seconds`` in the preferred-election scenario (Kafka's default is 300)."""


async def _two_topics(world: SimWorld) -> None:
    total = world.config.partitions
    for share in (total - total // 2, total // 2):
        if share > 0:
            await world.create_topic(share)
    await world.wait_stable(60_000)


async def controlled_shutdown_storm(world: SimWorld) -> None:
    await _two_topics(world)
    producing = start_producer(world)
    timeout = world.config.session_timeout_ms

    def storm() -> None:
        up = up_brokers(world)
        if len(up) < 2:
            return
        for broker_id in world.rng.sample(up, world.rng.randint(1, len(up) - 1)):
            world.stop(broker_id)
            restart_later(world, broker_id, 500, 2 * timeout)

    await every(world, world.config.fault_interval_ms, storm, exponential=True)
    producing.clear()


def _followers(world: SimWorld) -> list[int]:
    """Running brokers that are not the active controller."""
    active = {h.broker_id for h in world.active_controllers()}
    return [b for b in up_brokers(world) if b not in active]


async def paused_follower(world: SimWorld) -> None:
    await _two_topics(world)
    producing = start_producer(world)
    timeout = world.config.session_timeout_ms
    lag = int(world.replication_overrides["replica_lag_time_max_ms"])

    def freeze() -> None:
        candidates = _followers(world)
        if not candidates:
            return
        broker_id = world.rng.choice(candidates)
        if world.rng.random() < 0.5:
            world.pause(broker_id)  # mostly within the session, sometimes past it
            later(world, world.rng.uniform(lag, 1.3 * timeout), lambda: world.resume(broker_id))
            return
        others = [h.broker_id for h in world.hosts if h.broker_id != broker_id]
        for other in others:  # its fetches (and nothing else it sends) stall at the network
            world.hold(broker_id, other)

        def release() -> None:
            for other in others:
                world.release(broker_id, other)

        later(world, world.rng.uniform(0.5 * lag, 3 * lag), release)

    await every(world, world.config.fault_interval_ms, freeze, exponential=True)
    producing.clear()


async def preferred_election_under_faults(world: SimWorld) -> None:
    await _two_topics(world)
    producing = start_producer(world)
    timeout = world.config.session_timeout_ms

    async def act() -> None:
        up = up_brokers(world)
        roll = world.rng.random()
        if roll < 0.4:
            await preferred_election(world)
        elif roll < 0.55:
            await world.delete_controller_znode()
        elif roll < 0.65 and up:
            fail_log_dir(world, world.rng.choice(up))
        elif len(up) >= 2:
            broker_id = world.rng.choice(up)
            world.crash(broker_id)
            restart_later(world, broker_id, 500, 2 * timeout)

    await every(world, world.config.fault_interval_ms / 2, act, exponential=True)
    producing.clear()


def _lag_below_session(world: SimWorld) -> None:
    world.replication_overrides["replica_lag_time_max_ms"] = world.config.session_timeout_ms * 2 // 3


PRE_ALTER_ISR_IBP = "2.6-IV0"
"""The last inter-broker protocol version without AlterIsr (2.7-IV2 brought it)."""


def _zookeeper_isr_path(world: SimWorld) -> None:
    _lag_below_session(world)
    world.controller_overrides["inter_broker_protocol_version"] = PRE_ALTER_ISR_IBP
    world.replication_overrides["inter_broker_protocol_version"] = PRE_ALTER_ISR_IBP


def _rebalance_often(world: SimWorld) -> None:
    world.expect_preferred_leaders = True
    world.controller_overrides.update(leader_imbalance_check_interval_seconds=REBALANCE_INTERVAL_S,
                                      leader_imbalance_per_broker_percentage=0)


HEALING_SCENARIOS: dict[str, Callable[[SimWorld], Awaitable[None]]] = {
    "controlled-shutdown-storm": controlled_shutdown_storm,
    "paused-follower": paused_follower,
    "paused-follower-ibp-2.6": paused_follower,
    "preferred-election-under-faults": preferred_election_under_faults,
}

HEALING_SETUP: dict[str, Callable[[SimWorld], None]] = {
    "paused-follower": _lag_below_session,
    "paused-follower-ibp-2.6": _zookeeper_isr_path,
    "preferred-election-under-faults": _rebalance_often,
}
