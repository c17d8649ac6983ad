"""`SimWorld`: one simulated cluster on one seed — the virtual-time loop, the store, the network, the hosts,
the admin client, the invariant checker and the trace — and the verbs scenarios use to act on it.

Every choice the simulator makes comes from one `random.Random(seed)`; each broker process gets its own
generator drawn from it. The trace is a hash over what happened (faults, workload, landed store writes,
control requests delivered, violations) stamped with virtual time: same seed, same code → same hash.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from zkcontroller.admin.errors import AdminError
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.logs import LogFiles
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.event_log import EventLog
from zkcontroller.coordination.embedded import Delivery
from zkcontroller.coordination.errors import ZkError
from zkcontroller.sim.config import MUTATIONS, START_MS, SimConfig, SimResult
from zkcontroller.sim.host import SimHost
from zkcontroller.sim.invariants import InvariantChecker
from zkcontroller.sim.invariants_admin import drop_origin_early
from zkcontroller.sim.invariants_unclean import read_unclean_as_enabled
from zkcontroller.sim.loop import VirtualTimeLoop, run_virtual
from zkcontroller.sim.network import NetworkConfig, SimNetwork
from zkcontroller.sim.zookeeper import SimZooKeeper
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import TopicPartitionStateZNode

_QUIET_LOGGERS = ("kafka", "state.change.logger", "zkcontroller")


class StopSimulation(Exception):
    """A violation was found: the run stops at once (the report names the first)."""


class _AdminOwner:
    """The simulator's own admin tool: never paused, its watch events go straight to the loop."""

    name = "admin"

    async def wait_runnable(self) -> None:
        return None

    def deliver(self, delivery: Delivery) -> None:
        loop = asyncio.get_running_loop()
        for fn, arg in delivery:
            loop.call_soon(fn, arg)


