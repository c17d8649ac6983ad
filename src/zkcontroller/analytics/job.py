"""The batch job: extract -> transform -> load -> report, on whatever master the session was given.

Run it through ``zkcontroller analyze`` or, on a cluster, ``spark-submit .../job.py INPUT... --out DIR``
(see docs/analytics.md). Events are written first and read back as Parquet, so the (costly) parse runs
once and every derived table scans the columnar copy instead.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from zkcontroller.analytics import incidents, transform
from zkcontroller.analytics.extract import InputError, extract
from zkcontroller.analytics.load import write_table

DEFAULT_MASTER = "local[*]"
LOCAL_DRIVER_MEMORY = "4g"


@dataclass
class JobConfig:
    """What to analyze and where to put the result."""

    inputs: list[str]
    out: Path
    master: str | None = None
    cluster: str | None = None
    cluster_pattern: str | None = None
    slow_event_ms: int = 1000
    max_handling_ms: int = 60_000
    report: bool = True


@dataclass
class JobResult:
    """Row counts per table and where things were written."""

    out: Path
    rows: dict[str, int] = field(default_factory=dict)
    report: Path | None = None
    seconds: float = 0.0


def local_cores(master: str) -> int | None:
    """Cores of a ``local``, ``local[N]`` or ``local[*]`` master; None for a cluster master."""
    m = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\d+)?\])?", master)
    if m is None:
        return None
    return os.cpu_count() or 1 if m.group(1) in (None, "*") else int(m.group(1))


def build_session(master: str | None, app_name: str = "zkcontroller-analyze") -> SparkSession:
    """A session on ``master``; without one, spark-submit's master or else local[*]. Always UTC.

    In local mode the defaults are sized for one machine unless already configured: a few shuffle
    partitions per core instead of 200 (each is a task per shuffle, and the job has dozens of shuffles), and
    a driver heap big enough to keep the parsed lines cached (the driver is the executor).
    """
    from pyspark import SparkConf

    conf = SparkConf()
    builder = SparkSession.builder.appName(app_name).config("spark.sql.session.timeZone", "UTC").config(
        "spark.ui.showConsoleProgress", "false")
    if master:
        builder = builder.master(master)
    elif not SparkSession.getActiveSession() and not conf.contains("spark.master"):
        builder = builder.master(DEFAULT_MASTER)
    cores = local_cores(master or conf.get("spark.master", DEFAULT_MASTER))
    if cores is not None:
        if not conf.contains("spark.sql.shuffle.partitions"):
            builder = builder.config("spark.sql.shuffle.partitions", str(2 * cores))
        if not conf.contains("spark.driver.memory"):
            builder = builder.config("spark.driver.memory", LOCAL_DRIVER_MEMORY)
    return builder.getOrCreate()


def run(spark: SparkSession, config: JobConfig) -> JobResult:
    """Run the whole pipeline; raises InputError for missing/empty inputs, never for bad lines."""
    started = time.monotonic()
    out = config.out
    out.mkdir(parents=True, exist_ok=True)
    extracted = extract(spark, config.inputs, config.cluster, config.cluster_pattern)
    result = JobResult(out=out)
    try:
        write_table("events", extracted.events, out)
        write_table("rejected_lines", extracted.rejected, out)
    finally:
        extracted.release()
    events = spark.read.parquet(str(out / "events"))
    rejected = spark.read.parquet(str(out / "rejected_lines"))
    result.rows["events"] = events.count()
    result.rows["rejected_lines"] = rejected.count()
    if result.rows["events"] == 0 and result.rows["rejected_lines"] == 0:
        raise InputError(f"{', '.join(config.inputs)}: no log lines found in the input")
    intervals = transform.partition_state_intervals(events)
    elections = transform.leader_elections(events)
    tables = {
        "partition_state_intervals": intervals,
        "leader_elections": elections,
        "controller_tenures": transform.controller_tenures(events),
        "broker_failures": incidents.broker_failures(events, config.max_handling_ms),
        "partition_unavailability": transform.partition_unavailability(events),
        "event_queue_latency": incidents.event_queue_latency(events),
    }
    for name, df in tables.items():
        write_table(name, df, out)
    written_elections = spark.read.parquet(str(out / "leader_elections"))
    write_table("anomalies", incidents.anomalies(events, written_elections, config.slow_event_ms), out)
    for name in (*tables, "anomalies"):
        result.rows[name] = spark.read.parquet(str(out / name)).count()
    if config.report:
        from zkcontroller.analytics.report import write_report

        series = {
            "offline": incidents.offline_partitions_over_time(
                spark.read.parquet(str(out / "partition_state_intervals")), events).toPandas(),
            "leaders": incidents.leaders_per_broker_over_time(events).toPandas(),
            "rejected_reasons": rejected.groupBy("reason").agg(F.count(F.lit(1)).alias("lines")).toPandas(),
        }
        result.report = write_report(out, result.rows, series, config)
    result.seconds = time.monotonic() - started
    return result


def main(argv: list[str] | None = None) -> int:
    """Entry point for ``spark-submit job.py INPUT... --out DIR`` (the master comes from spark-submit)."""
    parser = argparse.ArgumentParser(prog="job.py", description=__doc__)
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--cluster")
    parser.add_argument("--cluster-pattern")
    parser.add_argument("--slow-event-ms", type=int, default=1000)
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args(argv)
    spark = build_session(None)
    try:
        result = run(spark, JobConfig(
            inputs=args.inputs, out=args.out, cluster=args.cluster, cluster_pattern=args.cluster_pattern,
            slow_event_ms=args.slow_event_ms, report=not args.no_report))
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        spark.stop()
    for name, count in result.rows.items():
        print(f"{name}: {count} rows")
    return 0


if __name__ == "__main__":  # pragma: no cover - spark-submit entry
    sys.exit(main())
