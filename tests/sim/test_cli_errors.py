"""`zkcontroller sim` given a directory it cannot write or a Spark it cannot start: one `Error:` line, exit 1,
before any seed runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main
from zkcontroller.sim import sweep as sweep_module
from zkcontroller.sim import world

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level

RUN = ["sim", "run", "--scenario", "random", "--seed", "1", "--duration-ms", "1000"]
SWEEP = ["sim", "sweep", "--scenario", "random", "--seeds", "2", "--duration-ms", "1000"]


@pytest.fixture
def blocker(tmp_path: Path) -> Path:
    """A regular file: no directory can be made under it, even by root."""
    path = tmp_path / "a-file"
    path.write_text("")
    return path


@pytest.fixture
def nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the simulation ran")

    monkeypatch.setattr(world, "run_scenario", refuse)
    monkeypatch.setattr(sweep_module, "sweep", refuse)


def _one_error_line(args: list[str]) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.output.count("\n") == 1
    return result.output


def test_run_with_an_unwritable_log_dir_fails_before_the_run(nothing_runs: None, blocker: Path) -> None:
    output = _one_error_line([*RUN, "--log-dir", str(blocker / "logs")])
    assert output.startswith(f"Error: --log-dir {blocker / 'logs'}: directory is not writable (")


def test_sweep_with_an_unwritable_out_fails_before_the_seeds_run(nothing_runs: None, blocker: Path) -> None:
    output = _one_error_line([*SWEEP, "--workers", "1", "--out", str(blocker / "sweep")])
    assert output.startswith(f"Error: --out {blocker / 'sweep'}: directory is not writable (")


def test_sweep_with_a_malformed_master_fails_before_spark_starts(nothing_runs: None, tmp_path: Path) -> None:
    output = _one_error_line([*SWEEP, "--out", str(tmp_path), "--spark", "--master", "foo"])
    assert output.startswith("Error: --master 'foo' is not a Spark master URL")


def test_a_spark_that_does_not_start_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pyspark.sql import SparkSession

    def unresponsive(_builder: object) -> None:
        raise RuntimeError("All masters are unresponsive! Giving up.\n\tat org.apache.spark...")

    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", unresponsive)
    output = _one_error_line([*SWEEP, "--out", str(tmp_path), "--spark", "--master", "spark://127.0.0.1:9"])
    assert output == "Error: could not start Spark on spark://127.0.0.1:9: All masters are unresponsive! Giving up.\n"


def test_run_into_a_log_dir_holding_a_run_refuses_instead_of_appending(tmp_path: Path) -> None:
    """Two runs' logs in one directory interleave (both start at 2026-01-01 virtual time) and analyze then
    reads one cluster whose epochs go back."""
    first = CliRunner().invoke(main, [*RUN, "--log-dir", str(tmp_path)])
    assert first.exit_code == 0, first.output
    sizes = {p.name: p.stat().st_size for p in tmp_path.iterdir()}
    again = CliRunner().invoke(main, [*RUN, "--log-dir", str(tmp_path)])
    assert again.exit_code == 1
    assert again.output == (f"Error: --log-dir {tmp_path} already holds a run's logs (controller.log, "
                            "events.jsonl, state-change.log); a run appends to them: give an empty or new directory\n")
    assert {p.name: p.stat().st_size for p in tmp_path.iterdir()} == sizes


def test_sweep_with_workers_and_spark_is_a_usage_error(nothing_runs: None, tmp_path: Path) -> None:
    """--workers was ignored without a word under --spark, where the master sets the parallelism."""
    result = CliRunner().invoke(main, [*SWEEP, "--out", str(tmp_path), "--spark", "--workers", "2"])
    assert result.exit_code == 2
    assert "--workers is for worker processes" in result.output
