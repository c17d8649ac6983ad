"""`sim run` and `sim sweep` suggest commands spelled as the user started this one: ``uv run zkcontroller ...``
under ``uv run`` (as the README writes them), ``zkcontroller ...`` otherwise; either one runs."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main
from zkcontroller.sim.hints import as_typed

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level

FAILING = ["--scenario", "split-brain", "--partitions", "12", "--mutation", "no-controller-epoch-check"]


def _line(output: str, start: str) -> str:
    return next(line for line in output.splitlines() if line.strip().startswith(start)).strip()


@pytest.mark.parametrize(("uv", "prefix"), [(None, "zkcontroller sim run "),
                                            ("/usr/local/bin/uv", "uv run zkcontroller sim run ")])
def test_sim_run_hints_follow_the_invocation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uv: str | None,
                                             prefix: str) -> None:
    if uv is not None:
        monkeypatch.setenv("UV", uv)
    result = CliRunner().invoke(main, ["sim", "run", *FAILING, "--seed", "4", "--log-dir", str(tmp_path / "a")])
    assert result.exit_code == 1, result.output
    replay = _line(result.output, "replay").removeprefix("replay").strip()
    assert replay.startswith(prefix)
    logs = _line(result.output, "logs")
    assert f"({prefix.removesuffix('sim run ')}analyze {tmp_path / 'a'} --out " in logs
    args = shlex.split(replay)[len(shlex.split(prefix)) - 2:]  # the part after the program name: it replays
    again = CliRunner().invoke(main, [*args, "--log-dir", str(tmp_path / "b")])
    assert again.exit_code == 1 and _line(again.output, "trace hash") == _line(result.output, "trace hash")


def test_sim_sweep_prints_typed_replays_and_stores_plain_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    monkeypatch.setenv("UV", "/usr/local/bin/uv")
    result = CliRunner().invoke(main, ["sim", "sweep", *FAILING, "--seeds", "2", "--first-seed", "4",
                                       "--workers", "1", "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert _line(result.output, "replay:").startswith("replay: uv run zkcontroller sim run --scenario split-brain")
    stored = json.loads((tmp_path / "summary.json").read_text())["replay"]
    assert stored and all(r.startswith("zkcontroller sim run ") for r in stored)  # data: how the program is named


def test_a_mutation_sweep_says_the_invariants_caught_it(tmp_path: Path) -> None:
    """Seeds that fail by a deliberately injected mutation are no regressions to keep."""
    result = CliRunner().invoke(main, ["sim", "sweep", *FAILING, "--seeds", "2", "--first-seed", "4",
                                       "--workers", "1", "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output
    failing = json.loads((tmp_path / "summary.json").read_text())["failing_seeds"]
    assert failing
    assert (f"the invariants caught the mutation no-controller-epoch-check in {len(failing)} of 2 seeds"
            in result.output.splitlines())
    assert "regression_seeds.json" not in result.output


def test_only_zkcontroller_commands_get_the_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV", "/usr/local/bin/uv")
    assert as_typed("zkcontroller analyze d --out o") == "uv run zkcontroller analyze d --out o"
    assert as_typed("spark-submit job.py") == "spark-submit job.py"
    monkeypatch.setenv("UV", "")
    assert as_typed("zkcontroller analyze d --out o") == "zkcontroller analyze d --out o"
