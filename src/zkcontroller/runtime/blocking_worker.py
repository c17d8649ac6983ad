"""One worker thread for CPU-bound checks the event loop must not run itself (the Produce record checks of a large
or zip-bombed batch: `broker.produce`), shared by every broker of the process.

One thread, not a pool: such a walk holds its inflated records (up to 64 MiB) and the GIL while it runs, so several
at once would multiply the memory without finishing sooner. One job per event loop is in flight (`run`'s gate);
the others wait on the loop, where a closed connection's task can be cancelled, not in the thread's queue. A job
takes a ``cancelled`` callable and is expected to ask it now and then: it turns true when the awaiting task is
cancelled, when the caller's ``stopped()`` does, or when the interpreter exits (the running job stops, the queued
ones are dropped, so exit does not wait for a bomb's walk). In a forked child the parent's thread is not there: a
new one is made on first use.

This is the runtime layer's; the broker core reaches threads only through it (tests/unit/test_import_direction).
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

IN_FLIGHT_PER_LOOP = 1
"""Jobs handed to the thread per event loop at a time: it runs one at a time anyway."""

_worker: ThreadPoolExecutor | None = None
_exiting = threading.Event()
"""Set as the interpreter exits: a running job's ``cancelled()`` turns true, queued ones are dropped."""
_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def worker() -> ThreadPoolExecutor:
    """The process's worker thread (made on first use)."""
    global _worker
    if _worker is None:
        _worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="blocking-worker")
    return _worker


def exiting() -> bool:
    return _exiting.is_set()


def _gate() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    gate = _gates.get(loop)
    if gate is None:
        gate = _gates[loop] = asyncio.Semaphore(IN_FLIGHT_PER_LOOP)
    return gate


async def run(job: Callable[..., T], *args: object, stopped: Callable[[], bool] | None = None) -> T:
    """``job(*args, cancelled=...)`` on the worker thread, the event loop free meanwhile, after the jobs this loop
    handed over before it (see the module's docstring for when ``cancelled()`` turns true)."""
    async with _gate():
        stop = threading.Event()

        def cancelled() -> bool:
            return stop.is_set() or _exiting.is_set() or (stopped is not None and stopped())
        future = worker().submit(job, *args, cancelled=cancelled)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            stop.set()
            future.cancel()
            raise


def stop_all() -> None:
    """At interpreter exit (before ``concurrent.futures`` joins its threads): the running job told to stop, the
    queued ones cancelled."""
    _exiting.set()
    if _worker is not None:
        _worker.shutdown(wait=False, cancel_futures=True)


def _forget_worker() -> None:
    global _worker
    _worker = None
    _gates.clear()


os.register_at_fork(after_in_child=_forget_worker)
_register_at_exit = getattr(threading, "_register_atexit", None)  # runs before the executors' own join
if _register_at_exit is not None:
    _register_at_exit(stop_all)
