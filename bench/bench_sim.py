"""Simulator throughput: simulated seconds per wall second, where the time goes, and sweep seeds per minute.

    uv run python bench/bench_sim.py [--hours 1] [--sweep-seeds 48] [--skip-spark]

1. The floor: a process that starts, builds the 5-broker/1,000-partition cluster, heals and checks liveness
   with no faults (``--duration-ms 0``): what every run pays before its simulated time starts.
2. ``zkcontroller sim run --scenario random`` with 5 brokers and 1,000 partitions for ``--hours`` simulated
   hours, with one fault per 10 simulated seconds and one per second: wall time from process start to exit
   (logs written, as a real run), simulated seconds per wall second.
3. A profile of the 1-fault-per-second run (two simulated minutes), grouped by package.
4. ``sim sweep`` seeds per minute at CI size (3 brokers, 12 partitions, 30 s of `random`, a fault every 5 s) on
   one process, on all cores, and on Spark ``local[2]``.

Prints figures; never passes or fails on time.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from zkcontroller.sim.sweep import sweep
from zkcontroller.sim.world import SimConfig, run_scenario

BIG = ["--scenario", "random", "--seed", "1", "--brokers", "5", "--partitions", "1000"]
CI = SimConfig("random", 0, brokers=3, partitions=12, duration_ms=30_000, fault_interval_ms=5_000)


def _cli(args: list[str]) -> tuple[float, float, str]:
    """Run ``zkcontroller sim run`` in a new process: (wall s from process start, virtual s, output)."""
    with tempfile.TemporaryDirectory(prefix="bench-sim-") as logs:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "zkcontroller.cli", "sim", "run", *args, "--log-dir", logs],
                              capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
    match = re.search(r"virtual time\s+([\d.]+) s", done.stdout)
    if match is None:
        raise RuntimeError(f"sim run failed: {done.stdout}\n{done.stderr}")
    return wall, float(match.group(1)), done.stdout


def _field(output: str, name: str) -> str:
    return next((line[len(name):].strip() for line in output.splitlines() if line.startswith(name)), "?")


def floor() -> None:
    wall, virtual, _ = _cli([*BIG, "--duration-ms", "0"])
    print(f"floor (start, 1,000-partition cluster, heal, liveness; no faults): {wall:.2f} s wall, "
          f"{virtual:.1f} s simulated")


def throughput(hours: float) -> None:
    duration_ms = round(hours * 3_600_000)
    for interval_ms in (10_000, 1_000):
        wall, virtual, out = _cli([*BIG, "--duration-ms", str(duration_ms), "--fault-interval-ms", str(interval_ms)])
        print(f"random, 5 brokers, 1,000 partitions, {hours:g} h, a fault every {interval_ms / 1000:g} s: "
              f"{virtual:,.0f} simulated s in {wall:.1f} wall s = {virtual / wall:,.0f} simulated s per wall s "
              f"(faults {_field(out, 'faults')}, events {_field(out, 'events')}, {_field(out, 'result')})")


def profile() -> None:
    config = SimConfig("random", 1, brokers=5, partitions=1000, duration_ms=120_000, fault_interval_ms=1_000)
    profiler = cProfile.Profile()
    profiler.enable()
    run_scenario(config)
    profiler.disable()
    stats = pstats.Stats(profiler)
    by_package: dict[str, float] = defaultdict(float)
    total = 0.0
    for (filename, _, _), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        total += tottime
        match = re.search(r"zkcontroller/([a-z_]+)", filename)
        if match:
            by_package[f"zkcontroller.{match.group(1)}"] += tottime
        elif "logging" in filename:
            by_package["logging (stdlib)"] += tottime
        elif "asyncio" in filename:
            by_package["asyncio (stdlib)"] += tottime
        elif "json" in filename:
            by_package["json (stdlib)"] += tottime
        else:
            by_package["other (builtins, dataclasses, ...)"] += tottime
    print(f"profile (random, 5 brokers, 1,000 partitions, 120 simulated s, a fault per s): {total:.1f} s in all")
    for name, seconds in sorted(by_package.items(), key=lambda kv: -kv[1]):
        print(f"  {name:40} {seconds:6.2f} s {100 * seconds / total:5.1f}%")


def sweeps(seeds: int, skip_spark: bool) -> None:
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as out:
        runs = [("one process", {"workers": 1}), (f"{cores} processes", {"workers": cores})]
        if not skip_spark:
            runs.append(("Spark local[2]", {"spark": True, "master": "local[2]"}))
        for label, kwargs in runs:
            started = time.perf_counter()
            _, summary = sweep(CI, 0, seeds, Path(out) / label.replace(" ", "_"), **kwargs)  # type: ignore[arg-type]
            wall = time.perf_counter() - started
            print(f"sweep random at CI size, {seeds} seeds on {label}: {wall:.1f} s = {seeds / wall * 60:,.0f} "
                  f"seeds/minute (violations on {len(summary.failing_seeds)} seeds)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--sweep-seeds", type=int, default=48)
    parser.add_argument("--skip-spark", action="store_true")
    parser.add_argument("--only", choices=["floor", "throughput", "profile", "sweeps"])
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    if args.only in (None, "floor"):
        floor()
    if args.only in (None, "throughput"):
        throughput(args.hours)
    if args.only in (None, "profile"):
        profile()
    if args.only in (None, "sweeps"):
        sweeps(args.sweep_seeds, args.skip_spark)


if __name__ == "__main__":
    main()
