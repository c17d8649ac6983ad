"""CreateTopics of many topics in one request, as an admin client sends it (``create_topics([...200 NewTopic...])``).

Prints figures; asserts nothing about speed. Run:

    uv run python bench/bench_create_topics.py [--backend embedded|zookeeper|both] [--topics 200] [--rf 2]

Three in-process brokers with listeners (`LocalCluster`, as ``zkcontroller cluster`` runs them) on the embedded
store or on a real ZooKeeper (a standalone server started for the run, as ``bench_controller.py --backend
zookeeper`` does). One CreateTopics v5 request of ``--topics`` topics (1 partition each, ``--rf`` replicas, 60 s
timeout) goes to the controller broker over a socket. Measured from the request sent to:

* ``znodes_ms``: the last ``/brokers/topics/<t>`` znode written (the admin write the controller reacts to);
* ``answer_ms``: the answer read (after ``DelayedCreatePartitions``' wait for every partition's leader).

Beside them the floor measured in the same run, on a session of its own, for the same znodes (``--topics`` topic
znodes with the same bytes and as many config znodes, under a scratch path): ``floor_multi_ms``, the writes as
multis of 100 topics (200 creates) each; ``floor_pipelined_ms``, every create in flight at once;
``floor_sequential_ms``, one topic at a time as Kafka's ``ZkAdminManager`` writes (existence read, config create,
topic create, each awaited: the least a topic at a time can pay); ``floor_kafka_ms``, Kafka 2.8's own requests a
topic one at a time (``ZkAdminManager``: the existence read, ``setOrCreateEntityConfigs``' setData failing then its
create, the topic create, ``populateIds``' read back): what Kafka's algorithm pays on this store.

``--profile DIR`` saves a cProfile of the request interval (top functions printed); ``--flame DIR`` a py-spy
flame graph (SVG) of it, which shows the store client's threads too. ``--runs K`` repeats each backend K times on
fresh clusters.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import io
import logging
import os
import platform
import struct
import time
from collections.abc import Callable, Iterator
from datetime import timedelta

from kio.serial import entity_reader, entity_writer

from bench_controller import Profiler
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.coordination.api import CreateOp
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.coordination.errors import NoNodeError
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.model import ReplicaAssignment, TopicId, TopicPartition
from zkcontroller.protocol.wire.client_apis import CREATE_TOPICS, schema_module
from zkcontroller.protocol.wire.frames import RequestHeader, decode_response_header, encode_request_header
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes.config import ConfigEntityZNode
from zkcontroller.zk.znodes.topics import TopicZNode

BROKERS = [1, 2, 3]
VERSION = 5
TIMEOUT_MS = 60_000


def names(n: int) -> list[str]:
    return [f"bench-topic-{i:04d}" for i in range(n)]


def request_bytes(topics: list[str], rf: int) -> bytes:
    """One CreateTopics v5 request frame: each topic 1 partition, ``rf`` replicas, no configs."""
    m = schema_module(CREATE_TOPICS, VERSION, "request")
    request = m.CreateTopicsRequest(
        topics=tuple(m.CreatableTopic(name=t, num_partitions=1, replication_factor=rf, assignments=(), configs=())
                     for t in topics),
        timeout=timedelta(milliseconds=TIMEOUT_MS), validate_only=False)
    body = io.BytesIO()
    entity_writer(type(request))(body, request)
    payload = encode_request_header(RequestHeader(CREATE_TOPICS, VERSION, 7, "bench")) + body.getvalue()
    return struct.pack(">i", len(payload)) + payload


async def send(address: str, frame: bytes) -> list[int]:
    """The request sent on a socket; the answer's error codes, in order."""
    host, port = address.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(frame)
        await writer.drain()
        size = struct.unpack(">i", await reader.readexactly(4))[0]
        payload = await reader.readexactly(size)
    finally:
        writer.close()
    correlation_id, offset = decode_response_header(payload, CREATE_TOPICS, VERSION)
    assert correlation_id == 7
    cls = schema_module(CREATE_TOPICS, VERSION, "response").CreateTopicsResponse
    response, _ = entity_reader(cls)(memoryview(payload)[offset:], 0)
    return [int(t.error_code) for t in response.topics]


