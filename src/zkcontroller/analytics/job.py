"""The batch job: extract -> merge -> transform -> load -> report, on whatever master the session was given.

Run it through ``zkcontroller analyze`` or, on a cluster, ``spark-submit .../job.py INPUT... --out DIR``
(see docs/analytics.md). A first parse keeps only the rejected lines and the few rows that decide which ISR
changes change nothing; then ``events`` is written (that write parses again, in parallel, and drops those ISR
changes), and every derived table reads the written Parquet back (``read_events``). The few rows that decide
tenures, restarts and broker failures are collected and reasoned about on the driver (``controller_timeline``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from importlib.resources import as_file, files
from pathlib import Path
from typing import TextIO, TypeVar

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import DecimalType, StructType

from zkcontroller.analytics import admin_tables, incidents, tables, transform
from zkcontroller.analytics import controller_timeline as ct
from zkcontroller.analytics.controller_timeline import Row
from zkcontroller.analytics.extract import OK, REJECTED, Extracted, extract
from zkcontroller.analytics.jvm_console import filtered_jvm_stderr
from zkcontroller.analytics.load import SORT_KEYS, write_table
from zkcontroller.analytics.merge import (
    CHECKED_COLUMNS,
    CHECKED_KINDS,
    DEFAULT_TOLERANCE_MS,
    MERGE_COLUMNS,
    merge_sources,
    sources_by_cluster,
    unchanged_isr_rows,
    without_rows,
)
from zkcontroller.analytics.sources import (
    CLUSTER_OPTIONS_CONFLICT,
    InputError,
    cluster_pattern,
    jsonl_cluster,
    resolve_inputs,
)
from zkcontroller.analytics.tables import REJECTED_COLUMNS
from zkcontroller.analytics.timeline_tables import (
    FAILURE_COLUMNS,
    anomaly_rows,
    failure_windows,
    incident_rows,
    life_column,
    rows_frame,
    tenures_frame,
)
from zkcontroller.runtime.files import ensure_writable_dir

DEFAULT_MASTER = "local[*]"
LOCAL_DRIVER_MEMORY = "4g"
LOOPBACK = "127.0.0.1"
T = TypeVar("T")
CACHED = StorageLevel.MEMORY_AND_DISK_DESER
"""How the job persists what several tables read: ``DataFrame.cache()``'s level. PySpark's ``MEMORY_AND_DISK``
keeps the cached column batches as serialized bytes, which every scan deserializes again."""
PARALLEL_ACTIONS = 3
"""Threads submitting independent Spark actions (see ``_in_parallel``)."""
LOG4J2_PROPERTIES = Path(__file__).with_name("log4j2.properties")
"""The driver's log4j2 configuration: errors only, where Spark's default printed a screen of WARN lines."""

JIT_OPTIONS = "-XX:Tier4InvocationThreshold=15000 -XX:Tier4CompileThreshold=45000 -XX:Tier4BackEdgeThreshold=120000"
"""HotSpot's optimizing compiler (C2) waits three times longer before compiling a method, for the driver and
executor JVMs unless already set.

The job's ~60 queries generate a few hundred classes (whole-stage codegen) and shift the type profiles of
Spark's own code; with HotSpot's defaults C2 spent 25-35 CPU-s per job at 1M lines (4,500 compilations), a third
of all the CPU the job used on two cores. Waiting longer leaves lukewarm methods to C1. Shallower inlining
cut C2 further (to 13 CPU-s, 1M lines 20 % faster) but made the tasks' code slower: at 10M lines the job took
25 % longer on ``local[1]``, so it is not used (docs/benchmarks.md, issue 16, fourth round)."""
CODEGEN_CACHE_ENTRIES = "1000"
"""Spark's cache of compiled generated classes (``spark.sql.codegen.cache.maxEntries``, default 100). One job
generates more than 100, so a second job in the same session (tests, notebooks, the benchmark after its
warm-up) found none of its classes and compiled them all again."""
BROADCAST_DROPPED_ROWS = 100_000
"""Most keys of no-op ISR changes sent to every task to drop them from ``events`` (cluster, file name and line
number: about 100-200 bytes each on the driver and in every executor, so at most some tens of MB); more, and
they are dropped by a shuffled anti-join instead."""
CACHE_COMPRESSED = "spark.sql.inMemoryColumnarStorage.compressed"
"""Off while the job runs: its caches live for one job and are mostly nulls; compressing them (statistics over
every value of every column to pick an encoding) cost more executor CPU than their scans saved."""


@dataclass
class JobConfig:
    """What to analyze, where to put the result, and the thresholds that decide what is an incident."""

    inputs: list[str]
    out: Path
    master: str | None = None
    cluster: str | None = None
    cluster_pattern: str | None = None
    slow_event_ms: int = 1000
    max_handling_ms: int = 60_000
    min_leaderless_ms: int = 100
    restart_gap_ms: int = ct.DEFAULT_RESTART_GAP_MS
    storm_elections: int = ct.DEFAULT_STORM_ELECTIONS
    merge_tolerance_ms: int = DEFAULT_TOLERANCE_MS
    report: bool = True
    parser: str = "jvm"
    """Parser of Kafka-format text: ``jvm`` (in Spark's executors) or ``python`` (the reference, in workers)."""


@dataclass
class JobResult:
    """Row counts per table, warnings for the user, and where things were written."""

    out: Path
    rows: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    report: Path | None = None
    seconds: float = 0.0


def at_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal: Spark's progress bar redraws one line with \\r, and into a file or pipe
    it wrote hundreds of "[Stage N:>  (0 + 2) / 4]" fragments between the job's own lines."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # replaced by something without isatty, or closed
        return False


def nothing_read(rows: dict[str, int], out: Path) -> list[str]:
    """The warning for a run that read no event at all: given files of another kind (a reassignment JSON, a
    broker's server.properties) it wrote empty tables and a report with nothing in it, said nothing and exited 0,
    as if the cluster had been idle."""
    if rows.get("events", 0):
        return []
    rejected = rows.get("rejected_lines", 0)
    return [f"no event was read from the inputs ({rejected} line(s) rejected, see {out / 'rejected_lines'}): are "
            "they zkcontroller event logs (events.jsonl) or Kafka's controller.log, state-change.log or server.log?"]


def outcome_lines(result: JobResult) -> tuple[list[str], list[str]]:
    """What a finished run prints, the same from ``zkcontroller analyze`` and the spark-submit entry: the
    ``warning:`` lines (standard error) and the summary of rows, report and time (standard output)."""
    warnings = [f"warning: {w}" for w in [*result.warnings, *nothing_read(result.rows, result.out)]]
    summary = [f"{name:28} {count:>10} rows" for name, count in result.rows.items()]
    if result.report:
        summary.append(f"report: {result.report}")
    summary.append(f"done in {result.seconds:.1f} s")
    return warnings, summary


def local_cores(master: str) -> int | None:
    """Cores of a ``local``, ``local[N]`` or ``local[*]`` master; None for a cluster master."""
    m = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\d+)?\])?", master)
    if m is None:
        return None
    return os.cpu_count() or 1 if m.group(1) in (None, "*") else int(m.group(1))


