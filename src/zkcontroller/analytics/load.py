"""Load: write each table as Parquet, one directory per table, rows sorted so reruns give identical output."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame

SORT_KEYS: dict[str, tuple[str, ...]] = {
    "events": ("cluster", "ts_ms", "source_file", "line_number"),
    "rejected_lines": ("source_file", "line_number"),
    "partition_state_intervals": ("cluster", "topic", "partition", "start_at", "source_file", "line_number"),
    "leader_elections": ("cluster", "elected_at", "topic", "partition", "new_leader"),
    "controller_tenures": ("cluster", "controller_epoch", "controller_id", "first_seen_at"),
    "broker_failures": ("cluster", "detected_at", "broker_id", "source_file", "line_number"),
    "partition_unavailability": ("cluster", "topic", "partition"),
    "event_queue_latency": ("cluster", "event_name"),
    "anomalies": ("cluster", "detected_at", "anomaly", "topic", "partition", "controller_epoch", "source_file",
                  "line_number"),
}
LARGE_TABLES = ("events",)
"""Tables written by many tasks (range-partitioned, sorted within and across files) rather than one file."""


def sorted_table(name: str, df: DataFrame) -> DataFrame:
    """The table in its stable order: SORT_KEYS, nulls first, one file unless the table is large.

    Small tables are gathered into one partition and sorted there: a global ``orderBy`` would first run the
    whole query once more to sample range boundaries.
    """
    keys = [df[c].asc_nulls_first() for c in SORT_KEYS[name]]
    return df.orderBy(*keys) if name in LARGE_TABLES else df.repartition(1).sortWithinPartitions(*keys)


def write_table(name: str, df: DataFrame, out_dir: Path) -> Path:
    """Write one table to ``out_dir/name`` (replacing an older run's) and return the directory."""
    path = out_dir / name
    sorted_table(name, df).write.mode("overwrite").parquet(str(path))
    return path
