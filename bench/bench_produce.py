"""Produce: the response encoder, and the requests per second one broker's protocol server sustains.

(a) Produce responses encoded per second by our own table (`client_apis.produce_response`, `PRODUCE_RESPONSE`,
which every version now goes through) against kio's entity writer for the same response (what v3+ used before),
for one partition and for 10 topics x 10 partitions, at v3 and v8; the two encodings are checked byte-equal first.

(b) Produce v8 (acks=1, one 10-record batch of 100-byte values for one partition) against one broker as
`bench_wire.py` starts one: a server process running our SocketServer + KafkaApis, leading the partition alone
(lone ISR, so the append answers at once), and this process as the client on loopback, C connections each
keeping K requests in flight for a fixed time. Floors from the same run, the same request bytes round-tripped:
the same SocketServer whose handler echoes the frame (framing and socket cost), and a bare asyncio stream server
echoing it (socket cost only, no SocketServer). Beside them, the same request through `KafkaApis.handle` in this
process with no socket at all (the broker's own cost per request).

(c) The time index on the Produce path: (b)'s in-process request with the partition's journal attached (a broker
process's), for record timestamps that never raise the index, raise it once a batch, and raise it at every record:
requests per second, CPU microseconds per request (``process_time``: less shaken by a shared machine), the index's
bytes (its arrays and dict) and the journal's at the end; floor: an ApiVersions v0 request through the same handler.

Prints figures; asserts nothing about speed (the machine is shared: read the ratios). Run:

    uv run python bench/bench_produce.py [--seconds 3] [--connections 4] [--depth 8]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import multiprocessing as mp
import os
import platform
import random
import struct
import time
from dataclasses import fields
from datetime import timedelta
from typing import Any

from kafka.record.memory_records import MemoryRecordsBuilder
from kio.schema.errors import ErrorCode
from kio.serial import entity_writer

from bench_wire import pipelined_load
from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.delayed_produce import ProduceWaiters
from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.broker.partition import Partition
from zkcontroller.broker.produce import ProduceAnswer, ProduceTarget
from zkcontroller.model import Broker, EndPoint, TopicPartition
from zkcontroller.protocol.control_requests import UpdateMetadataPartitionState, UpdateMetadataRequest
from zkcontroller.protocol.wire import client_apis, codec
from zkcontroller.protocol.wire.client_apis import PRODUCE, PRODUCE_RESPONSE, schema_module
from zkcontroller.protocol.wire.frames import RequestHeader, encode_request_header
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.runtime.socket_server import SocketServer

TOPIC = "bench"
TP = TopicPartition(TOPIC, 0)


# ------------------------------------------------------------------------------------------ (a) the encoder

def _build(cls: type, **values: Any) -> Any:
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in values.items() if k in names})


def kio_produce_response(version: int, answers: list[ProduceAnswer]) -> bytes:
    """The same response through kio's types and writer, as `client_apis.produce_response` wrote v3+ before our
    table (every log append time -1, which kio writes from None)."""
    m = schema_module(PRODUCE, version, "response")
    by_topic: dict[str, list[ProduceAnswer]] = {}
    for a in answers:
        by_topic.setdefault(a.topic, []).append(a)
    topics = tuple(_build(m.TopicProduceResponse, name=name, partition_responses=tuple(
        _build(m.PartitionProduceResponse, index=a.partition, error_code=ErrorCode(a.error), base_offset=a.base_offset,
               log_append_time=None, log_start_offset=a.log_start_offset, record_errors=(),
               error_message=a.error_message) for a in run)) for name, run in by_topic.items())
    value = _build(m.ProduceResponse, responses=topics, throttle_time=timedelta(0))
    buf = io.BytesIO()
    entity_writer(type(value))(buf, value)
    return buf.getvalue()


def per_second(encode: Any, seconds: float) -> float:
    n, start = 0, time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(100):
            encode()
        n += 100
    return n / (time.perf_counter() - start)


def encoder(seconds: float) -> None:
    shapes = {"1 partition": [ProduceAnswer(TOPIC, 0, 0, 1_234_567, 0)],
              "10 topics x 10 partitions": [ProduceAnswer(f"topic-{t:02d}", p, 0, 1_000 * p, 0)
                                            for t in range(10) for p in range(10)]}
    print("(a) Produce responses encoded per second (one thread)")
    for label, answers in shapes.items():
        for version in (3, 8):
            ours = client_apis.produce_response(version, answers)
            theirs = kio_produce_response(version, answers)
            assert ours == theirs, f"the encodings differ: {label}, v{version}"
            ours_rate = per_second(lambda v=version, a=answers: client_apis.produce_response(v, a), seconds)
            kio_rate = per_second(lambda v=version, a=answers: kio_produce_response(v, a), seconds)
            print(f"  {label:<26} v{version}  {len(ours):>5,} bytes  ours {ours_rate:>9,.0f}/s  kio "
                  f"{kio_rate:>9,.0f}/s  ours/kio {ours_rate / kio_rate:>5.2f}x")


# -------------------------------------------------------------------------------- (b) requests over loopback

class LoneLeader:
    """What `KafkaApis` reads of a replica manager for Produce: broker 1 leading ``bench-0`` alone."""

    def __init__(self) -> None:
        self.partition = Partition(TP, 1)
        self.partition.make_leader(1, (1,), (1,), 0, 1, now_ms=0)
        self.runtime = AsyncioRuntime(random.Random(1))
        self.waiters = ProduceWaiters()

    def produce_target(self) -> ProduceTarget:
        return ProduceTarget(partition=lambda tp: self.partition if tp == TP else None, runtime=self.runtime,  # type: ignore[arg-type]
                             offline=lambda: (), waiters=self.waiters, broker_id=1)


def control_plane() -> BrokerControlPlane:
    cp = BrokerControlPlane(1, 10)
    broker = Broker(1, (EndPoint("127.0.0.1", 9092, "PLAINTEXT", "PLAINTEXT"),), None)
    state = UpdateMetadataPartitionState(TOPIC, 0, 1, 1, 1, (1,), 0, (1,))
    cp.handle(UpdateMetadataRequest(1, 1, 10, partition_states=(state,), live_brokers=(broker,)))
    return cp


def serve(kind: str, ready: mp.Queue, stop: mp.Event) -> None:  # type: ignore[type-arg]
    async def main() -> None:
        if kind == "bare":  # no SocketServer: read a frame, write it back
            async def bare(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                try:
                    while True:
                        head = await reader.readexactly(4)
                        writer.write(head + await reader.readexactly(struct.unpack(">i", head)[0]))
                except (asyncio.IncompleteReadError, ConnectionError):
                    writer.close()

            server = await asyncio.start_server(bare, "127.0.0.1", 0)
            ready.put(server.sockets[0].getsockname()[1])
            await asyncio.to_thread(stop.wait)
            server.close()
            return
        cp = control_plane()
        leader = LoneLeader()
        apis = KafkaApis(1, control_handler=lambda: cp.handle, metadata_cache=lambda: cp.metadata_cache,
                         cluster_id=lambda: "bench-cluster-000000000", replica_manager=lambda: leader)  # type: ignore[arg-type]

        async def echo(payload: bytes) -> bytes:
            return payload

        ours = SocketServer("127.0.0.1", 0, apis.handle if kind == "kafka" else echo, close_on=(CloseConnection,))
        await ours.start()
        ready.put(ours.port)
        await asyncio.to_thread(stop.wait)
        await ours.stop()

    asyncio.run(main())


def produce_frame(correlation_id: int, base_timestamp: int = 1_000, step: int = 1) -> bytes:
    """A Produce v8 request, acks=1, one batch of 10 records of 100-byte values for ``bench-0``, timestamped
    ``base_timestamp`` + ``step`` x the record's index."""
    b = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    for i in range(10):
        b.append(timestamp=base_timestamp + step * i, key=None, value=b"%03d" % i * 33 + b"x")
    b.close()
    m = schema_module(PRODUCE, 8, "request")
    request = m.ProduceRequest(transactional_id=None, acks=1, timeout=timedelta(seconds=30), topic_data=(
        m.TopicProduceData(name=TOPIC, partition_data=(m.PartitionProduceData(index=0, records=bytes(b.buffer())),)),))
    buf = io.BytesIO()
    entity_writer(type(request))(buf, request)
    payload = encode_request_header(RequestHeader(PRODUCE, 8, correlation_id, "bench")) + buf.getvalue()
    return struct.pack(">i", len(payload)) + payload


