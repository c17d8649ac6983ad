"""Issue 12's figures: a controlled shutdown of a broker leading 10,000 partitions, then a preferred-replica
election giving those 10,000 leaderships back, on the embedded store and a real ZooKeeper.

Five brokers, 50,000 partitions at replication factor 2 (leaders spread evenly, so the broker stopped leads a
fifth and follows another fifth). The controlled shutdown is timed from the broker's ControlledShutdown request
to the controller's answer with nothing left to move (the broker's own handshake code,
``cluster/controlled_shutdown.py``). The broker is then started again; once it is back in every ISR, a
preferred-replica election is requested through ``/admin/preferred_replica_election`` (as
``zkcontroller leader-election`` writes it) and timed from that znode's creation to the last LeaderAndIsr handed
and to the controller's deletion of the znode, which it does after the election. The tool's own check before it
writes (every partition of the cluster read, as ``kafka-preferred-replica-election.sh`` does) runs in the tool's
process and is printed apart (``admin_tool_check_ms``). Automatic leader rebalancing is off so it does not move
leadership first.

The brokers' replica fetchers (the data plane) are paused during both measured intervals unless ``--data-plane``:
in Kafka they run on other machines; here they would share the controller's event loop (10,000-partition fetch
sessions every half second) and land in its figures. The broker needs them to rejoin the ISRs between the two
figures, so they run there.

The shutdown also gives the moment the controller's handler returned the answer (``request_to_answer_handed``):
over TCP the controller's socket server writes it then, and the stopping broker, another process, reads it. Here
the requester shares the loop, and its ``wait_for`` task adds a turn after that moment, so what the loop runs in
between (the young collection `runtime/gc_pause.py` defers to the turn after the controller's event, the other
brokers' handling) lands in ``request_to_answer`` as well, though a broker on the wire would not wait for it.

Beside each: the brokers' own handling time in that interval, and for the shutdown the followers' fetch loops
(both subtracted: controller-only; a fetch the leader held when the fetchers were paused is answered when the
leadership moves, and the follower applies that answer inside the interval), the controller's event-processing
loop time measured directly (its own steps, without the store's round trips), and the store floor
measured in the same run — one batched read and rewrite of the partition states the controller has to write
(led and followed partitions for the shutdown, the elected ones for the election).

The full (generation-2) collections are counted apart (``full_collections_*``: count, total and longest ms,
objects collected) for the set-up, each measured interval and the broker's restart and rejoin between them: each
scans every tracked object not frozen, seconds on this heap. ``--no-gc-freeze`` freezes nothing
(`runtime/gc_freeze.py`'s before-figure).

    uv run python bench/bench_healing.py [--backend embedded|zookeeper|both] [--scale 0.2] [--data-plane]
                                         [--no-gc-freeze]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import platform
import time
from collections.abc import Iterator
from typing import Any

from bench_controller import (
    BROKERS,
    BY_FUNCTION_ON,
    GC_CLOCK,
    LOOP_TIMELINE,
    PROFILER,
    LoopTime,
    Records,
    TimingTransport,
    by_function_figures,
    create_topics,
    party_of,
    poll_until,
    print_result,
    resident_mib,
    store_floor_ms,
    time_broker_rounds,
    time_controller_events,
    time_store_calls,
    wait_all_online,
    watch_deletion,
)
from by_function import BY_FUNCTION, DEFAULT_FUNCTIONS
from zkcontroller.admin.leader_election import all_partitions
from zkcontroller.cluster.controlled_shutdown import controlled_shutdown
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.event_log import EventLog
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import LeaderAndIsrRequest
from zkcontroller.runtime import gc_freeze
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

DATA_PLANE = False
"""``--data-plane``: keep the brokers' fetchers running during the measured intervals too."""


