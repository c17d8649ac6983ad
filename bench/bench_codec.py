"""The generic wire codec (`protocol/wire/codec.py`) on the controller's biggest messages: what it costs to put a
LeaderAndIsr, an UpdateMetadata and a full Fetch of N partitions on the wire and read them back.

Each message is built from the plain values the controller and brokers use (`control_codec` / `fetch_codec`),
at the version Kafka 2.8's IBP uses (LeaderAndIsr v5, UpdateMetadata v7, Fetch v12, all flexible), then encoded
and decoded; medians of several rounds. Floor, same run: the same bytes' fixed-size fields packed by one
precompiled ``struct.Struct`` per partition entry (no schema walk, no varints, no strings): about the least a
Python encoder can do per partition.

Prints figures; asserts nothing about speed. Run:

    uv run python bench/bench_codec.py [--partitions 10000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import struct
import time
from collections.abc import Callable
from typing import Any

from zkcontroller.model import Broker, EndPoint, TopicId, TopicPartition
from zkcontroller.protocol.control_requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)
from zkcontroller.protocol.inter_broker import FetchPartition, FetchPartitionResult, FetchRequest, FetchResponse
from zkcontroller.protocol.wire import control_codec

_FLOOR_ENTRY = struct.Struct(">iiiiiiiiiq")
"""partition, controller epoch, leader, leader epoch, two ISR ids, zk version, two replica ids, and an int64."""


def _messages(n: int) -> dict[str, tuple[Any, Any, int]]:
    brokers = tuple(Broker(i, (EndPoint(f"broker{i}", 9092, "PLAINTEXT", "PLAINTEXT"),), None) for i in range(1, 6))
    topics = [f"topic-{i:04d}" for i in range(max(1, n // 10))]
    tps = [TopicPartition(topics[i // 10 % len(topics)], i % 10) for i in range(n)]
    lai = LeaderAndIsrRequest(1, 5, 100, tuple(
        LeaderAndIsrPartitionState(tp.topic, tp.partition, 5, 2, 7, (2, 3), 11, (2, 3)) for tp in tps),
        tuple((t, TopicId(os.urandom(16))) for t in topics), brokers[1:3])
    umd = UpdateMetadataRequest(1, 5, 100, tuple(
        UpdateMetadataPartitionState(tp.topic, tp.partition, 5, 2, 7, (2, 3), 11, (2, 3), ()) for tp in tps),
        brokers, tuple((t, TopicId(os.urandom(16))) for t in topics))
    fetch = FetchRequest(3, tuple(FetchPartition(tp, 7, 1000) for tp in tps), 500)
    answer = FetchResponse(partitions=tuple(FetchPartitionResult(tp, high_watermark=1000) for tp in tps))
    return {"LeaderAndIsr v5": (lai, None, 5), "UpdateMetadata v7": (umd, None, 7),
            "Fetch v12 (full)": (fetch, answer, 12)}


def _median_ms(fn: Callable[[], Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    n = args.partitions
    print(f"# {platform.node()} {platform.machine()} Python {platform.python_version()}; {n:,} partitions; "
          f"median of {args.rounds}")
    floor = _median_ms(lambda: b"".join(_FLOOR_ENTRY.pack(i, 5, 2, 7, 2, 3, 11, 2, 3, 0) for i in range(n)),
                       args.rounds)
    print(f"{'message':<20} {'bytes':>10} {'encode ms':>10} {'decode ms':>10} {'floor ms':>9} {'(enc+dec)/floor':>16}")
    for name, (request, response, version) in _messages(n).items():
        message = response if response is not None else request
        if response is None:
            body = control_codec.encode_request(request, version)
            encode = _median_ms(lambda r=request, v=version: control_codec.encode_request(r, v), args.rounds)
            decode = _median_ms(lambda r=request, v=version, b=body: control_codec.decode_request(
                int(r.api_key), v, b, 0), args.rounds)
        else:
            body = control_codec.encode_response(message, version)
            encode = _median_ms(lambda m=message, v=version: control_codec.encode_response(m, v), args.rounds)
            decode = _median_ms(lambda r=request, v=version, b=body: control_codec.decode_response(r, v, b, 0),
                                args.rounds)
        print(f"{name:<20} {len(body):>10,} {encode:>10.1f} {decode:>10.1f} {floor:>9.1f} "
              f"{(encode + decode) / floor:>15.1f}x")


if __name__ == "__main__":
    main()