async def first_answer(port: int) -> tuple[int, int]:
    """One request's answer from a broker: its error code and base offset (the run is void unless NONE)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(produce_frame(7))
        (size,) = struct.unpack(">i", await reader.readexactly(4))
        payload = await reader.readexactly(size)
    finally:
        writer.close()
    [topic] = codec.decode(PRODUCE_RESPONSE, 8, payload, 4)["responses"]
    [answer] = topic["partitions"]
    return answer["error_code"], answer["base_offset"]


async def load(port: int, seconds: float, connections: int, depth: int) -> tuple[int, int, int]:
    """Requests answered, the request's and the largest response's sizes."""
    frame = produce_frame(7)
    n, largest = await pipelined_load(port, seconds, connections, depth, lambda _i: frame)
    return n, len(frame) - 4, largest


def run(kind: str, seconds: float, connections: int, depth: int) -> float:
    ctx = mp.get_context("spawn")
    ready: mp.Queue = ctx.Queue()  # type: ignore[type-arg]
    stop = ctx.Event()
    proc = ctx.Process(target=serve, args=(kind, ready, stop))
    proc.start()
    try:
        port = ready.get(timeout=120)
        if kind == "kafka":
            error, base_offset = asyncio.run(first_answer(port))
            assert (error, base_offset) == (0, 0), f"the broker answered error {error}, base offset {base_offset}"
        asyncio.run(load(port, 0.3, connections, depth))  # warm-up
        start = time.perf_counter()
        n, request, response = asyncio.run(load(port, seconds, connections, depth))
        rate = n / (time.perf_counter() - start)
        print(f"  {kind:<6} {rate:>9,.0f} req/s  request {request:,} bytes, response {response:,} bytes")
        return rate
    finally:
        stop.set()
        proc.join(30)


def in_process(seconds: float) -> float:
    """The same request through `KafkaApis.handle` in this process, no socket: the broker's own cost per request."""
    async def measure() -> float:
        cp = control_plane()
        leader = LoneLeader()
        apis = KafkaApis(1, control_handler=lambda: cp.handle, metadata_cache=lambda: cp.metadata_cache,
                         cluster_id=lambda: "bench-cluster-000000000", replica_manager=lambda: leader)  # type: ignore[arg-type]
        payload = produce_frame(7)[4:]
        for _ in range(200):  # warm-up
            await apis.handle(payload)
        n, start = 0, time.perf_counter()
        while time.perf_counter() < start + seconds:
            for _ in range(100):
                await apis.handle(payload)
            n += 100
        return n / (time.perf_counter() - start)

    rate = asyncio.run(measure())
    print(f"  KafkaApis.handle in this process, no socket: {rate:,.0f} req/s")
    return rate


