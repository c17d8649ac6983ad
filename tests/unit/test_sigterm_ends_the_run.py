"""A test run SIGTERM ends (`timeout`, CI's cancel) exits non-zero, even when the signal comes while a command
runs in-process or after one did. Commands install their own stop handlers (SIGTERM raises KeyboardInterrupt, which
they catch and print ``stopped`` for; ``cluster --processes`` then ignores further signals) and left them installed:
a SIGTERM during or after such a test was caught by a command or ignored, the run went on, and ended 0."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_TESTS = '''
import asyncio
import signal

from click.testing import CliRunner

from zkcontroller.cli import main


async def _terminated_meanwhile(*args, **kwargs):
    signal.raise_signal(signal.SIGTERM)  # the run is terminated while the command runs
    await asyncio.sleep(0)


async def _returns(*args, **kwargs):
    return None


def test_command(monkeypatch, restored_logging):
    monkeypatch.setattr("zkcontroller.cluster.{module}.{function}", {runner})
    result = CliRunner().invoke(main, ["cluster", {count}, "1"], input="")
    print("command output:", result.output)


def test_later():
    {later}
    print("test_later finished")
'''


@pytest.mark.parametrize(("module", "function", "count", "runner", "later"), [
    ("cluster_shell", "run_cluster", "--brokers", "_terminated_meanwhile", "pass"),
    ("process_cluster", "run_process_cluster", "--processes", "_terminated_meanwhile", "pass"),
    ("process_cluster", "run_process_cluster", "--processes", "_returns", "signal.raise_signal(signal.SIGTERM)"),
], ids=["during-cluster", "during-cluster-processes", "after-cluster-processes"])
def test_a_terminated_run_exits_non_zero(tmp_path: Path, module: str, function: str, count: str, runner: str,
                                         later: str) -> None:
    test_file = tmp_path / "test_terminated.py"
    test_file.write_text(textwrap.dedent(_TESTS).format(module=module, function=function, count=repr(count),
                                                         runner=runner, later=later))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-p", "tests.conftest",
         "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), str(test_file)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 128 + 15, done.stdout + done.stderr
    assert "test_later finished" not in done.stdout, done.stdout