class SimWorld:
    def __init__(self, config: SimConfig) -> None:
        unknown = sorted(set(config.mutations) - set(MUTATIONS))
        if unknown:
            raise ValueError(f"unknown mutation(s) {unknown}; known: {list(MUTATIONS)}")
        self.config = config
        self.rng = random.Random(config.seed)
        self.loop: VirtualTimeLoop | None = None
        self.zk = SimZooKeeper(self.rng.uniform, self.now_ms, replace(config.store_latency))
        self.zk.strip_epoch_check = "no-controller-epoch-check" in config.mutations
        self.checker = InvariantChecker(self)
        self.checker.no_broker_epoch_check = "no-broker-epoch-check" in config.mutations
        self.checker.no_isr_expansion = "no-isr-expansion" in config.mutations
        if "reassign-drops-origin-early" in config.mutations:
            self.zk.rewrite = drop_origin_early
        if "unclean-read-as-enabled" in config.mutations:
            self.zk.read_rewrite = read_unclean_as_enabled
        self.zk.observer = self.checker
        self.network = SimNetwork(self.rng, self.checker, NetworkConfig())
        self.hosts = [SimHost(self, broker_id) for broker_id in range(1, config.brokers + 1)]
        self.steps = 0
        self.faults = 0
        self.events = 0
        self._hash = hashlib.sha256()
        self._tail: deque[str] = deque(maxlen=40)
        self._logs: LogFiles | None = None
        self.event_log = EventLog(f"sim-{config.scenario}-{config.seed}", self.now_ms, self._write_event)
        self.admin: TopicAdmin | None = None
        self.admin_zk: KafkaZkClient
        self.deletions_requested: set[str] = set()
        """Topics the workload marked for deletion (liveness: each must be gone after heal)."""
        self.expect_preferred_leaders = False
        """Set by scenarios that promise leadership back on the preferred replicas after heal (see liveness)."""
        self.controller_overrides: dict[str, Any] = {}
        self.replication_overrides: dict[str, Any] = {}
        """Settings a scenario's setup changes for every broker it starts (`ControllerConfig`, `ReplicationConfig`)."""
        self._admin_session: Any = None
        self.pause_on_write: Any = None
        """A broker process to pause the moment one of its controller writes lands (the split-brain set-up)."""
        self._main_task: asyncio.Task[None] | None = None
        self.keep_logs = False
        """Set by a scenario's setup: a restarted broker keeps the log offsets its previous process had (a disk
        survives kill -9), so a leader deposed by an unclean election comes back ahead of the new one."""
        self.pauses: list[tuple[int, int]] = []
        """(virtual ms, broker id) of every pause, for tests and reports."""
        self._topics = 0
        self._stopping: dict[int, asyncio.Task[None]] = {}
        """Each broker's latest clean stop (`stop`), which a restart drawn meanwhile waits for."""

    # ------------------------------------------------------------------ clock, trace, lookups

    def loop_time(self) -> float:
        return 0.0 if self.loop is None else self.loop.time()

    def now_ms(self) -> int:
        return START_MS + round(self.loop_time() * 1000)

    def record(self, kind: str, detail: str) -> None:
        line = f"{self.now_ms() - START_MS} {kind} {detail}"
        self.steps += 1
        self._hash.update(line.encode())
        self._hash.update(b"\n")
        self._tail.append(line)

    def _write_event(self, line: str) -> None:
        """Every event-log record is part of the trace too (stamped with virtual time)."""
        self.events += 1
        self.checker.unclean.on_event(line)
        self._hash.update(line.encode())
        self._hash.update(b"\n")
        if self._logs is not None:
            self._logs.write_event(line)

    def host_of(self, owner: Any) -> SimHost | None:
        for host in self.hosts:
            if host.process is owner:
                return host
        return None

    def host(self, broker_id: int) -> SimHost:
        return self.hosts[broker_id - 1]

    def controller_config(self, broker_id: int) -> ControllerConfig:
        return ControllerConfig(broker_id=broker_id, **self.controller_overrides)

    def active_controllers(self) -> list[SimHost]:
        return [h for h in self.hosts if h.up and h.controller is not None and h.controller.is_active]

    # ------------------------------------------------------------------ running

    def run(self, body: Callable[[SimWorld], Awaitable[None]]) -> SimResult:
        loop = self.loop = VirtualTimeLoop()
        loop.step_hook = self.checker.check_step
        saved = self._quiet_logging()
        wall = time.perf_counter()
        try:
            self._main_task = loop.create_task(self._main(body), name="sim-main")
            with contextlib.suppress(asyncio.CancelledError):
                run_virtual(self._main_task, loop)
        finally:
            self._restore_logging(saved)
        self.checker.finish()
        return SimResult(self.config, self._hash.hexdigest(), list(self.checker.violations), self.steps,
                         self.checker.checks, self.faults, round(loop.time() * 1000), time.perf_counter() - wall,
                         self.events, self.checker.split_brain, list(self._tail),
                         len(self.checker.unclean.elections))

    def _quiet_logging(self) -> list[tuple[logging.Logger, bool, list[logging.Handler]]]:
        saved = []
        for name in _QUIET_LOGGERS:
            logger = logging.getLogger(name)
            saved.append((logger, logger.propagate, list(logger.handlers)))
            logger.propagate = False
            logger.addHandler(logging.NullHandler())
        if self.config.log_dir is not None:
            self._logs = LogFiles(self.config.log_dir, self.now_ms)
        return saved

    def _restore_logging(self, saved: list[tuple[logging.Logger, bool, list[logging.Handler]]]) -> None:
        if self._logs is not None:
            self._logs.close()
            self._logs = None
        for logger, propagate, handlers in saved:
            logger.propagate = propagate
            for handler in list(logger.handlers):
                if handler not in handlers:
                    logger.removeHandler(handler)

    async def _main(self, body: Callable[[SimWorld], Awaitable[None]]) -> None:
        self.zk.start()
        session = self._admin_session = self.zk.open(_AdminOwner(), 10**9)
        admin_rng = random.Random(self.rng.getrandbits(64))
        self.admin_zk = KafkaZkClient(session, self.now_ms, rng=admin_rng)
        self.admin = TopicAdmin(self.admin_zk, admin_rng)
        try:
            for host in self.hosts:
                self.record("start", str(host.broker_id))
                await host.start()
            await self.wait_stable(60_000)
            await body(self)
            self.check_violations()
            await self.heal_all()
            await self.await_liveness()
        except (StopSimulation, asyncio.CancelledError):
            pass  # stopped at the first violation

    def stop_now(self) -> None:
        """Called at a violation: end the run at the main task's next await (same step on replay)."""
        if self._main_task is not None and not self._main_task.done():
            self._main_task.cancel()

    def check_violations(self) -> None:
        if self.checker.violations:
            raise StopSimulation()

    async def sleep(self, ms: float) -> None:
        """Let the world run for ``ms`` of virtual time; stops the run at the first violation."""
        await asyncio.sleep(max(ms, 0) / 1000)
        self.check_violations()

    def elapsed_ms(self) -> int:
        return round(self.loop_time() * 1000)

    # ------------------------------------------------------------------ waiting for a settled cluster

    def settled(self) -> bool:
        active = self.active_controllers()
        if len(active) != 1:
            return False
        controller = active[0].controller
        return (controller.context.epoch == self.zk.controller_epoch()
                and controller.event_manager.queue_size == 0
                and controller.event_manager.state.name == "IDLE"
                and controller.channel_manager.total_queue_size == 0)

    async def wait_stable(self, bound_ms: int) -> bool:
        deadline = self.elapsed_ms() + bound_ms
        while self.elapsed_ms() < deadline:
            if self.settled():
                return True
            await self.sleep(100)
        return False

    async def await_liveness(self) -> None:
        from zkcontroller.sim.liveness import liveness_problems

        deadline = self.elapsed_ms() + self.config.liveness_bound_ms
        while True:
            problems = liveness_problems(self)
            if not problems:
                self.record("live", f"controller={self.active_controllers()[0].broker_id}")
                return
            if self.elapsed_ms() >= deadline:
                self.checker.violate("liveness-after-heal", f"after {self.config.liveness_bound_ms} ms: "
                                                            + "; ".join(problems[:3]))
                return
            await self.sleep(250)

    # ------------------------------------------------------------------ fault verbs

    def fault(self, verb: str, detail: str = "") -> None:
        self.faults += 1
        self.record("fault", f"{verb} {detail}".strip())

    def crash(self, broker_id: int, *, expire_now: bool = False) -> None:
        """kill -9; ``expire_now`` has the store expire its session at once instead of after the timeout."""
        self.fault("crash", f"{broker_id}{' expire-now' if expire_now else ''}")
        host = self.host(broker_id)
        session_id = host.session_id()
        host.crash()
        if expire_now and session_id is not None:
            self.zk.server.expire_session(session_id)

    async def delete_controller_znode(self) -> None:
        """An operator forcing a controller move (``zkCli delete /controller``)."""
        self.fault("delete-controller-znode")
        try:
            await self._admin_session.delete(paths.CONTROLLER)
        except ZkError as e:
            self.record("fault-failed", f"delete /controller: {type(e).__name__}")

    def stop(self, broker_id: int) -> asyncio.Task[None]:
        self.fault("stop", str(broker_id))
        stopping = self._stopping[broker_id] = asyncio.get_running_loop().create_task(self.host(broker_id).stop())
        return stopping

    def restart(self, broker_id: int) -> None:
        """Start a broker that is down again. One still stopping (its controlled shutdown retrying, up to
        ``controlled.shutdown.max.retries`` times ``controller.socket.timeout.ms``) starts once the stop has finished:
        a restart drawn sooner than that was lost before, and the broker stayed down for the rest of the run."""
        host = self.host(broker_id)
        stopping = self._stopping.get(broker_id)
        if host.state == "stopping" and stopping is not None and not stopping.done():
            self.record("restart-after-stop", str(broker_id))
            stopping.add_done_callback(lambda task: None if task.cancelled() else self.restart(broker_id))
            return
        if host.state in ("down", "crashed", "stopped"):
            self.record("restart", str(broker_id))
            host.start()

    def pause(self, broker_id: int) -> None:
        self.fault("pause", str(broker_id))
        self.pauses.append((self.elapsed_ms(), broker_id))
        self.host(broker_id).pause()

    def resume(self, broker_id: int) -> None:
        self.record("resume", str(broker_id))
        self.host(broker_id).resume()

    def expire_session(self, broker_id: int) -> None:
        self.fault("expire-session", str(broker_id))
        self.host(broker_id).expire_session()

    def drop_connection(self, broker_id: int, reconnect_after_ms: int) -> None:
        self.fault("drop-connection", f"{broker_id} for {reconnect_after_ms}ms")
        host = self.host(broker_id)
        host.drop_connection()
        asyncio.get_running_loop().call_later(reconnect_after_ms / 1000, host.reconnect)

    def partition(self, side_a: list[int], side_b: list[int], *, one_way: bool, with_store: bool) -> None:
        self.fault("partition", f"{side_a}{'->' if one_way else '<->'}{side_b} store={with_store}")
        self.network.partition(side_a, side_b, one_way=one_way)
        if with_store:
            for broker_id in side_a:
                self.host(broker_id).drop_connection()

    def hold(self, src: int, dst: int) -> None:
        self.fault("hold", f"{src}->{dst}")
        self.network.hold(src, dst)

    def release(self, src: int, dst: int) -> None:
        self.record("release", f"{src}->{dst}")
        self.network.release(src, dst)

    def slow_store(self, factor: float) -> None:
        self.fault("slow-store", f"x{factor:g}")
        self.zk.latency.slow_factor = factor

    def heal_network(self) -> None:
        self.record("heal", "network")
        self.network.heal()
        for host in self.hosts:
            host.reconnect()

    async def heal_all(self) -> None:
        """End of faults: everything resumes, reconnects, heals and restarts (failed disks replaced); the store is
        fast again."""
        self.record("heal", "all")
        self.zk.latency.slow_factor = 1.0
        self.network.release_all()
        self.network.heal()
        for host in self.hosts:
            host.resume()
            host.reconnect()
        deadline = self.elapsed_ms() + self.config.liveness_bound_ms
        while any(h.state == "stopping" for h in self.hosts) and self.elapsed_ms() < deadline:
            await self.sleep(100)  # a controlled shutdown under way finishes (bounded by its retries) first
        for host in self.hosts:
            if host.state in ("crashed", "stopped", "down"):
                self.restart(host.broker_id)
        for host in self.hosts:  # a failed disk is replaced: the broker is stopped and started again
            plane = host.control_plane
            if host.state == "running" and plane is not None and plane.offline_log_dirs:
                self.record("heal", f"replace failed log dirs of {host.broker_id}")
                await host.stop()
                self.restart(host.broker_id)

    # ------------------------------------------------------------------ workload verbs

    async def create_topic(self, partitions: int, replication_factor: int | None = None) -> str | None:
        assert self.admin is not None
        self._topics += 1
        name = f"topic-{self._topics}"
        rf = min(replication_factor or self.config.replication_factor, self.config.brokers)
        try:
            await self.admin.create_topic(name, partitions, rf)
        except (AdminError, ZkError) as e:
            self.record("workload-failed", f"create {name}: {type(e).__name__}")
            return None
        self.record("workload", f"create {name} partitions={partitions} rf={rf}")
        return name

    async def add_partitions(self, topic: str, count: int) -> None:
        assert self.admin is not None
        try:
            current = len(self.checker.assignment(topic))
            await self.admin.add_partitions(topic, current + count)
        except (AdminError, ZkError) as e:
            self.record("workload-failed", f"add-partitions {topic}: {type(e).__name__}")
            return
        self.record("workload", f"add-partitions {topic} +{count}")

    def leader_counts(self) -> dict[int, int]:
        """Partitions led per broker, as the store says."""
        counts: dict[int, int] = {}
        for topic in self.topics():
            for partition in sorted(self.checker.assignment(topic)):
                path = paths.partition_state_path(topic, partition)
                found = self.zk.read(path)
                if found is not None:
                    leader = TopicPartitionStateZNode.decode(found[0], path, 0).leader_and_isr.leader
                    counts[leader] = counts.get(leader, 0) + 1
        return counts

    def topics(self) -> list[str]:
        return sorted(self.zk.children("/brokers/topics"))


def run_scenario(config: SimConfig) -> SimResult:
    """Run one named scenario on one seed."""
    from zkcontroller.sim.scenarios import SCENARIO_SETUP, scenario_body

    body = scenario_body(config.scenario)
    world = SimWorld(config)
    setup = SCENARIO_SETUP.get(config.scenario)
    if setup is not None:
        setup(world)
    return world.run(body)


__all__ = ["MUTATIONS", "START_MS", "SimConfig", "SimResult", "SimWorld", "StopSimulation", "run_scenario"]