class ZnodeWrites:
    """When each ``/brokers/topics/<t>`` znode was written: `KafkaZkClient.create_topic_assignment` (the admin
    layer's one topic write) timed for the run, nothing else changed."""

    def __init__(self) -> None:
        self.done: list[float] = []
        self._original = KafkaZkClient.create_topic_assignment

    @contextlib.contextmanager
    def timing(self) -> Iterator[None]:
        original, done = self._original, self.done

        async def timed(zk: KafkaZkClient, *args: object, **kwargs: object) -> None:
            await original(zk, *args, **kwargs)  # type: ignore[arg-type]
            done.append(time.perf_counter())

        KafkaZkClient.create_topic_assignment = timed  # type: ignore[method-assign]
        try:
            yield
        finally:
            KafkaZkClient.create_topic_assignment = original  # type: ignore[method-assign]


async def floor_ms(backend: CoordinationBackend, topics: list[str], rf: int) -> dict[str, int]:
    """The store's cost of the request's znode writes alone, on a session of its own: ``len(topics)`` topic znodes
    (the bytes a created topic's znode holds) and as many config znodes (``{}`` overrides), under ``/floor-*``."""
    session = await backend.new_session()
    tid = TopicId(bytes(range(1, 17)))

    def ops(root: str) -> list[tuple[CreateOp, CreateOp]]:
        return [(CreateOp(f"{root}/config/topics/{t}", ConfigEntityZNode.encode({})),
                 CreateOp(f"{root}/brokers/topics/{t}",
                          TopicZNode.encode(tid, {TopicPartition(t, 0): ReplicaAssignment(tuple(range(1, rf + 1)))})))
                for t in topics]

    async def timed(root: str, write: Callable[[list[tuple[CreateOp, CreateOp]]], object]) -> int:
        await session.ensure_path(f"{root}/config/topics")
        await session.ensure_path(f"{root}/brokers/topics")
        pairs = ops(root)
        start = time.perf_counter()
        await write(pairs)  # type: ignore[misc]
        return round(1000 * (time.perf_counter() - start))

    async def multis(pairs: list[tuple[CreateOp, CreateOp]]) -> None:
        for i in range(0, len(pairs), 100):
            result = await session.multi([op for pair in pairs[i:i + 100] for op in pair])
            assert result.ok

    async def pipelined(pairs: list[tuple[CreateOp, CreateOp]]) -> None:
        await asyncio.gather(*(session.create(op.path, op.data) for pair in pairs for op in pair))

    async def sequential(pairs: list[tuple[CreateOp, CreateOp]]) -> None:
        for config, topic in pairs:
            assert await session.exists(topic.path) is None
            await session.create(config.path, config.data)
            await session.create(topic.path, topic.data)

    async def kafka_sequence(pairs: list[tuple[CreateOp, CreateOp]]) -> None:
        for config, topic in pairs:
            assert await session.exists(topic.path) is None
            with contextlib.suppress(NoNodeError):
                await session.set_data(config.path, config.data)
            await session.create(config.path, config.data)
            await session.create(topic.path, topic.data)
            await session.get_data(topic.path)

    try:
        return {"floor_multi_ms": await timed("/floor-multi", multis),
                "floor_pipelined_ms": await timed("/floor-pipelined", pipelined),
                "floor_sequential_ms": await timed("/floor-sequential", sequential),
                "floor_kafka_ms": await timed("/floor-kafka", kafka_sequence)}
    finally:
        await session.close()


