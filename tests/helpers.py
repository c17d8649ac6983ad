"""Test helpers: bounded waits on conditions and watch recorders (never sleeps on wall time)."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import os
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator, Callable
from typing import Any, NoReturn

import pytest

from zkcontroller.coordination.api import CoordinationSession, EventType, SessionState, WatchedEvent
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

_markers = itertools.count()

REQUIRE_TOOLS = "ZKCONTROLLER_REQUIRE_TOOLS"
"""Set (not empty, 0 or false) by scripts/test.sh, CI's command, right after ``scripts/setup.sh --test`` installed
every tool the suite uses: then a test that finds one missing fails instead of skipping. A dedicated name, not
``CI=1``: Hypothesis and pytest change their own behaviour under ``CI``."""


def tools_required() -> bool:
    """Whether a missing tool fails its test: `REQUIRE_TOOLS` set, or ``CI`` (what hosted CI services set)."""
    return any(os.environ.get(name, "").lower() not in ("", "0", "false") for name in (REQUIRE_TOOLS, "CI"))


def tool_missing(name: str, why: str) -> NoReturn:
    """Tool ``name`` is missing or unusable (``why``): skip the test, or fail it when `tools_required` (a run that
    installed the tools must never pass by skipping the tests that need them)."""
    __tracebackhide__ = True  # the skip's reported location (``-rs``) is the test's line, not this one
    message = f"{name} unavailable: {why}"
    if tools_required():
        pytest.fail(f"{message}; this run must have it ({REQUIRE_TOOLS} or CI is set, and scripts/setup.sh --test "
                    f"installs it)", pytrace=False)
    pytest.skip(message)


def require_tool(name: str, why: str) -> str:
    """The path of executable ``name`` on PATH; missing: `tool_missing` (skips locally, fails under CI)."""
    __tracebackhide__ = True
    return shutil.which(name) or tool_missing(name, why)


class ManualClock:
    """A millisecond clock that only moves when told: znode stamps are predictable and session timeouts pass
    at once (``advance``) instead of being waited out."""

    def __init__(self, start_ms: int = 1_662_110_000_000) -> None:
        self.now_ms = start_ms

    def __call__(self) -> int:
        return self.now_ms

    def advance(self, ms: int) -> None:
        self.now_ms += ms


class OffsetClock:
    """The wall clock plus an offset a test can push forward: a store on it behaves as on the wall clock, and a
    session timeout can be passed at once (``advance``) instead of being waited out."""

    def __init__(self, base: Callable[[], int]) -> None:
        self._base = base
        self.offset_ms = 0

    def __call__(self) -> int:
        return self._base() + self.offset_ms

    def advance(self, ms: int) -> None:
        self.offset_ms += ms


@contextlib.asynccontextmanager
async def embedded_zk_client() -> AsyncIterator[KafkaZkClient]:
    """A `KafkaZkClient` on a fresh embedded store with a `ManualClock`, its top-level paths created (empty, as on
    every broker's start-up); the session and the store are closed afterwards."""
    clock = ManualClock()
    backend = EmbeddedBackend(clock)
    session = await backend.new_session()
    client = KafkaZkClient(session, clock)
    await client.create_top_level_paths()
    try:
        yield client
    finally:
        await session.close()
        await backend.close()


async def snapshot(session: CoordinationSession, root: str = "/") -> dict[str, tuple[bytes, int]]:
    """Every node under ``root`` with its data and version: compare before/after to prove nothing changed."""
    data, stat = await session.get_data(root)
    out = {root: (data, stat.version)}
    for child in sorted(await session.get_children(root)):
        out.update(await snapshot(session, f"{root.rstrip('/')}/{child}"))
    return out


async def wait_until(
    predicate: Callable[[], Any], timeout_s: float = 20.0, what: str = "condition", poll_s: float = 0.005
) -> None:
    """Re-check ``predicate()`` (a plain or an async callable) every ``poll_s``; fail after ``timeout_s``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not await _holds(predicate):
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        await asyncio.sleep(poll_s)


async def until_idle(max_turns: int = 10_000) -> int:
    """Yield until no other callback is ready to run on this event loop, and return the turns it took.

    Then nothing more happens without a timer, I/O or the test itself: a task still pending is really blocked (on
    an event, a lock, a sleep on a manual runtime), not merely not finished *yet*, as after a fixed number of
    ``asyncio.sleep(0)``. Fails if the loop never goes idle (something spins). Reads CPython's ready queue
    (``BaseEventLoop._ready``: asyncio's loops and the simulator's `VirtualTimeLoop`); for in-process tests only,
    where no socket or thread delivers work meanwhile."""
    ready = asyncio.get_running_loop()._ready  # type: ignore[attr-defined]
    for turn in range(max_turns):
        await asyncio.sleep(0)
        if not ready:
            return turn
    raise AssertionError(f"the event loop was still busy after {max_turns} turns")


async def _holds(predicate: Callable[[], Any]) -> bool:
    result = predicate()
    return bool(await result if inspect.isawaitable(result) else result)


class Recorder:
    """A watcher / session listener that queues what it is given, to be awaited with a bound."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.seen: list[Any] = []

    def __call__(self, item: Any) -> None:
        self.seen.append(item)
        self.queue.put_nowait(item)

    async def next(self, timeout_s: float = 20.0) -> Any:
        try:
            return await asyncio.wait_for(self.queue.get(), timeout_s)
        except TimeoutError:
            raise AssertionError(f"no event within {timeout_s}s (seen so far: {self.seen})") from None

    def pending(self) -> list[Any]:
        items = []
        while not self.queue.empty():
            items.append(self.queue.get_nowait())
        return items


async def settle_watches(watching: CoordinationSession, writer: CoordinationSession, base: str) -> None:
    """Return once every watch event caused by ``writer``'s earlier writes has reached ``watching``.

    ZooKeeper delivers a session's notifications in zxid order, so when a marker watch armed now fires (the
    marker's deletion, the last event its two writes cause), any event due from before has been delivered already.
    Lets a test assert that something did *not* fire.
    """
    marker = f"{base}/marker-{next(_markers)}"
    rec = Recorder()
    assert await watching.exists(marker, rec) is None
    await writer.create(marker)
    event = await rec.next()
    assert event == WatchedEvent(EventType.NODE_CREATED, SessionState.CONNECTED, marker)
    # ZooKeeper sends the marker's NodeCreated before its parent's NodeChildrenChanged (DataTree.createNode), so a
    # child watch on ``base`` may still be on its way: the deletion's event comes after both.
    gone = Recorder()
    assert await watching.exists(marker, gone) is not None
    await writer.delete(marker)
    assert (await gone.next()).type == EventType.NODE_DELETED


def sigterm_at_prompt(argv: list[str], timeout_s: float = 60.0, at_prompt: Callable[[], None] | None = None
                      ) -> tuple[int, str]:
    """Start a cluster command, wait for its prompt (then call ``at_prompt``), send SIGTERM with standard input
    still open, and return its exit status and output once it exits (killed, with a failed assertion, if it does
    not within the bound)."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:  # the help ends with this line, then the prompt waits on standard input
            seen.append(line)
            if line.startswith("  help | quit"):
                break
        else:
            raise AssertionError(f"no prompt: {''.join(seen)}")
        if at_prompt is not None:
            at_prompt()
        proc.send_signal(signal.SIGTERM)
        try:
            returncode = proc.wait(timeout=timeout_s)  # standard input stays open meanwhile
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running {timeout_s} s after SIGTERM: {''.join(seen)}") from None
        return returncode, "".join(seen) + proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


QUICK_SHUTDOWN_BACKOFF_MS = 20
"""``controlled.shutdown.retry.backoff.ms`` for clusters a test stops (Kafka's is 5 s)."""
QUICK_SHUTDOWN_RETRIES = {"controlled.shutdown.retry.backoff.ms": str(QUICK_SHUTDOWN_BACKOFF_MS)}
"""server.properties for broker processes a test stops: a broker stopped by SIGTERM (`stop N`) while no other
running broker can take its leadership retries its controlled shutdown three times, and Kafka's 5 s back-off made
every such stop wait 10 s (the in-process clusters of tests/integration set the same back-off)."""


class ManualRuntime:
    """A runtime whose clock moves only when the test says: ``sleep_ms`` returns once ``advance`` passes it (at
    once for 0)."""

    def __init__(self) -> None:
        self.now = 0
        self._sleepers: list[tuple[int, asyncio.Future[None]]] = []

    def now_ms(self) -> int:
        return self.now

    async def sleep_ms(self, ms: int) -> None:
        if ms <= 0:  # nothing to wait for: one loop turn, as asyncio.sleep(0)
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.now + ms, future))
        await future

    def spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        return asyncio.get_running_loop().create_task(coro, name=name)

    def sleeping(self) -> list[int]:
        """When each sleep not yet over ends (runtime milliseconds, in the order they began): what a task waits
        for, observed rather than inferred from its not being done."""
        return [due for due, future in self._sleepers if not future.done()]

    def advance(self, ms: int) -> None:
        self.now += ms
        for due, future in self._sleepers:
            if due <= self.now and not future.done():
                future.set_result(None)


async def assert_sleeps_exactly(task: asyncio.Future[Any], runtime: ManualRuntime, ms: int) -> None:
    """Prove ``task`` waits exactly ``ms`` on ``runtime`` from now, then let it finish: its sleep is seen to end at
    ``now + ms``; one millisecond short of that, with the loop idle, it is still pending; at ``now + ms`` it
    completes (within a bound, in loop turns). A wait too short, too long or not on the runtime fails here."""
    start = runtime.now
    await until_idle()
    assert runtime.sleeping() == [start + ms], f"expected one sleep until {start + ms}, saw {runtime.sleeping()}"
    runtime.advance(ms - 1)
    await until_idle()
    assert not task.done(), f"finished before its {ms} ms"
    runtime.advance(1)
    await until_idle()
    assert task.done(), f"still waiting after its {ms} ms"
    task.result()  # re-raises what it failed with