TIME_INDEX_PATTERNS = {"one batch repeated (1,000..1,009)": None, "advancing, one timestamp a batch": 0,
                       "advancing, 10 timestamps a batch": 1}
"""(c)'s record timestamps: the same request over and over (as (b): the index never grows after the first), or a
new batch each request whose timestamps are above every earlier one, its records all at one or one ms apart (a
producer's usual batches: each raises the index, the second also has every record a new maximum)."""


async def api_versions_cpu(seconds: float) -> float:
    """(c)'s floor: CPU microseconds per ApiVersions v0 request (no fields) through the same `KafkaApis.handle`."""
    cp = control_plane()
    leader = LoneLeader()
    apis = KafkaApis(1, control_handler=lambda: cp.handle, metadata_cache=lambda: cp.metadata_cache,
                     cluster_id=lambda: "bench-cluster-000000000", replica_manager=lambda: leader)  # type: ignore[arg-type]
    payload = encode_request_header(RequestHeader(client_apis.API_VERSIONS, 0, 7, "bench"))
    for _ in range(200):
        await apis.handle(payload)
    n, start, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() < start + seconds:
        for _ in range(100):
            await apis.handle(payload)
        n += 100
    return (time.process_time() - cpu) / n * 1e6


def time_index_path(seconds: float, frames_each: int) -> None:
    """(c) `KafkaApis.handle` in this process as (b)'s, with the partition's journal attached in a temporary log dir
    (as a broker process has it: the offsets and time index lines written through), for each of
    `TIME_INDEX_PATTERNS`; ``frames_each`` requests built beforehand, cycled (a cycle's repeats add no entry)."""
    import sys
    import tempfile

    from zkcontroller.broker.log_offsets_journal import LogOffsetsJournal

    async def measure(frames: list[bytes], log_dir: str) -> tuple[float, float, float, int]:
        cp = control_plane()
        leader = LoneLeader()
        journal = LogOffsetsJournal(log_dir)
        leader.partition.journal = journal.record
        leader.partition.time_index.journal = journal.record_time_index
        if hasattr(journal, "attach_time_index"):  # as `ReplicaManager` hooks it up (none kept a copy before)
            journal.attach_time_index(TP, leader.partition.time_index)
            leader.partition.time_index.journal_records = journal.record_time_index_records
        apis = KafkaApis(1, control_handler=lambda: cp.handle, metadata_cache=lambda: cp.metadata_cache,
                         cluster_id=lambda: "bench-cluster-000000000", replica_manager=lambda: leader)  # type: ignore[arg-type]
        for payload in frames[:200]:  # warm-up
            await apis.handle(payload)
        n, start, cpu = 0, time.perf_counter(), time.process_time()
        while time.perf_counter() < start + seconds:
            for payload in frames[n % len(frames):n % len(frames) + 100]:
                await apis.handle(payload)
                n += 1
        cpu_us = (time.process_time() - cpu) / n * 1e6
        rate = n / (time.perf_counter() - start)
        copies = [leader.partition.time_index, *getattr(journal, "_times", {}).values()]  # the journal's own too
        held = sum(sys.getsizeof(getattr(index, name)) for index in copies for name in index.__slots__
                   if name.startswith("_"))
        journal.close()
        return rate, cpu_us, held / (n + 200), journal.path.stat().st_size  # bytes a request, warm-up included

    for label, step in TIME_INDEX_PATTERNS.items():
        frames = ([produce_frame(7)[4:]] if step is None else
                  [produce_frame(7, 1_000_000 + 10 * k, step)[4:] for k in range(frames_each)])
        with tempfile.TemporaryDirectory() as log_dir:
            rate, cpu_us, held, journal_bytes = asyncio.run(measure(frames, log_dir))
        print(f"  {label:<36} {rate:>8,.0f} req/s  {cpu_us:>5.1f} us CPU a request  index (and copies) {held:>5.1f} "
              f"bytes a batch, journal {journal_bytes:>10,} bytes")
    floor = asyncio.run(api_versions_cpu(seconds))
    print(f"  floor: an ApiVersions request through the same KafkaApis.handle: {floor:.1f} us CPU a request")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--encode-seconds", type=float, default=0.5)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--index-seconds", type=float, default=2.0)
    parser.add_argument("--index-frames", type=int, default=30_000)
    parser.add_argument("--only-index", action="store_true", help="(c) alone")
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, load {os.getloadavg()[0]:.1f}")
    if args.only_index:
        time_index_path(args.index_seconds, args.index_frames)
        return
    encoder(args.encode_seconds)
    print(f"(b) Produce v8 acks=1 over loopback: {args.connections} connections x {args.depth} in flight, "
          f"{args.seconds}s each")
    rates = {kind: run(kind, args.seconds, args.connections, args.depth) for kind in ("bare", "echo", "kafka")}
    in_process(args.encode_seconds * 2)
    print(f"  kafka / echo floor {rates['kafka'] / rates['echo']:.2f}, kafka / bare floor "
          f"{rates['kafka'] / rates['bare']:.2f}")
    print(f"(c) the time index on the Produce path: KafkaApis.handle in this process, journal attached, "
          f"{args.index_seconds}s each")
    time_index_path(args.index_seconds, args.index_frames)


if __name__ == "__main__":
    main()