class FullCollections:
    """Every full (generation-2) cyclic collection in this process as (wall ms at its start, seconds, objects
    collected), from ``gc.callbacks``: each one scans every tracked object not frozen (`runtime/gc_freeze.py`),
    the multi-second pauses of a big heap."""

    def __init__(self) -> None:
        self.collections: list[tuple[int, float, int]] = []
        self._started = (0, 0.0)
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._started = (wall_clock_ms(), time.perf_counter())
        else:
            self.collections.append((self._started[0], time.perf_counter() - self._started[1], info["collected"]))

    def figures(self, name: str, since_ms: int, until_ms: int) -> dict[str, int]:
        """Count, total and longest (ms) and objects collected of the full collections begun in [since, until]."""
        inside = [(d, c) for t, d, c in self.collections if since_ms <= t <= until_ms]
        return {f"full_collections_{name}": len(inside),
                f"full_collections_{name}_total_ms": round(1000 * sum(d for d, _ in inside)),
                f"full_collections_{name}_longest_ms": round(1000 * max((d for d, _ in inside), default=0)),
                f"full_collections_{name}_collected": sum(c for _, c in inside)}


FULL_GC = FullCollections()


def _paths(tps: list[TopicPartition]) -> list[str]:
    return [paths.partition_state_path(tp.topic, tp.partition) for tp in tps]


FETCH_LOOP = "task ReplicaFetcher._run"
"""`party_of`'s name for a follower's fetch loop: broker work, on other machines in Kafka."""


def fetch_loops_ms(start: float, end: float, bench_task: asyncio.Task[Any] | None) -> tuple[float, float]:
    """Loop time and this thread's CPU (ms) of the followers' fetch loops in the callbacks that began in
    [start, end): their sends' handling by the leaders is in the transport's broker time already."""
    wall = cpu = 0.0
    for (a, b, callback), c in zip(LOOP_TIMELINE.callbacks, LOOP_TIMELINE.cpu, strict=True):
        if start <= a < end and party_of(callback, bench_task) == FETCH_LOOP:
            wall += min(b, end) - a
            cpu += c
    return 1000 * wall, 1000 * cpu


@contextlib.contextmanager
def fetchers_paused(cluster: LocalCluster) -> Iterator[None]:
    """Pause every broker's replica fetchers for a measured interval (a few seconds, far below
    ``replica.lag.time.max.ms``, so no ISR shrinks); resumed afterwards."""
    managers = [] if DATA_PLANE else [s.replica_manager for s in cluster.brokers.values()
                                      if s.replica_manager is not None]
    for manager in managers:
        manager.pause_fetchers()
    try:
        yield
    finally:
        for manager in managers:
            manager.resume_fetchers()