_MASTER_URL = re.compile(r"local(?:\[(?:\*|[1-9]\d*)(?:\s*,\s*\d+)?\])?|local-cluster\[[\d\s,]+\]|spark://\S+"
                         r"|yarn|k8s://\S+")


def check_master(master: str) -> None:
    """Raise ValueError unless ``master`` has a form Spark accepts; checked before a JVM starts, since Spark's
    own refusal is a JVM exit that surfaces as a Python traceback."""
    if _MASTER_URL.fullmatch(master) is None:
        raise ValueError(f"--master {master!r} is not a Spark master URL: local, local[N], local[*], "
                         "spark://HOST:PORT, yarn or k8s://URL")


def spark_error_line(exc: Exception) -> str:
    """One line for a failed Spark start: the Java exception's own message for a Py4J error (its str() is a
    whole stack trace), else the first line of str(exc)."""
    java = getattr(exc, "java_exception", None)
    text = (str(java.toString()) if java is not None else str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def session_config(master: str | None, ui: bool = False, progress: bool = True) -> dict[str, str]:
    """Settings ``build_session`` applies on top of what spark-submit (``SparkConf``) already set.

    The driver binds to loopback and Spark's UI is off unless asked for (then it is on loopback too); Spark's
    console progress bar shows stage progress. In local mode a few shuffle partitions per core replace 200.
    The JVMs get ``JIT_OPTIONS`` and a larger codegen cache unless those are set already, and the driver
    ``LOG4J2_PROPERTIES`` (errors only on the console) with them.
    """
    from pyspark import SparkConf

    conf = SparkConf()
    settings = {"spark.sql.session.timeZone": "UTC", "spark.ui.enabled": str(ui).lower(),
                "spark.ui.showConsoleProgress": str(progress).lower(), "spark.python.worker.reuse": "true"}
    driver_options = f"{JIT_OPTIONS} -Dlog4j2.configurationFile={LOG4J2_PROPERTIES.as_uri()}"
    for key, value in (("spark.driver.extraJavaOptions", driver_options), ("spark.executor.extraJavaOptions",
                       JIT_OPTIONS), ("spark.sql.codegen.cache.maxEntries", CODEGEN_CACHE_ENTRIES)):
        if not conf.contains(key):
            settings[key] = value
    if not conf.contains("spark.driver.host"):
        settings.update({"spark.driver.host": LOOPBACK, "spark.driver.bindAddress": LOOPBACK})
    if master:
        settings["spark.master"] = master
    elif not conf.contains("spark.master"):
        settings["spark.master"] = DEFAULT_MASTER
    cores = local_cores(settings.get("spark.master") or conf.get("spark.master", DEFAULT_MASTER))
    if cores is not None:
        if not conf.contains("spark.sql.shuffle.partitions"):
            settings["spark.sql.shuffle.partitions"] = str(2 * cores)
        if not conf.contains("spark.driver.memory"):
            settings["spark.driver.memory"] = LOCAL_DRIVER_MEMORY
    return settings


def build_session(master: str | None, app_name: str = "zkcontroller-analyze", ui: bool = False,
                  progress: bool = True, parser: str = "jvm", extra: dict[str, str] | None = None) -> SparkSession:
    """A session on ``master``; without one, spark-submit's master or else local[*] (see ``session_config``).

    With ``parser="jvm"`` the JVM parser's jar (built on first use) goes in ``spark.jars``: the driver and
    every executor load it. Without it (no javac) the job falls back to Python and warns. ``extra`` settings
    (e.g. a benchmark's event log) go on top.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # executors parse with this package: same Python
    builder = SparkSession.builder.appName(app_name)
    settings = {**session_config(master, ui, progress), **(extra or {})}
    if settings.get("spark.driver.host") == LOOPBACK:  # else Spark warns that the host name resolves to loopback
        os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
    if parser == "jvm":
        from pyspark import SparkConf

        from zkcontroller.analytics.jvm_parser import build_jar

        jar, _ = build_jar()  # on failure, extract() says why in the job's warnings
        if jar is not None:
            settings["spark.jars"] = ",".join(filter(None, [SparkConf().get("spark.jars", ""), str(jar)]))
    for key, value in settings.items():
        builder = builder.config(key, value)
    quiet_running_driver()
    with filtered_jvm_stderr():  # the JVM it starts warns of an incubator module it never uses: see jvm_console
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


ANALYTICS_PACKAGE = "zkcontroller.analytics"
"""This module's package, by name: under spark-submit the module runs as ``__main__``, without one."""
SPARK_DEFAULT_LOG4J2 = "org/apache/spark/log4j2"
"""How the locations of Spark's own log4j2 configurations (``log4j2-defaults.properties``, the JSON layout's)
begin inside its jar."""


def quiet_running_driver() -> None:
    """Under ``spark-submit``, give the already running driver JVM ``LOG4J2_PROPERTIES`` before the session
    starts, as ``session_config`` gives a driver the job starts itself.

    spark-submit's JVM set up Spark's default logging (INFO on the console) and left it to be set up again by the
    first line Spark logs, so the context's start printed some 40 INFO lines before the job's first one. Spark's
    set-up is run now, silently, and its configuration then replaced; a configuration of the user's own
    (``-Dlog4j2.configurationFile``, a ``log4j2.properties`` in ``SPARK_CONF_DIR``) is left alone, and nothing is
    done where no JVM is running yet or a context already is.
    """
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None or (
            SparkContext._gateway is None and "PYSPARK_GATEWAY_PORT" not in os.environ):
        return
    from py4j.protocol import Py4JError

    SparkContext._ensure_initialized()
    jvm = SparkContext._jvm
    if jvm is None:  # _ensure_initialized sets it; a Spark whose internals differ keeps its own logging
        return
    log4j = jvm.org.apache.logging.log4j
    try:  # the console's noise only: a Spark whose internals differ keeps its own and the job runs on
        location = log4j.LogManager.getContext(False).getConfiguration().getConfigurationSource().getLocation()
        if SPARK_DEFAULT_LOG4J2 not in str(location or ""):
            return
        getattr(getattr(jvm.org.apache.spark, "SparkContext$"), "MODULE$").initializeLogIfNecessary(False, True)
        # a file even when the package is imported from the wheel given to --py-files (as_file then extracts it)
        with as_file(files(ANALYTICS_PACKAGE).joinpath(LOG4J2_PROPERTIES.name)) as properties:
            log4j.core.config.Configurator.reconfigure(jvm.java.net.URI(properties.as_uri()))
    except (Py4JError, OSError):
        return


OUT_MARKER = ".zkcontroller-analyze"
"""Written in every ``--out`` the job writes. Spark's overwrite mode replaces a table's directory whatever it
held, so a directory without it (a shared one, or a mistyped path) is not written over: see ``check_output_dir``."""
OUT_ENTRIES = frozenset({*SORT_KEYS, "report.html", "report"})
"""What the job replaces or removes in ``--out``: the tables' directories and the report."""


def check_output_dir(out: Path) -> None:
    """Fail at once (before any Spark work) when ``out`` cannot be created or written, or when it holds an
    entry the job would replace and is not a directory the job wrote (no ``OUT_MARKER``): e.g. an ``events/``
    of someone else's in a shared directory."""
    if out.exists() and not out.is_dir():  # mkdir's "File exists" read as if the directory were there
        raise InputError(f"{out}: --out is a file, not a directory")
    try:
        ensure_writable_dir(out)
    except OSError as exc:
        raise InputError(f"{out}: output directory is not writable ({exc.strerror or exc})") from exc
    if (out / OUT_MARKER).exists():
        return
    clashes = sorted(f"{p.name}/" if p.is_dir() else p.name for p in out.iterdir() if p.name in OUT_ENTRIES)
    if clashes:
        raise InputError(f"{out}: holds {', '.join(clashes)}, which the job would replace, and was not written by "
                         f"zkcontroller analyze; give an empty or new --out directory, or, if it is an earlier "
                         f"run's output, create {out / OUT_MARKER} first")


def mark_output_dir(out: Path) -> None:
    """Write ``OUT_MARKER`` in ``out``: from now on the job may replace its tables without asking."""
    (out / OUT_MARKER).write_text("Written by zkcontroller analyze: its next run into this directory replaces "
                                  "the tables and report here.\n")


def check_arguments(inputs: list[str], out: Path, master: str | None = None) -> None:
    """Everything about the arguments that can fail before a JVM starts: ``master`` (when given), the inputs
    (missing, empty, unreadable, inside ``out``) and ``out`` itself (``check_output_dir``). Raises InputError
    with a one-line message; the CLI and ``main`` print it as ``Error: MESSAGE`` and exit 1."""
    if master is not None:
        try:
            check_master(master)
        except ValueError as exc:
            raise InputError(str(exc)) from exc
    resolve_inputs(inputs, exclude=out)
    check_output_dir(out)


def count_rows(path: Path) -> int:
    """Rows of a written table, from the Parquet footers (no Spark job)."""
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in path.rglob("*.parquet"))


