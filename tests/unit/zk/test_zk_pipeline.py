"""Bounded pipelining: order kept, never more than ``max_in_flight`` outstanding, first error re-raised as
itself (not wrapped in an ExceptionGroup)."""

from __future__ import annotations

import asyncio

import pytest

from zkcontroller.zk.errors import ControllerMovedError
from zkcontroller.zk.pipeline import pipelined


async def test_results_keep_input_order_and_concurrency_is_bounded() -> None:
    in_flight = peak = 0

    async def fn(x: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        for _ in range(x % 3):  # finish out of order
            await asyncio.sleep(0)
        in_flight -= 1
        return x * 2

    assert await pipelined(list(range(50)), fn, 4) == [x * 2 for x in range(50)]
    assert peak == 4


async def test_first_error_is_raised_plainly_and_stops_the_rest() -> None:
    started: list[int] = []

    async def fn(x: int) -> int:
        started.append(x)
        await asyncio.sleep(0)
        if x == 3:
            raise ControllerMovedError("moved")
        return x

    with pytest.raises(ControllerMovedError):
        await pipelined(list(range(100)), fn, 2)
    assert len(started) < 100


async def test_empty_input_and_bad_bound() -> None:
    async def fn(x: int) -> int:
        return x

    assert await pipelined([], fn, 3) == []
    with pytest.raises(ValueError):
        await pipelined([1], fn, 0)
