"""pytest-timeout's timeout ends an asyncio test as a timeout (a pytest plugin; tests/conftest.py registers it).

pytest-timeout's signal method raises ``Failed: Timeout`` from its SIGALRM handler in whatever frame is running. In
an asyncio test that is usually a task's step, and asyncio keeps any BaseException there other than
KeyboardInterrupt and SystemExit in the task: the task dies, the test runs on past its timeout and later fails for a
made-up reason (a dead broker's task, a wait that ran out) or passes. `sim.loop.VirtualTimeLoop` notes such an
exception itself; a real loop (``asyncio.run``, pytest-asyncio's runners) does not.

Here, when the alarm fires while an event loop runs in the main thread, pytest-timeout's handler still runs (its
stack dump, its debugger detection), but its failure is raised as `LoopTimeout`, a KeyboardInterrupt, which asyncio
re-raises out of every task and callback: the loop stops at once, ``asyncio.run`` or the runner cancels the rest,
and the test phase (setup, call or teardown) reports pytest-timeout's own ``Failed: Timeout (>Ns) from
pytest-timeout.``. Code that catches KeyboardInterrupt (the CLI's ``stopped``) cannot hide it: the phase in which
the alarm fired fails as that timeout however it ends, and until it ends the alarm fires again every
`REPEAT_S` (at most) seconds.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import pytest

REPEAT_S = 10.0
"""The longest wait before the alarm fires again while the timed-out phase runs on (a test's own timeout if
shorter)."""


class LoopTimeout(KeyboardInterrupt):
    """pytest-timeout's failure raised while an event loop ran: a KeyboardInterrupt so that asyncio re-raises it
    out of the task or callback it hit instead of keeping it there. The phase's outcome turns it back into the
    timeout's failure."""


@dataclass
class _Fired:
    """The timeout of the running test item, once the alarm has fired: its failure message, whether the phase it
    fired in has been failed with it, and the tasks `LoopTimeout` ended."""

    message: str | None = None
    reported: bool = False
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)


_fired = _Fired()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()  # the main thread's: a signal handler runs there
    except RuntimeError:
        return None


def _loop_aware(plugin_handler: Callable[[int, FrameType | None], Any], repeat_s: float
                ) -> Callable[[int, FrameType | None], None]:
    def handler(signum: int, frame: FrameType | None) -> None:
        __tracebackhide__ = True  # the report ends in the frame the alarm hit, as pytest-timeout's own
        try:
            plugin_handler(signum, frame)  # stacks dumped, then pytest.fail; returns if a debugger is attached
        except pytest.fail.Exception as e:
            _fired.message = e.msg
            signal.setitimer(signal.ITIMER_REAL, repeat_s)  # the phase might catch it and run on
            if _running_loop() is not None:
                if (task := asyncio.current_task()) is not None:
                    _fired.tasks.append(task)
                raise LoopTimeout(e.msg) from None
            raise
    return handler


@pytest.hookimpl(wrapper=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> Generator[None, object, object]:
    """After pytest-timeout set its SIGALRM handler for ``item``, put ours around it (not for its thread method)."""
    _fired.message, _fired.reported, _fired.tasks = None, False, []
    result = yield
    handler = signal.getsignal(signal.SIGALRM)
    if settings.method == "signal" and threading.current_thread() is threading.main_thread() and callable(handler):
        signal.signal(signal.SIGALRM, _loop_aware(handler, min(REPEAT_S, settings.timeout)))
    return result


@pytest.hookimpl(wrapper=True)
def pytest_timeout_cancel_timer(item: pytest.Item) -> Generator[None, object, object]:
    """The item is over: a timeout that fired outside its phases is not the next item's (which may set none)."""
    try:
        return (yield)
    finally:
        _retrieved()
        _fired.message, _fired.reported = None, False


def _retrieved() -> None:
    """Mark `LoopTimeout` retrieved from the tasks it ended (asyncio kept it in them, then raised it on). Else each
    logs "Task exception was never retrieved" when collected, in whatever later test, and the traceback that log
    formats runs `ast.parse`: collected during another parse (pytest formatting a report), on Python 3.11 the
    nested one broke the outer one's state (``SystemError: AST constructor recursion depth mismatch``), an
    internal error that ended the run."""
    for task in _fired.tasks:
        if task.done() and not task.cancelled():
            task.exception()
    _fired.tasks = []


def _phase() -> Generator[None, object, object]:
    """A test phase that ends after the alarm fired in it fails as the timeout, with what it ended with as the
    cause (unless that is the timeout itself), and the repeat alarm is stopped."""
    try:
        result = yield
    except BaseException as e:
        _retrieved()
        if _fired.message is None or _fired.reported:
            raise
        _fired.reported = True
        signal.setitimer(signal.ITIMER_REAL, 0)
        if isinstance(e, pytest.fail.Exception) and e.msg == _fired.message:
            raise
        if isinstance(e, LoopTimeout):
            raise pytest.fail.Exception(_fired.message).with_traceback(e.__traceback__) from None
        raise pytest.fail.Exception(_fired.message) from e
    _retrieved()
    if _fired.message is not None and not _fired.reported:
        _fired.reported = True
        signal.setitimer(signal.ITIMER_REAL, 0)
        raise pytest.fail.Exception(_fired.message + " (the test caught it and ran on)")
    return result


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _phase())


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _phase())


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    return (yield from _phase())
