"""`sim sweep`: one row per seed in a Parquet table, a summary naming the failing seeds and their replays."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from tests.helpers import tool_missing
from tests.sim.helpers import ci_config

from zkcontroller.cli import main
from zkcontroller.sim.sweep import COLUMNS, sweep

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


def test_sweep_on_worker_processes_writes_one_row_per_seed(tmp_path: Path) -> None:
    rows, summary = sweep(ci_config("kill-leaders", 0), 10, 4, tmp_path, workers=2)
    table = pq.read_table(tmp_path / "runs.parquet").to_pylist()
    assert [r["seed"] for r in table] == [10, 11, 12, 13]
    assert tuple(pq.read_schema(tmp_path / "runs.parquet").names) == COLUMNS
    assert {r["trace_hash"] for r in table} == {r["trace_hash"] for r in rows}
    assert summary.failing_seeds == [] and summary.seeds == 4
    assert json.loads((tmp_path / "summary.json").read_text())["seeds"] == 4


def test_sweep_matches_single_runs(tmp_path: Path) -> None:
    from tests.sim.helpers import run

    rows, _ = sweep(ci_config("random", 0), 5, 2, tmp_path, workers=1)
    assert [r["trace_hash"] for r in rows] == [run("random", 5).trace_hash, run("random", 6).trace_hash]


def test_sweep_command_reports_failing_seeds_with_replays(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["sim", "sweep", "--scenario", "split-brain", "--seeds", "3", "--workers",
                                       "1", "--partitions", "12", "--mutation", "no-controller-epoch-check",
                                       "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["failing_seeds"] and "no-stale-controller-write" in summary["violations_by_invariant"]
    assert all(r.startswith("zkcontroller sim run --scenario split-brain --seed ") for r in summary["replay"])
    assert "replay: zkcontroller sim run" in result.output


@pytest.mark.spark
def test_sweep_on_spark_writes_the_same_rows(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        tool_missing("java", "not on PATH (Spark needs it)")
    rows, summary = sweep(ci_config("kill-leaders", 0), 10, 3, tmp_path, spark=True, master="local[1]")
    local, _ = sweep(ci_config("kill-leaders", 0), 10, 3, tmp_path / "local", workers=1)
    assert [r["trace_hash"] for r in rows] == [r["trace_hash"] for r in local]
    assert summary.mode == "spark local[1]"
    assert sorted(r["seed"] for r in pq.read_table(tmp_path / "runs.parquet").to_pylist()) == [10, 11, 12]
