"""`sim sweep`: one scenario over many seeds, in worker processes (default) or as Spark tasks.

Each seed is independent and deterministic, so a sweep is embarrassingly parallel: a process pool on one
machine, or one Spark task per slice of seeds on a cluster. The result is one row per seed, written as a
Parquet table, and a summary (also ``summary.json``) naming every seed that found a violation, with its replay
command: such seeds belong in ``tests/sim/regression_seeds.json``, unless a mutation (a deliberately injected fault)
made them fail.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from zkcontroller.sim.world import SimConfig, run_scenario

COLUMNS = ("seed", "scenario", "violations", "first_violation", "virtual_ms", "wall_ms", "events", "faults",
           "unclean_elections", "trace_hash", "replay")


class SparkStartError(Exception):
    """The sweep's Spark session did not start; the message is one line for the command to print."""


def run_row(config: SimConfig) -> dict[str, Any]:
    """Run one seed and return its table row (top level, so that worker processes and Spark can pickle it)."""
    result = run_scenario(config)
    first = result.violations[0] if result.violations else None
    return {
        "seed": config.seed,
        "scenario": config.scenario,
        "violations": len(result.violations),
        "first_violation": None if first is None else f"{first.invariant} at step {first.step}: {first.detail}",
        "virtual_ms": result.virtual_ms,
        "wall_ms": round(result.wall_s * 1000, 3),
        "events": result.events,
        "faults": result.faults,
        "unclean_elections": result.unclean_elections,
        "trace_hash": result.trace_hash,
        "replay": config.replay_command(),
    }


@dataclass
class SweepSummary:
    scenario: str
    seeds: int
    failing_seeds: list[int]
    violations_by_invariant: dict[str, int]
    wall_s: float
    seeds_per_minute: float
    virtual_s: float
    mode: str
    replay: list[str]
    unclean_elections: int = 0
    """Leader elections from outside the ISR over all seeds (scenarios that enable unclean election)."""


def _configs(template: SimConfig, first_seed: int, count: int) -> list[SimConfig]:
    return [replace(template, seed=seed, log_dir=None) for seed in range(first_seed, first_seed + count)]


def sweep_processes(template: SimConfig, first_seed: int, count: int, workers: int) -> list[dict[str, Any]]:
    configs = _configs(template, first_seed, count)
    if workers <= 1:
        return [run_row(c) for c in configs]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(run_row, configs, chunksize=max(1, count // (workers * 8))))


def sweep_spark(template: SimConfig, first_seed: int, count: int, master: str | None, out: Path) -> list[dict]:
    """One Spark task per slice of seeds; the table is written by Spark itself."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import Row, SparkSession

    from zkcontroller.analytics.job import spark_error_line

    builder = SparkSession.builder.appName("zkcontroller-sim-sweep").config("spark.ui.showConsoleProgress", "false")
    # A new SparkContext installs its own Ctrl-C handler (it cancels the running jobs); the caller's comes back
    # once the session stops, so a sweep called as a library leaves the process's signal handling as it found it.
    caller_sigint = signal.getsignal(signal.SIGINT)
    try:
        spark = (builder.master(master) if master else builder.master("local[*]")).getOrCreate()
    except Exception as exc:  # e.g. a standalone master nobody answers at
        signal.signal(signal.SIGINT, caller_sigint)
        raise SparkStartError(f"could not start Spark on {master or 'local[*]'}: {spark_error_line(exc)}") from exc
    try:
        configs = _configs(template, first_seed, count)
        slices = max(1, min(count, spark.sparkContext.defaultParallelism * 4))
        rows = spark.sparkContext.parallelize(configs, slices).map(run_row).map(lambda r: Row(**r))
        frame = spark.createDataFrame(rows, schema=_spark_schema()).orderBy("seed")
        frame.write.mode("overwrite").parquet(str(out / "runs.parquet"))
        return [row.asDict() for row in frame.collect()]
    finally:
        spark.stop()
        signal.signal(signal.SIGINT, caller_sigint)


def _spark_schema() -> Any:
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    types = {"seed": LongType(), "violations": LongType(), "virtual_ms": LongType(), "wall_ms": DoubleType(),
             "events": LongType(), "faults": LongType(), "unclean_elections": LongType()}
    return StructType([StructField(c, types.get(c, StringType()), True) for c in COLUMNS])


def write_parquet(rows: list[dict[str, Any]], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(sorted(rows, key=lambda r: r["seed"]), schema=pa.schema([
        ("seed", pa.int64()), ("scenario", pa.string()), ("violations", pa.int64()),
        ("first_violation", pa.string()), ("virtual_ms", pa.int64()), ("wall_ms", pa.float64()),
        ("events", pa.int64()), ("faults", pa.int64()), ("unclean_elections", pa.int64()), ("trace_hash", pa.string()),
        ("replay", pa.string()),
    ]))
    pq.write_table(table, path)


def sweep(template: SimConfig, first_seed: int, count: int, out: Path, *, spark: bool = False,
          master: str | None = None, workers: int | None = None) -> tuple[list[dict[str, Any]], SweepSummary]:
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    if spark:
        rows = sweep_spark(template, first_seed, count, master, out)
        mode = f"spark {master or 'local[*]'}"
    else:
        workers = workers or os.cpu_count() or 1
        rows = sweep_processes(template, first_seed, count, workers)
        write_parquet(rows, out / "runs.parquet")
        mode = f"{workers} process{'es' if workers != 1 else ''}"
    wall = time.perf_counter() - started
    failing = sorted((r for r in rows if r["violations"]), key=lambda r: r["seed"])
    by_invariant = Counter(str(r["first_violation"]).split(" at step")[0] for r in failing)
    summary = SweepSummary(template.scenario, count, [r["seed"] for r in failing], dict(sorted(by_invariant.items())),
                           round(wall, 3), round(count / wall * 60, 1) if wall else 0.0,
                           round(sum(r["virtual_ms"] for r in rows) / 1000, 3), mode, [r["replay"] for r in failing],
                           sum(r["unclean_elections"] for r in rows))
    (out / "summary.json").write_text(json.dumps(asdict(summary), indent=2) + "\n", encoding="utf-8")
    return rows, summary
