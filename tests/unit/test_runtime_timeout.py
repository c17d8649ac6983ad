"""`runtime.runtime_timeout`: ``asyncio.timeout`` on a `Runtime`'s time. The TCP transport's request and connect bounds
use it, so on a runtime whose sleeps are not the loop's (the simulator's, paused with its process; a test's manual
clock) they end by that runtime's time, not the loop's."""

from __future__ import annotations

import asyncio

import pytest
from tests.helpers import ManualRuntime, until_idle

from zkcontroller.runtime.runtime import AsyncioRuntime, runtime_timeout


async def _held(runtime: ManualRuntime, ms: int, hold: asyncio.Future[str]) -> str:
    async with runtime_timeout(runtime, ms):  # type: ignore[arg-type]
        return await hold


async def test_the_block_ends_as_timeout_error_when_the_runtimes_time_passes() -> None:
    runtime = ManualRuntime()
    hold: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(_held(runtime, 500, hold))
    await until_idle()
    assert runtime.sleeping() == [500]  # armed on the runtime, not on the loop
    runtime.advance(499)
    await until_idle()
    assert not task.done()
    runtime.advance(1)
    await until_idle()
    with pytest.raises(TimeoutError):
        task.result()
    assert not task.cancelling()  # its own cancel was taken back, as asyncio.timeout does
    assert hold.cancelled()


async def test_an_answer_in_time_leaves_no_timer_and_no_cancel() -> None:
    runtime = ManualRuntime()
    hold: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(_held(runtime, 500, hold))
    await until_idle()
    hold.set_result("answer")
    await until_idle()
    assert task.result() == "answer"
    assert runtime.sleeping() == []  # the timer's sleep was cancelled with the block
    runtime.advance(1000)
    await until_idle()


async def test_a_cancel_from_outside_passes_through_with_its_message() -> None:
    runtime = ManualRuntime()
    hold: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(_held(runtime, 500, hold))
    await until_idle()
    task.cancel("the sender stopped")
    await until_idle()
    with pytest.raises(asyncio.CancelledError, match="the sender stopped"):
        task.result()
    assert runtime.sleeping() == []


async def test_a_timer_that_ends_as_the_block_ends_cancels_nothing_after_it() -> None:
    """The timer's done callback may be queued already when the block leaves: it must not cancel the task then."""
    runtime = ManualRuntime()
    after = asyncio.Event()

    async def body() -> str:
        async with runtime_timeout(runtime, 10):  # type: ignore[arg-type]
            await asyncio.sleep(0)
            runtime.advance(10)  # the timer's sleep ends now
            await asyncio.sleep(0)  # the timer task finishes in this turn; its callback is queued behind this step
        await after.wait()
        return "went on"

    task = asyncio.ensure_future(body())
    await until_idle()
    after.set()
    await until_idle()
    assert task.result() == "went on"


async def test_on_the_asyncio_runtime_it_is_asyncio_timeout_itself() -> None:
    assert isinstance(runtime_timeout(AsyncioRuntime(), 100), asyncio.Timeout)
    assert isinstance(runtime_timeout(ManualRuntime(), None), asyncio.Timeout)  # type: ignore[arg-type]
