"""A failing seed prints a one-line replay command, and running that command reproduces the same failure."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.sim.helpers import run

from zkcontroller.cli import main
from zkcontroller.sim.report import format_result

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


def _field(output: str, name: str) -> str:
    line = next(line for line in output.splitlines() if line.startswith(name))
    return line[len(name):].strip()


def test_replay_command_reproduces_the_violation(tmp_path: Path) -> None:
    failing = run("split-brain", 4, mutations=("no-controller-epoch-check",))
    assert failing.violations
    report = format_result(failing)
    command = _field(report, "replay")
    assert f"--seed {failing.config.seed}" in command
    args = shlex.split(command)
    assert args[:3] == ["zkcontroller", "sim", "run"]
    replayed = CliRunner().invoke(main, [*args[1:], "--log-dir", str(tmp_path)])
    assert replayed.exit_code == 1, replayed.output
    assert _field(replayed.output, "trace hash") == failing.trace_hash
    first = failing.violations[0]
    assert f"VIOLATION of {first.invariant} at step {first.step}" in replayed.output
    assert first.detail in replayed.output


def test_sim_run_prints_the_figures_and_writes_a_real_runs_logs(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["sim", "run", "--scenario", "split-brain", "--seed", "2", "--partitions",
                                       "12", "--duration-ms", "30000", "--log-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for name in ("trace hash", "invariants", "faults", "virtual time", "wall time", "split brain", "result"):
        assert _field(result.output, name)
    assert "0 landed" in _field(result.output, "split brain")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "controller.log", "events.jsonl", "server.log", "state-change.log"]


def test_unknown_scenario_is_a_clear_error() -> None:
    result = CliRunner().invoke(main, ["sim", "run", "--scenario", "nope", "--seed", "1"])
    assert result.exit_code == 2 and "nope" in result.output


def test_the_invariants_line_names_every_invariant_the_checker_can_report() -> None:
    """Every name passed to ``violate`` anywhere in the simulator is among those `sim run` says it checked."""
    import ast

    import zkcontroller.sim as sim_package

    reported = set()
    for module in Path(sim_package.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "violate" and node.args \
                    and isinstance(node.args[0], ast.Constant):
                reported.add(node.args[0].value)
    assert len(reported) >= 10
    listed = _field(format_result(run("random", 1, duration_ms=1_000)), "invariants").split(", ")
    assert reported <= set(listed), reported - set(listed)
