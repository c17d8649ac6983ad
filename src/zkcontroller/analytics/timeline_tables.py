"""The driver-side timeline (``controller_timeline``) as Spark tables: tenures, broker failures with their
handling windows, anomaly rows and the incident timeline an on-call engineer reads first.

Times travel as integer ms and become timestamps in Spark (``timestamp_millis``), so no local time zone of
the Python process can shift them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from zkcontroller.analytics.controller_timeline import (
    DEFAULT_FAILURE_MERGE_MS,
    SHUTDOWN_END,
    SHUTDOWN_START,
    Row,
    Tenure,
    Timeline,
    shutdown_spans,
)

Columns = tuple[tuple[str, str], ...]
TENURE_COLUMNS: Columns = (
    ("cluster", "string"), ("controller_id", "int"), ("controller_epoch", "int"), ("start_ms", "bigint"),
    ("end_ms", "bigint"), ("elected_ms", "bigint"), ("ready_ms", "bigint"), ("resigned_ms", "bigint"),
    ("first_seen_ms", "bigint"), ("last_seen_ms", "bigint"), ("tenure_ms", "bigint"), ("started_by", "string"),
    ("gap_ms", "bigint"), ("failover_gap_ms", "bigint"), ("previous_controller_id", "int"),
    ("previous_epoch", "int"), ("events", "bigint"), ("source_file", "string"), ("line_number", "bigint"),
)
FAILURE_COLUMNS: Columns = (
    ("cluster", "string"), ("failure_id", "int"), ("broker_id", "int"), ("detected_ms", "bigint"),
    ("until_ms", "bigint"), ("cause", "string"), ("controller_id", "int"), ("controller_epoch", "int"),
    ("source_file", "string"), ("line_number", "bigint"),
)
ANOMALY_COLUMNS: Columns = (
    ("cluster", "string"), ("anomaly", "string"), ("detected_ms", "bigint"), ("topic", "string"),
    ("partition", "int"), ("broker_id", "int"), ("controller_id", "int"), ("controller_epoch", "int"),
    ("duration_ms", "bigint"), ("event_count", "bigint"), ("detail", "string"), ("source_file", "string"),
    ("line_number", "bigint"),
)
INCIDENT_COLUMNS: Columns = (
    ("cluster", "string"), ("at_ms", "bigint"), ("end_ms", "bigint"), ("incident", "string"),
    ("controller_id", "int"), ("controller_epoch", "int"), ("broker_id", "int"), ("detail", "string"),
    ("source_file", "string"), ("line_number", "bigint"),
)


def life_column(starts: dict[str, list[int]]) -> Column:
    """Each event's life of its cluster (``controller_timeline.life_starts``): how many of the cluster's life
    starts are at or before its ``ts_ms``; 0 for every event of a cluster whose epoch was never reset."""
    if not starts:
        return F.lit(0)
    by_cluster = F.create_map(*(x for cluster, ms in starts.items()
                                for x in (F.lit(cluster), F.array(*(F.lit(m).cast("bigint") for m in ms)))))
    mine = F.try_element_at(by_cluster, F.col("cluster"))
    ts = F.col("ts_ms")
    return F.when(mine.isNull(), F.lit(0)).otherwise(F.size(F.filter(mine, lambda m: m <= ts)))


def _as_timestamps(df: DataFrame) -> DataFrame:
    """``x_ms`` columns that are instants become ``x_at`` timestamps; durations (``*_ms`` others) stay."""
    instants = {"start_ms", "end_ms", "elected_ms", "ready_ms", "resigned_ms", "first_seen_ms", "last_seen_ms",
                "detected_ms", "at_ms"}
    named = {c: "at" if c == "at_ms" else c.removesuffix("_ms") + "_at" for c in instants}
    return df.select(*(F.timestamp_millis(c).alias(named[c]) if c in instants else F.col(c) for c in df.columns))


def rows_frame(spark: SparkSession, rows: list[Row], columns: Columns) -> DataFrame:
    """A DataFrame of ``rows`` with exactly ``columns`` (missing keys are null)."""
    ddl = ", ".join(f"`{n}` {t}" for n, t in columns)
    return spark.createDataFrame([tuple(r.get(n) for n, _ in columns) for r in rows], ddl)


def tenures_frame(spark: SparkSession, tenures: list[Tenure]) -> DataFrame:
    """``controller_tenures``: one row per (cluster, controller, epoch) with how it began and the gap before."""
    return _as_timestamps(rows_frame(spark, [t.row() for t in tenures], TENURE_COLUMNS))


def failures_frame(spark: SparkSession, failures: list[Row], membership: list[Row],
                   tenures: list[Tenure], max_handling_ms: int) -> DataFrame:
    """``failure_windows`` as a DataFrame."""
    return rows_frame(spark, failure_windows(failures, membership, tenures, max_handling_ms), FAILURE_COLUMNS)


def failure_windows(failures: list[Row], membership: list[Row], tenures: list[Tenure],
                    max_handling_ms: int) -> list[Row]:
    """Failures with an id and ``until_ms``: the next membership change or controller change in the cluster,
    or ``max_handling_ms`` after detection, whichever comes first."""
    changes: dict[str, list[tuple[int, frozenset[int]]]] = defaultdict(list)  # (when, brokers it reports dead)
    for m in membership:
        if m["kind"] in ("controlled_shutdown", SHUTDOWN_END, SHUTDOWN_START):
            continue  # a request to the controller, its start or end: not a change of who is registered
        dead = frozenset(m.get("brokers") or []) if m["kind"] in ("broker_failed", "broker_change") else frozenset()
        changes[str(m["cluster"])].append((int(m["ts_ms"]), dead))
    for t in tenures:
        changes[t.cluster].append((t.start_ms, frozenset()))
    for cluster_changes in changes.values():  # in time order: each failure looks from its detection on, not at all
        cluster_changes.sort(key=lambda change: change[0])
    starts = {cluster: [ts for ts, _ in cluster_changes] for cluster, cluster_changes in changes.items()}
    rows = []
    for i, f in enumerate(failures):
        detected, broker, cluster = int(f["detected_ms"]), int(f["broker_id"]), str(f["cluster"])
        until, ordered = detected + max_handling_ms, changes[cluster]
        j = bisect_right(starts.get(cluster, []), detected)
        while j < len(ordered) and ordered[j][0] < until:
            ts, dead = ordered[j]
            if not (broker in dead and ts - detected <= DEFAULT_FAILURE_MERGE_MS):  # not the same failure again
                until = ts  # the first such change: every later one is later still
            j += 1
        rows.append({**f, "failure_id": i, "until_ms": until})
    return rows


def anomaly_rows(spark: SparkSession, timeline: Timeline, windows: list[Row]) -> DataFrame:
    """Epoch resets, restarts, election storms and split-brain windows in the anomalies table's columns."""
    rows: list[Row] = []
    for r in timeline.epoch_resets:
        rows.append({**r, "anomaly": "controller_epoch_reset", "detected_ms": r["at_ms"], "event_count": 1})
    for r in timeline.restarts:
        if r["cause"] == "restart":
            rows.append({**r, "anomaly": "cluster_restart", "detected_ms": r["at_ms"], "duration_ms": r["gap_ms"],
                         "event_count": 1, "detail": f"no controller for {int(r['gap_ms']) / 1000:.1f} s"})
    for s in timeline.storms:
        rows.append({**s, "anomaly": "election_storm", "detected_ms": s["start_ms"],
                     "duration_ms": int(s["end_ms"]) - int(s["start_ms"]), "event_count": s["elections"],
                     "controller_epoch": s["first_epoch"],
                     "detail": f"{s['elections']} controller elections (epochs {s['first_epoch']} to "
                               f"{s['last_epoch']}) within a minute or less of each other"})
    for w in windows:
        rows.append({"cluster": w["cluster"], "anomaly": "split_brain", "detected_ms": w["start_ms"],
                     "controller_id": w["stale_controller_id"], "controller_epoch": w["stale_epoch"],
                     "duration_ms": w["duration_ms"], "event_count": w["stale_actions"] + w["stale_refused"],
                     "detail": _split_brain_detail(w), "source_file": w["source_file"],
                     "line_number": w["line_number"]})
    df = rows_frame(spark, rows, ANOMALY_COLUMNS)
    return df.select(*(F.timestamp_millis(c).alias("detected_at") if c == "detected_ms" else F.col(c)
                       for c in df.columns))


