"""Transform, continued: broker failures, event-queue latency, anomalies and the report's time series.

Same rules as ``transform.py``: pure ``DataFrame -> DataFrame``, explicit first and last ``select``,
``how=`` on every join, built-ins only.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from zkcontroller.analytics.transform import NO_LEADER, observed_windows, partition_leadership

HANDLING_KINDS = (
    "partition_state_change", "replica_state_change", "isr_change", "leader_election",
    "partition_state_change_failed", "controller_event",
)
NOT_ACTIONS = ("controller_resigned",)
"""Kinds of a stale tenure's lines that are no action on the cluster: its resignation."""
CONTROLLER_CHANGE_EVENTS = ("Startup", "ControllerChange", "Reelect", "RegisterBrokerAndReelect", "Expire",
                            "SessionReconnected", "ShutdownEventThread")
"""``controller_event``s (JSONL) of who is controller (Kafka's ControllerState ControllerChange and
ControllerShutdown): a stale controller handling one learns that it lost the controller (its session expired, the
``/controller`` znode changed) and resigns; it acts on nothing. Its other events (a TopicChange, a BrokerChange)
act on the cluster as a controller would."""
REFUSED_KINDS = ("leader_and_isr_ignored", "controller_moved")
"""A stale tenure's attempts that were refused: a broker's "Ignoring LeaderAndIsr request … epoch N", and
ZooKeeper refusing the stale controller's write ("Controller moved to another broker …": the epoch-zkVersion
check failed, nothing was written)."""
MOVED_EXCEPTION = r"^[\w.$]*ControllerMoved(?:Exception|Error)\b"
"""A record whose folded exception is Kafka's ``ControllerMovedException`` (or our ``ControllerMovedError``) is a
refusal too, whatever its message: Kafka's lost election logs "Broker n was elected as controller instead of broker
m" (DEBUG) with "ControllerMovedException: Controller moved to another broker. Aborting controller startup
procedure" under it."""
PERCENTILES = (0.5, 0.95, 0.99)
MAX_BUCKET_ROWS = 200_000
"""At most about this many (failure, time bucket) rows are broadcast to the handling events."""


