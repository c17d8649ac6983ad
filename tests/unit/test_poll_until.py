"""`runtime.poll`: the bounded poll the cluster tools' waits share, driven on a manual runtime's virtual time."""

from __future__ import annotations

import asyncio

import pytest
from tests.helpers import ManualRuntime, until_idle

from zkcontroller.runtime.poll import poll_until, poll_until_sync


async def test_it_polls_every_interval_and_once_more_at_the_bound() -> None:
    """Checks at 0, 300, 600 and 900 ms, then at the bound (1000 ms, not 1200): a condition that never holds
    ends the wait with its last value."""
    runtime = ManualRuntime()
    seen: list[int] = []

    async def never() -> bool:
        seen.append(runtime.now)
        return False

    wait = asyncio.ensure_future(poll_until(never, 1.0, 0.3, runtime))
    for step in (300, 300, 300, 100):
        await until_idle()
        assert not wait.done() and runtime.sleeping() == [runtime.now + step]
        runtime.advance(step)
    await until_idle()
    assert wait.done() and wait.result() is False
    assert seen == [0, 300, 600, 900, 1000]


async def test_a_condition_met_returns_its_value_at_once() -> None:
    runtime = ManualRuntime()
    answers = iter([None, None, "controller 2"])

    async def settled() -> str | None:
        return next(answers)

    wait = asyncio.ensure_future(poll_until(settled, 5.0, 0.01, runtime))
    for _ in range(2):
        await until_idle()
        runtime.advance(10)
    await until_idle()
    assert wait.result() == "controller 2" and runtime.now == 20


async def test_a_bound_of_zero_is_one_check_and_what_the_condition_raises_ends_the_wait() -> None:
    runtime = ManualRuntime()
    calls = 0

    async def once() -> bool:
        nonlocal calls
        calls += 1
        return False

    assert await poll_until(once, 0.0, 1.0, runtime) is False and calls == 1

    async def exited() -> bool:
        raise RuntimeError("broker 2 exited with 1")

    with pytest.raises(RuntimeError, match="broker 2 exited"):
        await poll_until(exited, 60.0, 0.1, runtime)


async def test_without_a_runtime_it_waits_on_the_event_loop() -> None:
    answers = iter([False, False, True])

    async def third() -> bool:
        return next(answers)

    assert await poll_until(third, 5.0, 0.0) is True


def test_the_sync_variant_returns_the_value_or_raises() -> None:
    answers = iter([0, 0, 7])
    assert poll_until_sync(lambda: next(answers), 5.0, 0.0) == 7
    assert poll_until_sync(lambda: False, 0.0, 1.0) is False  # a bound of 0: one check, no sleep

    def gone() -> bool:
        raise RuntimeError("ZooKeeper exited with 1")

    with pytest.raises(RuntimeError, match="ZooKeeper exited"):
        poll_until_sync(gone, 5.0, 0.1)
