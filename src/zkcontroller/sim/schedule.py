"""Timing helpers the scenarios share: act later, act every so often, which brokers are up or down."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zkcontroller.sim.world import SimWorld


def later(world: SimWorld, delay_ms: float, action: Callable[[], object]) -> None:
    asyncio.get_running_loop().call_later(max(delay_ms, 0) / 1000, action)


async def every(world: SimWorld, mean_ms: float, act: Callable[[], Awaitable[None] | None], *,
                exponential: bool = False) -> None:
    """Call ``act`` once per ``mean_ms`` (exactly, or exponentially distributed) until the duration is up."""
    end = world.elapsed_ms() + world.config.duration_ms
    while True:
        gap = world.rng.expovariate(1 / mean_ms) if exponential else mean_ms
        if world.elapsed_ms() + gap >= end:
            await world.sleep(end - world.elapsed_ms())
            return
        await world.sleep(gap)
        outcome = act()
        if outcome is not None:
            await outcome


def up_brokers(world: SimWorld) -> list[int]:
    return [h.broker_id for h in world.hosts if h.up]


def restart_later(world: SimWorld, broker_id: int, low_ms: float, high_ms: float) -> None:
    later(world, world.rng.uniform(low_ms, high_ms), lambda: world.restart(broker_id))
