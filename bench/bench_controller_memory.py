"""Issue 15's memory figure: what a controller holds once it has failed over onto N partitions, on its own.

`bench_controller.py`'s resident figures are the whole benchmark process: the embedded store's tree, five
brokers' metadata caches and replica managers, and the controller. Here one process holds only the store and
one controller: five brokers are registered in the store (ephemeral znodes, as real brokers write them) and
answered by a stub that acknowledges every control request; the topics and every partition's state znode are
written directly, as a cluster that ran before would have left them. Then the controller starts, wins
``/controller``, fails over onto all of it and sends its LeaderAndIsr/UpdateMetadata requests. Measured after
"Ready to serve" and a full collection:

* the controller's share of the resident set: RSS after minus RSS before the controller was created
  (the store, already full, is in both);
* the deep size of its ``ControllerContext`` (objects reachable from it, each counted once);
* the floor: the bytes of the znodes the context mirrors (topic and partition-state JSON) — the data itself,
  without any Python object around it.

Each size runs in a fresh process (spawned), so one size's heap does not inflate the next. Prints figures;
asserts nothing. Run:

    uv run python bench/bench_controller_memory.py [--sizes 100000,500000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import multiprocessing as mp
import platform
import random
import time

from bench_controller import deep_size_mib, resident_mib
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.event_log import EventLog
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.coordination.api import CreateOp
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import (
    Broker,
    BrokerInfo,
    EndPoint,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicId,
    TopicPartition,
)
from zkcontroller.protocol.control_requests import ControlResponse
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.runtime.in_process import InProcessTransport
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import TopicPartitionStateZNode, TopicZNode

BROKERS = (1, 2, 3, 4, 5)
PER_TOPIC = 1000
BATCH = 2000


async def _write_cluster(zk: KafkaZkClient, session, partitions: int) -> int:  # type: ignore[no-untyped-def]
    """Topics of 1,000 partitions at RF 2 and each partition's state (leader = first replica, both in the ISR);
    returns the bytes written."""
    await zk.create_top_level_paths()
    rng, written = random.Random(1), 0
    for t in range(max(1, partitions // PER_TOPIC)):
        topic = f"topic-{t:03d}"
        assignment = {TopicPartition(topic, p): ReplicaAssignment((BROKERS[(t + p) % 5], BROKERS[(t + p + 1) % 5]))
                      for p in range(min(PER_TOPIC, partitions))}
        data = TopicZNode.encode(TopicId(rng.randbytes(16)), assignment)
        written += len(data)
        await session.create(TopicZNode.path(topic), data)
        await session.create(paths.topic_partitions_path(topic))
        ops = []
        for tp, a in assignment.items():
            state = TopicPartitionStateZNode.encode(
                LeaderIsrAndControllerEpoch(LeaderAndIsr(a.replicas[0], 0, a.replicas, 0), 1))
            written += len(state)
            ops += [CreateOp(paths.topic_partition_path(topic, tp.partition)),
                    CreateOp(TopicPartitionStateZNode.path(tp), state)]
        for i in range(0, len(ops), BATCH):
            await session.multi(ops[i:i + BATCH])
    return written


async def _measure(partitions: int) -> dict[str, float]:
    backend = EmbeddedBackend(wall_clock_ms)
    admin_session = await backend.new_session()
    admin = KafkaZkClient(admin_session, wall_clock_ms)
    start = time.perf_counter()
    floor_bytes = await _write_cluster(admin, admin_session, partitions)
    transport = InProcessTransport()
    epochs = {}
    for b in BROKERS:
        broker_zk = KafkaZkClient(await backend.new_session(), wall_clock_ms)
        epochs[b] = await broker_zk.register_broker(BrokerInfo(Broker(b, (EndPoint(
            f"broker{b}", 9092, "PLAINTEXT", "PLAINTEXT"),), None)))
        transport.register(b, lambda request: ControlResponse(request.api_key))  # acknowledges everything
    setup_s = time.perf_counter() - start
    ready = asyncio.Event()

    def sink(line: str) -> None:
        if '"type":"controller_ready"' in line:
            ready.set()

    gc.collect()
    rss_before = resident_mib()
    runtime = AsyncioRuntime()
    zk = KafkaZkClient(await backend.new_session(), wall_clock_ms, rng=runtime.rng)
    controller = KafkaController(
        ControllerConfig(broker_id=1, auto_leader_rebalance_enable=False), zk,
        BrokerInfo(Broker(1, (EndPoint("broker1", 9092, "PLAINTEXT", "PLAINTEXT"),), None)), epochs[1], transport,
        runtime, EventLog("bench", wall_clock_ms, sink))
    start = time.perf_counter()
    controller.startup()
    await asyncio.wait_for(ready.wait(), timeout=1800)
    ready_s = time.perf_counter() - start
    for _ in range(36_000):  # every request handed to the (acknowledging) brokers; bounded at 30 min
        if not controller.channel_manager.total_queue_size:
            break
        await asyncio.sleep(0.05)  # the channel manager has no "drained" event to wait on
    gc.collect()
    rss_after = resident_mib()
    context_mib = deep_size_mib(controller.context)
    assert len(controller.context.all_partitions) == partitions
    await controller.shutdown()
    return {"partitions": partitions, "setup_s": setup_s, "failover_to_ready_s": ready_s,
            "rss_before_controller_mib": rss_before, "rss_after_ready_mib": rss_after,
            "controller_rss_mib": rss_after - rss_before, "controller_context_mib": context_mib,
            "floor_znode_bytes_mib": floor_bytes / 2**20}


def _child(partitions: int, out: mp.Queue) -> None:  # type: ignore[type-arg]
    out.put(asyncio.run(_measure(partitions)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,500000")
    args = parser.parse_args()
    print(f"# {platform.node()} {platform.machine()} Python {platform.python_version()}; embedded store, "
          "5 registered brokers acknowledging every request, one controller")
    print(f"{'partitions':>10} {'setup s':>8} {'to ready s':>10} {'RSS before':>11} {'RSS after':>10} "
          f"{'controller RSS':>15} {'context':>9} {'floor (znode data)':>19} {'controller/floor':>17}")
    ctx = mp.get_context("spawn")
    for n in (int(x) for x in args.sizes.split(",")):
        out = ctx.Queue()
        child = ctx.Process(target=_child, args=(n, out))
        child.start()
        child.join()
        if child.exitcode != 0:
            raise SystemExit(f"the {n:,}-partition run failed (exit code {child.exitcode}); its traceback is above")
        r = out.get()
        print(f"{n:>10,} {r['setup_s']:>8.1f} {r['failover_to_ready_s']:>10.1f} "
              f"{r['rss_before_controller_mib']:>8.0f} MiB {r['rss_after_ready_mib']:>6.0f} MiB "
              f"{r['controller_rss_mib']:>11.0f} MiB {r['controller_context_mib']:>5.0f} MiB "
              f"{r['floor_znode_bytes_mib']:>15.1f} MiB {r['controller_rss_mib'] / r['floor_znode_bytes_mib']:>16.1f}x")


if __name__ == "__main__":
    main()