def _collect(df: DataFrame) -> list[Row]:
    return [r.asDict(recursive=True) for r in df.collect()]


Rows = list[Row]


def _tenure_rows(events: DataFrame) -> tuple[Rows, dict[str, list[int]], Rows, Rows]:
    """What ``controller_timeline.build_tenures`` reads: the lifecycle lines, the lives of each cluster they and
    every other line stating a controller epoch show (``life_starts``, ``_stated_runs``), and one activity
    summary per (cluster, life, controller, epoch), so that the same controller and epoch in two lives of a
    cluster (its ZooKeeper data wiped between them) are two tenures.

    Where an epoch was reset, also each earlier life's end (``life_end_rows``), where the partitions' states of
    that life end (``transform._within_life``); else no row."""
    lifecycle = _collect(events.where(
        F.col("kind").isin(*LIFECYCLE_KINDS) & F.col("controller_id").isNotNull()).select(
        "cluster", "ts_ms", "kind", "controller_id", "controller_epoch", "source_file", "line_number"))
    starts = ct.life_starts(lifecycle, _collect(_stated_runs(events)))
    keys = ("cluster", "life", "controller_id", "controller_epoch")
    per_file = _first_per_file(events.where(
        F.col("controller_id").isNotNull() & (F.col("controller_epoch") != ct.NO_CONTROLLER_EPOCH)
    ).withColumn("life", life_column(starts)), keys,
        F.min("ts_ms").alias("first_ms"), F.max("ts_ms").alias("last_ms"), F.count(F.lit(1)).alias("events"))
    activity = _collect(per_file.groupBy(*keys).agg(
        F.min("first_ms").alias("first_ms"), F.max("last_ms").alias("last_ms"), F.sum("events").alias("events"),
        _first_of_files().alias("first")).select("*", "first.source_file", "first.line_number").drop("first"))
    return lifecycle, starts, activity, life_end_rows(starts, activity)


def shutdown_request_rows(membership: list[Row]) -> list[Row]:
    """The controller's ControlledShutdown requests ("Shutting down broker n") in ``membership``, as
    ``transform.SHUTDOWN_REQUEST_COLUMNS``: each with the cluster's next request, a later time (two in the same
    millisecond: the later line stands)."""
    asked = sorted((r for r in membership if r["kind"] == "controlled_shutdown" and r.get("broker_id") is not None),
                   key=lambda r: (str(r["cluster"]), int(r["ts_ms"]), str(r["source_file"]), int(r["line_number"])))
    rows: list[Row] = []
    for r in asked:
        if rows and rows[-1]["cluster"] == r["cluster"]:
            if rows[-1]["request_ms"] == int(r["ts_ms"]):
                rows.pop()
            else:
                rows[-1]["next_request_ms"] = int(r["ts_ms"])
        rows.append({"cluster": r["cluster"], "request_ms": int(r["ts_ms"]), "next_request_ms": None,
                     "shutting_down": int(r["broker_id"]), "request_epoch": r.get("controller_epoch")})
    return rows


