"""`SimHost`: one broker machine of the simulated cluster, and the fault verbs that act on it.

A host runs successive processes (`HostProcess`): each is one `KafkaServer` (control plane + controller
candidate + ZooKeeper session) with its own `SimRuntime`, sessions and network endpoint. A process is frozen by
closing its gate: every store call, network send or receive, sleep and watch delivery of that process waits
at the gate, so a paused process runs nothing, and on resume it carries on from the middle of whatever it was
doing (the zombie controller of the split-brain case). A crash closes the gate for good.
"""

from __future__ import annotations

import asyncio
import functools
import random
from collections import deque
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from zkcontroller.broker.config import ReplicationConfig, virtual_log_dirs
from zkcontroller.cluster.kafka_server import BrokerConfig, KafkaServer
from zkcontroller.coordination.embedded import Delivery
from zkcontroller.sim.zookeeper import SimHostBackend

if TYPE_CHECKING:
    from zkcontroller.sim.world import SimWorld

T = TypeVar("T")

SIM_LOG_DIRS = 2
"""Log dirs per simulated broker: two, so a failed dir takes some replicas offline without halting the broker."""


class HostProcess:
    """One process lifetime of a host: its gate, and what waits for the gate to open."""

    def __init__(self, broker_id: int, incarnation: int) -> None:
        self.broker_id = broker_id
        self.name = f"broker-{broker_id}#{incarnation}"
        self._gate = asyncio.Event()
        self._gate.set()
        self._waiting: deque[Callable[[], object]] = deque()
        self.dead = False
        self.died = asyncio.Event()
        """Set when the process is killed (crash, or the end of a clean stop): a client's connection to it closes."""

    async def wait_runnable(self) -> None:
        if not self._gate.is_set():
            await self._gate.wait()

    def when_runnable(self, callback: Callable[[], object]) -> None:
        if self._gate.is_set():
            callback()
        elif not self.dead:
            self._waiting.append(callback)

    def deliver(self, delivery: Delivery) -> None:
        loop = asyncio.get_running_loop()
        for fn, arg in delivery:
            self.when_runnable(functools.partial(loop.call_soon, fn, arg))

    def freeze(self) -> None:
        self._gate.clear()

    def thaw(self) -> None:
        if self.dead:
            return
        self._gate.set()
        while self._waiting and self._gate.is_set():
            self._waiting.popleft()()

    def kill(self) -> None:
        self.dead = True
        self.died.set()
        self._gate.clear()
        self._waiting.clear()


