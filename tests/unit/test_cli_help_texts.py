"""Every option of every ``zkcontroller`` command says what it is for in ``--help`` (a walkthrough found
``reassign``'s two JSON-file options, the simulator's sizes and seeds, and others, listed bare)."""

from __future__ import annotations

from collections.abc import Iterator

import click

from zkcontroller.cli import main


def _commands(command: click.Command, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            yield from _commands(sub, (*path, name))


def test_every_option_of_every_command_has_a_help_text() -> None:
    bare = [f"{' '.join(path)} {'/'.join(param.opts)}"
            for path, command in _commands(main, ("zkcontroller",))
            for param in command.params
            if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip()]
    assert not bare, bare


def test_the_walk_reaches_the_nested_commands() -> None:
    names = {" ".join(path) for path, _ in _commands(main, ("zkcontroller",))}
    assert {"zkcontroller reassign", "zkcontroller sim sweep", "zkcontroller topics alter"} <= names