LIFECYCLE_KINDS = ("controller_elected", "controller_ready", "controller_resigned")
STATED_BUCKET_MS = 1_000
"""Lines stating a controller epoch are first summarized per (controller, epoch) and second: one row per second
in which a controller was heard from, not one per line, goes into the runs of ``_stated_runs``."""


def _stated_runs(events: DataFrame) -> DataFrame:
    """``controller_timeline.stated_epoch_runs`` of every line but the lifecycle ones that states a controller
    and epoch (a controller's own lines, and brokers' lines naming the controller whose request they handled),
    but brokers refusing a request (``NEVER_STATED``): stale by definition, no sign of a life.

    A run is cut only where another controller or epoch comes between, so a steady cluster gives about one per
    tenure: the driver gets those (``life_starts`` reads them), not a row per line. The lines are first summed
    up per (controller, epoch, second), in parallel, and only those rows are ordered per cluster."""
    stated = events.where(F.col("controller_id").isNotNull()
                          & (F.col("controller_epoch") != ct.NO_CONTROLLER_EPOCH)
                          & ~F.col("kind").isin(*LIFECYCLE_KINDS, *ct.NEVER_STATED))
    keys = ("cluster", "controller_id", "controller_epoch", "second")
    per_file = _first_per_file(stated.withColumn("second", F.floor(F.col("ts_ms") / STATED_BUCKET_MS)), keys,
                               F.min("ts_ms").alias("ts_ms"), F.max("ts_ms").alias("last_ms"))
    seconds = per_file.groupBy(*keys).agg(F.min("ts_ms").alias("ts_ms"), F.max("last_ms").alias("last_ms"),
                                          _first_of_files().alias("first"))
    order = Window.partitionBy("cluster").orderBy("ts_ms", "controller_epoch", "controller_id")
    before = F.lag(F.struct("controller_id", "controller_epoch")).over(order)
    cut = F.when(before.isNull() | (before["controller_id"] != F.col("controller_id"))
                 | (before["controller_epoch"] != F.col("controller_epoch")), 1).otherwise(0)
    runs = seconds.withColumn("run", F.sum(cut).over(order.rowsBetween(Window.unboundedPreceding, 0)))
    return runs.groupBy("cluster", "run").agg(
        F.min("controller_id").alias("controller_id"), F.min("controller_epoch").alias("controller_epoch"),
        F.min("ts_ms").alias("ts_ms"), F.max("last_ms").alias("last_ms"),
        F.min_by("first", F.struct("ts_ms", "first")).alias("first")).select(
        "cluster", "controller_id", "controller_epoch", "ts_ms", "last_ms", "first.source_file", "first.line_number")


_KEY = DecimalType(38, 0)
_NO_TS = -(1 << 62)
"""A null ``ts_ms`` in ``_first_per_file``'s key: below every parsed time (years 0001-9999), as a null sorts."""
_TS_BITS, _LINE_BITS = 42, 21
"""``_first_per_file``'s long key: ts_ms below 2**42 (until 2109), line below 2**21."""
_LINE_SPAN = (1 << 64) + 1
"""``line_number`` in ``_first_per_file``'s key: 0 for null (first, as a null sorts), else line + 2**63 + 1."""


def _first_of_files() -> Column:
    """Over ``_first_per_file``'s rows: the first line of the group, as ``min_by`` over (ts_ms, source_file,
    line_number) of every row would give it (a few rows per group, so its sort is cheap)."""
    return F.min_by(F.struct("source_file", "line_number"), F.struct("first_ts", "source_file", "line_number"))


def _first_per_file(rows: DataFrame, keys: tuple[str, ...], *aggs: Column) -> DataFrame:
    """``rows`` aggregated per ``keys`` and ``source_file`` by ``aggs``, with each group's first line by
    (ts_ms, line_number), nulls first (``first_ts``, ``line_number``), for ``_first_of_files`` to pick from.

    Why: ``min_by`` over a struct with a string holds a buffer Spark's hash aggregate cannot, so it sorted every
    row (0.7-0.9 executor CPU-s each at 1M lines, docs/benchmarks.md issue 16). Here the string is a grouping
    key and the first line the minimum of one number, which hashes: ts * 2**21 + line in a long for the lines
    of 0 <= ts_ms < 2**42 (until 2109) and 0 <= line < 2**21; for any other line (a null sorts first) the
    decimal(38,0) ts * (2**64 + 1) + (line + 2**63 + 1, or 0 for null), whose arithmetic costs as much as the
    sort did, so it is computed for those lines only. Exact for |ts_ms| < 2**62 and every bigint line."""
    def key(n: int) -> Column:
        return F.lit(str(n)).cast(_KEY)

    ts_c = F.coalesce(F.col("ts_ms"), F.lit(_NO_TS))
    short = F.coalesce(F.col("ts_ms").between(0, (1 << _TS_BITS) - 1)
                       & F.col("line_number").between(0, (1 << _LINE_BITS) - 1), F.lit(False))
    line = F.coalesce(F.col("line_number").cast(_KEY) + key((1 << 63) + 1), key(0))
    packed = (ts_c.cast(_KEY) * key(_LINE_SPAN) + line).cast(_KEY)
    grouped = rows.groupBy(*keys, "source_file").agg(
        *aggs, F.min(F.when(short, F.shiftleft(F.col("ts_ms"), _LINE_BITS) + F.col("line_number"))).alias("_lk"),
        F.min(F.when(~short, ts_c)).alias("_dts"), F.min(F.when(~short, packed)).alias("_dk"))
    slot = F.pmod(F.col("_dk"), key(_LINE_SPAN))
    line_d = F.when(slot != 0, (slot - key((1 << 63) + 1)).cast("bigint"))
    ts_l = F.shiftright(F.col("_lk"), _LINE_BITS)
    line_l = F.col("_lk").bitwiseAND((1 << _LINE_BITS) - 1)
    use_d = F.col("_lk").isNull() | (F.col("_dk").isNotNull() & (
        (F.col("_dts") < ts_l) | ((F.col("_dts") == ts_l) & (line_d.isNull() | (line_d < line_l)))))
    first_ts = F.when(use_d, F.col("_dts")).otherwise(ts_l)
    return grouped.select(
        *keys, *(c for c in grouped.columns if c not in (*keys, "_lk", "_dts", "_dk")),
        F.when(first_ts != _NO_TS, first_ts).alias("first_ts"),
        F.when(use_d, line_d).otherwise(line_l).alias("line_number"))


