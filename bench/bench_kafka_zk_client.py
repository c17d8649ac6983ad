"""Partition-state writes and reads through `KafkaZkClient`: one fenced multi per partition (as Kafka 2.8
does it) versus many partitions per fenced multi (ours). Prints figures; asserts nothing about speed.

    uv run python bench/bench_kafka_zk_client.py --partitions 10000 --backend embedded|zookeeper

Each mode runs on a fresh store (a new embedded server, or a new chroot on a ZooKeeper server this script
starts on a free loopback port). Partitions are spread over topics of 1,000 partitions.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import random
import time
from collections.abc import Awaitable, Callable

from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.fencing import BatchLimits
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

PARTITIONS_PER_TOPIC = 1000
KAFKA_IN_FLIGHT = 10  # zookeeper.max.in.flight.requests default
MODES = {
    "per-partition multi (Kafka)": BatchLimits(max_multi_ops=1, max_in_flight=KAFKA_IN_FLIGHT),
    "batched multis (ours)": BatchLimits(max_in_flight=KAFKA_IN_FLIGHT),
}


async def timed(label: str, n: int, fn: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await fn()
    elapsed = time.perf_counter() - start
    print(f"    {label:<40} {elapsed:>8.2f} s {n / elapsed:>12,.0f} partitions/s", flush=True)
    return elapsed


async def run_mode(backend: CoordinationBackend, limits: BatchLimits, n: int) -> dict[str, float]:
    session = await backend.new_session()
    try:
        client = KafkaZkClient(session, wall_clock_ms, rng=random.Random(0), limits=limits)
        epoch, version = await client.register_controller_and_increment_controller_epoch(1)
        parts = [TopicPartition(f"topic-{p // PARTITIONS_PER_TOPIC:04d}", p % PARTITIONS_PER_TOPIC)
                 for p in range(n)]
        for topic in sorted({tp.topic for tp in parts}):
            assignment = {tp: ReplicaAssignment((1, 2, 3)) for tp in parts if tp.topic == topic}
            await client.create_topic_assignment(topic, None, assignment)
        states = {tp: LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2, 3)), epoch) for tp in parts}
        updates = {tp: LeaderAndIsr(2, 1, (2, 3, 1), zk_version=0) for tp in parts}
        out: dict[str, float] = {}

        async def create() -> None:
            result = await client.create_topic_partition_states(states, version)
            assert len(result.created) == n, result.failed

        async def update() -> None:
            result = await client.update_leader_and_isr(updates, epoch, version)
            assert len(result.finished) == n

        async def read() -> None:
            result = await client.get_topic_partition_states(parts)
            assert len(result.values) == n

        out["create partition states (3 levels)"] = await timed("create partitions/<p>/state", n, create)
        out["update leader and ISR (conditional)"] = await timed("update leader and ISR (conditional set)", n, update)
        out["read partition states"] = await timed(f"read states ({limits.max_in_flight} in flight)", n, read)
        client.limits = BatchLimits(max_in_flight=128)
        out["read partition states, 128 in flight"] = await timed("read states (128 in flight)", n, read)
        return out
    finally:
        await session.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--backend", choices=["embedded", "zookeeper"], default="embedded")
    args = parser.parse_args()
    print(f"{platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
          f"{args.partitions:,} partitions, backend {args.backend}")
    server = ZooKeeperServerProcess() if args.backend == "zookeeper" else None
    if server is not None:
        server.start()
    try:
        for i, (mode, limits) in enumerate(MODES.items()):
            print(f"  {mode}")
            backend: CoordinationBackend = (
                EmbeddedBackend(wall_clock_ms) if server is None
                else ZooKeeperBackend(server.connect_string, f"/bench-{i}")
            )
            try:
                await run_mode(backend, limits, args.partitions)
            finally:
                await backend.close()
    finally:
        if server is not None:
            server.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
