"""kafka-topics' layout with the action left out is kafka-topics' missing-action error, exit 1.

``zkcontroller topics --zookeeper ZK --topic t`` said "No such option '--zookeeper'", though every action takes
that option. No ZooKeeper is reached (the address is one nothing listens on)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level

MISSING_ACTION = "Error: Command must include exactly one action: --list, --describe, --create, --alter or --delete"


@pytest.mark.parametrize("argv", [
    ["topics", "--zookeeper", "127.0.0.1:1"],
    ["topics", "--topic", "t", "--zookeeper", "127.0.0.1:1"],
    ["topics", "--partitions", "3"],
])
def test_options_without_an_action_name_the_missing_action(argv: list[str]) -> None:
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[-1] == MISSING_ACTION
    assert result.stdout == ""


@pytest.mark.parametrize("argv", [["topics", "--help"], ["topics", "list", "--help"], ["topics", "--list", "--help"]])
def test_help_still_shows(argv: list[str]) -> None:
    result = CliRunner().invoke(main, argv, prog_name="zkcontroller")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage: zkcontroller topics")