def handling_bucket_ms(windows_ms: list[int]) -> int:
    """The bucket for ``broker_failure_handling`` given each failure's window length (``until_ms -
    detected_ms``): one second, unless the windows would then explode into more than ``MAX_BUCKET_ROWS`` rows.

    A handling event is range-tested against every failure whose window shares its bucket: with minutes, on a
    log of many short failures (the benchmark's: 2,705 in 17 minutes, median window 0.4 s) each event met
    hundreds of failures; with seconds, a few."""
    return max(1_000, -(-sum(max(0, w) for w in windows_ms) // MAX_BUCKET_ROWS))


OTHER_EVENT_TRIGGERS = ("admin", "zk", "auto")
"""Who asked for an election that is an event of its own (Kafka's ``ElectionTrigger``), not a broker's failure."""


def other_event_started() -> Column:
    """Lines that begin a controller event other than a membership change: Kafka logs no line per event (2.6-2.8's
    ControllerEventManager logs none below ERROR), so the first INFO line of each. "Starting replica leader election
    (…) … triggered by …" (an admin's, ZooKeeper's or the auto rebalance's election; up to 2.3 "Starting preferred
    replica leader election …"), "Shutting down broker n" (a ControlledShutdown request), "Starting topic deletion
    for topics …" (TopicDeletion); in our event log, an election an admin, ZooKeeper or the auto rebalance asked
    for (a broker failure's elections name their event, BrokerChange)."""
    return F.coalesce(
        F.col("kind").isin("election_started", "controlled_shutdown")
        | ((F.col("kind") == "topic_deletion") & (F.col("phase") == "queued"))
        | ((F.col("kind") == "leader_election") & F.col("trigger").isin(*OTHER_EVENT_TRIGGERS)), F.lit(False))


def broker_failure_handling(failures: DataFrame, events: DataFrame, bucket_ms: int = 60_000) -> DataFrame:
    """Each failure (from ``controller_timeline.broker_failures``, with ``until_ms``) with when its handling
    ended and how many partitions it touched.

    Kafka does not log the end of failure handling, so it is the last state change the controller made after
    detection, before the next membership change, the handling limit, or the first line of an event the same
    controller processed next for another reason (``other_event_started``: an election an admin asked for 18 s
    later counted in the failure's handling, its failed elections and all). Each handling event meets only the
    failures of its cluster whose window covers its time bucket (an equi-join on (cluster, bucket), then the
    exact range test), never every failure; ``bucket_ms`` (see ``handling_bucket_ms``) changes the cost only.
    """
    windows = failures.select(
        "cluster", "failure_id", "broker_id", "detected_ms", "until_ms",
        F.col("controller_id").alias("f_controller"), F.col("source_file").alias("f_file"),
        F.col("line_number").alias("f_line"),
        F.explode(F.sequence(F.floor(F.col("detected_ms") / bucket_ms), F.floor(F.col("until_ms") / bucket_ms)))
        .alias("bucket"))
    boundary = other_event_started()
    handling = events.select(
        "cluster", "ts_ms", "kind", F.col("broker_id").alias("h_broker"), "topic", "partition", "event_name",
        "controller_id", "source_file", "line_number", boundary.alias("boundary"),
        F.floor(F.col("ts_ms") / bucket_ms).alias("bucket"),
    ).where(F.col("kind").isin(*HANDLING_KINDS) | F.col("boundary"))
    touched = (F.col("kind") != "controller_event") & ~F.col("boundary") & (
        ~F.col("kind").isin("replica_state_change", "isr_change") | (F.col("h_broker") == F.col("broker_id")))
    relevant = touched | (F.col("event_name") == "BrokerChange")
    in_window = handling.join(F.broadcast(windows), on=["cluster", "bucket"], how="inner").where(
        (F.col("ts_ms") >= F.col("detected_ms")) & (F.col("ts_ms") < F.col("until_ms")))
    # the same controller's next event for another reason, after the detection line (a line of the same
    # millisecond before it in the same file is not after it)
    after_detection = (F.col("ts_ms") > F.col("detected_ms")) | ~F.coalesce(
        (F.col("source_file") == F.col("f_file")) & (F.col("line_number") <= F.col("f_line")), F.lit(False))
    same_controller = F.coalesce(F.col("controller_id") == F.col("f_controller"), F.lit(True))
    next_event = F.min(F.when(F.col("boundary") & after_detection & same_controller, F.col("ts_ms"))).over(
        Window.partitionBy("cluster", "failure_id"))
    handled = in_window.select("*", next_event.alias("next_event_ms")).where(
        ~F.col("boundary") & (F.col("next_event_ms").isNull() | (F.col("ts_ms") < F.col("next_event_ms")))
    ).groupBy("cluster", "failure_id").agg(
        F.max(F.when(relevant, F.col("ts_ms"))).alias("end_ms"),
        F.count_distinct(F.when(touched & F.col("partition").isNotNull(), F.struct("topic", "partition")))
        .alias("partitions_affected"),
    )
    joined = failures.join(handled, on=["cluster", "failure_id"], how="left")
    finished = F.coalesce("end_ms", "detected_ms")
    return joined.select(
        "cluster", "broker_id", F.timestamp_millis("detected_ms").alias("detected_at"),
        F.timestamp_millis(finished).alias("handling_finished_at"),
        (finished - F.col("detected_ms")).alias("duration_ms"),
        F.coalesce("partitions_affected", F.lit(0)).cast("bigint").alias("partitions_affected"),
        "cause", "controller_id", "controller_epoch", "source_file", "line_number",
    )


def split_brain_windows(candidates: DataFrame, events: DataFrame) -> DataFrame:
    """Windows in which a stale tenure still acted after the newer tenure's first action.

    ``candidates`` (from the timeline) bound each possible window by the newer tenure's start and the stale tenure's
    last activity, or its resignation when later (a refusal states no epoch). Here the events of both tenures inside
    that range are counted; the stale tenure's attempts that were refused (``REFUSED_KINDS``, or a
    ``MOVED_EXCEPTION`` under the line) are counted apart: by a broker ("Ignoring LeaderAndIsr request ... epoch N"
    lines) or by ZooKeeper ("Controller moved to another broker ..." lines, which state no epoch: one of the stale
    controller inside the range is its refusal). Lines that are no action (``NOT_ACTIONS``,
    ``CONTROLLER_CHANGE_EVENTS``: a stale controller resigning 63 ms after its successor's first action made a
    window) are not counted, on either side. Candidates with no stale action inside are dropped, and the window ends
    at the stale tenure's last action.
    """
    acting = ~F.col("kind").isin(*NOT_ACTIONS) & ~((F.col("kind") == "controller_event")
                                                   & F.col("event_name").isin(*CONTROLLER_CHANGE_EVENTS))
    moved = (F.col("kind") == "controller_moved") | F.coalesce(F.col("exception").rlike(MOVED_EXCEPTION),
                                                               F.lit(False))
    acts = events.select("cluster", "ts_ms", "kind", "event_name", "controller_id", "controller_epoch",
                         "source_file", "line_number", moved.alias("moved")).where(
        (F.col("controller_epoch").isNotNull() | (F.col("moved") & F.col("controller_id").isNotNull())) & acting)
    c = F.broadcast(candidates)
    # a refusal stating no epoch is the stale controller's when it names that controller
    moved_stale = F.col("moved") & F.col("controller_epoch").isNull() & (
        F.col("controller_id") == F.col("stale_controller_id"))
    joined = acts.join(c, on="cluster", how="inner").where(
        (F.col("ts_ms") >= F.col("start_ms")) & (F.col("ts_ms") <= F.col("end_ms"))
        & (F.col("controller_epoch").isin(F.col("stale_epoch"), F.col("new_epoch")) | moved_stale))
    stale = F.coalesce(F.col("controller_epoch") == F.col("stale_epoch"), moved_stale)
    refused = stale & (F.col("kind").isin(*REFUSED_KINDS) | F.col("moved"))
    keys = ["cluster", "start_ms", "stale_controller_id", "stale_epoch", "new_controller_id", "new_epoch"]
    counted = joined.groupBy(*keys).agg(
        F.max(F.when(stale, F.col("ts_ms"))).alias("last_stale_ms"),
        F.sum(F.when(stale & ~refused, 1).otherwise(0)).cast("bigint").alias("stale_actions"),
        F.sum(F.when(refused, 1).otherwise(0)).cast("bigint").alias("stale_refused"),
        F.sum(F.when(~stale, 1).otherwise(0)).cast("bigint").alias("new_actions"),
        F.min_by(F.struct("source_file", "line_number"),
                 F.when(stale, F.struct("ts_ms", "source_file", "line_number"))).alias("first_stale"),
    ).where(F.col("last_stale_ms").isNotNull())
    return counted.select(
        "cluster", F.timestamp_millis("start_ms").alias("start_at"), F.timestamp_millis("last_stale_ms")
        .alias("end_at"), (F.col("last_stale_ms") - F.col("start_ms")).alias("duration_ms"),
        "stale_controller_id", "stale_epoch", "new_controller_id", "new_epoch", "stale_actions", "stale_refused",
        "new_actions", F.col("first_stale.source_file").alias("source_file"),
        F.col("first_stale.line_number").alias("line_number"),
    )


def event_queue_latency(events: DataFrame) -> DataFrame:
    """Per controller event name: count and exact percentiles of queue and processing time (JSONL only)."""
    rows = events.select("cluster", "kind", "event_name", "queue_time_ms", "processing_time_ms").where(
        F.col("kind") == "controller_event"
    )
    stats = []
    for column, short in (("queue_time_ms", "queue"), ("processing_time_ms", "processing")):
        p = F.percentile(column, list(PERCENTILES))
        stats += [p[i].alias(f"{short}_p{round(q * 100)}_ms") for i, q in enumerate(PERCENTILES)]
        stats.append(F.max(column).cast("double").alias(f"{short}_max_ms"))
    return rows.groupBy("cluster", "event_name").agg(F.count(F.lit(1)).alias("count"), *stats).select(
        "cluster", "event_name", "count",
        *(f"{s}_p{round(q * 100)}_ms" for s in ("queue", "processing") for q in PERCENTILES),
        "queue_max_ms", "processing_max_ms",
    )


_ANOMALY_COLUMNS = (
    "cluster", "anomaly", "detected_at", "topic", "partition", "broker_id", "controller_id", "controller_epoch",
    "duration_ms", "event_count", "detail", "source_file", "line_number",
)


def _anomaly(df: DataFrame, **columns: str | Column) -> DataFrame:
    exprs = []
    types = {"partition": "int", "broker_id": "int", "controller_id": "int", "controller_epoch": "int",
             "duration_ms": "bigint", "event_count": "bigint", "line_number": "bigint", "detected_at": "timestamp"}
    for name in _ANOMALY_COLUMNS:
        value = columns.get(name, F.lit(None))
        col = F.col(value) if isinstance(value, str) else value
        exprs.append(col.cast(types.get(name, "string")).alias(name))
    return df.select(*exprs)


def anomalies(events: DataFrame, elections: DataFrame, timeline_rows: DataFrame, slow_event_ms: int = 1000,
              min_leaderless_ms: int = 100, leadership: DataFrame | None = None) -> DataFrame:
    """Leaderless (-1) partitions of at least ``min_leaderless_ms``, unclean elections, slow controller
    events, and the timeline's rows (epoch resets, restarts, storms, split brain) already in anomaly form.
    ``leadership``: `partition_leadership` of ``events`` when the caller already has it."""
    leaderless = (partition_leadership(events) if leadership is None else leadership).where(
        (F.col("leader") == NO_LEADER) & (F.col("end_ms") - F.col("start_ms") >= min_leaderless_ms))
    unclean = elections.where(F.col("clean") == F.lit(False))
    slow = events.where((F.col("kind") == "controller_event") & (
        F.coalesce("queue_time_ms", F.lit(0)) + F.coalesce("processing_time_ms", F.lit(0)) > slow_event_ms))
    parts = [
        timeline_rows.select(*_ANOMALY_COLUMNS),
        _anomaly(leaderless, cluster="cluster", anomaly=F.lit("leaderless_partition"),
                 detected_at=F.timestamp_millis("start_ms"), topic="topic", partition="partition",
                 duration_ms=F.col("end_ms") - F.col("start_ms"), event_count=F.lit(1),
                 controller_id="controller_id", controller_epoch="controller_epoch",
                 detail=F.when(F.col("open"), F.lit("leader -1 until the end of the log"))
                 .when(F.col("wiped"), F.lit("leader -1 until its cluster's last line before the epoch reset"))
                 .otherwise(F.lit("leader -1 until a new leader was elected")),
                 source_file="source_file", line_number="line_number"),
        _anomaly(unclean, cluster="cluster", anomaly=F.lit("unclean_election"), detected_at="elected_at",
                 topic="topic", partition="partition", broker_id="new_leader", controller_id="controller_id",
                 controller_epoch="controller_epoch", event_count=F.lit(1),
                 detail=F.format_string("leader %d elected from outside the ISR (old leader %s)", "new_leader",
                                        F.coalesce(F.col("old_leader").cast("string"), F.lit("unknown"))),
                 source_file="source_file", line_number="line_number"),
        _anomaly(slow, cluster="cluster", anomaly=F.lit("slow_controller_event"), detected_at="ts",
                 controller_id="controller_id", controller_epoch="controller_epoch",
                 duration_ms=F.coalesce("queue_time_ms", F.lit(0)) + F.coalesce("processing_time_ms", F.lit(0)),
                 event_count=F.lit(1),
                 detail=F.format_string("%s waited %d ms and ran %d ms (threshold %d ms)", "event_name",
                                        F.coalesce("queue_time_ms", F.lit(0)),
                                        F.coalesce("processing_time_ms", F.lit(0)), F.lit(slow_event_ms)),
                 source_file="source_file", line_number="line_number"),
    ]
    result = parts[0]
    for part in parts[1:]:
        result = result.unionByName(part)
    return result.select(*_ANOMALY_COLUMNS)


def _bucketed_steps(steps: DataFrame, keys: list[str], windows: DataFrame, buckets: int) -> DataFrame:
    """Running total of +1/-1 steps per key, sampled as the maximum within each of ``buckets`` time slots
    (``value``, over ``bucket_ms`` to ``until_ms``), and the total the slot ends with (``end_value``), which
    holds until the next slot with a step: drawn from the peak alone, a 1 ms blip before an hour without a step
    read as an hour at the peak.

    No window spans a whole cluster: the running total inside each slot is a window per (key, slot), and
    the totals carried from earlier slots come from a window over at most ``buckets`` rows per key.
    """
    width = F.greatest(F.lit(1), F.ceil((F.col("window_end_ms") - F.col("window_start_ms") + 1) / buckets))
    slotted = steps.join(F.broadcast(windows), on="cluster", how="inner").select(
        *keys, "at_ms", "delta", width.cast("bigint").alias("width"),
        (F.col("window_start_ms") + F.floor((F.col("at_ms") - F.col("window_start_ms")) / width) * width)
        .alias("bucket_ms"))
    inside = slotted.select("*", F.sum("delta").over(
        Window.partitionBy(*keys, "bucket_ms").orderBy("at_ms", "delta")).alias("prefix"))
    per_slot = inside.groupBy(*keys, "bucket_ms").agg(F.max("prefix").alias("peak"), F.sum("delta").alias("net"),
                                                      F.max("width").alias("width"))
    carried = Window.partitionBy(*keys).orderBy("bucket_ms").rowsBetween(Window.unboundedPreceding, -1)
    before = F.coalesce(F.sum("net").over(carried), F.lit(0))
    return per_slot.select(
        *keys, "bucket_ms", (before + F.col("peak")).alias("value"), (before + F.col("net")).alias("end_value"),
        (F.col("bucket_ms") + F.col("width")).alias("until_ms"))


def leaderless_partitions_over_time(events: DataFrame, buckets: int = 400, leadership: DataFrame | None = None,
                                    windows: DataFrame | None = None) -> DataFrame:
    """(cluster, bucket_ms, value): partitions without a leader (OfflinePartition, or leader -1 on any
    controller line), at most, in each time slot. ``leadership``, ``windows``: `partition_leadership` and
    `observed_windows` of ``events``, when the caller has them."""
    leadership = partition_leadership(events) if leadership is None else leadership
    leaderless = leadership.where(F.col("leader") == NO_LEADER)
    steps = leaderless.select("cluster", F.col("start_ms").alias("at_ms"), F.lit(1).alias("delta")).unionByName(
        leaderless.where(~F.col("open")).select("cluster", F.col("end_ms").alias("at_ms"), F.lit(-1).alias("delta")))
    windows = observed_windows(events) if windows is None else windows
    return _bucketed_steps(steps, ["cluster"], windows, buckets).select(
        "cluster", "bucket_ms", "value", "end_value", "until_ms")


def leaders_per_broker_over_time(events: DataFrame, buckets: int = 400, leadership: DataFrame | None = None,
                                 windows: DataFrame | None = None) -> DataFrame:
    """(cluster, broker_id, bucket_ms, value): partitions each broker led, at most, in each time slot.
    ``leadership``, ``windows``: as for `leaderless_partitions_over_time`."""
    led = (partition_leadership(events) if leadership is None else leadership).where(F.col("leader") >= 0)
    steps = led.select("cluster", F.col("leader").alias("broker_id"), F.col("start_ms").alias("at_ms"),
                       F.lit(1).alias("delta")).unionByName(
        led.where(~F.col("open")).select("cluster", F.col("leader").alias("broker_id"),
                                         F.col("end_ms").alias("at_ms"), F.lit(-1).alias("delta")))
    windows = observed_windows(events) if windows is None else windows
    return _bucketed_steps(steps, ["cluster", "broker_id"], windows, buckets).select(
        "cluster", "broker_id", "bucket_ms", "value", "end_value", "until_ms")