async def bench(backend: CoordinationBackend, partitions: int) -> tuple[dict[str, Any], dict[str, float]]:
    records, transport = Records(), TimingTransport()
    # the per-partition state-change lines as one list per step, as `zkcontroller cluster`'s log files take them
    # (and `bench_controller.py`): then built as each event ends (`EventLog.lines_sink`)
    event_log = EventLog("bench", wall_clock_ms, records.sink, lines_sink=records.sink_lines)
    cluster = LocalCluster(backend, BROKERS, wall_clock_ms, event_log=event_log,
                           controller_config=ControllerConfig(broker_id=-1, auto_leader_rebalance_enable=False),
                           session_timeout_ms=18000, transport=transport)
    began = wall_clock_ms()
    await cluster.start()
    controller = await cluster.wait_for_controller()
    controller_time = time_controller_events(cluster)
    isr_rounds = LoopTime()
    time_broker_rounds(cluster, transport.broker_time, isr_rounds)
    store_time = time_store_calls(backend)
    session = await backend.new_session()
    admin = KafkaZkClient(session, wall_clock_ms)
    try:
        await create_topics(admin, partitions)
        setup_s = await wait_all_online(cluster, partitions)
        victim = next(b for b in BROKERS if b != controller.controller_id)
        led = sorted(controller.context.partition_leaders_on_broker(victim))
        followed = [tp for tp in controller.context.partitions_on_broker(victim) if tp not in set(led)]
        server = cluster.brokers[victim]
        plane = server.control_plane
        assert plane is not None and server.zk is not None

        t0 = wall_clock_ms()
        start = time.perf_counter()
        with (fetchers_paused(cluster), PROFILER.measure(f"controlled-shutdown-{partitions}"),
              LOOP_TIMELINE.record(), BY_FUNCTION_ON):
            outcome = await controlled_shutdown(victim, lambda: plane.broker_epoch, server.config.controller_config,
                                                server.zk, server.transport, server.runtime)
        shutdown_ms = round(1000 * (time.perf_counter() - start))
        assert outcome.succeeded, outcome
        t1 = wall_clock_ms()
        brokers_ms = transport.broker_ms(t0, t1)
        # the last answer as the controller's handler returned it (over TCP: written to the socket then)
        answered_at, answered_ms = max((p, t) for p, t, kind in transport.answered
                                       if kind == "ControlledShutdownRequest" and p >= start)
        answer_handed_ms = round(1000 * (answered_at - start))
        # who spent each ms up to the answer handed (`bench_controller`'s split): controller-only less the
        # controller's CPU and the collector is the store's calls in the write workers, the requester's and the
        # brokers' own tasks, and the loop
        bench_task = asyncio.current_task()
        split = LOOP_TIMELINE.split(
            start, answered_at, lambda cb: party_of(cb, bench_task),
            [("controller's steps", controller_time.spans), ("brokers' handling", transport.broker_time.spans),
             ("store calls", store_time.spans), ("cyclic GC", GC_CLOCK.spans)])
        fetch_ms, _ = fetch_loops_ms(start, start + shutdown_ms / 1000, bench_task)
        fetch_handed_ms, fetch_handed_cpu_ms = fetch_loops_ms(start, answered_at, bench_task)
        shutdown = {
            "partitions": partitions, "led_by_broker": len(led), "followed_by_broker": len(followed),
            "setup_s": setup_s, "attempts": outcome.attempts,
            "request_to_answer_ms": shutdown_ms, "brokers_handling_in_that_interval_ms": brokers_ms,
            "of_which_isr_expiration_rounds_ms": isr_rounds.ms(t0, t1),
            "followers_fetch_loops_in_that_interval_ms": round(fetch_ms),
            "controller_only_ms": round(shutdown_ms - brokers_ms - fetch_ms),
            "controller_event_loop_time_ms": controller_time.ms(t0, t1),
            "controller_event_loop_cpu_ms": controller_time.cpu_ms(t0, t1),
            "cyclic_gc_in_that_interval_ms": GC_CLOCK.ms(t0, t1),
            "request_to_answer_handed_ms": answer_handed_ms,
            "followers_fetch_loops_to_answer_handed_ms": round(fetch_handed_ms),
            "controller_only_to_answer_handed_ms": round(
                answer_handed_ms - transport.broker_ms(t0, answered_ms) - fetch_handed_ms),
            "cyclic_gc_before_answer_handed_ms": GC_CLOCK.ms(t0, answered_ms),
            "controller_only_cpu_to_answer_handed_ms": round(
                LOOP_TIMELINE.cpu_ms(start, answered_at) - transport.broker_time.cpu_ms_between(start, answered_at)
                - fetch_handed_cpu_ms),
            "store_calls_to_answer_handed_ms": round(sum(v for k, v in split.items() if k.endswith("> store calls"))),
            "where the time to the answer handed went, ms (each instant to the callback running it and the timed "
            "parts inside)": split,
            **FULL_GC.figures("in_that_interval", t0, t1),
            **FULL_GC.figures("in_setup", began, t0),
            **by_function_figures(start, answered_at),
        }
        await cluster.stop_broker(victim)
        await cluster.start_broker(victim)

        def back_in_every_isr() -> bool:
            states = [controller.context.partition_leader_and_isr(tp) for tp in led]
            return all(s is not None and victim in s.isr for s in states) and controller.event_manager.queue_size == 0

        rejoin = time.perf_counter()
        await poll_until(back_in_every_isr, timeout_s=900)
        rejoin_s = time.perf_counter() - rejoin
        assert all(controller.context.partition_leadership_info(tp).leader_and_isr.leader != victim for tp in led)

        # The tool's own check (kafka-preferred-replica-election reads every partition of the cluster to drop
        # unknown ones) runs in the tool's process before the request exists: timed apart, so the figures start
        # when the request is written, as the controller's watch sees it.
        start = time.perf_counter()
        existing = set(await all_partitions(admin))
        tool_check_ms = round(1000 * (time.perf_counter() - start))
        assert existing.issuperset(led)
        t0 = wall_clock_ms()
        start = time.perf_counter()
        with fetchers_paused(cluster), PROFILER.measure(f"preferred-election-{len(led)}"):
            await admin.create_preferred_replica_election(led)
            done = await watch_deletion(admin, paths.PREFERRED_REPLICA_ELECTION)
            await done
            await poll_until(lambda: controller.event_manager.queue_size == 0
                             and controller.channel_manager.total_queue_size == 0)
        elected_ms = round(1000 * (time.perf_counter() - start))
        handed = max(transport.times(t0, controller.context.epoch, LeaderAndIsrRequest))
        brokers_ms = transport.broker_ms(t0, handed)
        back = sum(1 for tp in led if controller.context.partition_leadership_info(tp).leader_and_isr.leader == victim)
        election = {
            "partitions_elected": len(led), "leadership_back_on_preferred": back, "rejoin_every_isr_s": rejoin_s,
            "admin_tool_check_ms": tool_check_ms,
            "request_to_znode_deleted_and_idle_ms": elected_ms, "request_to_last_leader_and_isr_ms": handed - t0,
            "brokers_handling_in_that_interval_ms": brokers_ms, "controller_only_ms": handed - t0 - brokers_ms,
            "controller_event_loop_time_ms": controller_time.ms(t0, handed),
            "controller_event_loop_cpu_ms": controller_time.cpu_ms(t0, handed),
            "cyclic_gc_in_that_interval_ms": GC_CLOCK.ms(t0, handed),
            **FULL_GC.figures("in_that_interval", t0, handed),
            **FULL_GC.figures("from_shutdown_to_election", t1, t0),
            "resident_mib": resident_mib(),
            "gc_freezes_so_far": gc_freeze.freezes, "gc_reclaims_so_far": gc_freeze.reclaims,
            "gc_frozen_objects": gc.get_freeze_count(),
        }
        # The floors rewrite the same state znodes (bumping their versions): only once everything is measured,
        # and with no broker work overlapping them.
        with fetchers_paused(cluster):
            await poll_until(lambda: transport.in_flight == 0)
            shutdown.update(await store_floor_ms(backend, _paths(led + followed)))
            election.update(await store_floor_ms(backend, _paths(led)))
        return shutdown, election
    finally:
        await session.close()
        await cluster.shutdown(timeout_s=120)


