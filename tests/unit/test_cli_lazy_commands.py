"""The CLI loads each subcommand's module only when that subcommand runs."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from zkcontroller.cli import LAZY_COMMANDS, main

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


def test_every_lazy_command_resolves_to_a_command_of_its_name() -> None:
    ctx = main.make_context("zkcontroller", ["--help"], resilient_parsing=True)
    for name in LAZY_COMMANDS:
        command = main.get_command(ctx, name)
        assert command is not None and command.name == name
    assert set(LAZY_COMMANDS) <= set(main.list_commands(ctx))
    help_text = CliRunner().invoke(main, ["--help"]).output
    assert all(name in help_text for name in LAZY_COMMANDS)


def test_importing_the_cli_imports_no_subcommand_module() -> None:
    heavy = ["zkcontroller.sim.cli", "zkcontroller.analytics.cli", "zkcontroller.admin.reassign_cli", "kio",
             "hypothesis", "pyspark"]
    code = f"import sys, zkcontroller.cli; print([m for m in {heavy!r} if m in sys.modules])"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"


def test_a_lazy_subcommand_runs_and_an_unknown_one_is_refused() -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["leader-election", "--help"])
    assert result.exit_code == 0 and "--election-type" in result.output
    result = runner.invoke(main, ["no-such-command"])
    assert result.exit_code == 2 and "No such command" in result.output
