"""Load: write each table as Parquet, one directory per table, partitioned by cluster (events also by day).

No global sort: each task sorts its own rows (``sortWithinPartitions``) and writes its own files, so the
output is stable in content while the write stays as parallel as the data (no extra shuffle to gather a
table: every task of the last stage writes the rows it holds).
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

SORT_KEYS: dict[str, tuple[str, ...]] = {
    "events": ("cluster", "day", "ts_ms", "source_file", "line_number"),
    "rejected_lines": ("source_file", "line_number"),
    "partition_state_intervals": ("cluster", "topic", "partition", "start_at", "source_file", "line_number"),
    "leader_elections": ("cluster", "elected_at", "topic", "partition", "new_leader"),
    "controller_tenures": ("cluster", "start_at", "controller_epoch", "controller_id"),
    "broker_failures": ("cluster", "detected_at", "broker_id"),
    "partition_unavailability": ("cluster", "topic", "partition"),
    "event_queue_latency": ("cluster", "event_name"),
    "split_brain_windows": ("cluster", "start_at", "stale_epoch"),
    "incidents": ("cluster", "at", "incident", "source_file", "line_number"),
    "anomalies": ("cluster", "detected_at", "anomaly", "topic", "partition", "controller_epoch", "source_file",
                  "line_number"),
    "leaderless_partitions_over_time": ("cluster", "bucket_ms"),
    "leaders_per_broker_over_time": ("cluster", "broker_id", "bucket_ms"),
    "sources": ("cluster", "source_format", "source_file"),
    "topic_deletions": ("cluster", "requested_at", "topic"),
    "partition_reassignments": ("cluster", "started_at", "topic", "partition"),
    "isr_changes": ("cluster", "changed_at", "topic", "partition", "source_file", "line_number"),
    "controlled_shutdowns": ("cluster", "requested_at", "broker_id"),
}
UNPARTITIONED = ("rejected_lines",)
"""Rejected lines may have no cluster (a JSONL line that is not JSON names none)."""


def write_table(name: str, df: DataFrame, out_dir: Path) -> Path:
    """Write one table to ``out_dir/name`` (replacing an older run's) and return the directory."""
    path = out_dir / name
    keys = [F.col(c).asc_nulls_first() for c in SORT_KEYS[name]]
    if name == "events":
        df = df.withColumn("day", F.to_date("ts"))
        writer = df.sortWithinPartitions(*keys).write.partitionBy("cluster", "day")
    elif name in UNPARTITIONED:
        # one file, but not one task upstream: coalesce(1) would run the whole parse below it in a single task
        writer = df.repartition(1).sortWithinPartitions(*keys).write
    else:
        writer = df.sortWithinPartitions(*keys).write.partitionBy("cluster")
    writer.mode("overwrite").parquet(str(path))
    if not any(path.rglob("*.parquet")):  # partitionBy writes no file for no rows, and then Spark cannot read
        df.limit(0).write.mode("overwrite").parquet(str(path))  # the table back: keep its schema in one file
    return path
