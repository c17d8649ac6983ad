"""A bounded chaos soak of the real thing: broker processes over TCP against a real ZooKeeper (`ProcessCluster`),
a client workload (an idempotent acks=all producer and Metadata reads), seeded random faults (SIGKILL, SIGSTOP
shorter and longer than the session, SIGTERM, the controller killed, a ZooKeeper server killed, a preferred
election and a reassignment through the admin commands), and after each fault the checks of `soak_checks`:
safety at every poll, convergence within a bound. The simulator checks the same properties in-process and
deterministically; this finds what only real processes, sockets and ZooKeeper sessions show.

The run is seeded (which faults, whom, when) but not deterministic: processes and the network are real.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import random
import shutil
import signal
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from zkcontroller.admin.errors import AdminError
from zkcontroller.admin.leader_election import start_preferred_election
from zkcontroller.admin.reassign import ReassignCommand
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.process_cluster import ProcessCluster, wait_registered
from zkcontroller.cluster.soak_checks import (
    BrokerPartitionView,
    PartitionState,
    SoakChecker,
    Violation,
    ZkSnapshot,
)
from zkcontroller.cluster.soak_wire import BrokerUnavailable, active_controller, high_watermarks, metadata_view
from zkcontroller.cluster.zookeeper_server import ZooKeeperNotInstalled
from zkcontroller.coordination.connect import make_backend
from zkcontroller.coordination.errors import ConnectionLossError, OperationTimeoutError
from zkcontroller.model import TopicPartition
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.runtime.poll import poll_until
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

TOPICS = (("soak-a", 3, 3), ("soak-b", 4, 2), ("soak-c", 2, 2))
"""Name, partitions, replication factor (capped at the broker count)."""

FAULTS = {"kill": 3, "kill-controller": 2, "pause-short": 2, "pause-long": 2, "pause-controller": 1, "term": 2,
          "zk-kill": 2,
          "preferred-election": 1, "reassign": 1, "term-kill-controller": 1}
"""Fault kinds and their weights; ``zk-kill`` only with an ensemble."""

DEFAULT_FAULTS = tuple(k for k in FAULTS if k != "term-kill-controller")
"""The kinds a run draws from unless told: those of the recorded runs (docs/soak.md), so that a recorded seed draws
the same faults again; a kind added later is named with ``--faults``."""

T = TypeVar("T")

POLL_S = 1.0
"""Between two polls of a bounded wait (each poll reads ZooKeeper and asks every running broker)."""

EXIT_POLL_S = 0.2
"""Between two looks at a broker process stopping (its exit ends the wait; the safety checks run meanwhile)."""


class SoakFailure(Exception):
    def __init__(self, violations: list[Violation]) -> None:
        super().__init__("; ".join(map(str, violations)))
        self.violations = violations


@dataclass
class SoakConfig:
    brokers: int = 3
    duration_s: float = 600.0
    seed: int = 0
    zookeeper_ensemble: int | None = None
    directory: Path | None = None
    session_timeout_ms: int = 30000
    interval_s: tuple[float, float] = (5.0, 20.0)
    """Between faults, drawn from this range."""
    max_faults: int | None = None
    """Stop after this many faults (the short test run), else when ``duration_s`` is up."""
    faults: tuple[str, ...] = DEFAULT_FAULTS
    restart_after_expiry: bool = False
    """A killed broker is started again only once its session has expired (and the controller handled its
    failure), never while its old registration stands; looks past finding F1 of docs/soak.md."""
    heal_between_faults: bool = False
    """After each fault's restore, wait for the full heal (every ISR whole) before the next fault: no fault then
    lands on a cluster still recovering from the last, which keeps a short run's outcome independent of timing."""
    settle_s: float | None = None
    """The bound for convergence after a fault; default: a session timeout and 45 s."""
    out: Callable[[str], None] = print


