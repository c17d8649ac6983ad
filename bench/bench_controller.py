"""Controller timings Kafka users care about: broker failure and controller failover at scale.

Prints figures; asserts nothing about speed. Run:

    uv run python bench/bench_controller.py [--backend embedded|zookeeper|both] [--scale 1.0]

* broker failure: 5 brokers, 50,000 partitions at RF 2; the failed broker (not the controller) leads 10,000.
  Measured from its ``/brokers/ids/<id>`` znode disappearing (an observer's watch) to the controller having
  written every new leader and handed the LeaderAndIsr requests to the transport.
* controller failover: 100,000 partitions; the controller's broker stops. Measured from ``/controller``
  vanishing to the new controller's first UpdateMetadata handed to the transport, and to "Ready to serve".

Both failures are hard (kill -9, the session expired at once), not a controlled shutdown
(`bench_healing.py` times that). ``--scale`` multiplies the partition counts (0.1 for a quick look). Beside each
figure the script prints the in-process brokers' loop time inside the interval (they share the controller's
event loop; the ``controller_only`` figures subtract it), the controller's own event-processing loop time
measured directly (``controller_event_loop_time``: its steps, without the store's round trips), the cyclic
collector's time inside the interval (``cyclic_gc``: held off during events, it lands between them), the
resident memory, the embedded store's own work inside the interval (``store_calls``: its server's reads and
writes, wherever on the loop they ran; the controller's writes run in its write workers' tasks, not in its
event's steps, and the floor below does the same writes), and the store floor from the same run: one batched
read and one batched rewrite of the partition states concerned (broker failure: every partition the failed
broker hosted, all of which change state; failover: every partition). The broker failure then splits its
interval by who ran on the loop ("where that interval went"): every loop callback is timed, named by its task
(the controller's event task, the write workers of its fenced multis, the request send loops, the benchmark's
own polling task) and split by the timed parts inside it (the controller's steps, the brokers' handling, the
store's calls); what no callback covers is the loop's own scheduling and waiting. ``controller_only_cpu`` is
this thread's CPU in the interval's callbacks less the brokers' handling: ``controller_only`` without the
waits for a core on a shared host. ``--profile DIR`` saves a
cProfile of each measured interval, ``--flame DIR`` a py-spy flame graph (SVG) of it;
``--sweep 1000,10000,100000,500000`` prints both scenarios per size as a table and saves a PNG plot;
``--no-multi-read`` and ``--gc event-pause-inline|default|threshold`` give the before-figures of those changes.
``--log-files DIR`` writes ``controller.log``, ``state-change.log`` and ``events.jsonl`` into DIR at Kafka's default
levels, as ``zkcontroller cluster`` does (what a user pays for the logs; without it nothing is logged).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import inspect
import io
import itertools
import json
import logging
import os
import platform
import pstats
import shutil
import signal
import subprocess
import sys
import time
import types
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from by_function import BY_FUNCTION, DEFAULT_FUNCTIONS
from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.logs import LogFiles
from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess
from zkcontroller.controller import event_log
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.event_log import EventLog
from zkcontroller.controller.state_machine import StateMachine
from zkcontroller.coordination.api import EventType, SetDataOp, WatchedEvent
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.coordination.kazoo_store import KazooSession
from zkcontroller.event_schema import SCHEMA_VERSION
from zkcontroller.model import Broker, ReplicaAssignment, TopicPartition
from zkcontroller.protocol.control_requests import (
    AnyControlRequest,
    ControlResponse,
    LeaderAndIsrRequest,
    UpdateMetadataRequest,
)
from zkcontroller.runtime import gc_pause
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.runtime.in_process import InProcessTransport
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.paths import partition_state_path

T = TypeVar("T")
PARTITIONS_PER_TOPIC = 1000
BROKERS = [1, 2, 3, 4, 5]


class Profiler:
    """``--profile``: cProfile over the measured interval only, saved per scenario and summarised as text.
    ``--flame``: py-spy samples this process over the same interval into a flame graph (SVG), which shows
    the asyncio call stacks and the store client's threads that cProfile cannot see."""

    def __init__(self, out_dir: str | None, flame_dir: str | None = None) -> None:
        self.out_dir = out_dir
        self.flame_dir = flame_dir

    @contextlib.contextmanager
    def measure(self, name: str):
        with self._flame(name):
            if self.out_dir is None:
                yield
                return
            profile = cProfile.Profile()
            profile.enable()
            try:
                yield
            finally:
                profile.disable()
                os.makedirs(self.out_dir, exist_ok=True)
                path = f"{self.out_dir}/{name}.prof"
                profile.dump_stats(path)
                text = io.StringIO()
                pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(25)
                print(f"  profile of {name} saved to {path} (view: uv run python -m pstats {path}); top by own time:")
                print("\n".join("    " + line for line in text.getvalue().splitlines()[6:40]))

    @contextlib.contextmanager
    def _flame(self, name: str):
        if self.flame_dir is None:
            yield
            return
        os.makedirs(self.flame_dir, exist_ok=True)
        path = f"{self.flame_dir}/{name}.svg"
        spy = shutil.which("py-spy") or os.path.join(os.path.dirname(sys.executable), "py-spy")
        proc = subprocess.Popen([spy, "record", "--pid", str(os.getpid()), "--rate", "250", "--threads",
                                 "--nonblocking", "--output", path, "--format", "flamegraph"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(0.5)  # py-spy attaches before the interval starts (outside any measured figure)
        try:
            yield
        finally:
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
            if proc.returncode != 0:
                print(f"  py-spy failed ({proc.returncode}): {err.decode(errors='replace').strip()[-300:]}")
            else:
                print(f"  flame graph of {name} saved to {path} (open it in a browser)")


PROFILER = Profiler(None)


class _Pass:
    """Hands one yielded object of an inner coroutine to the event loop and returns what the loop sends back."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __await__(self):  # type: ignore[no-untyped-def]
        return (yield self.value)


async def own_time(coro: Coroutine[Any, Any, T], add: Callable[[float, float], None]) -> T:
    """Run ``coro``, adding to ``add`` only the seconds its own steps take on the loop, not the awaits between
    them: work of several tasks interleaved on one loop is then counted once, in the task that did it. Each
    step is given as (wall seconds, this thread's CPU seconds): on a shared machine the CPU figure is the
    steadier one (time the thread waited for a core or the GIL is not in it)."""
    value: object = None
    error: BaseException | None = None
    while True:
        start, start_cpu = time.perf_counter(), time.thread_time()
        try:
            yielded = coro.throw(error) if error is not None else coro.send(value)
        except StopIteration as stop:
            add(time.perf_counter() - start, time.thread_time() - start_cpu)
            return stop.value
        except BaseException:
            add(time.perf_counter() - start, time.thread_time() - start_cpu)
            raise
        add(time.perf_counter() - start, time.thread_time() - start_cpu)
        try:
            value, error = await _Pass(yielded), None
        except BaseException as e:  # cancellation included: thrown into the inner coroutine
            value, error = None, e


@dataclass
class LoopTime:
    """Seconds of loop time spent by one party, as (wall ms at the step, wall seconds, CPU seconds) samples, and
    each step's span on ``time.perf_counter`` (for `LoopTimeline`'s attribution)."""

    samples: list[tuple[int, float, float]] = field(default_factory=list)
    spans: list[tuple[float, float]] = field(default_factory=list)

    def add(self, seconds: float, cpu_seconds: float = 0.0) -> None:
        end = time.perf_counter()
        self.samples.append((wall_clock_ms(), seconds, cpu_seconds))
        self.spans.append((end - seconds, end))

    def ms(self, since_ms: int, until_ms: int) -> int:
        return round(1000 * sum(d for t, d, _ in self.samples if since_ms <= t <= until_ms))

    def cpu_ms(self, since_ms: int, until_ms: int) -> int:
        return round(1000 * sum(c for t, _, c in self.samples if since_ms <= t <= until_ms))

    def cpu_ms_between(self, start: float, end: float) -> float:
        """CPU of the steps that began in [start, end) on ``time.perf_counter``."""
        return 1000 * sum(c for (_, _, c), (a, _) in zip(self.samples, self.spans, strict=True) if start <= a < end)


class GcClock:
    """Every cyclic collection in this process as (wall ms at its start, seconds, generation), from
    ``gc.callbacks``: a figure can then say how much of it was the collector (held off during controller events
    and brokers' control requests, it runs between them)."""

    def __init__(self) -> None:
        self.collections: list[tuple[int, float, int]] = []
        self.spans: list[tuple[float, float]] = []
        self._started = 0.0
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            end = time.perf_counter()
            self.collections.append((wall_clock_ms(), end - self._started, info["generation"]))
            self.spans.append((self._started, end))

    def ms(self, since_ms: int, until_ms: int) -> int:
        return round(1000 * sum(d for t, d, _ in self.collections if since_ms <= t <= until_ms))

    def close(self) -> None:
        gc.callbacks.remove(self._on_gc)


GC_CLOCK = GcClock()


Span = tuple[float, float]
"""(start, end) on ``time.perf_counter``."""


class LoopTimeline:
    """Every callback the event loop runs while ``recording``, as (start, end, callback), to give each millisecond
    of a measured interval to the party that spent it (`split`). asyncio runs every ready callback, each task's
    steps included, through ``Handle._run``, so wrapping it sees all the loop's work; what no callback covers is
    the loop itself (waiting in ``select``, or scheduling). Installed once; recording costs two clock reads per
    callback (a broker failure's interval runs about 100 callbacks)."""

    def __init__(self) -> None:
        self.callbacks: list[tuple[float, float, object]] = []
        self.cpu: list[float] = []
        """This thread's CPU seconds in each of ``callbacks``."""
        self.recording = False
        original = asyncio.events.Handle._run
        timeline = self

        def _run(handle: asyncio.Handle) -> None:
            if not timeline.recording:
                return original(handle)
            start, start_cpu = time.perf_counter(), time.thread_time()
            try:
                return original(handle)
            finally:
                timeline.cpu.append(time.thread_time() - start_cpu)
                timeline.callbacks.append((start, time.perf_counter(), handle._callback))  # type: ignore[attr-defined]

        asyncio.events.Handle._run = _run  # type: ignore[method-assign]

    @contextlib.contextmanager
    def record(self) -> Any:
        self.callbacks.clear()
        self.cpu.clear()
        self.recording = True
        try:
            yield
        finally:
            self.recording = False

    def cpu_ms(self, start: float, end: float) -> float:
        """This thread's CPU in the callbacks that began in [start, end)."""
        return 1000 * sum(c for (a, _, _), c in zip(self.callbacks, self.cpu, strict=True) if start <= a < end)

    def split(self, start: float, end: float, name_of: Callable[[object], str],
              inner: list[tuple[str, list[Span]]]) -> dict[str, float]:
        """Milliseconds of [start, end] by party: each instant goes to the callback running then (``name_of``
        names it) and the timed spans covering it inside that callback (``inner``: later entries nest inside
        earlier ones, e.g. the store's calls inside the controller's steps), joined as "outer > inner"."""
        def clipped(spans: list[Span]) -> list[Span]:
            return [(max(a, start), min(b, end)) for a, b in spans if b > start and a < end]

        callbacks = [(max(a, start), min(b, end), name_of(cb)) for a, b, cb in self.callbacks if b > start and a < end]
        layers = [(name, clipped(spans)) for name, spans in inner]
        cuts = sorted({start, end, *(x for a, b, _ in callbacks for x in (a, b)),
                       *(x for _, spans in layers for a, b in spans for x in (a, b))})
        out: dict[str, float] = {}
        for lo, hi in itertools.pairwise(cuts):
            mid = (lo + hi) / 2
            outer = next((name for a, b, name in callbacks if a <= mid < b), None)
            if outer is None:
                label = "the loop itself (select, scheduling)"
            else:
                label = " > ".join([outer, *(name for name, spans in layers if any(a <= mid < b for a, b in spans))])
            out[label] = out.get(label, 0.0) + 1000 * (hi - lo)
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))


LOOP_TIMELINE = LoopTimeline()
PARTIES = {
    "ControllerEventManager._run": "controller event task",
    "FencedBatchWriter._work": "write workers (fenced multis)",
    "ControllerChannelManager._send_loop": "request send loops",
}
"""The tasks the controller's interval runs, by their coroutine's name."""


def party_of(callback: object, bench_task: asyncio.Task[Any] | None) -> str:
    """Who a loop callback works for: a task's steps by its coroutine (the benchmark's own task apart), else the
    callback's own name (the collector's deferred pass is `gc_pause._collect`)."""
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        if owner is bench_task:
            return "the benchmark's own task (polling)"
        name = getattr(owner.get_coro(), "__qualname__", type(owner.get_coro()).__name__)
        return PARTIES.get(name, f"task {name}")
    return f"callback {getattr(callback, '__qualname__', type(callback).__name__)}"


def time_store_calls(backend: CoordinationBackend) -> LoopTime:
    """The embedded store's own work per call (its server's reads and writes, under its lock), wherever on the loop
    it runs: in the controller's steps, or in the write workers' tasks. Nothing on ZooKeeper (its server is
    another process; the client's thread hands replies to the loop)."""
    spent = LoopTime()
    if isinstance(backend, EmbeddedBackend):
        server = backend.server
        for name in ("multi", "get_data", "get_data_many", "exists", "get_children"):
            method = getattr(server, name)

            def timed(*args: Any, _m: Callable[..., Any] = method) -> Any:
                started, started_cpu = time.perf_counter(), time.thread_time()
                try:
                    return _m(*args)
                finally:
                    spent.add(time.perf_counter() - started, time.thread_time() - started_cpu)

            setattr(server, name, timed)
    return spent


class TimingTransport(InProcessTransport):
    """Notes when each request was handed to the transport: (time, controller epoch, request kind), and the loop
    time the in-process brokers spent handling each, step by step (their work shares the controller's loop;
    it is subtracted to give controller-only figures, and counted without the awaits inside a handler, so
    overlapping handlers are not counted twice)."""

    def __init__(self) -> None:
        super().__init__()
        self.handed: list[tuple[int, int, str]] = []
        self.handed_at: list[float] = []
        """``time.perf_counter`` of each entry of ``handed``."""
        self.broker_time = LoopTime()
        self.in_flight = 0
        """Requests handed and not yet answered: the store floor waits for none, so no broker work overlaps it."""
        self.answered: list[tuple[float, int, str]] = []
        """(``time.perf_counter``, wall ms, request kind) as each answer came back from its handler, in the task that
        sent the request: over TCP, when the handler's socket server writes it (the requester's own turns after
        that, e.g. a ``wait_for`` task's, are this process's loop, not the wire)."""

    async def send(self, broker: Broker, request: AnyControlRequest) -> ControlResponse:
        # fetches and AlterIsr (no controller epoch) pass here too: their handling is brokers' work as well
        self.handed.append((wall_clock_ms(), getattr(request, "controller_epoch", -1), type(request).__name__))
        self.handed_at.append(time.perf_counter())
        self.in_flight += 1
        try:
            response = await self._send(broker, request)
            self.answered.append((time.perf_counter(), wall_clock_ms(), type(request).__name__))
            return response
        finally:
            self.in_flight -= 1

    async def _send(self, broker: Broker, request: AnyControlRequest) -> ControlResponse:
        await asyncio.sleep(0)  # as InProcessTransport: the broker handles it in its own turn
        handler = self._handlers.get(broker.id)
        if handler is None:
            return await super().send(broker, request)
        self.sent += 1
        started, started_cpu = time.perf_counter(), time.thread_time()
        response = handler(request)
        self.broker_time.add(time.perf_counter() - started, time.thread_time() - started_cpu)
        if asyncio.iscoroutine(response):
            response = await own_time(response, self.broker_time.add)
        elif inspect.isawaitable(response):
            response = await response
        return response

    def times(self, since_ms: int, epoch: int, kind: type) -> list[int]:
        return [t for t, e, k in self.handed if t >= since_ms and e == epoch and k == kind.__name__]

    def last_handed_at(self, since_ms: int, epoch: int, kind: type) -> float:
        """``time.perf_counter`` when the last request of ``kind`` (``times``) was handed over."""
        return max(p for (t, e, k), p in zip(self.handed, self.handed_at, strict=True)
                   if t >= since_ms and e == epoch and k == kind.__name__)

    def broker_ms(self, since_ms: int, until_ms: int) -> int:
        """Milliseconds of loop time the brokers spent handling requests in [since, until]."""
        return self.broker_time.ms(since_ms, until_ms)


def time_broker_rounds(cluster: LocalCluster, broker_time: LoopTime, rounds: LoopTime | None = None) -> None:
    """Count the brokers' ISR-expiration rounds as brokers' loop time, beside their request handling: each round
    walks every partition a broker leads (about 20,000 here, tens of ms), and in a real cluster it runs in the
    broker's own process, not the controller's. The brokers present now; a broker started later is not timed.
    ``rounds``: where the rounds alone are also counted, to print them."""
    def timed(shrink: Callable[[], Any]) -> Callable[[], Any]:
        def round_() -> Any:
            started, started_cpu = time.perf_counter(), time.thread_time()
            try:
                return shrink()
            finally:
                spent, spent_cpu = time.perf_counter() - started, time.thread_time() - started_cpu
                broker_time.add(spent, spent_cpu)
                if rounds is not None:
                    rounds.add(spent, spent_cpu)
        return round_

    for server in cluster.brokers.values():
        manager = server.replica_manager
        if manager is not None:
            manager.maybe_shrink_isr = timed(manager.maybe_shrink_isr)  # type: ignore[method-assign]


def time_controller_events(cluster: LocalCluster) -> LoopTime:
    """The loop time every broker's controller spends processing events (its own steps, not the store's
    round trips): the controller's work measured directly rather than by subtraction."""
    spent = LoopTime()
    for server in cluster.brokers.values():
        controller = server.controller
        if controller is None:
            continue
        process = controller.process
        controller.process = lambda event, _p=process: own_time(_p(event), spent.add)  # type: ignore[method-assign]
    return spent


def resident_mib() -> float:
    """This process's resident set (VmRSS), MiB."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def deep_size_mib(root: object) -> float:
    """Bytes reachable from ``root`` (objects counted once; classes, modules and functions not followed), MiB:
    the controller's own footprint, which the process's resident set mixes with the brokers' and the store's."""
    skip = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)
    seen: set[int] = set()
    stack, total = [root], 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, skip):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total / 2**20


async def store_floor_ms(backend: CoordinationBackend, state_paths: list[str]) -> dict[str, int]:
    """The physical floor for ``len(state_paths)`` partition states on this store, in this run: one batched read
    (``get_data_many``, as the controller reads) and one batched rewrite (setData, 1,000 per multi, 10 multis in
    flight, as the controller writes) of the same znodes.

    Each runs with the cyclic collector held off, as the controller's events run (`gc_pause`): measured with it
    on, the floor paid the full collections of the whole benchmark's heap (0.5–0.6 s for a broker failure's
    20,000 rewrites on the embedded store, against 0.10 s without), which is not the store's cost."""
    session = await backend.new_session()
    try:
        start = time.perf_counter()
        with gc_pause.gc_paused():
            found = await session.get_data_many(state_paths)
        read_ms = round(1000 * (time.perf_counter() - start))
        ops = [SetDataOp(p, item[0]) for p, item in zip(state_paths, found, strict=True) if item is not None]
        slots = asyncio.Semaphore(10)

        async def one(batch: list[SetDataOp]) -> None:
            async with slots:
                await session.multi(batch)

        start = time.perf_counter()
        with gc_pause.gc_paused():
            await asyncio.gather(*(one(ops[i : i + 1000]) for i in range(0, len(ops), 1000)))
        write_ms = round(1000 * (time.perf_counter() - start))
        return {"floor_read_ms": read_ms, "floor_write_ms": write_ms, "floor_ms": read_ms + write_ms}
    finally:
        await session.close()


