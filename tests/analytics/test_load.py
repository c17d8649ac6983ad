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