async def run(backend: CoordinationBackend, scale: float) -> None:
    shutdown, election = await bench(backend, int(50_000 * scale))
    print_result("controlled shutdown", shutdown)
    print_result("preferred-replica election", election)


def main() -> None:
    for name in ("state.change.logger", "kafka"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["embedded", "zookeeper", "both"], default="both")
    parser.add_argument("--scale", type=float, default=1.0, help="1.0: 50,000 partitions, 10,000 led by the broker")
    parser.add_argument("--profile", metavar="DIR", help="cProfile each measured interval into DIR")
    parser.add_argument("--by-function", action="store_true",
                        help="the controlled shutdown's own CPU per controller function up to the answer handed "
                             "(bench/by_function.py)")
    parser.add_argument("--data-plane", action="store_true",
                        help="keep the brokers' replica fetchers running during the measured intervals")
    parser.add_argument("--no-gc-freeze", action="store_true",
                        help="long-lived state never frozen (runtime/gc_freeze.py): the before-figure")
    args = parser.parse_args()
    if args.no_gc_freeze:
        gc_freeze.ENABLED = False
    global DATA_PLANE
    DATA_PLANE = args.data_plane
    PROFILER.out_dir = args.profile
    if args.by_function:
        BY_FUNCTION.install(DEFAULT_FUNCTIONS)
        BY_FUNCTION_ON.enabled = True
    print(f"{platform.node()} {platform.machine()} python {platform.python_version()}, scale {args.scale}")
    if args.backend in ("embedded", "both"):
        print("embedded store:")
        asyncio.run(run(EmbeddedBackend(wall_clock_ms), args.scale))
    if args.backend in ("zookeeper", "both"):
        with ZooKeeperServerProcess() as server:
            print(f"real ZooKeeper at {server.connect_string}:")
            asyncio.run(run(ZooKeeperBackend(server.connect_string, "/healing"), args.scale))


if __name__ == "__main__":
    main()