async def bench_once(backend: CoordinationBackend, n: int, rf: int, profiler: Profiler, name: str) -> dict[str, int]:
    cluster = LocalCluster(backend, BROKERS, wall_clock_ms, session_timeout_ms=18000,
                           controller_config=ControllerConfig(broker_id=-1, auto_leader_rebalance_enable=False),
                           listeners=ListenerPorts(base=None))
    try:
        await cluster.start()
        await cluster.wait_for_controller()
        active = next(s for s in cluster.running_brokers() if s.controller is not None and s.controller.is_active)
        address = cluster.listeners[active.broker_id].address or ""
        await all_brokers_known(active)
        topics = names(n)
        frame = request_bytes(topics, rf)
        writes = ZnodeWrites()
        with writes.timing(), profiler.measure(name):
            start = time.perf_counter()
            codes = await send(address, frame)
            answered = time.perf_counter()
        failed = [c for c in codes if c != 0]
        assert len(codes) == n and not failed, f"errors in the answer: {sorted(set(failed))}"
        assert len(writes.done) == n, f"{len(writes.done)} topic znodes written, not {n}"
        result = {"answer_ms": round(1000 * (answered - start)), "znodes_ms": round(1000 * (writes.done[-1] - start))}
    finally:
        logging.disable(logging.CRITICAL)  # the last brokers' controlled shutdowns cannot move RF-2 leaders: noise
        try:
            await cluster.shutdown()
        finally:
            logging.disable(logging.NOTSET)
    return result | await floor_ms(backend, topics, rf)


async def all_brokers_known(server: KafkaServer, timeout_s: float = 60) -> None:
    """Until the controller broker's metadata cache lists every broker alive (placement reads it: RF 3 on three
    brokers is refused while one is missing)."""
    deadline = time.monotonic() + timeout_s
    while server.control_plane is None or \
            len(server.control_plane.metadata_cache.alive_brokers()) < len(BROKERS):
        if time.monotonic() > deadline:
            raise TimeoutError(f"broker {server.broker_id}'s metadata cache lacks brokers after {timeout_s} s")
        await asyncio.sleep(0.01)


async def run_once(new_backend: Callable[[], CoordinationBackend], n: int, rf: int, profiler: Profiler,
                   name: str) -> dict[str, int]:
    backend = new_backend()
    try:
        return await bench_once(backend, n, rf, profiler, name)
    finally:
        await backend.close()


def print_result(name: str, result: dict[str, int], n: int) -> None:
    per_topic = result["answer_ms"] / n
    figures = "  ".join(f"{k}={v}" for k, v in result.items())
    print(f"  {name}: {figures}  ({per_topic:.1f} ms a topic; answer/floor_kafka "
          f"{result['answer_ms'] / max(result['floor_kafka_ms'], 1):.1f}x)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["embedded", "zookeeper", "both"], default="both")
    parser.add_argument("--topics", type=int, default=200)
    parser.add_argument("--rf", type=int, default=2, choices=[1, 2, 3])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--profile", metavar="DIR", help="cProfile the request interval into DIR")
    parser.add_argument("--flame", metavar="DIR", help="py-spy flame graph (SVG) of the request interval into DIR")
    args = parser.parse_args()
    profiler = Profiler(args.profile, args.flame)
    print(f"{platform.node()} {platform.machine()} python {platform.python_version()}: CreateTopics of "
          f"{args.topics} topics, 1 partition, RF {args.rf}, 3 in-process brokers", flush=True)
    if args.backend in ("embedded", "both"):
        print("embedded store:")
        for run in range(args.runs):
            name = f"embedded-{run}"
            print_result(name, asyncio.run(run_once(lambda: EmbeddedBackend(wall_clock_ms), args.topics, args.rf,
                                                    profiler, name)), args.topics)
    if args.backend in ("zookeeper", "both"):
        with ZooKeeperServerProcess() as server:
            print(f"real ZooKeeper at {server.connect_string}:")
            for run in range(args.runs):
                name = f"zookeeper-{run}"
                connect = f"{server.connect_string}"
                chroot = f"/{name}-{os.getpid()}"
                print_result(name, asyncio.run(run_once(functools.partial(ZooKeeperBackend, connect, chroot),
                                                        args.topics, args.rf, profiler, name)), args.topics)


if __name__ == "__main__":
    main()