def _split_brain_detail(w: Row) -> str:
    return (f"controller {w['stale_controller_id']} (epoch {w['stale_epoch']}) acted {w['stale_actions']} time(s), "
            f"{w['stale_refused']} refused, while controller {w['new_controller_id']} (epoch {w['new_epoch']}) "
            f"acted {w['new_actions']} time(s)")


def incident_rows(spark: SparkSession, timeline: Timeline, failures: list[Row],
                  membership: list[Row], unclean: DataFrame,
                  windows: list[Row], spans: list[Row] | None = None) -> DataFrame:
    """``incidents``: the per-cluster timeline (elections, resignations, failovers, restarts, epoch resets,
    broker failures, controlled shutdowns and returns, unclean elections, split-brain windows, election storms),
    each with file:line.

    ``unclean`` (rows of ``leader_elections``) stays in Spark: a log can hold 100k and more, whose trip
    through the driver and back cost seconds; the few other rows are built here. ``spans``:
    ``shutdown_spans(membership)`` when the caller already has it (the job computes it once, for failures too)."""
    rows: list[Row] = []
    for t in timeline.tenures:
        where = {"cluster": t.cluster, "controller_id": t.controller_id, "controller_epoch": t.controller_epoch,
                 "source_file": t.source_file, "line_number": t.line_number}
        label = {"first": "controller elected", "failover": "failover", "restart": "restart",
                 "epoch_reset": "epoch reset"}[t.started_by]
        gap = "" if t.gap_ms is None else (f"; no controller for {t.gap_ms} ms" if t.gap_ms >= 0 else
                                           f"; began {-t.gap_ms} ms before the previous tenure's last action")
        rows.append({**where, "at_ms": t.start_ms, "end_ms": t.end_ms, "incident": t.started_by,
                     "detail": f"{label}: controller {t.controller_id} epoch {t.controller_epoch}{gap}"})
        if t.resigned_ms is not None:  # cited by its own line, not the election's
            own = {} if t.resigned_source_file is None else {
                "source_file": t.resigned_source_file, "line_number": t.resigned_line_number}
            rows.append({**where, **own, "at_ms": t.resigned_ms, "incident": "resigned",
                         "detail": f"controller {t.controller_id} resigned (epoch {t.controller_epoch})"})
    for f in failures:
        rows.append({**f, "at_ms": f["detected_ms"], "end_ms": f["finished_ms"],
                     "incident": "broker_failure",
                     "detail": f"broker {f['broker_id']} failed ({f['cause']}); {f['partitions_affected']} "
                               f"partition(s) handled in {f['duration_ms']} ms"})
    last_start: dict[tuple[object, object], int] = {}
    for m in sorted(membership, key=lambda m: (m["ts_ms"], str(m["source_file"]), m["line_number"])):
        started = m.get("added_brokers") if m["kind"] == "broker_change" else (
            m.get("brokers") if m["kind"] == "broker_registered" else None)
        for broker in started or []:
            key, ts = (m["cluster"], broker), int(m["ts_ms"])
            if ts - last_start.get(key, -(1 << 62)) > DEFAULT_FAILURE_MERGE_MS:  # one start, however many lines
                rows.append({**m, "at_ms": ts, "incident": "broker_started", "broker_id": broker,
                             "detail": f"broker {broker} registered"})
            last_start[key] = ts
    # the table's shutdowns, each with the outcome the table gives it
    for span in shutdown_spans(membership) if spans is None else spans:
        rows.append({**span["row"], "at_ms": span["first_ms"], "incident": "controlled_shutdown",
                     "broker_id": span["broker_id"], "detail": _shutdown_detail(span)})
    for w in windows:
        rows.append({"cluster": w["cluster"], "at_ms": w["start_ms"], "end_ms": w["end_ms"],
                     "incident": "split_brain", "controller_id": w["stale_controller_id"],
                     "controller_epoch": w["stale_epoch"], "detail": _split_brain_detail(w),
                     "source_file": w["source_file"], "line_number": w["line_number"]})
    for s in timeline.storms:
        rows.append({**s, "at_ms": s["start_ms"], "incident": "election_storm", "controller_epoch": s["first_epoch"],
                     "detail": f"election storm: {s['elections']} elections, epochs {s['first_epoch']}-"
                               f"{s['last_epoch']}"})
    return _as_timestamps(rows_frame(spark, rows, INCIDENT_COLUMNS).unionByName(_unclean_incidents(unclean)))


