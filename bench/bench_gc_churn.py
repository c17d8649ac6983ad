"""Topic churn with the long-lived state frozen (`runtime/gc_freeze.py`): does memory keep growing?

Five in-process brokers on the embedded store, ``--base`` partitions that stay (1,000 per topic, RF 2), then
``--rounds`` rounds each creating ``--churn`` partitions in new topics, waiting until every one has a leader,
deleting them and waiting until the controller has forgotten them. Frozen objects are never scanned, so cyclic
garbage among them would never be freed; each round prints the resident memory, the frozen count, the freezes and
reclaims so far and the round's full collections. ``--no-gc-freeze`` gives the before-figure.

It also prints how long `gc_pause` kept the collector off without a pass (the longest, in the set-up and in each
round) and the most young objects a collection found waiting (``gc.get_count()[0]`` at its start): with sections
overlapping, the stretch used to last as long as they did. ``--no-gc-cap`` (no `gc_pause.CAP_OBJECTS`, no
``CAP_MS``) gives the before-figure of the caps.

    uv run python bench/bench_gc_churn.py [--base 20000] [--churn 5000] [--rounds 20] [--no-gc-freeze] [--no-gc-cap]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import platform
import time

from bench_controller import BROKERS, create_topics, poll_until, resident_mib, wait_all_online
from bench_healing import FULL_GC
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.runtime import gc_freeze, gc_pause
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


class CollectorOff:
    """How long `gc_pause` left young objects unscanned with the collector off: from its ``gc.disable`` (timed by
    standing in for its ``gc`` module) or the last pass while off, to the next pass or its ``gc.enable``; and the
    young objects each collection finds (``gc.callbacks``). The longest of each since `reset`, and the time in
    collections of any generation (what the caps' extra passes cost)."""

    def __init__(self) -> None:
        self._waiting_since: float | None = None
        self.reset()
        gc_pause.gc = self  # type: ignore[assignment]
        gc.callbacks.append(self._on_gc)

    def reset(self) -> None:
        self.longest_off_s = 0.0
        self.most_young = 0
        self.collecting_s = 0.0
        self._collection_began = 0.0

    def _waited(self, restart: bool) -> None:
        now = time.perf_counter()
        if self._waiting_since is not None:
            self.longest_off_s = max(self.longest_off_s, now - self._waiting_since)
        self._waiting_since = now if restart else None

    def disable(self) -> None:
        if self._waiting_since is None:
            self._waiting_since = time.perf_counter()
        gc.disable()

    def enable(self) -> None:
        self._waited(restart=False)
        gc.enable()

    def __getattr__(self, name: str) -> object:
        return getattr(gc, name)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.most_young = max(self.most_young, gc.get_count()[0])
            if self._waiting_since is not None:
                self._waited(restart=True)
            self._collection_began = time.perf_counter()
        else:
            self.collecting_s += time.perf_counter() - self._collection_began


OFF = CollectorOff()


async def churn(base: int, churned: int, rounds: int) -> None:
    backend = EmbeddedBackend(wall_clock_ms)
    cluster = LocalCluster(backend, BROKERS, wall_clock_ms, session_timeout_ms=18000,
                           controller_config=ControllerConfig(broker_id=-1, auto_leader_rebalance_enable=False))
    await cluster.start()
    controller = await cluster.wait_for_controller()
    session = await backend.new_session()
    admin = KafkaZkClient(session, wall_clock_ms)
    try:
        await create_topics(admin, base)
        setup_s = await wait_all_online(cluster, base)
        print(f"  set-up {setup_s:.1f} s, resident {resident_mib():.0f} MiB, frozen {gc.get_freeze_count():,}, "
              f"off without a pass at most {OFF.longest_off_s:.1f} s, most young at a pass {OFF.most_young:,}, "
              f"capped passes {gc_pause.capped_passes}, in collections {1000 * OFF.collecting_s:,.0f} ms")
        print("  round | resident MiB | frozen objects | freezes | reclaims | full GCs | full GC ms | longest ms | "
              "off at most s | most young | capped | GC ms")
        per_topic = 1000
        for r in range(rounds):
            began = wall_clock_ms()
            OFF.reset()
            topics = [f"churn-{r:02d}-{t}" for t in range(max(1, churned // per_topic))]
            await asyncio.gather(*(admin.create_topic_assignment(topic, None, {
                TopicPartition(topic, p): ReplicaAssignment((BROKERS[p % 5], BROKERS[(p + 1) % 5]))
                for p in range(per_topic)}) for topic in topics))
            await wait_all_online(cluster, base + len(topics) * per_topic)
            for topic in topics:
                await admin.create_delete_topic_path(topic)
            await poll_until(lambda gone=frozenset(topics): not controller.context.all_topics & gone
                             and not controller.context.topics_to_be_deleted
                             and controller.event_manager.queue_size == 0)
            full = FULL_GC.figures("round", began, wall_clock_ms())
            print(f"  {r + 1:5} | {resident_mib():12.0f} | {gc.get_freeze_count():14,} | {gc_freeze.freezes:7} | "
                  f"{gc_freeze.reclaims:8} | {full['full_collections_round']:8} | "
                  f"{full['full_collections_round_total_ms']:10,} | {full['full_collections_round_longest_ms']:10,} | "
                  f"{OFF.longest_off_s:13.1f} | {OFF.most_young:10,} | {gc_pause.capped_passes:6} | "
                  f"{1000 * OFF.collecting_s:5,.0f}")
    finally:
        await session.close()
        await cluster.shutdown(timeout_s=120)


def main() -> None:
    for name in ("state.change.logger", "kafka"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=int, default=20_000, help="partitions that stay")
    parser.add_argument("--churn", type=int, default=5_000, help="partitions created and deleted per round")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--no-gc-freeze", action="store_true", help="nothing frozen: the before-figure")
    parser.add_argument("--no-gc-cap", action="store_true", help="no cap on a stretch: the cap's before-figure")
    args = parser.parse_args()
    if args.no_gc_freeze:
        gc_freeze.ENABLED = False
    if args.no_gc_cap:
        gc_pause.CAP_OBJECTS = gc_pause.CAP_MS = None
    print(f"{platform.node()} {platform.machine()} python {platform.python_version()}, freeze "
          f"{'on' if gc_freeze.ENABLED else 'off'}, cap {gc_pause.CAP_OBJECTS} objects, {gc_pause.CAP_MS} ms")
    start = time.perf_counter()
    asyncio.run(churn(args.base, args.churn, args.rounds))
    print(f"  took {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