def life_end_rows(starts: dict[str, list[int]], activity: list[Row]) -> list[Row]:
    """``transform.LIFE_END_COLUMNS`` rows: every life but the last of each cluster whose epoch was reset, with
    its end: the last line of any controller's tenure in it (``activity``, as ``_tenure_rows`` gives it).

    Not the life's last line of any kind: the next run's brokers log their start-up (no controller epoch yet)
    before its election line, which begins the next life, so that would be the next run's start."""
    last_ms: dict[tuple[str, int], int] = {}
    for a in activity:
        key = (str(a["cluster"]), int(a.get("life") or 0))
        last_ms[key] = max(last_ms.get(key, int(a["last_ms"])), int(a["last_ms"]))
    rows = []
    for cluster, at in starts.items():
        for life, (begin, following) in enumerate(zip([-(1 << 63), *at], at, strict=False)):
            rows.append({"cluster": cluster, "life_from_ms": begin, "next_life_ms": following,
                         "life_end_ms": last_ms.get((cluster, life), begin)})
    return rows


def _write_rejected(spark: SparkSession, rejected: DataFrame, events: DataFrame, out: Path,
                    warned: DataFrame | None = None) -> list[str]:
    """Write ``rejected_lines``; the warnings for files that could not be read to the end (rows with no line), for
    lines read with a field left null (``warned``: ok rows with a reason, ``line_warnings``) and for files whose
    lines were (nearly) all rejected (``mostly_rejected``)."""
    write_table("rejected_lines", rejected, out)
    if warned is not None:
        first = warned.groupBy("source_file", "reason").agg(F.min("line_number").alias("line_number"),
                                                             F.count(F.lit(1)).alias("count"))
        warnings_read = line_warnings([(str(r["source_file"]), int(r["line_number"]), str(r["reason"]),
                                        int(r["count"])) for r in _collect(first)])
    else:
        warnings_read = []
    written = spark.read.parquet(str(out / "rejected_lines"))
    unread = written.where(F.col("line").isNull())
    warnings = [f"{r['source_file']}: {r['reason']} (the rest of the input was read)" for r in _collect(unread)]
    per_file = {str(r["source_file"]): int(r["count"])
                for r in _collect(written.where(F.col("line").isNotNull()).groupBy("source_file").count())}
    if per_file:
        read = {str(r["source_file"]): int(r["count"]) for r in _collect(
            events.where(F.col("source_file").isin(*per_file)).groupBy("source_file").count())}
        warnings += mostly_rejected(per_file, read)
    return warnings_read + warnings


def line_warnings(found: list[tuple[str, int, str, int]]) -> list[str]:
    """One warning per file and reason of the lines read with a field left null (``kafka_log_parser.
    REASON_IDENT_NOT_NUMBER``): (file, first line, reason, lines) -> "file: line N: reason (and k more ...)"."""
    return [f"{name}: line {line}: {reason}" + (f" (and {count - 1} more line(s) of that file alike)" if count > 1
                                                else "")
            for name, line, reason, count in sorted(found)]


MOSTLY_REJECTED = 0.9
"""A file at least this share of whose records were rejected gets a warning of its own."""


def mostly_rejected(rejected: dict[str, int], events: dict[str, int]) -> list[str]:
    """One warning per file (relative path) whose records were (nearly) all rejected: random bytes, a file of
    another format or a layout the parser does not know, which the report's counts by reason alone hide."""
    warnings = []
    for name in sorted(rejected):
        bad, total = rejected[name], rejected[name] + events.get(name, 0)
        if bad >= MOSTLY_REJECTED * total:
            warnings.append(f"{name}: {bad} of its {total} line(s) rejected, {events.get(name, 0)} event(s) read: "
                            "not a Kafka log or event log this job can parse? (see rejected_lines)")
    return warnings


def _in_parallel(spark: SparkSession, actions: list[Callable[[], T]]) -> list[T]:
    """Results of independent Spark actions, run from ``PARALLEL_ACTIONS`` threads.

    One action at a time left the cores idle while the driver planned the next (about 9 s of gaps between
    the ~60 jobs at 1M lines) and during the few-task stages of small tables. Each thread gets the caller's
    local properties (job group, description, pool) and the session's tags, as a single-threaded run would.
    """
    from pyspark import inheritable_thread_target

    with ThreadPoolExecutor(max_workers=PARALLEL_ACTIONS) as pool:
        futures = [pool.submit(inheritable_thread_target(spark)(action)) for action in actions]
        return [f.result() for f in futures]


def _build_and_write(name: str, build: Callable[[], DataFrame], out: Path) -> StructType:
    """Build a table's frame and write it; its schema, to read it back. Built in the writing thread, not before
    the writes begin: Spark analyses each plan as it is built (about 3 s for the tables at 1M lines, with the cores
    idle), which here overlaps the other threads' jobs."""
    df = build()
    write_table(name, df, out)
    return df.schema


A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")
D = TypeVar("D")


def _all_of(spark: SparkSession, a: Callable[[], A], b: Callable[[], B], c: Callable[[], C],
            d: Callable[[], D], *also: Callable[[], object]) -> tuple[A, B, C, D]:
    """``_in_parallel`` of four actions of different result types, each result typed as its action's; the
    ``also`` actions run in the same pool (after those four are submitted) for their effect only."""
    from pyspark import inheritable_thread_target

    with ThreadPoolExecutor(max_workers=PARALLEL_ACTIONS) as pool:
        fa, fb = pool.submit(inheritable_thread_target(spark)(a)), pool.submit(inheritable_thread_target(spark)(b))
        fc, fd = pool.submit(inheritable_thread_target(spark)(c)), pool.submit(inheritable_thread_target(spark)(d))
        side_effects = [pool.submit(inheritable_thread_target(spark)(action)) for action in also]
        results = fa.result(), fb.result(), fc.result(), fd.result()
        for future in side_effects:
            future.result()
        return results