LOG_FILES: LogFiles | None = None
"""``--log-files``: the run's log files, written as ``zkcontroller cluster`` writes them."""
_KEPT_PREFIXES = (f'{{"schema_version":{SCHEMA_VERSION},"type":"controller_',
                  f'{{"schema_version":{SCHEMA_VERSION},"type":"broker_failed"')
"""The records `Records` keeps, by their lines' start (`EventLog.record` puts these two fields first)."""


@dataclass
class Records:
    lines: list[dict] = field(default_factory=list)

    def sink(self, line: str) -> None:
        if LOG_FILES is not None:
            LOG_FILES.write_event(line)
        # Keep only what the figures need; parsing every state-change record would time the benchmark itself.
        # A prefix test (every line starts with its schema version and type): searching each of the ~60,000 lines
        # of a broker failure for the two types took 15-22 ms, counted in the controller's figures.
        if line.startswith(_KEPT_PREFIXES):
            self.lines.append(json.loads(line))

    def sink_lines(self, lines: list[str]) -> None:
        """`EventLog.lines_sink`: a step's per-partition state-change lines, none of the kept types."""
        if LOG_FILES is not None:
            LOG_FILES.write_events(lines)

    def last(self, record_type: str, **match: object) -> dict:
        found = [r for r in self.lines if r["type"] == record_type and all(r.get(k) == v for k, v in match.items())]
        return found[-1]


