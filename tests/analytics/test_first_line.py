"""``job._first_per_file`` then ``job._first_of_files``: the first line of each group, as ``min_by`` over
(ts_ms, source_file, line_number) gives it, ties and nulls included, but hash-aggregated over every row (the
string is a grouping key, the rest one long key, or a decimal one for the lines the long cannot hold):
docs/benchmarks.md, issue 16, its sort aggregations."""

from __future__ import annotations

import random

from pyspark.sql import functions as F

from zkcontroller.analytics import job, tables

KEYS = ("cluster", "controller_id")


def _rows(seed: int) -> list[dict[str, object]]:
    """Few values per column, so that times tie within and across files and lines tie across files; nulls, the
    long key's bounds and the extremes of the decimal one's (ts_ms of +-(2**62 - 1), any bigint line) too."""
    rng = random.Random(seed)
    times = [None, -(2**62) + 1, -5, 0, 7, 7, 1_800_000_000_000, 2**42 - 1, 2**42, 2**62 - 1]
    lines = [None, -(2**63), -1, 0, 1, 2, 2, 2**21 - 1, 2**21, 2**63 - 1]
    return [{"cluster": rng.choice(["a", "b"]), "controller_id": rng.choice([1, 2, None]),
             "source_file": rng.choice(["x.log", "y.log", "é.log", "", None]),
             "ts_ms": rng.choice(times), "line_number": rng.choice(lines)} for _ in range(rng.randint(1, 60))]


def test_first_line_per_group_equals_min_by_over_the_struct(spark) -> None:
    """Forty random data sets, each its own groups (``seed`` a key): one query for them all, not two per set."""
    columns = tuple(c for c in tables.EVENTS if c[0] in ("cluster", "controller_id", "source_file", "ts_ms",
                                                         "line_number"))
    schema = tables.struct((("seed", "int"), *columns))
    frame = spark.createDataFrame([{**row, "seed": seed} for seed in range(40) for row in _rows(seed)], schema)
    keys = ("seed", *KEYS)
    reference = frame.groupBy(*keys).agg(
        F.min("ts_ms").alias("first_ms"), F.count(F.lit(1)).alias("n"),
        F.min_by(F.struct("source_file", "line_number"), F.struct("ts_ms", "source_file", "line_number"))
        .alias("first"))
    per_file = job._first_per_file(frame, keys, F.min("ts_ms").alias("first_ms"), F.count(F.lit(1)).alias("n"))
    found = per_file.groupBy(*keys).agg(F.min("first_ms").alias("first_ms"), F.sum("n").alias("n"),
                                        job._first_of_files().alias("first"))
    expected = reference.collect()
    assert len({row.seed for row in expected}) == 40
    assert sorted(map(str, found.collect())) == sorted(map(str, expected))


def test_the_per_row_aggregate_hashes(spark) -> None:
    """The aggregation over every row is a hash aggregate (a sort aggregate sorted them all)."""
    schema = tables.struct(tuple(c for c in tables.EVENTS if c[0] in ("cluster", "controller_id", "source_file",
                                                                      "ts_ms", "line_number")))
    frame = spark.createDataFrame(_rows(0), schema)
    plan = job._first_per_file(frame, KEYS, F.max("ts_ms"))._jdf.queryExecution().executedPlan().toString()
    assert "HashAggregate" in plan and "SortAggregate" not in plan, plan