def run(spark: SparkSession, config: JobConfig, progress: Callable[[str], None] | None = None) -> JobResult:
    """Run the whole pipeline; raises InputError for missing/empty inputs, never for bad lines."""
    say = progress or (lambda _: None)
    started = time.monotonic()
    out = config.out
    check_output_dir(out)
    files = resolve_inputs(config.inputs, exclude=out)
    mark_output_dir(out)
    result = JobResult(out=out)
    extracted = extract(spark, files, config.cluster, config.cluster_pattern, parser=config.parser,
                        persist=False)
    result.warnings += extracted.warnings
    say(f"parsing {len(files.all)} file(s) in {len(extracted.chunks)} chunk(s) ({extracted.parser} parser)")
    jsonl_names = {name for name in map(jsonl_cluster, files.jsonl) if name}
    # a directory cut into runs (sources.directory_runs): its runs' Kafka-format lines merge with the event log's
    # records of their run (a run named by its id with no event log has none: the merge then drops nothing)
    runs = {name for s in extracted.sources for _, name in s.runs}
    mixed = sorted({s.cluster for s in extracted.sources if s.cluster in jsonl_names} | runs)
    if mixed:  # the merge's anti-join reads the parse twice
        extracted.parsed.persist(CACHED)
    events = merge_sources(extracted.events, mixed, config.merge_tolerance_ms)
    compressed = spark.conf.get(CACHE_COMPRESSED, None)
    spark.conf.set(CACHE_COMPRESSED, "false")  # read when a cache is built, i.e. by the actions below
    try:
        _analyze(spark, config, extracted, mixed, events, result, say)
    finally:
        extracted.release()
        if compressed is None:
            spark.conf.unset(CACHE_COMPRESSED)
        else:
            spark.conf.set(CACHE_COMPRESSED, compressed)
    result.seconds = time.monotonic() - started
    return result


def read_events(spark: SparkSession, out: Path) -> DataFrame:
    """The written ``events`` table, columns in ``tables.EVENTS`` order.

    An empty cluster name is written as a null partition value (Spark's ``__HIVE_DEFAULT_PARTITION__``); an
    event always has a cluster, so a null read back is that empty name and becomes it again.
    """
    schema = tables.struct((*tables.EVENTS, ("day", "date")))
    written = spark.read.schema(schema).parquet(str(out / "events"))
    cluster = F.when(F.col("cluster").isNull(), F.lit("")).otherwise(F.col("cluster")).alias("cluster")
    return written.select(*(cluster if name == "cluster" else F.col(name) for name in tables.EVENT_COLUMNS))


def _side_rows(extracted: Extracted, mixed: list[str]) -> DataFrame:
    """The few rows of the parse that are not written to ``events`` as they are: the rejected lines, and the
    rows ``unchanged_isr_rows`` reads (``CHECKED_KINDS``), with only the columns those two need; the merge's
    (``MERGE_COLUMNS``) only when some cluster is ``mixed``, since nothing is merged otherwise."""
    columns = dict.fromkeys(("status", *tables.REJECTED_COLUMNS, *CHECKED_COLUMNS, *(MERGE_COLUMNS if mixed else ())))
    parsed = extracted.parsed
    wanted = (F.col("status") == REJECTED) | ((F.col("status") == OK) & (
        F.col("kind").isin(*CHECKED_KINDS) | F.col("reason").isNotNull()))  # reason: a warning (line_warnings)
    return parsed.where(wanted).select(*columns)


def _without_unchanged_isr(events: DataFrame, side: DataFrame, mixed: list[str], tolerance_ms: int,
                           caches: _Caches) -> tuple[DataFrame, DataFrame]:
    """``events`` without the ISR changes that change nothing (``merge.unchanged_isr_rows``), found in
    ``side`` (``_side_rows``, persisted; merged as ``events`` was) rather than by a window over every row of
    ``events``; and those rows' keys, persisted (the caller unpersists them once ``events`` is written).

    No key found: ``events`` as it was. Up to ``BROADCAST_DROPPED_ROWS``: a broadcast anti-join, which leaves
    every row of the parse in its task (docs/benchmarks.md, issue 16, fourteenth session).
    """
    checked = side.where((F.col("status") == OK) & F.col("kind").isin(*CHECKED_KINDS)).select(*CHECKED_COLUMNS, *(
        c for c in MERGE_COLUMNS if mixed and c not in CHECKED_COLUMNS))
    dropped = caches.add(unchanged_isr_rows(merge_sources(checked, mixed, tolerance_ms)))
    count = dropped.count()
    if count == 0:
        return events, dropped
    return without_rows(events, dropped, broadcast=count <= BROADCAST_DROPPED_ROWS), dropped


class _Caches:
    """Every frame the job persists, released when the job ends, also when it fails: a session may run more jobs,
    and a cache left behind holds every partition row (the early releases stay where the job can make them)."""

    def __init__(self) -> None:
        self._frames: list[DataFrame] = []

    def add(self, frame: DataFrame) -> DataFrame:
        self._frames.append(frame.persist(CACHED))
        return frame

    def release_all(self) -> None:
        for frame in self._frames:
            frame.unpersist()  # a no-op for one released already
        self._frames.clear()


def _analyze(spark: SparkSession, config: JobConfig, extracted: Extracted, mixed: list[str], events: DataFrame,
             result: JobResult, say: Callable[[str], None]) -> None:
    caches = _Caches()
    try:
        _analyze_cached(spark, config, extracted, mixed, events, result, say, caches)
    finally:
        caches.release_all()


