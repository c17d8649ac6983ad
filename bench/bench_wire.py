"""Wire protocol: Metadata requests per second one broker's protocol server sustains.

A server process (SocketServer + KafkaApis over a metadata cache of N partitions) and a client process
(this one) on loopback: C connections each keep K Metadata v9 requests for all topics in flight, for a
fixed time. The floor, from the same run: the same SocketServer whose handler echoes the request
frame back (framing and socket cost only), and the same with a pre-encoded body returned without parsing.
Also the cold cost of encoding one Metadata response through kio (what the per-version cache saves).
With ``--failover N``: three broker processes on a real ZooKeeper with topics of N partitions in all (RF 2);
the controller process is killed with SIGKILL, and the script times, from the kill, (a) the first Metadata
answer of every survivor naming a new controller (which a broker learns only from the new controller's
UpdateMetadata) and (b) every partition having a live leader in a survivor's metadata. Both include the
ZooKeeper session timeout (6 s here), which is when the death is noticed.

Prints figures; asserts nothing about speed. Run:

    uv run python bench/bench_wire.py [--partitions 1000,10000] [--seconds 5] [--connections 4] [--depth 8]
    uv run python bench/bench_wire.py --failover 10000
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import multiprocessing as mp
import os
import platform
import random
import signal
import struct
import time
from collections.abc import Callable
from typing import Any

from kio.serial import entity_reader

from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.model import Broker, EndPoint, TopicId
from zkcontroller.protocol.control_requests import UpdateMetadataPartitionState, UpdateMetadataRequest
from zkcontroller.protocol.wire import client_apis
from zkcontroller.protocol.wire.frames import RequestHeader, encode_request_header
from zkcontroller.runtime.socket_server import SocketServer

PARTITIONS_PER_TOPIC = 10
METADATA_V9_ALL = b"\x00" * 5  # null topics, no auto-create, no cluster/topic authorized ops, no tags


def seeded_control_plane(partitions: int, port: int) -> BrokerControlPlane:
    cp = BrokerControlPlane(1, 10)
    brokers = tuple(Broker(i, (EndPoint("127.0.0.1", port, "PLAINTEXT", "PLAINTEXT"),), f"r{i % 3}")
                    for i in range(1, 7))
    topics = partitions // PARTITIONS_PER_TOPIC
    states = tuple(UpdateMetadataPartitionState(f"topic-{t:05d}", p, 1, 1 + (t + p) % 6, 3,
                                                (1 + (t + p) % 6, 1 + (t + p + 1) % 6), 0,
                                                (1 + (t + p) % 6, 1 + (t + p + 1) % 6, 1 + (t + p + 2) % 6))
                   for t in range(topics) for p in range(PARTITIONS_PER_TOPIC))
    ids = tuple((f"topic-{t:05d}", TopicId(t.to_bytes(16, "big") or b"\x01" * 16)) for t in range(1, topics))
    cp.handle(UpdateMetadataRequest(1, 1, 10, partition_states=states, live_brokers=brokers, topic_ids=ids))
    return cp


def serve(kind: str, partitions: int, ready: mp.Queue, stop: mp.Event) -> None:  # type: ignore[type-arg]
    async def main() -> None:
        cp = seeded_control_plane(partitions, 0)
        apis = KafkaApis(1, control_handler=lambda: cp.handle, metadata_cache=lambda: cp.metadata_cache,
                         cluster_id=lambda: "bench-cluster-000000000")
        body = b""
        if kind == "canned":
            body = await apis.handle(encode_request_header(RequestHeader(3, 9, 0, "bench")) + METADATA_V9_ALL) or b""

        async def echo(payload: bytes) -> bytes:
            return payload

        async def canned(payload: bytes) -> bytes:
            return payload[4:8] + body[4:]

        handler = {"kafka": apis.handle, "echo": echo, "canned": canned}[kind]
        server = SocketServer("127.0.0.1", 0, handler, close_on=(CloseConnection,))
        await server.start()
        ready.put(server.port)
        await asyncio.to_thread(stop.wait)
        await server.stop()

    asyncio.run(main())


async def pipelined_load(port: int, seconds: float, connections: int, depth: int,
                         frame_for: Callable[[int], bytes]) -> tuple[int, int]:
    """Requests answered and the largest answer: ``connections`` clients on loopback, each writing ``depth``
    frames (``frame_for(i)`` for client ``i``) and reading their answers, until ``seconds`` have passed."""
    deadline = time.perf_counter() + seconds
    counts = [0] * connections
    sizes = [0] * connections

    async def one(i: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        frame = frame_for(i)
        try:
            while time.perf_counter() < deadline:
                writer.write(frame * depth)
                for _ in range(depth):
                    (size,) = struct.unpack(">i", await reader.readexactly(4))
                    await reader.readexactly(size)
                    sizes[i] = size
                counts[i] += depth
        finally:
            writer.close()

    await asyncio.gather(*(one(i) for i in range(connections)))
    return sum(counts), max(sizes)


def _metadata_frame(i: int) -> bytes:
    header = encode_request_header(RequestHeader(3, 9, i, "bench"))
    return struct.pack(">i", len(header) + len(METADATA_V9_ALL)) + header + METADATA_V9_ALL


async def load(port: int, seconds: float, connections: int, depth: int) -> tuple[int, int]:
    return await pipelined_load(port, seconds, connections, depth, _metadata_frame)


def run(kind: str, partitions: int, seconds: float, connections: int, depth: int) -> None:
    ctx = mp.get_context("spawn")
    ready: mp.Queue = ctx.Queue()  # type: ignore[type-arg]
    stop = ctx.Event()
    proc = ctx.Process(target=serve, args=(kind, partitions, ready, stop))
    proc.start()
    try:
        port = ready.get(timeout=120)
        asyncio.run(load(port, 0.5, connections, depth))  # warm-up: the first request fills the cache
        start = time.perf_counter()
        n, size = asyncio.run(load(port, seconds, connections, depth))
        rate = n / (time.perf_counter() - start)
        print(f"  {kind:<7} {partitions:>7,} partitions  {rate:>10,.0f} req/s  response {size:>10,} bytes  "
              f"{rate * size / 1e6:>8.1f} MB/s")
    finally:
        stop.set()
        proc.join(30)


def cold_encode(partitions: int) -> None:
    cp = seeded_control_plane(partitions, 9092)
    cache = cp.metadata_cache
    for version in (1, 9, 11):
        start = time.perf_counter()
        body = client_apis.metadata_response(version, cache.alive_brokers(), "PLAINTEXT", "c", 1,
                                             cache.topic_metadata(None, "PLAINTEXT"))
        print(f"  cold encode Metadata v{version:<2} {partitions:>7,} partitions: "
              f"{(time.perf_counter() - start) * 1000:>8.1f} ms ({len(body):,} bytes)")


async def _metadata(port: int, version: int, body: bytes) -> Any:
    """One Metadata request to a broker on loopback, decoded with kio."""
    module = importlib.import_module(f"kio.schema.metadata.v{version}.response")
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
    try:
        header = encode_request_header(RequestHeader(3, version, 1, "bench"))
        writer.write(struct.pack(">i", len(header) + len(body)) + header + body)
        (size,) = struct.unpack(">i", await asyncio.wait_for(reader.readexactly(4), 30))
        payload = await reader.readexactly(size)
        return entity_reader(module.MetadataResponse)(payload[4:], 0)[0]
    finally:
        writer.close()


async def failover(partitions: int) -> None:
    from zkcontroller.admin.topics import TopicAdmin
    from zkcontroller.cluster.process_cluster import ProcessCluster, wait_registered
    from zkcontroller.coordination.connect import make_backend
    from zkcontroller.runtime.clock import wall_clock_ms
    from zkcontroller.zk.kafka_zk_client import KafkaZkClient

    cluster = ProcessCluster([1, 2, 3], session_timeout_ms=6000)
    await asyncio.to_thread(cluster.start)
    backend = make_backend(cluster.zookeeper_connect, wall_clock_ms)
    session = await backend.new_session()
    try:
        zk = KafkaZkClient(session, wall_clock_ms)
        await wait_registered(zk, [1, 2, 3])
        admin = TopicAdmin(zk, random.Random(1))
        per_topic = min(partitions, 1000)
        for t in range(partitions // per_topic):
            await admin.create_topic(f"bench-{t:03d}", per_topic, 2)
        ports = {b: p.port for b, p in cluster.brokers.items()}

        async def all_led(port: int, live: set[int]) -> bool:
            md = await _metadata(port, 1, b"\xff\xff\xff\xff")
            parts = [p for t in md.topics for p in t.partitions]
            return len(parts) == partitions and all(p.leader_id in live for p in parts)

        start = time.perf_counter()
        while True:
            if await all_led(ports[1], {1, 2, 3}):
                break
            await asyncio.sleep(0.2)
        print(f"  {partitions:,} partitions created and led in {time.perf_counter() - start:.1f} s")
        controller = await zk.get_controller_id()
        assert controller is not None
        survivors = sorted(set(ports) - {controller})
        cluster.signal(controller, signal.SIGKILL)
        killed = time.perf_counter()
        first_update: dict[int, float] = {}
        led_at = None
        while len(first_update) < len(survivors) or led_at is None:
            for b in survivors:
                if b not in first_update:
                    md = await _metadata(ports[b], 1, b"\x00\x00\x00\x00")  # no topics: just the controller
                    if md.controller_id not in (controller, -1):
                        first_update[b] = time.perf_counter() - killed
            if led_at is None and await all_led(ports[survivors[0]], set(survivors)):
                led_at = time.perf_counter() - killed
            await asyncio.sleep(0.02)
        print(f"  kill -9 of controller {controller} -> new controller's UpdateMetadata at every survivor: "
              f"{max(first_update.values()):.2f} s; every partition led by a survivor: {led_at:.2f} s "
              f"(session timeout 6 s)")
    finally:
        await session.close()
        await backend.close()
        await asyncio.to_thread(cluster.stop)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", default="1000,10000")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--failover", type=int, metavar="N", help="time a controller kill -9 with N partitions")
    args = parser.parse_args()
    if args.failover:
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
        asyncio.run(failover(args.failover))
        return
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; {args.connections} connections x {args.depth} in flight, {args.seconds}s")
    for partitions in (int(p) for p in args.partitions.split(",")):
        cold_encode(partitions)
        for kind in ("echo", "canned", "kafka"):
            run(kind, partitions, args.seconds, args.connections, args.depth)


if __name__ == "__main__":
    main()
