"""Writing tables: an empty table is still a readable Parquet table with its columns."""

from __future__ import annotations

from pathlib import Path

import pytest

from zkcontroller.analytics.load import write_table

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("name", ["partition_reassignments", "events"])
def test_an_empty_table_reads_back_with_its_columns(spark, tmp_path: Path, name: str) -> None:
    """A cluster with no reassignments (or anomalies, ...) left a directory holding only _SUCCESS: Spark
    refused to read it (cannot infer a schema) and pandas saw no columns."""
    import pandas as pd

    columns = {"partition_reassignments": "cluster string, started_at timestamp, topic string, partition int",
               "events": "cluster string, ts timestamp, ts_ms bigint, source_file string, line_number bigint"}[name]
    write_table(name, spark.createDataFrame([], columns), tmp_path)
    back = spark.read.parquet(str(tmp_path / name))
    assert back.count() == 0
    assert set(back.columns) >= {c.split()[0] for c in columns.split(", ")}
    assert set(pd.read_parquet(tmp_path / name).columns) >= {"cluster", "source_file" if name == "events" else "topic"}


def test_a_table_with_rows_is_still_partitioned_by_cluster(spark, tmp_path: Path) -> None:
    rows = spark.createDataFrame([("prod", None, "t", 0)], "cluster string, started_at timestamp, topic string, "
                                                           "partition int")
    write_table("partition_reassignments", rows, tmp_path)
    assert (tmp_path / "partition_reassignments" / "cluster=prod").is_dir()
    assert spark.read.parquet(str(tmp_path / "partition_reassignments")).count() == 1


def test_events_read_back_as_written(spark, tmp_path: Path) -> None:
    """The tables after ``events`` read its Parquet copy (``job.read_events``), so that copy must give back the
    rows and columns the parse gave, in ``tables.EVENTS`` order: the partition columns (cluster, day) are not
    re-typed from their directory names (a cluster named "7" stays a string), and an empty cluster name, which
    Spark writes as a null partition value, is empty again (a null would join with nothing)."""
    from pyspark.sql import functions as F

    from zkcontroller.analytics import tables
    from zkcontroller.analytics.job import read_events

    columns = ", ".join(f"`{n}` {t}" for n, t in tables.EVENTS if n != "ts")
    rows = [(1_700_000_000_000, "", 1), (1_700_086_400_000, "7", 2), (1_700_000_000_001, "a b/c=d", 3)]
    parsed = spark.createDataFrame(
        [(ms, cluster, "f.log", line, *([None] * (len(tables.EVENTS) - 5))) for ms, cluster, line in rows],
        columns).select(*(F.timestamp_millis("ts_ms").alias("ts") if n == "ts" else F.col(n)
                          for n, _ in tables.EVENTS))
    write_table("events", parsed, tmp_path)
    back = read_events(spark, tmp_path)
    assert back.columns == list(tables.EVENT_COLUMNS)
    assert back.schema == tables.struct(tables.EVENTS)
    assert sorted(back.collect()) == sorted(parsed.collect())
    assert sorted(r.cluster for r in back.collect()) == ["", "7", "a b/c=d"]
