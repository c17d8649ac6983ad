"""Replica fetching with and without KIP-227 fetch sessions: what one fetch round costs a follower and its leader.

Two in-process brokers (the real `ReplicaManager`s, fetchers and in-process transport); broker 1 leads N
partitions (RF 2) and broker 2 follows them all. Each round is one `fetch_once` of broker 2's fetcher: build
the request, the leader serves it, the follower applies the answer. Two kinds of round: idle (nothing
appended) and active (1 % of the partitions got 10 records since the last round). Two modes in the same run:
``sessions`` (the default cache) and ``full`` (``max.incremental.fetch.session.cache.slots=0``: every fetch
names and answers every partition, as before sessions). Besides the in-process time, the same request and
answer are encoded and decoded on Fetch v12 (what the wire adds per round), with their sizes.

Floor, same run: the leader's per-partition bookkeeping alone (`Partition.record_follower_fetch` for every
partition), which every fetch pays in both modes because the leader serves the whole session each time.

Prints figures; asserts nothing about speed. Run:

    uv run python bench/bench_fetch_sessions.py [--partitions 1000,10000] [--rounds 50]
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import random
import statistics
import time
from collections.abc import Coroutine
from typing import Any

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.replica_manager import ReplicaManager
from zkcontroller.model import Broker, EndPoint, TopicPartition
from zkcontroller.protocol.control_requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    UpdateMetadataRequest,
)
from zkcontroller.protocol.inter_broker import FetchRequest, FetchResponse
from zkcontroller.protocol.wire import control_codec
from zkcontroller.runtime.in_process import InProcessTransport

BROKER_EPOCH = 100


class DrivenRuntime:
    """Wall clock; background loops (fetchers, ISR checks) are not started: the benchmark drives each round."""

    rng = random.Random(1)

    def now_ms(self) -> int:
        return time.monotonic_ns() // 1_000_000

    async def sleep_ms(self, ms: int) -> None:
        await asyncio.sleep(0)

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        if not name.startswith("request"):
            coro.close()
            coro = asyncio.sleep(0)
        return asyncio.get_running_loop().create_task(coro, name=name)


def _broker(i: int) -> Broker:
    return Broker(i, (EndPoint("localhost", 9090 + i, "PLAINTEXT", "PLAINTEXT"),), None)


def _pair(partitions: int, slots: int) -> tuple[ReplicaManager, ReplicaManager, list[TopicPartition]]:
    transport, runtime = InProcessTransport(), DrivenRuntime()
    config = ReplicationConfig(max_incremental_fetch_session_cache_slots=slots, replica_lag_time_max_ms=10**9)
    states = tuple(LeaderAndIsrPartitionState("t", p, 1, 1, 0, (1, 2), 0, (1, 2)) for p in range(partitions))
    rms = {}
    for i in (1, 2):
        plane = BrokerControlPlane(i, BROKER_EPOCH)
        plane.handle(UpdateMetadataRequest(9, 1, BROKER_EPOCH, (), (_broker(1), _broker(2)), ()))
        rm = rms[i] = ReplicaManager(plane, transport, runtime, config)
        transport.register(i, lambda request, rm=rm: rm.handle_fetch(request))
        rm.handle_control_request(LeaderAndIsrRequest(9, 1, BROKER_EPOCH, states, ()))
    return rms[1], rms[2], [TopicPartition("t", p) for p in range(partitions)]


def _wire_ms(request: FetchRequest, response: FetchResponse) -> tuple[float, int, int]:
    start = time.perf_counter()
    body = control_codec.encode_request(request, 12)
    control_codec.decode_request(1, 12, body, 0)
    answer = control_codec.encode_response(response, 12)
    control_codec.decode_response(request, 12, answer, 0)
    return (time.perf_counter() - start) * 1000, len(body), len(answer)


async def _measure(partitions: int, slots: int, rounds: int, active: bool) -> dict[str, float]:
    leader, follower, tps = _pair(partitions, slots)
    seen: list[tuple[FetchRequest, FetchResponse]] = []

    def recording(request: FetchRequest) -> FetchResponse:
        response = leader.handle_fetch(request)
        seen.append((request, response))
        return response

    follower.transport.register(1, recording)  # type: ignore[attr-defined]
    fetcher = follower.fetchers[1]
    await fetcher.fetch_once()  # the first, full fetch (opens the session)
    await fetcher.fetch_once()
    moving = tps[:: 100] if active else []
    times, wire, sizes = [], [], []
    for _ in range(rounds):
        for tp in moving:
            leader.append(tp, 10)
        start = time.perf_counter()
        await fetcher.fetch_once()
        times.append((time.perf_counter() - start) * 1000)
        ms, req_bytes, resp_bytes = _wire_ms(*seen[-1])
        wire.append(ms)
        sizes.append((req_bytes, resp_bytes))
    floor = []
    partition_objects = [leader.partition(tp) for tp in tps]
    for _ in range(rounds):
        start, now = time.perf_counter(), leader.runtime.now_ms()
        for p in partition_objects:
            p.record_follower_fetch(2, p.log_end_offset, now)  # type: ignore[union-attr]
        floor.append((time.perf_counter() - start) * 1000)
    leader.shutdown()
    follower.shutdown()
    return {"round_ms": statistics.median(times), "wire_ms": statistics.median(wire),
            "request_bytes": sizes[-1][0], "response_bytes": sizes[-1][1], "floor_ms": statistics.median(floor)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", default="1000,10000")
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    print(f"# {platform.node()} {platform.machine()} Python {platform.python_version()}; "
          f"median of {args.rounds} rounds; bytes of the last round")
    print(f"{'partitions':>10} {'round':>7} {'mode':>9} {'in-process ms':>14} {'wire codec ms':>14} "
          f"{'request B':>10} {'answer B':>10} {'floor ms':>9} {'full/sessions':>14}")
    for n in (int(x) for x in args.partitions.split(",")):
        for active in (False, True):
            rows = {mode: await _measure(n, slots, args.rounds, active)
                    for mode, slots in (("full", 0), ("sessions", 1000))}
            for mode, r in rows.items():
                ratio = (rows["full"]["round_ms"] + rows["full"]["wire_ms"]) / (
                    rows["sessions"]["round_ms"] + rows["sessions"]["wire_ms"]) if mode == "sessions" else None
                print(f"{n:>10} {'active' if active else 'idle':>7} {mode:>9} {r['round_ms']:>14.2f} "
                      f"{r['wire_ms']:>14.2f} {r['request_bytes']:>10,} {r['response_bytes']:>10,} "
                      f"{r['floor_ms']:>9.2f} {'' if ratio is None else f'{ratio:.2f}x':>14}")


if __name__ == "__main__":
    asyncio.run(main())