async def create_topics(admin: KafkaZkClient, partitions: int, leader_of: dict[int, int] | None = None) -> None:
    """Topics of 1,000 partitions at RF 2, leaders spread evenly over the five brokers."""
    n_topics = max(1, partitions // PARTITIONS_PER_TOPIC)
    per_topic = partitions // n_topics
    await asyncio.gather(
        *(
            admin.create_topic_assignment(
                f"topic-{t:03d}",
                None,
                {
                    TopicPartition(f"topic-{t:03d}", p): ReplicaAssignment(
                        (BROKERS[(t * per_topic + p) % 5], BROKERS[(t * per_topic + p + 1) % 5])
                    )
                    for p in range(per_topic)
                },
            )
            for t in range(n_topics)
        )
    )


async def wait_all_online(cluster: LocalCluster, partitions: int, timeout_s: float = 900) -> float:
    start = time.perf_counter()
    deadline = start + timeout_s
    while True:
        controller = cluster.active_controller()
        if (
            controller is not None
            and controller.context.partition_with_leaders_count == partitions
            and controller.event_manager.queue_size == 0
        ):
            return time.perf_counter() - start
        if time.perf_counter() > deadline:
            raise TimeoutError("partitions did not come online")
        await asyncio.sleep(0.05)


async def poll_until(condition: Callable[[], bool], timeout_s: float = 900) -> None:
    deadline = time.perf_counter() + timeout_s
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("condition not reached")
        await asyncio.sleep(0.01)


SEEN_DELETED_AT: dict[str, float] = {}
"""``time.perf_counter`` when `watch_deletion`'s observer saw each path deleted."""


async def watch_deletion(admin: KafkaZkClient, path: str) -> asyncio.Future[int]:
    """A future resolved with the wall time at which an observer sees ``path`` deleted."""
    fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def on_event(event: WatchedEvent) -> None:
        if event.type is EventType.NODE_DELETED and not fut.done():
            SEEN_DELETED_AT[path] = time.perf_counter()
            fut.set_result(wall_clock_ms())

    assert await admin.path_exists(path, on_event)
    return fut


DATA_PLANE = False
"""``--data-plane``: run the brokers' replica fetchers and ISR checks during the figures (off by default: they
are the brokers' work, which in Kafka runs on other machines, and here shares the controller's loop)."""


async def kill_broker(cluster: LocalCluster, backend: CoordinationBackend, broker_id: int) -> None:
    """A hard failure (kill -9) whose session the store expires at once, as ZooKeeper does once the session
    timeout has passed: no controlled shutdown, no resignation, no waiting out the timeout in wall time."""
    server = cluster.brokers[broker_id]
    session = server.zk.session if server.zk is not None else None
    server.crash()
    if session is not None:
        await backend.expire_session(session)


async def start_cluster(backend: CoordinationBackend, records: Records, transport: TimingTransport) -> LocalCluster:
    cluster = LocalCluster(
        backend,
        BROKERS,
        wall_clock_ms,
        event_log=EventLog("bench", wall_clock_ms, records.sink, lines_sink=records.sink_lines),
        session_timeout_ms=18000,
        transport=transport,
        replication=ReplicationConfig(replica_fetching=DATA_PLANE),
        # The first automatic rebalance check runs 5 s after the controller starts (Kafka's fixed delay), which
        # is about when the 50k-partition set-up ends: it landed inside some measured intervals and not others
        # (0.1-0.25 s of work over every partition). The figures time one event's handling, not the scheduler.
        controller_config=ControllerConfig(broker_id=-1, auto_leader_rebalance_enable=False),
    )
    await cluster.start()
    await cluster.wait_for_controller()
    return cluster


async def bench_broker_failure(backend: CoordinationBackend, partitions: int) -> dict[str, Any]:
    records, transport = Records(), TimingTransport()
    cluster = await start_cluster(backend, records, transport)
    controller_time = time_controller_events(cluster)
    time_broker_rounds(cluster, transport.broker_time)
    store_time = time_store_calls(backend)
    session = await backend.new_session()
    admin = KafkaZkClient(session, wall_clock_ms)
    try:
        controller = cluster.active_controller()
        assert controller is not None
        await create_topics(admin, partitions)
        setup_s = await wait_all_online(cluster, partitions)
        victim = next(b for b in BROKERS if b != controller.controller_id)
        led = len(controller.context.partition_leaders_on_broker(victim))
        hosted = sorted(controller.context.partitions_on_broker(victim))  # led and followed: all change state
        # Partitions whose ISR holds no broker but the victim: their election finds no live ISR member, asks for
        # the topics' unclean setting and re-reads them from the store, so a run with any does more work than one
        # without (a profile of one run at load 13 showed both; the fetchers are off, so no ISR widens again).
        isr_of_victim_alone = sum(1 for info in controller.context.partitions_leadership_info.values()
                                  if info.leader_and_isr.isr == (victim,))
        victim_path = f"/brokers/ids/{victim}"
        gone = await watch_deletion(admin, victim_path)
        with PROFILER.measure(f"broker-failure-{partitions}"), LOOP_TIMELINE.record(), BY_FUNCTION_ON:
            await kill_broker(cluster, backend, victim)
            t0 = await gone
            await poll_until(
                lambda: (
                    any(
                        r["type"] == "controller_event" and r["event"] == "BrokerChange" and r["ts_ms"] >= t0
                        for r in records.lines
                    )
                    and controller.event_manager.queue_size == 0
                    and controller.channel_manager.total_queue_size == 0
                )
            )
        done = records.last("controller_event", event="BrokerChange")
        handed = max(transport.times(t0, controller.context.epoch, LeaderAndIsrRequest))
        broker_ms = transport.broker_ms(t0, handed)
        bench_task = asyncio.current_task()
        start, end = SEEN_DELETED_AT[victim_path], transport.last_handed_at(t0, controller.context.epoch,
                                                                             LeaderAndIsrRequest)
        controller_only_cpu = LOOP_TIMELINE.cpu_ms(start, end) - transport.broker_time.cpu_ms_between(start, end)
        split = LOOP_TIMELINE.split(
            start, end, lambda cb: party_of(cb, bench_task),
            [("controller's steps", controller_time.spans), ("brokers' handling", transport.broker_time.spans),
             ("store calls", store_time.spans), ("cyclic GC", GC_CLOCK.spans)])
        await poll_until(lambda: transport.in_flight == 0)  # the brokers' handling must not overlap the floor
        floor = await store_floor_ms(backend, [partition_state_path(tp.topic, tp.partition) for tp in hosted])
        return {
            "partitions": partitions,
            "led_by_failed_broker": led,
            "hosted_by_failed_broker": len(hosted),
            "isr_of_the_failed_broker_alone": isr_of_victim_alone,
            "setup_s": setup_s,
            "resident_mib": resident_mib(),
            "znode_gone_to_event_done_ms": done["ts_ms"] - t0,
            "event_queue_ms": done["queue_time_ms"],
            "event_processing_ms": done["processing_time_ms"],
            "znode_gone_to_last_leader_and_isr_handed_ms": handed - t0,
            "brokers_handling_in_that_interval_ms": broker_ms,
            "controller_only_ms": handed - t0 - broker_ms,
            "controller_only_cpu_ms": round(controller_only_cpu),
            "controller_event_loop_time_ms": controller_time.ms(t0, handed),
            "controller_event_loop_cpu_ms": controller_time.cpu_ms(t0, handed),
            "cyclic_gc_in_that_interval_ms": GC_CLOCK.ms(t0, handed),
            "store_calls_in_that_interval_ms": round(sum(v for k, v in split.items() if k.endswith("> store calls"))),
            "store_calls_cpu_in_that_interval_ms": round(store_time.cpu_ms_between(start, end)),
            **floor,
            "where that interval went, ms (each instant to the callback running it and the timed parts inside)": split,
            **by_function_figures(start, end),
        }
    finally:
        await session.close()
        await cluster.shutdown(timeout_s=120)


async def bench_failover(backend: CoordinationBackend, partitions: int) -> dict[str, float]:
    records, transport = Records(), TimingTransport()
    cluster = await start_cluster(backend, records, transport)
    controller_time = time_controller_events(cluster)
    time_broker_rounds(cluster, transport.broker_time)
    session = await backend.new_session()
    admin = KafkaZkClient(session, wall_clock_ms)
    try:
        old = cluster.active_controller()
        assert old is not None
        await create_topics(admin, partitions)
        setup_s = await wait_all_online(cluster, partitions)
        rss_before = resident_mib()
        gone = await watch_deletion(admin, "/controller")
        with PROFILER.measure(f"failover-{partitions}"):
            await kill_broker(cluster, backend, old.controller_id)
            t0 = await gone
            new = await cluster.wait_for_controller(timeout_s=900, exclude=old.controller_id, min_epoch=2)
        epoch = new.context.epoch
        context_mib = deep_size_mib(new.context)
        ready = records.last("controller_ready", controller_epoch=epoch)
        elected = records.last("controller_elected", controller_epoch=epoch)
        first_um = min(transport.times(t0, epoch, UpdateMetadataRequest))
        all_tps = list(new.context.all_partitions)
        await poll_until(lambda: transport.in_flight == 0)
        floor = await store_floor_ms(backend, [partition_state_path(tp.topic, tp.partition) for tp in all_tps])
        return {
            "partitions": partitions,
            "setup_s": setup_s,
            "resident_mib_before_failover": rss_before,
            "resident_mib_after_failover": resident_mib(),
            "controller_context_mib": context_mib,
            "controller_gone_to_elected_ms": elected["ts_ms"] - t0,
            "controller_gone_to_first_update_metadata_ms": first_um - t0,
            "brokers_handling_before_first_update_metadata_ms": transport.broker_ms(t0, first_um),
            "controller_gone_to_ready_ms": ready["ts_ms"] - t0,
            "brokers_handling_before_ready_ms": transport.broker_ms(t0, ready["ts_ms"]),
            "controller_only_to_ready_ms": ready["ts_ms"] - t0 - transport.broker_ms(t0, ready["ts_ms"]),
            "controller_event_loop_time_to_first_update_metadata_ms": controller_time.ms(t0, first_um),
            "controller_event_loop_time_to_ready_ms": controller_time.ms(t0, ready["ts_ms"]),
            "controller_event_loop_cpu_to_ready_ms": controller_time.cpu_ms(t0, ready["ts_ms"]),
            "cyclic_gc_to_ready_ms": GC_CLOCK.ms(t0, ready["ts_ms"]),
            **floor,
        }
    finally:
        await session.close()
        await cluster.shutdown(timeout_s=120)


class _ByFunctionOn:
    """``--by-function``: the wrapped functions record only inside the measured interval."""

    enabled = False

    def __enter__(self) -> None:
        BY_FUNCTION.active = self.enabled

    def __exit__(self, *_exc: object) -> None:
        BY_FUNCTION.active = False


BY_FUNCTION_ON = _ByFunctionOn()


def by_function_figures(start: float, end: float) -> dict[str, Any]:
    """With ``--by-function``: each wrapped function's own CPU (ms, calls) between two ``perf_counter`` instants."""
    if not BY_FUNCTION_ON.enabled:
        return {}
    own = BY_FUNCTION.own_ms(start, end)
    return {"own_cpu_of_the_wrapped_functions_ms": round(sum(ms for ms, _ in own.values())),
            "own CPU by function, ms (calls or coroutine steps in brackets)": {
                f"{name} ({calls})": ms for name, (ms, calls) in own.items()}}


def print_result(name: str, result: dict[str, Any], indent: str = "  ") -> None:
    print(f"{indent}{name}:")
    for key, value in result.items():
        if isinstance(value, dict):
            print_result(key, value, indent + "  ")
        else:
            width = 50 - len(indent)
            print(f"{indent}  {key:<{width}} {value:>12,.1f}" if isinstance(value, float)
                  else f"{indent}  {key:<{width}} {value:>12,}")


async def run(new_backend: Callable[[str], CoordinationBackend], scale: float, scenarios: list[str]) -> None:
    """Each scenario on a store of its own (a new embedded server, or its own chroot)."""
    if "broker-failure" in scenarios:
        result = await bench_broker_failure(new_backend("broker-failure"), int(50_000 * scale))
        print_result("broker failure", result)
    if "failover" in scenarios:
        print_result("controller failover", await bench_failover(new_backend("failover"), int(100_000 * scale)))


async def sweep(new_backend: Callable[[str], CoordinationBackend], sizes: list[int], png: str | None) -> None:
    """Both scenarios at each size (broker failure: the failed broker leads a fifth), as a table and a plot."""
    rows = []
    for n in sizes:
        bf = await bench_broker_failure(new_backend(f"sweep-bf-{n}"), n)
        fo = await bench_failover(new_backend(f"sweep-fo-{n}"), n)
        rows.append((n, bf, fo))
    header = ("partitions", "BF handed ms", "BF ctrl-only ms", "BF floor ms", "FO first UM ms", "FO ready ms",
              "FO floor ms", "RSS MiB")
    print("  " + " | ".join(f"{h:>15}" for h in header))
    for n, bf, fo in rows:
        cells = (n, bf["znode_gone_to_last_leader_and_isr_handed_ms"], bf["controller_only_ms"], bf["floor_ms"],
                 fo["controller_gone_to_first_update_metadata_ms"], fo["controller_gone_to_ready_ms"],
                 fo["floor_ms"], round(fo["resident_mib_after_failover"]))
        print("  " + " | ".join(f"{c:>15,}" for c in cells))
    if png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.5))
        xs = [n for n, _, _ in rows]
        bfs, fos = [bf for _, bf, _ in rows], [fo for _, _, fo in rows]
        for label, ys in (
            ("broker failure (last LeaderAndIsr)", [r["znode_gone_to_last_leader_and_isr_handed_ms"] for r in bfs]),
            ("failover: first UpdateMetadata", [r["controller_gone_to_first_update_metadata_ms"] for r in fos]),
            ("failover: ready", [r["controller_gone_to_ready_ms"] for r in fos]),
            ("store floor (failover reads+writes)", [r["floor_ms"] for r in fos]),
        ):
            ax.plot(xs, [max(y, 1) for y in ys], marker="o", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("partitions")
        ax.set_ylabel("ms")
        ax.set_title("controller scale sweep")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(png, dpi=100)
        print(f"  plot saved to {png}")


def main() -> None:
    # Shutting the clusters down at the end makes the controllers log every partition they can no longer
    # lead; that is Kafka's behaviour, not news, so only the figures are printed.
    for name in ("state.change.logger", "kafka"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["embedded", "zookeeper", "both"], default="both")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--scenario", action="append", choices=["broker-failure", "failover"],
                        help="run only this scenario (repeatable; default: all)")
    parser.add_argument("--profile", metavar="DIR", help="cProfile each measured interval into DIR")
    parser.add_argument("--by-function", action="store_true",
                        help="the broker failure's own CPU per controller function up to the last LeaderAndIsr "
                             "handed (bench/by_function.py: ~50 batch-level functions wrapped, steady on a loaded "
                             "host, unlike cProfile or py-spy)")
    parser.add_argument("--flame", metavar="DIR", help="py-spy flame graph (SVG) of each measured interval into DIR")
    parser.add_argument("--gc", choices=["event-pause", "event-pause-inline", "default", "threshold"],
                        default="event-pause",
                        help="collector policy: held off per controller event with its young pass in the loop's "
                        "next turn (the code's), the same with the pass as the event ends (the before-figure), "
                        "Python's default thresholds, or a gen-0 threshold of 50,000 without the pause")
    parser.add_argument("--no-multi-read", action="store_true",
                        help="ZooKeeper: pipelined bulk reads instead of multiRead (the before-figure)")
    parser.add_argument("--kafka-reads", action="store_true",
                        help="re-read every partition state before writing it, as Kafka 2.8 (the before-figure)")
    parser.add_argument("--json-event-log", action="store_true",
                        help="encode event-log records with json instead of orjson (the before-figure)")
    parser.add_argument("--data-plane", action="store_true",
                        help="keep the brokers' replica fetchers and ISR checks running during the figures")
    parser.add_argument("--log-files", metavar="DIR",
                        help="write controller.log, state-change.log and events.jsonl into DIR at Kafka's default "
                        "levels, as `zkcontroller cluster` does")
    parser.add_argument("--sweep", metavar="SIZES", help="comma-separated partition counts, e.g. 1000,10000,100000")
    parser.add_argument("--plot", metavar="PNG", default="controller-sweep.png", help="where --sweep saves its plot")
    args = parser.parse_args()
    scenarios = args.scenario or ["broker-failure", "failover"]
    PROFILER.out_dir, PROFILER.flame_dir = args.profile, args.flame
    if args.by_function:
        BY_FUNCTION.install(DEFAULT_FUNCTIONS)
        BY_FUNCTION_ON.enabled = True
    if args.gc == "event-pause-inline":
        gc_pause.DEFERRED = False
    elif args.gc != "event-pause":
        gc_pause.ENABLED = False
    if args.gc == "threshold":
        gc.set_threshold(50_000, 20, 100)
    global DATA_PLANE
    DATA_PLANE = args.data_plane
    StateMachine.first_attempt_from_context = not args.kafka_reads
    event_log.FAST_ENCODER = not args.json_event_log
    if args.no_multi_read:
        KazooSession.multi_read_enabled = False
    global LOG_FILES
    if args.log_files:
        LOG_FILES = LogFiles(Path(args.log_files))
    try:
        _run_backends(args, scenarios)
    finally:
        if LOG_FILES is not None:
            LOG_FILES.close()


