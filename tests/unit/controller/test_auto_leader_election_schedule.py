"""The auto leader rebalance task (spec §9.9) on virtual time: first check 5 s after failover, then one every
``leader.imbalance.check.interval.seconds``; resignation stops the chain."""

from __future__ import annotations

import asyncio
import logging
import random

import pytest
from tests.helpers import ManualClock, wait_until
from tests.unit.controller.standalone import standalone_controller

from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.runtime.runtime import AsyncioRuntime


class GatedRuntime(AsyncioRuntime):
    """Every sleep is recorded and lasts until the test releases it."""

    def __init__(self) -> None:
        super().__init__(random.Random(0), ManualClock())
        self.sleeps: list[tuple[int, asyncio.Event]] = []

    async def sleep_ms(self, ms: int) -> None:
        gate = asyncio.Event()
        self.sleeps.append((ms, gate))
        await gate.wait()

    def pending(self, ms: int) -> list[asyncio.Event]:
        return [gate for slept, gate in self.sleeps if slept == ms and not gate.is_set()]


async def make_controller(**config: object) -> tuple[KafkaController, GatedRuntime]:
    runtime = GatedRuntime()
    controller, _zk = await standalone_controller(runtime, **config)
    return controller, runtime


async def test_checks_run_first_after_5s_then_every_interval_until_resignation(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="kafka.controller")
    controller, runtime = await make_controller(leader_imbalance_check_interval_seconds=300)
    controller.startup()
    await wait_until(lambda: runtime.pending(5000), what="the first check scheduled")
    assert not runtime.pending(300_000)
    checks = "Processing automatic preferred replica leader election"
    assert checks not in caplog.text

    runtime.pending(5000)[0].set()
    await wait_until(lambda: runtime.pending(300_000), what="the next check scheduled after the first ran")
    assert caplog.text.count(checks) == 1

    runtime.pending(300_000)[0].set()
    await wait_until(lambda: len(runtime.pending(300_000)) == 1 and caplog.text.count(checks) == 2,
                     what="the second check and the third scheduled")

    task = controller.elections._rebalance_task
    assert task is not None
    await controller.shutdown()
    await wait_until(task.cancelled, what="the scheduled check cancelled by the resignation")
    assert controller.elections._rebalance_task is None


async def test_disabled_rebalance_schedules_nothing() -> None:
    controller, runtime = await make_controller(auto_leader_rebalance_enable=False)
    controller.startup()
    await wait_until(lambda: controller.is_active and controller.event_manager.queue_size == 0, what="active")
    assert not runtime.pending(5000) and controller.elections._rebalance_task is None
    await controller.shutdown()