def _analyze_cached(spark: SparkSession, config: JobConfig, extracted: Extracted, mixed: list[str],
                    events: DataFrame, result: JobResult, say: Callable[[str], None], caches: _Caches) -> None:
    """Every table and the report from ``events`` (the parse, or the merge over the persisted parse).

    The parse is not cached for the tables: ``events`` is written straight from it, and every later table
    reads that Parquet copy back (only the columns and rows it needs). Building a columnar cache of every
    parsed line and scanning all of its columns for the write cost more executor CPU than parsing again for
    the few rejected lines and reading the Parquet back (docs/benchmarks.md, issue 16, twelfth session).
    That second parse comes first and keeps, besides the rejected lines, the few rows that decide which ISR
    changes change nothing (``_side_rows``), so ``events`` is written without them and without a shuffle.
    """
    out = config.out
    side = caches.add(_side_rows(extracted, mixed))
    try:
        events, dropped = _without_unchanged_isr(events, side, mixed, config.merge_tolerance_ms, caches)
        # events next: its write parses in parallel
        try:
            write_table("events", events, out)
        finally:
            dropped.unpersist()
        events = read_events(spark, out)
        # The windows over each partition's history read these rows, shuffled and sorted once for all of them.
        # Built (counted) with the collects below, before the frames that read it are persisted: a cache's plan is
        # made when it is persisted, and over a cache not yet built Spark knows no partitioning, so each of those
        # three planned its own shuffle and sort of these rows (docs/benchmarks.md, issue 16, twenty-fifth session).
        by_partition = transform.partition_rows(events, int(spark.conf.get("spark.sql.shuffle.partitions") or 200))
        by_partition = caches.add(by_partition)
        rejected = side.where(F.col("status") == REJECTED).select(*REJECTED_COLUMNS)
        rejected_warnings, (lifecycle, starts, activity, life_ends), membership, observed_rows = _all_of(spark,
            lambda: _write_rejected(spark, rejected, events, out,
                                    side.where((F.col("status") == OK) & F.col("reason").isNotNull())),
            lambda: _tenure_rows(events),
            # A list element the parsers could not hold would be null (the Kafka parsers reject such a line, but an
            # event log's may hold a null); the membership reasoning on the driver takes ids only, so the nulls are
            # dropped here, once.
            lambda: _collect(events.where(F.col("kind").isin("broker_failed", "broker_change", "broker_registered",
                                                              "controlled_shutdown", ct.SHUTDOWN_END,
                                                              ct.SHUTDOWN_START, "broker_starting"))
                             .select("cluster", "ts_ms", "kind", *(F.filter(name, lambda b: b.isNotNull()).alias(name)
                                                                  for name in ("brokers", "added_brokers",
                                                                               "live_brokers")),
                                     "broker_id", "phase", "controller_id", "controller_epoch", "source_file",
                                     "line_number")),
            # Every cluster's first and last event time: several tables and the report need it, so it is
            # aggregated once (not once per table, a scan of every event each time) and joined as a frame.
            lambda: _collect(transform.observed_windows(events)),
            by_partition.count,
        )
    finally:
        side.unpersist()
    for name in ("events", "rejected_lines"):
        result.rows[name] = count_rows(out / name)
    if result.rows["events"] == 0 and result.rows["rejected_lines"] == 0:
        raise InputError(f"{', '.join(config.inputs)}: no log lines found in the input")
    result.warnings += rejected_warnings

    say("controller tenures, failovers and restarts")
    # a broker process starting tells build_tenures a restarted controller's "Resigned" ends no tenure; to the
    # membership readers below it is no change of who is registered
    starting = [r for r in membership if r["kind"] == "broker_starting"]
    membership = [r for r in membership if r["kind"] != "broker_starting"]
    timeline = ct.classify(ct.build_tenures(lifecycle, activity, starts, starting + membership), config.restart_gap_ms,
                           config.storm_elections)
    result.warnings += timeline.warnings
    spans = ct.shutdown_spans(membership)  # once: broker failures and the incidents timeline both read it
    failures = ct.broker_failures(membership, timeline.tenures, spans=spans)
    observed = rows_frame(spark, observed_rows, transform.OBSERVED_WINDOW_COLUMNS)

    say("tables: elections, partitions, broker failures, split brain, anomalies")
    tenures = tenures_frame(spark, timeline.tenures)
    tenure_starts: dict[str, list[int]] = {}
    for tenure in timeline.tenures:
        tenure_starts.setdefault(tenure.cluster, []).append(tenure.start_ms)
    handling_windows = failure_windows(failures, membership, timeline.tenures, config.max_handling_ms)
    # Each is a window over every partition that several tables read: computed once, not once per table.
    lives = rows_frame(spark, life_ends, transform.LIFE_END_COLUMNS) if life_ends else None
    # by_partition has no topic_deletion rows: the deletions that end its partitions' lines come from events
    deletions = caches.add(transform.deletion_starts(events))
    intervals = caches.add(transform.partition_state_intervals(by_partition, observed, lives, deletions))
    leadership = caches.add(transform.partition_leadership(by_partition, observed, lives, deletions))
    # with_active_tenure reads the elections twice: the session aggregation runs once.
    requests = rows_frame(spark, shutdown_request_rows(membership), transform.SHUTDOWN_REQUEST_COLUMNS)
    elections_only = caches.add(transform.leader_elections(by_partition, shutdowns=requests,
                                                           started=transform.election_starts(events)))
    # controlled_shutdowns' rows come from attempt and end lines only (every one is in ``membership``): with none,
    # the same plan over no rows (Spark folds ``limit(0)`` away) writes the same empty table without reading
    # events; else its few rows, persisted, so that its branches read events once, not four times.
    shutdown_lines = admin_tables.shutdown_lines(events)
    shutdown_lines = caches.add(shutdown_lines) if any(
        r["kind"] in ("controlled_shutdown", ct.SHUTDOWN_END) for r in membership) else shutdown_lines.limit(0)
    tables: dict[str, Callable[[], DataFrame]] = {
        "controller_tenures": lambda: tenures,
        "partition_state_intervals": lambda: intervals,
        "leader_elections": lambda: transform.with_active_tenure(elections_only, tenures, transform.tenure_bucket_ms(
            tenure_starts)),
        "broker_failures": lambda: incidents.broker_failure_handling(
            rows_frame(spark, handling_windows, FAILURE_COLUMNS), events,
            incidents.handling_bucket_ms([int(w["until_ms"]) - int(w["detected_ms"]) for w in handling_windows])),
        "split_brain_windows": lambda: incidents.split_brain_windows(
            rows_frame(spark, timeline.split_brain_candidates, ct.CANDIDATE_COLUMNS), events),
        "partition_unavailability": lambda: transform.partition_unavailability(events, intervals, leadership,
                                                                               observed),
        "event_queue_latency": lambda: incidents.event_queue_latency(events),
        "sources": lambda: sources_by_cluster(events),
        "topic_deletions": lambda: admin_tables.topic_deletions(events),
        "partition_reassignments": lambda: admin_tables.partition_reassignments(events),
        "isr_changes": lambda: admin_tables.isr_changes(by_partition),
        "controlled_shutdowns": lambda: admin_tables.controlled_shutdowns(shutdown_lines, elections_only),
    }
    try:
        schemas = _in_parallel(spark, [partial(_build_and_write, name, build, out) for name, build in tables.items()])
    finally:
        shutdown_lines.unpersist()
    elections_only.unpersist()
    by_partition.unpersist()
    written = {name: spark.read.schema(schema).parquet(str(out / name)) for name, schema in zip(tables, schemas,
                                                                                                 strict=True)}
    elections, windows = written["leader_elections"], written["split_brain_windows"]
    windows_rows, failure_rows = _in_parallel(spark, [
        lambda: _collect(windows.select(
            "*", F.unix_millis("start_at").alias("start_ms"), F.unix_millis("end_at").alias("end_ms"))),
        lambda: _collect(written["broker_failures"].select(
            "*", F.unix_millis("detected_at").alias("detected_ms"),
            F.unix_millis("handling_finished_at").alias("finished_ms")))])
    unclean = elections.where(F.col("clean") == F.lit(False))  # 153k at 1M lines: they stay in Spark
    later: dict[str, Callable[[], DataFrame]] = {
        "anomalies": lambda: incidents.anomalies(
            events, elections, anomaly_rows(spark, timeline, windows_rows), config.slow_event_ms,
            config.min_leaderless_ms, leadership),
        "incidents": lambda: incident_rows(spark, timeline, failure_rows, membership, unclean, windows_rows, spans),
        "leaderless_partitions_over_time": lambda: incidents.leaderless_partitions_over_time(
            events, leadership=leadership, windows=observed),
        "leaders_per_broker_over_time": lambda: incidents.leaders_per_broker_over_time(
            events, leadership=leadership, windows=observed),
    }
    say("time series for the report, anomalies and incidents")
    _in_parallel(spark, [partial(_build_and_write, name, build, out) for name, build in later.items()])
    intervals.unpersist()
    leadership.unpersist()
    for name in (*tables, "anomalies", "incidents"):
        result.rows[name] = count_rows(out / name)
    if config.report:
        say("report")
        from zkcontroller.analytics.report import write_report

        observed_ms = {str(r["cluster"]): (int(r["window_start_ms"]), int(r["window_end_ms"])) for r in observed_rows}
        result.report = write_report(out, result.rows, config, result.warnings,
                                     {s.name: s.path for s in extracted.sources}, observed_ms)
    else:
        drop_report(out)