def _run_backends(args: argparse.Namespace, scenarios: list[str]) -> None:
    print(f"{platform.node()} {platform.machine()} python {platform.python_version()}, scale {args.scale}")
    if args.backend in ("embedded", "both"):
        print("embedded store:")
        if args.sweep:
            sizes = [int(x) for x in args.sweep.split(",")]
            asyncio.run(sweep(lambda _name: EmbeddedBackend(wall_clock_ms), sizes, _plot_path(args.plot, "embedded")))
        else:
            asyncio.run(run(lambda _name: EmbeddedBackend(wall_clock_ms), args.scale, scenarios))
    if args.backend in ("zookeeper", "both"):
        with ZooKeeperServerProcess() as server:
            print(f"real ZooKeeper at {server.connect_string}:")
            backend = lambda name: ZooKeeperBackend(server.connect_string, f"/{name}")  # noqa: E731
            if args.sweep:
                sizes = [int(x) for x in args.sweep.split(",")]
                asyncio.run(sweep(backend, sizes, _plot_path(args.plot, "zookeeper")))
            else:
                asyncio.run(run(backend, args.scale, scenarios))


def _plot_path(path: str, backend: str) -> str:
    stem, dot, ext = path.rpartition(".")
    return f"{stem}-{backend}.{ext}" if dot else f"{path}-{backend}.png"


if __name__ == "__main__":
    main()