@dataclass
class SoakResult:
    violations: list[Violation]
    faults: list[tuple[float, str]]
    checks_passed: int
    elapsed_s: float
    directory: Path
    acknowledged: int
    producer_errors: Counter[str] = field(default_factory=Counter)

    def summary(self) -> str:
        kinds = Counter(text.split(" ", 1)[0] for _, text in self.faults)
        lines = [f"soak {'FAILED' if self.violations else 'passed'} after {self.elapsed_s:.0f} s: "
                 f"{len(self.faults)} faults ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}), "
                 f"{self.checks_passed} checks passed, {self.acknowledged} produces acknowledged",
                 "producer errors: " + (", ".join(f"{k} x{n}" for k, n in self.producer_errors.most_common(8))
                                        or "none")]
        return "\n".join(lines)


class ProducerWorkload:
    """confluent-kafka's idempotent acks=all producer on a thread of its own, round-robin over the partitions at a
    modest rate, plus a Metadata request every few seconds; acknowledged offsets go to ``acks`` for the checker.
    A fatal producer error (the idempotent producer gives up) is counted and the producer is made again."""

    def __init__(self, bootstrap: str, partitions: list[TopicPartition], rate_per_s: float = 40.0) -> None:
        self.bootstrap = bootstrap
        self.partitions = partitions
        self.rate_per_s = rate_per_s
        self.acks: queue.SimpleQueue[tuple[TopicPartition, int]] = queue.SimpleQueue()
        self.errors: Counter[str] = Counter()
        self.acknowledged = 0
        self.handed: Counter[TopicPartition] = Counter()
        """Records ever handed to the producer per partition: counted before ``produce`` (and taken back if it
        refuses), so a record cannot be appended before it is counted (`SoakChecker.appended_once`)."""
        self._stop = threading.Event()
        self._fatal = threading.Event()
        self._thread = threading.Thread(target=self._run, name="soak-producer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)

    def _make(self) -> Any:
        from confluent_kafka import Producer

        def on_error(err: Any) -> None:
            self.errors[f"{'fatal ' if err.fatal() else ''}{err.name()}"] += 1
            if err.fatal():
                self._fatal.set()

        return Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True, "acks": "all",
                         "linger.ms": 5, "message.timeout.ms": 120000, "log_level": 2, "error_cb": on_error,
                         "topic.metadata.refresh.interval.ms": 5000})

    def _delivered(self, err: Any, msg: Any) -> None:
        if err is not None:
            self.errors[f"delivery {err.name()}"] += 1
            return
        self.acknowledged += 1
        if msg.offset() is None or msg.offset() < 0:  # librdkafka knows no offset (a duplicate's answer)
            self.errors["acknowledged without an offset"] += 1
            return
        self.acks.put((TopicPartition(msg.topic(), msg.partition()), msg.offset()))

    def _run(self) -> None:
        producer = self._make()
        sent = 0
        next_metadata = time.monotonic()
        try:
            while not self._stop.is_set():
                if self._fatal.is_set():
                    self._fatal.clear()
                    producer.flush(5)
                    producer = self._make()
                tp = self.partitions[sent % len(self.partitions)]
                self.handed[tp] += 1
                try:
                    producer.produce(tp.topic, b"soak %d" % sent, partition=tp.partition, on_delivery=self._delivered)
                    sent += 1
                except BufferError:
                    self.handed[tp] -= 1
                    self.errors["local queue full"] += 1
                except Exception as e:  # a producer in a fatal state refuses: make it again
                    self.handed[tp] -= 1
                    self.errors[f"produce {type(e).__name__}"] += 1
                    self._fatal.set()
                producer.poll(1 / self.rate_per_s)
                if time.monotonic() >= next_metadata:
                    next_metadata = time.monotonic() + 3
                    try:
                        producer.list_topics(timeout=5)
                    except Exception as e:
                        self.errors[f"metadata {type(e).__name__}"] += 1
        finally:
            producer.flush(30)


