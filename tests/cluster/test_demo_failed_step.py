"""A demo step whose command prints an error stops the demo with that error and exit 1: it carried on with a
story no longer true and exited 0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main
from zkcontroller.cluster import demo

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


class _Shell:
    def __init__(self) -> None:
        self.ran: list[str] = []
        self.printed: list[str] = []
        self.out = self.printed.append

    async def run_command(self, line: str) -> bool:
        self.ran.append(line)
        self.out("error: no broker 9" if line == "stop 9" else f"{line}: done")
        return True


async def test_the_first_failing_step_ends_the_run() -> None:
    shell = _Shell()
    with pytest.raises(demo.DemoStepFailed, match=r"^demo step `stop 9` failed: no broker 9$"):
        await demo._run(shell, [("one", "create t 1 1"), (None, "stop 9"), (None, "describe")])  # type: ignore[arg-type]
    assert shell.ran == ["create t 1 1", "stop 9"]
    assert shell.printed == ["create t 1 1: done", "error: no broker 9"]  # still printed as the prompt does
    assert shell.out == shell.printed.append  # the shell's own printer is back


def test_the_command_exits_1_with_the_step_s_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    async def failing(*_: Any, **__: Any) -> Path:
        raise demo.DemoStepFailed("demo step `stop 9` failed: no broker 9")

    monkeypatch.setattr(demo, "run_demo", failing)
    result = CliRunner().invoke(main, ["demo", "--log-dir", str(tmp_path), "--no-listeners"])
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines()[-1] == "Error: demo step `stop 9` failed: no broker 9"
