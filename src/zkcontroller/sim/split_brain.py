"""The seed articles' split-brain case, as a scenario.

A controller is in the middle of a long BrokerChange (many partitions, a slow store) when it freezes — at the
moment one of its partition-state writes lands, so it has more writes and the LeaderAndIsr/UpdateMetadata
requests for them still to do. While it is frozen another broker becomes controller; then it resumes and
carries on with its stale event. Two episodes per run, one for each way a controller is deposed:

- ``expire-session``: it stays frozen past its session timeout, so the store expires its session, its
  ``/controller`` znode goes and another broker is elected (the articles' case). Its later writes meet a dead
  session; the requests it still sends carry the old controller epoch and brokers must refuse them.
- ``move-controller``: an operator deletes ``/controller`` while it is frozen, and it resumes soon after the
  new election, before its session times out and while the successor's failover is still running, so its
  session is still good. Only the ``/controller_epoch`` check in its fenced multis
  (KAFKA-7235) stops its writes from landing.

The ``no-controller-epoch-check`` mutation is caught by the second episode, ``no-broker-epoch-check`` by both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zkcontroller.sim.host import SimHost
    from zkcontroller.sim.world import SimWorld

SLOW_STORE_FACTOR = 20
ZOMBIE_RUN_MS = 5_000
"""How long the resumed controller is left to act on its stale event before the episode ends."""


async def split_brain(world: SimWorld) -> None:
    for depose in ("expire-session", "move-controller"):
        # A fresh topic on every broker, so that the victim leads some partitions and is in every ISR (the
        # simulator has no ISR expansion yet: a broker that came back is in no ISR until a new topic).
        await _wait(world, lambda: all(h.up for h in world.hosts), 60_000, step_ms=100)
        await world.create_topic(world.config.partitions)
        await world.wait_stable(120_000)
        await zombie_episode(world, depose)
        world.check_violations()


def _successor_ready(world: SimWorld, old: SimHost, old_epoch: int) -> bool:
    for host in world.active_controllers():
        controller = host.controller
        if (host is not old and controller.context.epoch > old_epoch
                and controller.context.epoch == world.zk.controller_epoch()
                and controller.event_manager.queue_size == 0 and controller.event_manager.state.name == "IDLE"):
            return True
    return False


async def _wait(world: SimWorld, condition: object, bound_ms: int, step_ms: int = 10) -> bool:
    deadline = world.elapsed_ms() + bound_ms
    while not condition():  # type: ignore[operator]
        if world.elapsed_ms() >= deadline:
            return False
        await world.sleep(step_ms)
    return True


async def zombie_episode(world: SimWorld, depose: str) -> None:
    active = world.active_controllers()
    if len(active) != 1:
        world.record("split-brain", f"{depose}: skipped, {len(active)} controllers")
        return
    old = active[0]
    old_epoch = old.controller.context.epoch
    counts = world.leader_counts()
    candidates = sorted((h.broker_id for h in world.hosts if h.up and h is not old),
                        key=lambda b: (-counts.get(b, 0), b))
    if not candidates:
        return
    victim = candidates[0]
    world.record("split-brain", f"{depose}: controller {old.broker_id} epoch {old_epoch}, victim {victim}")
    world.slow_store(SLOW_STORE_FACTOR)
    world.pause_on_write = old.process
    world.crash(victim, expire_now=True)
    paused = await _wait(world, lambda: old.state == "paused", 60_000)
    world.pause_on_write = None
    if not paused:
        world.record("split-brain", f"{depose}: controller {old.broker_id} wrote nothing; no zombie")
    else:
        timeout = world.config.session_timeout_ms
        if depose == "expire-session":
            await _wait(world, lambda: _successor_ready(world, old, old_epoch), timeout + 120_000)
        else:
            # Resume soon after the new election, while the successor's failover is still under way, so the
            # zombie's next writes meet partition states it still believes it owns (a live session: only
            # the epoch check in its multis stops them).
            await world.delete_controller_znode()
            await _wait(world, lambda: world.zk.controller_epoch() > old_epoch, timeout * 6 // 10)
            await world.sleep(world.rng.uniform(0, 300))
        await world.sleep(50)  # what is on the wire arrives
        world.resume(old.broker_id)
        await world.sleep(ZOMBIE_RUN_MS)
    world.slow_store(1)
    world.restart(victim)