async def read_snapshot(zk: KafkaZkClient, topics: list[str], timeout_s: float = 10.0) -> ZkSnapshot:
    """ZooKeeper's view, read in the order that cannot pair a newer ISR with an older replica set wrongly: the
    topic znodes (a reassignment grows the replica set before the ISR, and shrinks the ISR before it) before the
    partition states; the controller between two reads of its epoch, again until both agree."""
    async with asyncio.timeout(timeout_s):
        for _ in range(5):
            before = await zk.get_controller_epoch()
            controller = await zk.get_controller_id()
            after = await zk.get_controller_epoch()
            if (before and before[0]) == (after and after[0]):
                break
        epoch = after[0] if after is not None else None
        registered = frozenset(await zk.get_sorted_broker_list())
        assignment = (await zk.get_full_replica_assignment_for_topics(topics)).values
        states = (await zk.get_topic_partition_states(assignment)).values
    partitions = {tp: PartitionState(assignment[tp].replicas, s.leader_and_isr.leader,
                                     s.leader_and_isr.leader_epoch, tuple(s.leader_and_isr.isr))
                  for tp, s in states.items()}
    return ZkSnapshot(controller, epoch, registered, partitions)


class Soak:
    def __init__(self, config: SoakConfig) -> None:
        self.config = config
        self.rng = random.Random(config.seed)
        self.own_directory = config.directory is None
        directory = config.directory or Path(tempfile.mkdtemp(prefix="zkcontroller-soak-"))
        self.cluster = ProcessCluster(list(range(1, config.brokers + 1)), directory,
                                      session_timeout_ms=config.session_timeout_ms,
                                      zookeeper_ensemble=config.zookeeper_ensemble,
                                      extra={"controlled.shutdown.retry.backoff.ms": "500"})
        self.checker = SoakChecker()
        self.history: list[tuple[float, str]] = []
        self.started = time.monotonic()
        self.topics = [name for name, _, _ in TOPICS]
        self.partitions: list[TopicPartition] = []
        self.reassignments: dict[TopicPartition, tuple[int, ...]] = {}
        self.answered: set[TopicPartition] = set()
        """The partitions whose leader answered ListOffsets at the last poll: after heal, every one must, so that
        the acknowledged offsets are checked against every partition's final high watermark."""
        self.led_with_acks: dict[int, list[TopicPartition]] = {}
        """Per SIGKILLed broker: the partitions it led, with acknowledged records, when it was killed; a restart that
        lost them is what `high-watermark-monotonic` catches, so a test can tell its kill put them at stake."""
        self.zk: KafkaZkClient | None = None
        self.workload: ProducerWorkload | None = None
        self.settle_s = config.settle_s or config.session_timeout_ms / 1000 + 45

    # ------------------------------------------------------------------ helpers

    def now(self) -> float:
        return time.monotonic() - self.started

    def say(self, text: str) -> None:
        self.config.out(f"[{self.now():7.1f}s] {text}")

    def record(self, text: str) -> None:
        self.history.append((self.now(), text))
        self.say(f"fault: {text}")

    def running(self) -> list[int]:
        return [b.broker_id for b in self.cluster.brokers.values() if b.state == "running"]

    def fail(self, violations: list[Violation]) -> None:
        raise SoakFailure(violations)

    async def snapshot(self) -> ZkSnapshot:
        zk = self.zk
        assert zk is not None
        return await self.zk_call(lambda: read_snapshot(zk, self.topics))

    async def zk_call(self, call: Callable[[], Awaitable[T]], bound_s: float = 30.0) -> T:
        """The soak's own ZooKeeper request, again while its connection is lost (its server was killed: the
        session moves to another), within a bound."""
        deadline = time.monotonic() + bound_s
        while True:
            try:
                return await call()
            except (ConnectionLossError, OperationTimeoutError, TimeoutError):
                if time.monotonic() > deadline:
                    raise
            await asyncio.sleep(0.5)  # a bounded wait for the session to reconnect

    async def safety(self) -> ZkSnapshot:
        """One poll of the safety checks: ZooKeeper, acknowledged produces, leaders' high watermarks, crashes."""
        crashed = self.cluster.unexpected_exits()
        if crashed:
            self.fail([Violation("no-crash", report) for report in crashed])
        snap = await self.snapshot()
        found = self.checker.observe(snap)
        if self.workload is not None:
            while True:
                try:
                    tp, offset = self.workload.acks.get_nowait()
                except queue.Empty:
                    break
                found += self.checker.acknowledged(tp, offset)
        found += await self.watermarks(snap)
        if found:
            self.fail(found)
        return snap

    async def watermarks(self, snap: ZkSnapshot) -> list[Violation]:
        """Each partition's high watermark from its leader (as ZooKeeper names it, at its leader epoch), kept only
        where ZooKeeper still names that leader and epoch afterwards: a leader deposed meanwhile, not yet told,
        may answer a watermark its successor has passed, which is no violation."""
        zk = self.zk
        assert zk is not None
        floors = self.checker.floors()
        by_leader: dict[int, dict[TopicPartition, int]] = {}
        for tp, p in snap.partitions.items():
            if p.leader in self.running():
                by_leader.setdefault(p.leader, {})[tp] = p.leader_epoch

        async def ask(leader: int, tps: dict[TopicPartition, int]) -> dict[TopicPartition, tuple[int, int]]:
            try:
                found = await high_watermarks(self.cluster.brokers[leader].port, tps)
            except BrokerUnavailable:
                return {}
            return {tp: (leader, hw) for tp, hw in found.items()}

        answers: dict[TopicPartition, tuple[int, int]] = {}
        for part in await asyncio.gather(*(ask(b, tps) for b, tps in by_leader.items())):
            answers.update(part)
        after = (await self.zk_call(lambda: zk.get_topic_partition_states(answers))).values
        answers = {tp: a for tp, a in answers.items() if tp in after
                   and (after[tp].leader_and_isr.leader, after[tp].leader_and_isr.leader_epoch)
                   == (snap.partitions[tp].leader, snap.partitions[tp].leader_epoch)}
        self.answered = set(answers)
        found = self.checker.watermarks(floors, answers)
        if self.workload is not None:
            found += self.checker.appended_once(dict(self.workload.handed), answers)
        return found

    async def views(self) -> tuple[dict[int, bool], dict[int, dict[TopicPartition, BrokerPartitionView] | str]]:
        running = self.running()

        async def ask(b: int) -> tuple[bool | None, dict[TopicPartition, BrokerPartitionView] | str]:
            proc = self.cluster.brokers[b]
            try:
                active: bool | None = await active_controller(proc.metrics_port)
            except BrokerUnavailable:
                active = None
            try:
                return active, await metadata_view(proc.port, self.topics)
            except BrokerUnavailable as e:
                return active, str(e)

        answers = await asyncio.gather(*(ask(b) for b in running))
        actives = {b: a for b, (a, _) in zip(running, answers, strict=True) if a is not None}
        return actives, {b: v for b, (_, v) in zip(running, answers, strict=True)}

    async def settle(self, why: str, healed: bool = False, gone: frozenset[int] = frozenset()) -> None:
        """Poll until the convergence checks pass, at most `settle_s`; safety is checked at every poll. ``gone``:
        brokers killed or paused past their session, whose registration must go (the session expires)."""
        open_: list[Violation] = []  # the last poll's, named if the bound runs out

        async def settled() -> bool:
            snap = await self.safety()
            actives, views = await self.views()
            found = SoakChecker.unsettled(snap, self.running(), actives, views, healed)
            found += [Violation("broker-registered", f"broker {b} runs but is not registered")
                      for b in self.running() if b not in snap.registered]
            found += [Violation("session-expires", f"broker {b} is still registered") for b in sorted(gone)
                      if b in snap.registered]
            if healed:
                found += await self.reassignments_done(snap)
                found += [Violation("leader-answers-list-offsets", f"{tp}: its leader "
                                    f"{snap.partitions[tp].leader} gave no high watermark")
                          for tp in sorted(set(snap.partitions) - self.answered)]
            open_[:] = found
            return not found

        if not await poll_until(settled, self.settle_s, POLL_S):
            self.fail([Violation(v.invariant, f"not within {self.settle_s:g} s after {why}: {v.detail}")
                       for v in open_])
        self.checker.checks_passed += 1

    async def reassignments_done(self, snap: ZkSnapshot) -> list[Violation]:
        zk = self.zk
        assert zk is not None
        open_ = []
        if await self.zk_call(zk.reassign_partitions_in_progress):
            open_.append(Violation("reassignment-completes", "/admin/reassign_partitions still present"))
        for tp, target in sorted(self.reassignments.items()):
            got = snap.partitions[tp].replicas
            if sorted(got) != sorted(target):
                open_.append(Violation("reassignment-completes", f"{tp}: replicas {list(got)}, target "
                                       f"{list(target)}"))
        if await self.zk_call(lambda: zk.path_exists("/admin/preferred_replica_election")):
            open_.append(Violation("preferred-election-completes", "/admin/preferred_replica_election present"))
        return open_

    async def hold(self, seconds: float) -> None:
        """Let time pass (a fault's duration, the gap between faults) while polling the safety checks."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            await self.safety()
            await asyncio.sleep(min(POLL_S, max(0.0, end - time.monotonic())))

    async def wait_exit(self, broker: int, bound_s: float) -> None:
        proc = self.cluster.brokers[broker].process
        assert proc is not None
        async def exited() -> bool:
            if proc.poll() is not None:
                return True
            await self.safety()  # the cluster stays safe meanwhile
            return False

        if not await poll_until(exited, bound_s, EXIT_POLL_S):
            self.fail([Violation("controlled-shutdown-bounded", f"broker {broker} did not exit within "
                                 f"{bound_s:g} s of SIGTERM")])

    # ------------------------------------------------------------------ faults

    def choose(self) -> str:
        kinds = [k for k in self.config.faults if k != "zk-kill" or self.cluster.ensemble is not None]
        return self.rng.choices(kinds, weights=[FAULTS[k] for k in kinds])[0]

    async def inject(self, kind: str) -> None:
        session_s = self.config.session_timeout_ms / 1000
        broker = self.rng.choice(sorted(self.cluster.brokers))
        if kind in ("kill-controller", "pause-controller"):
            controller = (await self.snapshot()).controller
            if controller is None or controller not in self.running():
                kind = "kill" if kind == "kill-controller" else "pause-long"
            else:
                broker = controller
        if kind in ("kill", "kill-controller"):
            expire = self.config.restart_after_expiry
            down = self.rng.uniform(1.0, 1.3 * session_s)
            self.record(f"{kind} broker {broker} (SIGKILL), start again after "
                        + ("its session expired" if expire else f"{down:.1f} s"))
            snap = await self.safety()
            self.led_with_acks[broker] = [tp for tp, p in sorted(snap.partitions.items())
                                          if p.leader == broker and self.checker.hw_floor.get(tp, 0) > 0]
            self.cluster.signal(broker, signal.SIGKILL)
            await self.hold(0 if expire else down)
            await self.settle(f"{kind} of broker {broker}", gone=frozenset({broker}) if expire else frozenset())
            self.cluster.start_broker(broker)
            self.say(f"started broker {broker} again")
            await self.settle(f"restart of broker {broker}", healed=self.config.heal_between_faults)
        elif kind in ("pause-short", "pause-long", "pause-controller"):
            paused = (self.rng.uniform(0.5, session_s / 3) if kind == "pause-short"
                      else session_s + self.rng.uniform(2.0, 8.0))
            self.record(f"{kind} broker {broker} (SIGSTOP for {paused:.1f} s, session {session_s:g} s)")
            self.cluster.signal(broker, signal.SIGSTOP)
            await self.hold(paused)
            if kind != "pause-short":
                await self.settle(f"{kind} of broker {broker} (still paused)", gone=frozenset({broker}))
            self.cluster.signal(broker, signal.SIGCONT)
            self.say(f"resumed broker {broker}")
            await self.settle(f"resume of broker {broker}", healed=self.config.heal_between_faults)
        elif kind == "term":
            self.record(f"term broker {broker} (SIGTERM: controlled shutdown), then start")
            self.cluster.signal(broker, signal.SIGTERM)
            await self.wait_exit(broker, 90.0)
            await self.settle(f"controlled shutdown of broker {broker}")
            self.cluster.start_broker(broker)
            await self.settle(f"restart of broker {broker}", healed=self.config.heal_between_faults)
        elif kind == "term-kill-controller":
            await self.term_kill_controller(broker)
        elif kind == "zk-kill":
            ensemble = self.cluster.ensemble
            assert ensemble is not None
            server = self.rng.choice(ensemble.ids)
            down = self.rng.uniform(2.0, 15.0)
            self.record(f"zk-kill ZooKeeper server {server} (leader: {ensemble.leader()}) for {down:.1f} s")
            ensemble.kill(server)
            await self.hold(down)
            await self.settle(f"zk-kill of server {server}")
            ensemble.start_server(server)
            await self.settle(f"zk-start of server {server}", healed=self.config.heal_between_faults)
        elif kind == "preferred-election":
            assert self.zk is not None
            try:
                zk = self.zk
                started = await self.zk_call(lambda: start_preferred_election(zk, None))
                self.record(f"preferred-election of {len(started.requested)} partitions (admin path)")
            except AdminError as e:
                self.record(f"preferred-election refused: {e}")
        elif kind == "reassign":
            await self.reassign()
        else:
            raise ValueError(f"unknown fault {kind!r}")

    async def term_kill_controller(self, broker: int) -> None:
        """SIGTERM a broker, then SIGKILL the controller while that controlled shutdown is under way: the shutting
        broker must still exit within the bound (its ControlledShutdown retries, then gives up), the new controller
        must elect leaders for both, and neither restart may lose an acknowledged record."""
        session_s = self.config.session_timeout_ms / 1000
        controller = (await self.snapshot()).controller
        if broker == controller:
            broker = self.rng.choice([b for b in self.running() if b != controller] or [broker])
        gap = self.rng.uniform(0.0, 0.6)  # a controlled shutdown takes about this long here: race it
        down = self.rng.uniform(1.0, 1.3 * session_s)
        victim = controller if controller in self.running() and controller != broker else None
        if victim is None:
            self.record(f"term-kill-controller broker {broker} (SIGTERM) alone: no other running controller "
                        f"({controller})")
        else:
            self.record(f"term-kill-controller broker {broker} (SIGTERM), after {gap:.1f} s kill controller "
                        f"{victim} (SIGKILL), start it again after {down:.1f} s")
        self.cluster.signal(broker, signal.SIGTERM)
        if victim is not None:
            await self.hold(gap)
            self.cluster.signal(victim, signal.SIGKILL)
            await self.hold(down)
            self.cluster.start_broker(victim)
            self.say(f"started broker {victim} again")
        await self.wait_exit(broker, 90.0)
        await self.settle(f"controlled shutdown of broker {broker} racing the controller's kill")
        self.cluster.start_broker(broker)
        self.say(f"started broker {broker} again")
        await self.settle(f"restart of broker {broker} (and of the killed controller {victim})",
                          healed=self.config.heal_between_faults)

    async def reassign(self) -> None:
        assert self.zk is not None
        snap = await self.snapshot()
        tp = self.rng.choice(sorted(snap.partitions))
        current = snap.partitions[tp].replicas
        ids = sorted(self.cluster.brokers)
        target = tuple(self.rng.sample(ids, len(current)))
        if sorted(target) == sorted(current) and len(ids) > len(current):
            target = (*target[:-1], next(b for b in ids if b not in current))
        try:
            command = ReassignCommand(self.zk, random.Random(self.rng.random()))
            await self.zk_call(lambda: command.execute({tp: target}))
        except AdminError as e:
            self.record(f"reassign {tp} refused: {e}")
            return
        self.reassignments[tp] = target
        self.record(f"reassign {tp} from {list(current)} to {list(target)} (admin path)")

    # ------------------------------------------------------------------ the run

    async def run(self) -> SoakResult:
        config = self.config
        violations: list[Violation] = []
        backend = None
        session = None
        try:
            await asyncio.to_thread(self.cluster.start_zookeeper)
            backend = make_backend(self.cluster.zookeeper_connect, wall_clock_ms)
            session = await backend.new_session()
            self.zk = KafkaZkClient(session, wall_clock_ms)
            await asyncio.to_thread(self.cluster.start_brokers)
            await wait_registered(self.zk, list(self.cluster.brokers), cluster=self.cluster)
            self.say(f"cluster up in {self.cluster.directory}: brokers {self.cluster.bootstrap}, ZooKeeper "
                     f"{self.cluster.zookeeper_connect}, seed {config.seed}")
            admin = TopicAdmin(self.zk, random.Random(config.seed))
            for name, count, rf in TOPICS:
                await admin.create_topic(name, count, min(rf, config.brokers))
                self.partitions += [TopicPartition(name, p) for p in range(count)]
            await self.settle("topic creation")
            self.workload = ProducerWorkload(self.cluster.bootstrap, self.partitions)
            self.workload.start()
            deadline = self.started + config.duration_s
            while time.monotonic() < deadline and (config.max_faults is None
                                                    or len(self.history) < config.max_faults):
                await self.inject(self.choose())
                await self.hold(min(self.rng.uniform(*config.interval_s), max(0.0, deadline - time.monotonic())))
            self.say("heal: every broker and ZooKeeper server running")
            for b in self.cluster.brokers.values():
                if b.paused:
                    self.cluster.signal(b.broker_id, signal.SIGCONT)
                elif b.state != "running":
                    self.cluster.start_broker(b.broker_id)
            await self.settle("heal", healed=True)
            self.workload.stop()
            await self.settle("the producer's last acknowledgements", healed=True)
        except SoakFailure as e:
            violations = e.violations
        except Exception as e:  # the soak's own failure (or ZooKeeper gone): reported with the history, not lost
            if isinstance(e, ZooKeeperNotInstalled):
                raise
            violations = [Violation("soak-error", f"{type(e).__name__}: {e}")]
            self.say("".join(traceback.format_exception(e)))
        finally:
            if self.workload is not None:
                await asyncio.to_thread(self.workload.stop)
            if session is not None:
                with contextlib.suppress(Exception):
                    await session.close()
            if backend is not None:
                with contextlib.suppress(Exception):
                    await backend.close()
            await asyncio.to_thread(self.cluster.stop)
        return SoakResult(violations, list(self.history), self.checker.checks_passed, self.now(),
                          self.cluster.directory, self.workload.acknowledged if self.workload else 0,
                          self.workload.errors if self.workload else Counter())

    def report(self, result: SoakResult) -> str:
        lines = [result.summary()]
        if result.violations:
            lines.append(f"VIOLATIONS at {result.elapsed_s:.1f} s (seed {self.config.seed}):")
            lines += [f"  {v}" for v in result.violations]
            lines.append("fault history:")
            lines += [f"  [{t:7.1f}s] {text}" for t, text in result.faults] or ["  (none)"]
            lines.append(f"cluster directory kept: {result.directory}")
            lines += [f"  broker {b.broker_id} log: {b.log}" for b in self.cluster.brokers.values()]
        elif self.own_directory:
            shutil.rmtree(result.directory, ignore_errors=True)
        return "\n".join(lines)


def run_soak(config: SoakConfig) -> tuple[SoakResult, str]:
    """Run one soak; returns the result and its printed report (a failed run keeps its directory)."""
    soak = Soak(config)
    result = asyncio.run(soak.run())
    return result, soak.report(result)