def drop_report(out: Path) -> None:
    """Remove an earlier run's report from ``out``: beside this run's tables it would describe others."""
    (out / "report.html").unlink(missing_ok=True)
    pages = out / "report"
    if pages.is_dir():
        for page in pages.glob("*.html"):
            page.unlink()
        with contextlib.suppress(OSError):  # not empty: something of the user's, left alone
            pages.rmdir()


def _pattern_argument(value: str) -> str:
    try:
        return cluster_pattern(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _out_argument(value: str) -> Path:
    """``--out``: a file there is a usage error (exit 2), as click's ``file_okay=False`` makes it in the CLI."""
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"directory {value!r} is a file")
    return path


def _at_least(low: int) -> Callable[[str], int]:
    """An integer option of at least ``low``, refused as click's ``IntRange(low)`` refuses it in the CLI."""
    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a valid integer.") from None
        if number < low:
            raise argparse.ArgumentTypeError(f"{value} is not in the range x>={low}.")
        return number

    return parse


def _fail(message: str) -> int:
    """The CLI's one-line error (click's ``Error: MESSAGE``) and exit status 1."""
    print(f"Error: {message}", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    """Entry point for ``spark-submit job.py INPUT... --out DIR`` (the master comes from spark-submit).

    Bad arguments are checked as ``zkcontroller analyze`` checks them, before Spark starts: the same
    one-line messages, exit status 1 (2 for usage errors, as argparse and click give)."""
    parser = argparse.ArgumentParser(prog="job.py", description=__doc__)
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--out", required=True, type=_out_argument)
    parser.add_argument("--cluster")
    parser.add_argument("--cluster-pattern", type=_pattern_argument)
    parser.add_argument("--slow-event-ms", type=_at_least(0), default=1000)
    parser.add_argument("--min-leaderless-ms", type=_at_least(0), default=100)
    parser.add_argument("--restart-gap-ms", type=_at_least(0), default=ct.DEFAULT_RESTART_GAP_MS)
    parser.add_argument("--storm-elections", type=_at_least(1), default=ct.DEFAULT_STORM_ELECTIONS)
    parser.add_argument("--max-handling-ms", type=_at_least(0), default=60_000)
    parser.add_argument("--no-report", action="store_true")
    parser.add_argument("--parser", choices=("jvm", "python"), default="jvm")
    args = parser.parse_args(argv)
    if args.cluster is not None and args.cluster_pattern is not None:
        parser.error(CLUSTER_OPTIONS_CONFLICT)
    try:
        check_arguments(args.inputs, args.out)
    except InputError as exc:
        return _fail(str(exc))
    try:
        spark = build_session(None, parser=args.parser, progress=at_terminal(sys.stderr))
    except Exception as exc:  # one line, as the CLI gives, not a Py4J stack trace
        return _fail(f"could not start Spark: {spark_error_line(exc)}")
    try:
        result = run(spark, JobConfig(
            inputs=args.inputs, out=args.out, cluster=args.cluster, cluster_pattern=args.cluster_pattern,
            slow_event_ms=args.slow_event_ms, min_leaderless_ms=args.min_leaderless_ms,
            restart_gap_ms=args.restart_gap_ms, storm_elections=args.storm_elections,
            max_handling_ms=args.max_handling_ms, report=not args.no_report, parser=args.parser),
            progress=lambda text: print(f"analyze: {text}", file=sys.stderr, flush=True))
    except InputError as exc:
        return _fail(str(exc))
    finally:
        spark.stop()
    warnings, summary = outcome_lines(result)
    for line in warnings:
        print(line, file=sys.stderr)
    for line in summary:
        print(line)
    return 0


if __name__ == "__main__":  # pragma: no cover - spark-submit entry
    sys.exit(main())
