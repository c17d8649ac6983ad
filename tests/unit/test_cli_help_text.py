"""Every ``--help`` reads as plain text: docstrings written for the code (reST's double backquotes, an escaped tab)
became the help of `broker`, `topics`, `topics alter`, `topics delete` and `brokers list` as typed."""

from __future__ import annotations

from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from zkcontroller.cli import main

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


def _command_paths(group: click.Group, ctx: click.Context, path: list[str]) -> Iterator[list[str]]:
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        yield [*path, name]
        if isinstance(command, click.Group):
            yield from _command_paths(command, click.Context(command, info_name=name, parent=ctx), [*path, name])


def test_no_help_shows_markup_meant_for_the_code() -> None:
    ctx = click.Context(main, info_name="zkcontroller")
    paths = list(_command_paths(main, ctx, []))
    assert ["brokers", "list"] in paths and ["broker"] in paths
    for path in paths:
        result = CliRunner().invoke(main, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "``" not in result.output and "\t" not in result.output, (path, result.output)


def test_the_command_list_gives_whole_summaries_of_the_first_commands_a_user_runs() -> None:
    """``zkcontroller --help`` cut their first sentences short ("One broker (and controller candidate) per
    process, on...")."""
    result = CliRunner().invoke(main, ["--help"], terminal_width=80)
    listed = {line.split()[0]: line for line in result.output.splitlines() if line.startswith("  ")}
    for name in ("analyze", "broker", "cluster", "demo", "topics", "zookeeper"):
        assert not listed[name].endswith("..."), listed[name]


def test_every_command_in_the_list_has_a_whole_one_line_summary() -> None:
    """``configs``, ``leader-election``, ``reassign`` and ``sim`` were cut off too ("Move partition replicas between
    brokers..."): every top-level command's summary must be a whole sentence on its line."""
    result = CliRunner().invoke(main, ["--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    commands = result.output.split("Commands:\n", 1)[1].splitlines()
    listed = {line.split()[0]: line for line in commands if line.startswith("  ")}
    assert sorted(listed) == main.list_commands(click.Context(main, info_name="zkcontroller"))
    for name, line in listed.items():
        summary = line[2 + len(name):].strip()
        assert summary.endswith(".") and not summary.endswith("..."), (name, line)
    assert all(line.startswith("  ") and not line.startswith("   ") for line in commands if line.strip()), commands
