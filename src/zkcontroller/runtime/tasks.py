"""Structured concurrency helpers that run unchanged on the real loop and the simulator's virtual-time loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any


async def run_workers(count: int, worker: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run ``count`` copies of ``worker`` (a coroutine function: each copy becomes a task); the first failure
    cancels the rest and is re-raised as itself.

    Callers expect a plain exception (e.g. `ControllerMovedError`), not asyncio's `ExceptionGroup`.
    """
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(count):
                group.create_task(worker())
    except BaseExceptionGroup as group_error:
        raise first_leaf(group_error) from group_error


def first_leaf(error: BaseException) -> BaseException:
    """The first non-group exception inside (possibly nested) exception groups."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error
