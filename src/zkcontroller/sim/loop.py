# asyncio.BaseEventLoop and TimerHandle internals (_scheduled, _when, _check_closed, ...) are not in typeshed:
# mypy: disable-error-code="attr-defined, override"
"""`VirtualTimeLoop`: an asyncio event loop whose clock is virtual (FoundationDB's Sim2, turmoil's time).

When every task is waiting, the loop does not block: its "selector wait" moves the clock straight to the
next timer. Timers due at the same instant run in the order they were scheduled (a sequence number breaks
the tie), so the same program always runs in the same order.

Why not `looptime`: it is a pytest plugin that fast-forwards an existing loop for tests, with time rounded to
its resolution and no control over the order of timers due together. The simulator runs outside pytest (the
CLI, sweep workers, Spark tasks), needs a FIFO tie-break it can state, a hook after every step for the
invariant checker, and a loop with no sockets at all. Subclassing `asyncio.BaseEventLoop` gives all of that
in a few lines: `time()` reads the virtual clock, the selector's wait advances it, and there is no I/O.

A `BaseException` that is not an `Exception` (pytest-timeout's ``pytest.fail`` from its SIGALRM handler, any other
outcome of the test runner) raised inside a task or callback ends the run: asyncio would otherwise store it in that
task (only KeyboardInterrupt and SystemExit are re-raised), and the simulation would go on with one broker's thread
silently dead and report a made-up invariant violation, or none, instead of the interruption.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import itertools
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class DeadlockError(RuntimeError):
    """Every task waits and no timer is due: nothing can ever happen again."""


class _SeqTimerHandle(asyncio.TimerHandle):
    """A timer ordered by (due time, scheduling sequence number): ties are first-scheduled-first-run."""

    __slots__ = ("_seq",)

    def __init__(self, when: float, seq: int, callback: Callable[..., object], args: tuple[Any, ...],
                 loop: asyncio.AbstractEventLoop, context: contextvars.Context | None) -> None:
        super().__init__(when, callback, args, loop, context)
        self._seq = seq

    def __lt__(self, other: object) -> bool:
        if isinstance(other, _SeqTimerHandle):
            return (self._when, self._seq) < (other._when, other._seq)
        return NotImplemented

    def __le__(self, other: object) -> bool:
        if isinstance(other, _SeqTimerHandle):
            return (self._when, self._seq) <= (other._when, other._seq)
        return NotImplemented


class _VirtualSelector:
    """Stands in for the OS selector: waiting ``timeout`` seconds means moving the clock to the next timer."""

    def __init__(self, loop: VirtualTimeLoop) -> None:
        self._loop = loop

    def select(self, timeout: float | None) -> list[Any]:
        self._loop._advance(timeout)
        return []

    def close(self) -> None:
        return None


class VirtualTimeLoop(asyncio.BaseEventLoop):
    """A loop on virtual seconds starting at 0.0; ``step_hook`` runs after every loop iteration."""

    def __init__(self) -> None:
        super().__init__()
        self._now = 0.0
        self._seq = itertools.count()
        self._selector = _VirtualSelector(self)
        self._clock_resolution = 1e-9
        self.step_hook: Callable[[], None] | None = None
        self.iterations = 0
        self._escaped: BaseException | None = None

    def time(self) -> float:
        return self._now

    def call_at(self, when: float, callback: Callable[..., object], *args: Any,
                context: contextvars.Context | None = None) -> asyncio.TimerHandle:
        self._check_closed()
        timer = _SeqTimerHandle(when, next(self._seq), callback, args, self, context)
        if timer._source_traceback:
            del timer._source_traceback[-1]
        heapq.heappush(self._scheduled, timer)
        timer._scheduled = True
        return timer

    def create_task(self, coro: Coroutine[Any, Any, T], *, name: str | None = None,
                    context: contextvars.Context | None = None) -> asyncio.Task[T]:
        task = super().create_task(coro, name=name, context=context)
        task.add_done_callback(self._note_escape)
        return task

    def _note_escape(self, task: asyncio.Task[Any]) -> None:
        """A task ended by a BaseException that is not an Exception (nor a cancellation): the run must stop."""
        # `_exception`, not `exception()`: reading it does not mark an ordinary error retrieved, which would hide
        # asyncio's "Task exception was never retrieved" report of it
        if task.cancelled():
            return
        if isinstance(task._exception, (KeyboardInterrupt, SystemExit)):
            # asyncio raised it out of the loop itself: noted, it was raised again from `run_virtual`'s clean-up,
            # which stopped there (tasks never cancelled, the loop never closed)
            task.exception()
        elif self._note(task._exception):
            task.exception()  # raised from the loop instead: no "never retrieved" report at collection

    def call_exception_handler(self, context: dict[str, Any]) -> None:
        if not self._note(context.get("exception")):  # a callback (`Handle`) that raised one: raised, not logged
            super().call_exception_handler(context)

    def _note(self, exc: BaseException | None) -> bool:
        """Keep the first escaping exception for `_run_once` to raise; whether ``exc`` is one."""
        if exc is None or isinstance(exc, (Exception, asyncio.CancelledError)):
            return False
        if self._escaped is None:
            self._escaped = exc
        return True

    def _advance(self, timeout: float | None) -> None:
        if timeout is None:
            raise DeadlockError(f"every task is waiting and no timer is due at t={self._now:.3f}s")
        if timeout > 0 and self._scheduled:
            self._now = max(self._now, self._scheduled[0]._when)

    def _run_once(self) -> None:
        super()._run_once()  # type: ignore[misc]
        self.iterations += 1
        if self._escaped is not None:
            escaped, self._escaped = self._escaped, None
            raise escaped
        if self.step_hook is not None:
            self.step_hook()

    def _process_events(self, event_list: list[Any]) -> None:
        return None

    def _write_to_self(self) -> None:
        return None  # one thread: nothing to wake


def run_virtual(main: Coroutine[Any, Any, T] | asyncio.Future[T], loop: VirtualTimeLoop | None = None) -> T:
    """Run ``main`` to completion on a fresh virtual-time loop, then cancel what is left and close it."""
    loop = loop or VirtualTimeLoop()
    try:
        return loop.run_until_complete(main)
    finally:
        loop.step_hook = None
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
