"""Topic deletion and partition reassignment at scale (issue 13's figures). Prints figures; asserts nothing.

    uv run python bench/bench_deletion_reassignment.py [--backend embedded|zookeeper|both] [--scale 1.0]

* deletion: 1,000 topics x 10 partitions at RF 2 on 5 brokers, all marked for deletion at once; measured from
  the markers being written to ``/brokers/topics`` being empty (every StopReplica answered, every znode gone).
* reassignment: 10,000 partitions [a, b] -> [b, 5] (broker 5 new to them), submitted through
  ``/admin/reassign_partitions``; once every partition is in phase A, each new replica's ISR join is written as a
  Kafka 2.6 leader does (state znode); measured from those writes to every topic znode holding RS = TRS.

``--scale`` multiplies the counts (0.1 for a quick look). The floor is a bare getData loop in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import platform
import time

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess
from zkcontroller.controller.event_log import EventLog
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.coordination.errors import BadVersionError
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.runtime.in_process import InProcessTransport
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes.topics import TopicPartitionStateZNode

BROKERS = [1, 2, 3, 4, 5]


async def wait_for(probe, what: str, timeout_s: float = 1800.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not await probe():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.05)


async def start(backend: CoordinationBackend) -> tuple[LocalCluster, KafkaZkClient]:
    # No replica fetchers: the benchmark writes each new replica's ISR join itself (as a Kafka 2.6 leader would),
    # so the completions it times are the controller's alone.
    cluster = LocalCluster(backend, BROKERS, wall_clock_ms, event_log=EventLog("bench", wall_clock_ms, lambda _l: None),
                           transport=InProcessTransport(), replication=ReplicationConfig(replica_fetching=False))
    await cluster.start()
    await cluster.wait_for_controller()
    admin = KafkaZkClient(await backend.new_session(), wall_clock_ms)
    return cluster, admin


async def create(admin: KafkaZkClient, n_topics: int, per_topic: int, brokers: list[int]) -> list[str]:
    names = [f"t{i:05d}" for i in range(n_topics)]
    for i, topic in enumerate(names):
        assignment = {TopicPartition(topic, p): ReplicaAssignment((brokers[(i + p) % len(brokers)],
                                                                   brokers[(i + p + 1) % len(brokers)]))
                      for p in range(per_topic)}
        await admin.create_topic_assignment(topic, None, assignment)
    partitions = [TopicPartition(t, p) for t in names for p in range(per_topic)]

    async def online() -> bool:
        return len((await admin.get_topic_partition_states(partitions)).values) == len(partitions)

    await wait_for(online, "partitions online")
    return names


async def bench_deletion(backend: CoordinationBackend, n_topics: int) -> float:
    cluster, admin = await start(backend)
    try:
        names = await create(admin, n_topics, 10, BROKERS)
        t0 = time.perf_counter()
        for topic in names:
            await admin.create_delete_topic_path(topic)

        async def gone() -> bool:
            return not await admin.get_all_topics_in_cluster()

        await wait_for(gone, "topics deleted")
        return time.perf_counter() - t0
    finally:
        await cluster.shutdown()


async def bench_reassignment(backend: CoordinationBackend, n_partitions: int) -> tuple[float, float]:
    """(znode written → every partition in phase A, ISR joins written → every topic znode RS = TRS), seconds."""
    cluster, admin = await start(backend)
    try:
        per_topic = 1000 if n_partitions >= 1000 else n_partitions
        names = await create(admin, max(1, n_partitions // per_topic), per_topic, [1, 2, 3, 4])
        current = (await admin.get_full_replica_assignment_for_topics(names)).values
        targets = {tp: (a.replicas[1], 5) for tp, a in current.items()}
        started = time.perf_counter()
        await admin.create_partition_reassignment(targets)

        # Probes look at the controller's own state first and read ZooKeeper only once that says done: reading
        # and decoding every topic znode every 50 ms competed with the controller for the CPU it is timing.
        async def in_phase_a() -> bool:  # RS = ORS + TRS in ZooKeeper, and the controller done with phase A
            controller = cluster.active_controller()
            if (controller is None or controller.event_manager.queue_size != 0
                    or len(controller.context.partitions_being_reassigned) != len(targets)):
                return False
            now = (await admin.get_full_replica_assignment_for_topics(names)).values
            return all(a.adding_replicas == (5,) for a in now.values())

        await wait_for(in_phase_a, "reassignments started")
        t0 = time.perf_counter()
        started_s = t0 - started
        pending = sorted(targets)
        while pending:  # the new replica caught up: ISR += 5, as a 2.6 leader writes it (re-read on a conflict)
            states = (await admin.get_topic_partition_states(pending)).values
            retry = []
            for tp in pending:
                lai = states[tp].leader_and_isr
                grown = states[tp]._replace(leader_and_isr=lai._replace(isr=(*lai.isr, 5)))
                try:
                    await admin._session.set_data(TopicPartitionStateZNode.path(tp),
                                                  TopicPartitionStateZNode.encode(grown), lai.zk_version)
                except BadVersionError:
                    retry.append(tp)
            pending = retry

        async def done() -> bool:
            controller = cluster.active_controller()
            if controller is None or controller.event_manager.queue_size != 0 \
                    or controller.context.partitions_being_reassigned:
                return False
            now = (await admin.get_full_replica_assignment_for_topics(names)).values
            return all(a == ReplicaAssignment(targets[tp]) for tp, a in now.items())

        await wait_for(done, "reassignments completed")
        return started_s, time.perf_counter() - t0
    finally:
        # Every broker leads or follows partitions of RF 2 on two brokers only: the last ones stopped cannot move
        # leadership anywhere, and the controller logs each such partition (as Kafka does) — noise here.
        logging.disable(logging.ERROR)
        await cluster.shutdown()
        logging.disable(logging.WARNING)


async def floor(backend: CoordinationBackend, n: int = 2000) -> float:
    """getData per second of one bare session on this backend (the same run's floor)."""
    session = await backend.new_session()
    zk = KafkaZkClient(session, wall_clock_ms)
    await zk.create_top_level_paths()
    await zk.set_or_create_entity_configs("topics", "floor", {"a": "b"})
    t0 = time.perf_counter()
    for _ in range(n):
        await zk.get_entity_configs("topics", "floor")
    elapsed = time.perf_counter() - t0
    await session.close()
    return n / elapsed


async def run(kind: str, make, scale: float) -> None:
    logging.disable(logging.WARNING)
    topics, partitions = max(1, int(1000 * scale)), max(1, int(10_000 * scale))
    print(f"{kind}: floor getData {await floor(make('floor')):,.0f}/s")
    print(f"{kind}: deletion of {topics} topics x 10 partitions: {await bench_deletion(make('del'), topics):.2f} s")
    started_s, completed_s = await bench_reassignment(make("reassign"), partitions)
    print(f"{kind}: reassignment of {partitions} partitions: znode written -> all started {started_s:.2f} s; "
          f"ISR joins written -> all completed {completed_s:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["embedded", "zookeeper", "both"], default="embedded")
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    print(f"{platform.machine()} {platform.python_implementation()} {platform.python_version()}, scale {args.scale}")
    if args.backend in ("embedded", "both"):
        asyncio.run(run("embedded", lambda _name: EmbeddedBackend(wall_clock_ms), args.scale))
    if args.backend in ("zookeeper", "both"):
        with ZooKeeperServerProcess() as server:
            suffix = time.time_ns()
            asyncio.run(run("zookeeper", lambda name: ZooKeeperBackend(server.connect_string, f"/{name}-{suffix}"),
                            args.scale))


if __name__ == "__main__":
    main()
