"""The virtual-time loop: time jumps when every task waits, ties run first-scheduled-first, no wall time."""

from __future__ import annotations

import asyncio
import time

import pytest

from zkcontroller.sim.loop import DeadlockError, VirtualTimeLoop, run_virtual


def test_an_hour_of_sleeping_takes_no_wall_time() -> None:
    async def main() -> float:
        await asyncio.sleep(3600)
        return asyncio.get_running_loop().time()

    started = time.perf_counter()
    assert run_virtual(main()) == 3600.0
    assert time.perf_counter() - started < 60  # a bound on a virtual hour (generous: CI is loaded), not a timing one


def test_timers_due_together_run_in_scheduling_order() -> None:
    order: list[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for name in ("c", "a", "b", "d"):
            loop.call_at(1.0, order.append, name)
        loop.call_at(0.5, order.append, "early")
        await asyncio.sleep(2)

    run_virtual(main())
    assert order == ["early", "c", "a", "b", "d"]


def test_sleepers_wake_in_time_order_with_virtual_timestamps() -> None:
    woke: list[tuple[str, float]] = []

    async def sleeper(name: str, delay: float) -> None:
        await asyncio.sleep(delay)
        woke.append((name, asyncio.get_running_loop().time()))

    async def main() -> None:
        await asyncio.gather(sleeper("slow", 10), sleeper("fast", 0.25), sleeper("mid", 3))

    run_virtual(main())
    assert woke == [("fast", 0.25), ("mid", 3.0), ("slow", 10.0)]


def test_everyone_waiting_with_no_timer_is_a_deadlock() -> None:
    async def main() -> None:
        await asyncio.Event().wait()

    with pytest.raises(DeadlockError):
        run_virtual(main())


def test_step_hook_runs_after_every_iteration() -> None:
    loop = VirtualTimeLoop()
    seen: list[float] = []
    loop.step_hook = lambda: seen.append(loop.time())

    async def main() -> None:
        for _ in range(3):
            await asyncio.sleep(1)

    run_virtual(main(), loop)
    assert seen and seen == sorted(seen) and seen[-1] == 3.0


class _Interrupt(BaseException):
    """Like pytest-timeout's ``pytest.fail`` from its SIGALRM handler: a BaseException, not an Exception."""


def test_an_interruption_inside_a_task_ends_the_run_instead_of_only_that_task() -> None:
    """asyncio keeps such an exception in the task it hit; the rest of the simulation would run on without it."""
    after: list[float] = []

    async def hit() -> None:
        await asyncio.sleep(1)
        raise _Interrupt("timeout")

    async def main() -> str:
        asyncio.get_running_loop().create_task(hit())
        for _ in range(5):
            await asyncio.sleep(1)
            after.append(asyncio.get_running_loop().time())
        return "finished"

    with pytest.raises(_Interrupt, match="timeout"):
        run_virtual(main())
    assert after == [1.0]  # main's own wake-up at 1 s shares the iteration; nothing later runs


def test_an_interruption_inside_a_callback_ends_the_run() -> None:
    def hit() -> None:
        raise _Interrupt("timeout")

    async def main() -> str:
        asyncio.get_running_loop().call_later(1, hit)
        await asyncio.sleep(5)
        return "finished"

    with pytest.raises(_Interrupt, match="timeout"):
        run_virtual(main())


def test_a_keyboard_interrupt_inside_a_task_ends_the_run_once_and_it_is_cleaned_up() -> None:
    """asyncio raises KeyboardInterrupt (Ctrl-C, tests/asyncio_timeout.py's `LoopTimeout`) out of the loop itself.
    Noted as an escape too, it was raised again from `run_virtual`'s clean-up, which stopped there."""
    loop = VirtualTimeLoop()
    cancelled: list[str] = []

    async def other() -> None:
        try:
            await asyncio.sleep(100)
        except asyncio.CancelledError:
            cancelled.append("other")
            raise

    async def hit() -> None:
        await asyncio.sleep(1)
        raise KeyboardInterrupt

    async def main() -> None:
        loop.create_task(other())
        loop.create_task(hit())
        await asyncio.sleep(5)

    with pytest.raises(KeyboardInterrupt):
        run_virtual(main(), loop)
    assert cancelled == ["other"] and loop.is_closed()


def test_an_ordinary_error_in_a_task_still_ends_only_that_task() -> None:
    async def fails() -> None:
        raise ValueError("one task's bug")

    async def main() -> str:
        task = asyncio.get_running_loop().create_task(fails())
        await asyncio.sleep(1)
        assert isinstance(task.exception(), ValueError)
        return "finished"

    assert run_virtual(main()) == "finished"
