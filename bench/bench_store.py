"""Coordination-store throughput: single, pipelined and batched (`multi`) writes and reads, both backends.

Prints operations per second and the client process's CPU per operation; it asserts nothing about speed. Run:

    uv run python bench/bench_store.py [--ops 5000] [--backend embedded|zookeeper|both]

The ZooKeeper figures use a real server this script starts on a free loopback port.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import time
from collections.abc import Awaitable, Callable

from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess
from zkcontroller.coordination.api import CoordinationSession, CreateOp, SetDataOp
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.runtime.clock import wall_clock_ms

PAYLOAD = b'{"controller_epoch":5,"leader":1,"version":1,"leader_epoch":3,"isr":[1,2,3]}'
BATCH = 100


async def timed(label: str, n: int, fn: Callable[[], Awaitable[object]]) -> float:
    """Operations per second, and this process's CPU per operation (every thread: on ZooKeeper that is the
    client library's serializing and parsing, which shares the GIL with the controller's loop)."""
    start, cpu = time.perf_counter(), time.process_time()
    await fn()
    elapsed = time.perf_counter() - start
    rate = n / elapsed
    print(f"  {label:<38} {rate:>10,.0f} ops/s {1e6 * (time.process_time() - cpu) / n:>7.1f} µs CPU/op")
    return rate


async def run_suite(session: CoordinationSession, n: int) -> dict[str, float]:
    await session.create("/bench")
    for d in ("single", "pipelined", "batched"):
        await session.create(f"/bench/{d}")
    paths = {d: [f"/bench/{d}/p{i}" for i in range(n)] for d in ("single", "pipelined", "batched")}

    async def single_create() -> None:
        for p in paths["single"]:
            await session.create(p, PAYLOAD)

    async def pipelined_create() -> None:
        await asyncio.gather(*(session.create(p, PAYLOAD) for p in paths["pipelined"]))

    async def batched_create() -> None:
        ps = paths["batched"]
        await asyncio.gather(
            *(session.multi([CreateOp(p, PAYLOAD) for p in ps[i : i + BATCH]]) for i in range(0, n, BATCH))
        )

    async def single_read() -> None:
        for p in paths["single"]:
            await session.get_data(p)

    async def pipelined_read() -> None:
        await asyncio.gather(*(session.get_data(p) for p in paths["pipelined"]))

    async def bulk_read() -> None:
        """`get_data_many` unwatched: multiRead batches of 1,000 on ZooKeeper >= 3.6."""
        assert all(r is not None for r in await session.get_data_many(paths["batched"]))

    async def bulk_read_pipelined() -> None:
        """The same through the base class's pipelined single reads (what a watched bulk read does)."""
        found = await CoordinationSession.get_data_many(session, paths["batched"])
        assert all(r is not None for r in found)

    async def batched_set() -> None:
        ps = paths["batched"]
        await asyncio.gather(
            *(session.multi([SetDataOp(p, PAYLOAD, 0) for p in ps[i : i + BATCH]]) for i in range(0, n, BATCH))
        )

    return {
        "create single": await timed("create, one at a time", n, single_create),
        "create pipelined": await timed("create, pipelined", n, pipelined_create),
        f"create multi x{BATCH}": await timed(f"create, {BATCH} per multi (pipelined)", n, batched_create),
        f"set multi x{BATCH}": await timed(f"setData, {BATCH} per multi (pipelined)", n, batched_set),
        "read single": await timed("getData, one at a time", n, single_read),
        "read pipelined": await timed("getData, pipelined", n, pipelined_read),
        "read bulk pipelined": await timed("get_data_many, pipelined (10)", n, bulk_read_pipelined),
        "read bulk": await timed("get_data_many (multiRead on ZK)", n, bulk_read),
    }


async def bench_backend(backend: CoordinationBackend, n: int) -> dict[str, float]:
    session = await backend.new_session()
    try:
        return await run_suite(session, n)
    finally:
        await session.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=5000)
    parser.add_argument("--backend", choices=["embedded", "zookeeper", "both"], default="both")
    args = parser.parse_args()
    print(f"{platform.node()} {platform.machine()} python {platform.python_version()}, {args.ops} ops per row")
    results: dict[str, dict[str, float]] = {}
    if args.backend in ("embedded", "both"):
        print("embedded store:")
        results["embedded"] = asyncio.run(bench_backend(EmbeddedBackend(wall_clock_ms), args.ops))
    if args.backend in ("zookeeper", "both"):
        with ZooKeeperServerProcess() as server:
            print(f"real ZooKeeper at {server.connect_string} via kazoo:")
            results["zookeeper"] = asyncio.run(bench_backend(ZooKeeperBackend(server.connect_string), args.ops))
    for name, rows in results.items():
        base = rows["create single"]
        ratios = ", ".join(f"{k} {v / base:.1f}x" for k, v in rows.items() if k.startswith(("create", "set")))
        print(f"{name}: write speed-up over one-at-a-time creates: {ratios}")


if __name__ == "__main__":
    main()