GAVE_UP = "it gave up retrying (retrying could not help) and stopped uncleanly, on purpose"
"""An ``unclean`` outcome, in words: our brokers' "Not retrying controlled shutdown (…)" in a teardown."""


def _shutdown_detail(span: Row) -> str:
    """How a controlled shutdown ended, in words: failed only when the broker said so."""
    if span["attempts"] == 0:
        said = "its server.log says it succeeded" if span["outcome"] == "succeeded" else \
            f"its server.log says {GAVE_UP}" if span["outcome"] == "unclean" else \
            "its server.log says every attempt failed, the broker stopped uncleanly"
        return f"broker {span['broker_id']} stopped with a controlled shutdown (request not in the logs read): {said}"
    return f"broker {span['broker_id']} asked to stop (controlled shutdown): " + (
        "every attempt failed, the broker stopped uncleanly" if span["outcome"] == "failed" else
        GAVE_UP if span["outcome"] == "unclean" else "a clean stop, not a failure, when it leaves soon after")


def _unclean_incidents(unclean: DataFrame) -> DataFrame:
    """Unclean elections in ``INCIDENT_COLUMNS``; a null prints as Python's f-strings print it ("None")."""
    def text(name: str) -> Column:
        return F.coalesce(F.col(name).cast("string"), F.lit("None"))

    return unclean.select(
        "cluster", F.unix_millis("elected_at").alias("at_ms"), F.lit(None).cast("bigint").alias("end_ms"),
        F.lit("unclean_election").alias("incident"), "controller_id", "controller_epoch",
        F.col("new_leader").alias("broker_id"),
        F.format_string("%s-%s: leader %s from outside the ISR", text("topic"), text("partition"),
                        text("new_leader")).alias("detail"),
        "source_file", "line_number")