class SimRuntime:
    """The `Runtime` port for one process: virtual time, a generator derived from the seed, gated sleeps."""

    def __init__(self, process: HostProcess, rng: random.Random, clock: Callable[[], int]) -> None:
        self.rng = rng
        self._process = process
        self._clock = clock

    def now_ms(self) -> int:
        return self._clock()

    async def sleep_ms(self, ms: int) -> None:
        await asyncio.sleep(ms / 1000)
        await self._process.wait_runnable()

    def spawn(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        return asyncio.get_running_loop().create_task(coro, name=f"{self._process.name}:{name}")


class SimHost:
    def __init__(self, world: SimWorld, broker_id: int) -> None:
        self.world = world
        self.broker_id = broker_id
        self.incarnation = 0
        self.process: HostProcess | None = None
        self.server: KafkaServer | None = None
        self.backend: SimHostBackend | None = None
        self.state = "down"
        """down | starting | running | paused | stopping | stopped | crashed"""
        self._away: list[int] = []
        """Sessions the store stopped hearing from (paused or cut off), reconnected on resume/heal."""

    # ------------------------------------------------------------------ observers

    @property
    def controller(self) -> Any:
        return None if self.server is None else self.server.controller

    @property
    def control_plane(self) -> Any:
        return None if self.server is None else self.server.control_plane

    @property
    def up(self) -> bool:
        """Running and not frozen: what liveness counts as a live broker."""
        return self.state == "running" and self.server is not None and self.server.running

    def session_id(self) -> int | None:
        if self.server is None or self.server.zk is None:
            return None
        return self.server.zk.session.session_id

    # ------------------------------------------------------------------ verbs

    def start(self) -> asyncio.Task[None]:
        """Start a new process; returns the start-up task (the caller need not wait for it)."""
        if self.state in ("starting", "running", "paused", "stopping"):
            raise ValueError(f"broker {self.broker_id} is {self.state}")
        world = self.world
        self.incarnation += 1
        process = self.process = HostProcess(self.broker_id, self.incarnation)
        self.backend = SimHostBackend(world.zk, process)
        runtime = SimRuntime(process, random.Random(world.rng.getrandbits(64)), world.now_ms)
        config = BrokerConfig(broker_id=self.broker_id, port=9092 + self.broker_id,
                              controller=world.controller_config(self.broker_id),
                              session_timeout_ms=world.config.session_timeout_ms,
                              replication=ReplicationConfig(log_dirs=virtual_log_dirs(SIM_LOG_DIRS),
                                                            **world.replication_overrides))
        previous = self.server
        kept = (previous.replica_manager.log_offsets()
                if world.keep_logs and previous is not None and previous.replica_manager is not None else None)
        self.server = KafkaServer(config, self.backend, world.network.endpoint(process),
                                  runtime, world.event_log, kept)
        self.state = "starting"
        self._away = []
        return asyncio.get_running_loop().create_task(self._startup(process), name=f"{process.name}:startup")

    async def _startup(self, process: HostProcess) -> None:
        assert self.server is not None
        try:
            await self.server.startup()
        except Exception as e:  # a session lost mid-start: the process gives up, as a broker would exit
            if self.process is process and not process.dead:
                self.world.record("start-failed", f"{self.broker_id} {type(e).__name__}")
                self.crash()
            return
        if self.process is process and self.state == "starting":
            self.state = "running"

    async def stop(self) -> None:
        """A clean shutdown: the controller resigns, the session closes (its znodes go at once)."""
        if self.server is None or self.state not in ("running", "starting"):
            return
        self.state = "stopping"
        process = self.process
        await self.server.shutdown()
        if process is not None:
            process.kill()
        if self.process is process:
            self.state = "stopped"

    def crash(self) -> None:
        """kill -9: stops mid-step; the store stops hearing from its sessions, which time out."""
        if self.server is None or self.process is None or self.state in ("crashed", "stopped", "down"):
            return
        self.server.crash()
        self._disconnect_sessions()
        self.process.kill()
        self.state = "crashed"

    def pause(self) -> None:
        """A GC-style freeze: nothing of this process runs; its sessions go silent (and may expire)."""
        if self.state != "running" or self.process is None:
            return
        self.process.freeze()
        self._disconnect_sessions()
        self.state = "paused"

    def resume(self) -> None:
        if self.state != "paused" or self.process is None:
            return
        self.state = "running"
        self.process.thaw()
        self._reconnect_sessions()

    def expire_session(self) -> None:
        sid = self.session_id()
        if sid is not None and self.state in ("running", "paused"):
            self.world.zk.server.expire_session(sid)

    def drop_connection(self) -> None:
        """CONNECTIONLOSS: the connection drops; the session lives on until its timeout unless reconnected."""
        if self.state != "running":
            return
        self._disconnect_sessions()

    def reconnect(self) -> None:
        """The connection is back. A stopping broker's process still runs and its ZooKeeper client keeps trying,
        so it reconnects too (and learns then whether its session expired): otherwise its controlled shutdown
        waits on a read that no reconnection will ever answer, and the broker stays "stopping" for good."""
        if self.state in ("running", "stopping"):
            self._reconnect_sessions()

    def _disconnect_sessions(self) -> None:
        if self.backend is None:
            return
        for sid in self.backend.live_session_ids():
            self.world.zk.server.disconnect(sid)
            if sid not in self._away:
                self._away.append(sid)

    def _reconnect_sessions(self) -> None:
        away, self._away = self._away, []
        for sid in away:
            self.world.zk.server.reconnect(sid)
