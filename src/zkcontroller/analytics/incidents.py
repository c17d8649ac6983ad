"""Transform, continued: broker failures, event-queue latency, anomalies and the report's time series.

Same rules as ``transform.py``: pure ``DataFrame -> DataFrame``, explicit first and last ``select``,
``how=`` on every join, built-ins only.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from zkcontroller.analytics.transform import (
    NO_CONTROLLER_EPOCH,
    NO_LEADER,
    OFFLINE,
    observed_windows,
    partition_leadership,
)

HANDLING_KINDS = (
    "partition_state_change", "replica_state_change", "isr_change", "leader_election",
    "partition_state_change_failed", "controller_event",
)
MEMBERSHIP_KINDS = ("broker_failed", "broker_registered", "controller_ready", "controller_elected")
PERCENTILES = (0.5, 0.95, 0.99)


def broker_failures(events: DataFrame, max_handling_ms: int = 60_000) -> DataFrame:
    """One row per failed broker: when the controller noticed, when its handling ended, partitions touched.

    Kafka does not log the end of failure handling, so it is the last state change the controller made
    after detection, before the next membership change or ``max_handling_ms``, whichever comes first.
    """
    membership = events.select("cluster", "ts_ms", "source_file", "line_number", "kind").where(
        F.col("kind").isin(*MEMBERSHIP_KINDS)
    ).select("*", F.lead("ts_ms").over(
        Window.partitionBy("cluster").orderBy("ts_ms", "source_file", "line_number")).alias("next_ms"))
    failures = events.select(
        "cluster", "ts_ms", "ts", "source_file", "line_number", "kind", "controller_id", "controller_epoch",
        F.explode("brokers").alias("failed_broker"),
    ).where(F.col("kind") == "broker_failed").join(
        membership.select("cluster", "ts_ms", "source_file", "line_number", "next_ms"),
        on=["cluster", "ts_ms", "source_file", "line_number"], how="left",
    ).select(
        "*", F.least(F.coalesce("next_ms", F.lit(2**62)), F.col("ts_ms") + max_handling_ms).alias("until_ms"),
    )
    # Each handling event belongs to the latest failure line at or before it (failure windows end at the next
    # membership change, so they never overlap): a running "last failure" over the cluster's time line, then
    # an equi-join. A range join of every event against every failure would grow with their product.
    line_order = Window.partitionBy("cluster").orderBy("ts_ms", "is_handling", "source_file", "line_number") \
        .rowsBetween(Window.unboundedPreceding, 0)
    failure_line = F.when(F.col("kind") == "broker_failed", F.struct(
        F.col("source_file").alias("f_file"), F.col("line_number").alias("f_line")))
    timeline = events.select(
        "cluster", "ts_ms", "source_file", "line_number", "kind", "broker_id", "controller_epoch", "topic",
        "partition", "event_name", F.col("kind").isin(*HANDLING_KINDS).cast("int").alias("is_handling"),
    ).where(F.col("kind").isin("broker_failed", *HANDLING_KINDS))
    owned = timeline.select(
        "*", F.last(failure_line, ignorenulls=True).over(line_order).alias("owner"),
    ).where((F.col("is_handling") == 1) & F.col("owner").isNotNull()).select(
        F.col("cluster").alias("h_cluster"), F.col("owner.f_file").alias("source_file"),
        F.col("owner.f_line").alias("line_number"), F.col("ts_ms").alias("h_ms"), F.col("kind").alias("h_kind"),
        F.col("broker_id").alias("h_broker"), F.col("controller_epoch").alias("h_epoch"), "topic", "partition",
        "event_name",
    )
    touched = (F.col("h_kind") != "controller_event") & (
        ~F.col("h_kind").isin("replica_state_change", "isr_change") | (F.col("h_broker") == F.col("failed_broker"))
    )
    relevant = touched | (F.col("event_name") == "BrokerChange")
    key = ["cluster", "failed_broker", "source_file", "line_number"]
    windows = failures.select(*key, F.col("ts_ms").alias("f_ms"), "until_ms")
    handled = owned.join(
        windows, on=["source_file", "line_number"], how="inner",
    ).where((F.col("h_cluster") == F.col("cluster")) & (F.col("h_ms") < F.col("until_ms"))).select(
        *key, F.when(relevant, F.col("h_ms")).alias("end_ms"),
        F.when(touched & F.col("partition").isNotNull(), F.struct("topic", "partition")).alias("tp"),
        "h_epoch",
    ).groupBy(*key).agg(F.max("end_ms").alias("end_ms"), F.count_distinct("tp").alias("partitions_affected"),
                        F.max("h_epoch").alias("h_epoch"))
    grouped = failures.join(handled, on=key, how="left").select(
        "cluster", "failed_broker", "ts", "ts_ms", "controller_id",
        F.coalesce("controller_epoch", "h_epoch").alias("controller_epoch"), "source_file",
        "line_number", "end_ms", F.coalesce("partitions_affected", F.lit(0)).alias("partitions_affected"),
    )
    finished = F.coalesce("end_ms", "ts_ms")
    return grouped.select(
        "cluster", F.col("failed_broker").alias("broker_id"), F.col("ts").alias("detected_at"),
        F.timestamp_millis(finished).alias("handling_finished_at"),
        (finished - F.col("ts_ms")).alias("duration_ms"), "partitions_affected",
        "controller_id", "controller_epoch", "source_file", "line_number",
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


def _anomaly(df: DataFrame, **columns: object) -> DataFrame:
    exprs = []
    types = {"partition": "int", "broker_id": "int", "controller_id": "int", "controller_epoch": "int",
             "duration_ms": "bigint", "event_count": "bigint", "line_number": "bigint", "detected_at": "timestamp"}
    for name in _ANOMALY_COLUMNS:
        value = columns.get(name, F.lit(None))
        col = F.col(value) if isinstance(value, str) else value
        exprs.append(col.cast(types.get(name, "string")).alias(name))
    return df.select(*exprs)


def stale_epoch_anomalies(events: DataFrame) -> DataFrame:
    """Controllers acting with an epoch after a higher epoch had appeared: the split-brain signature."""
    acting = events.select("cluster", "ts_ms", "ts", "controller_id", "controller_epoch", "source_file",
                           "line_number").where(F.col("controller_epoch") > NO_CONTROLLER_EPOCH)
    first_seen = acting.groupBy("cluster", "controller_epoch").agg(F.min("ts_ms").alias("first_ms"))
    later = first_seen.alias("e").join(
        first_seen.alias("h"),
        on=(F.col("e.cluster") == F.col("h.cluster")) & (F.col("h.controller_epoch") > F.col("e.controller_epoch"))
        & (F.col("h.first_ms") > F.col("e.first_ms")),
        how="inner",
    ).groupBy(F.col("e.cluster").alias("cluster"), F.col("e.controller_epoch").alias("controller_epoch")).agg(
        F.min("h.first_ms").alias("superseded_ms"), F.min_by("h.controller_epoch", "h.first_ms").alias("newer_epoch"),
    )
    stale = acting.join(F.broadcast(later), on=["cluster", "controller_epoch"], how="inner").where(
        F.col("ts_ms") > F.col("superseded_ms")
    ).groupBy("cluster", "controller_epoch", "newer_epoch", "superseded_ms").agg(
        F.min_by(F.struct("ts", "source_file", "line_number", "controller_id"),
                 F.struct("ts_ms", "source_file", "line_number")).alias("first"),
        F.count(F.lit(1)).alias("event_count"), F.max("ts_ms").alias("last_ms"),
    )
    return _anomaly(
        stale, cluster="cluster", anomaly=F.lit("stale_controller_epoch"), detected_at="first.ts",
        controller_id="first.controller_id", controller_epoch="controller_epoch",
        duration_ms=F.col("last_ms") - F.col("superseded_ms"), event_count="event_count",
        detail=F.format_string("epoch %d still acting after epoch %d appeared", "controller_epoch", "newer_epoch"),
        source_file="first.source_file", line_number="first.line_number",
    )


def epoch_reset_anomalies(events: DataFrame) -> DataFrame:
    """A controller elected with an epoch lower than one already seen: /controller_epoch was reset."""
    elections = events.select("cluster", "ts_ms", "ts", "kind", "controller_id", "controller_epoch",
                              "source_file", "line_number").where(
        F.col("kind").isin("controller_elected", "controller_ready") & F.col("controller_epoch").isNotNull())
    before = Window.partitionBy("cluster").orderBy("ts_ms", "source_file", "line_number").rowsBetween(
        Window.unboundedPreceding, -1)
    staged = elections.select("*", F.max("controller_epoch").over(before).alias("prev_max")).where(
        F.col("controller_epoch") < F.col("prev_max")
    ).groupBy("cluster", "controller_id", "controller_epoch").agg(  # elected + ready lines: one reset
        F.min_by(F.struct("ts", "prev_max", "source_file", "line_number"),
                 F.struct("ts_ms", "source_file", "line_number")).alias("first"),
        F.count(F.lit(1)).alias("event_count"),
    )
    return _anomaly(
        staged, cluster="cluster", anomaly=F.lit("controller_epoch_reset"), detected_at="first.ts",
        controller_id="controller_id", controller_epoch="controller_epoch", event_count="event_count",
        detail=F.format_string("epoch %d after epoch %d had been seen", "controller_epoch", "first.prev_max"),
        source_file="first.source_file", line_number="first.line_number",
    )


def anomalies(events: DataFrame, elections: DataFrame, slow_event_ms: int = 1000) -> DataFrame:
    """Stale epochs, epoch resets, leaderless (-1) partitions, unclean elections and slow controller events."""
    leaderless = partition_leadership(events).where(F.col("leader") == NO_LEADER)
    unclean = elections.where(F.col("clean") == F.lit(False))
    slow = events.where((F.col("kind") == "controller_event") & (
        F.coalesce("queue_time_ms", F.lit(0)) + F.coalesce("processing_time_ms", F.lit(0)) > slow_event_ms))
    parts = [
        stale_epoch_anomalies(events),
        epoch_reset_anomalies(events),
        _anomaly(leaderless, cluster="cluster", anomaly=F.lit("leaderless_partition"),
                 detected_at=F.timestamp_millis("start_ms"), topic="topic", partition="partition",
                 duration_ms=F.col("end_ms") - F.col("start_ms"), event_count=F.lit(1),
                 detail=F.when(F.col("open"), F.lit("leader -1 until the end of the log"))
                 .otherwise(F.lit("leader -1 until a new leader was elected"))),
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
    """Running total of +1/-1 steps per key, sampled as the maximum within each of ``buckets`` time slots."""
    running = steps.select(
        "*", F.sum("delta").over(Window.partitionBy(*keys).orderBy("at_ms", "delta")).alias("value"),
    ).join(windows, on="cluster", how="inner")
    width = F.greatest(F.lit(1), F.ceil((F.col("window_end_ms") - F.col("window_start_ms") + 1) / buckets))
    slot = F.floor((F.col("at_ms") - F.col("window_start_ms")) / width)
    return running.select(*keys, (F.col("window_start_ms") + slot * width).alias("bucket_ms"), "value").groupBy(
        *keys, "bucket_ms").agg(F.max("value").alias("value")).select(*keys, "bucket_ms", "value")


def offline_partitions_over_time(intervals: DataFrame, events: DataFrame, buckets: int = 400) -> DataFrame:
    """(cluster, bucket_ms, value): how many partitions were OfflinePartition, at most, in each time slot."""
    offline = intervals.select("cluster", "state", "start_at", "end_at").where(F.col("state") == OFFLINE)
    steps = offline.select("cluster", F.unix_millis("start_at").alias("at_ms"), F.lit(1).alias("delta")).unionByName(
        offline.where(F.col("end_at").isNotNull()).select(
            "cluster", F.unix_millis("end_at").alias("at_ms"), F.lit(-1).alias("delta")))
    return _bucketed_steps(steps, ["cluster"], observed_windows(events), buckets).select(
        "cluster", "bucket_ms", "value")


def leaders_per_broker_over_time(events: DataFrame, buckets: int = 400) -> DataFrame:
    """(cluster, broker_id, bucket_ms, value): partitions each broker led, at most, in each time slot."""
    led = partition_leadership(events).where(F.col("leader") >= 0)
    steps = led.select("cluster", F.col("leader").alias("broker_id"), F.col("start_ms").alias("at_ms"),
                       F.lit(1).alias("delta")).unionByName(
        led.where(~F.col("open")).select("cluster", F.col("leader").alias("broker_id"),
                                         F.col("end_ms").alias("at_ms"), F.lit(-1).alias("delta")))
    return _bucketed_steps(steps, ["cluster", "broker_id"], observed_windows(events), buckets).select(
        "cluster", "broker_id", "bucket_ms", "value")
