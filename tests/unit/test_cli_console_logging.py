"""The CLI's console handler shows WARNING and above; setting that up must not change handlers it did not make.

`main` set every root handler it found to WARNING. Run in-process (CliRunner), that included pytest's capture
handlers, which live for the whole session: caplog then missed INFO records in every later test that did not set
its own level."""

from __future__ import annotations

import logging

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


@pytest.mark.usefixtures("restored_logging")
def test_an_existing_root_handler_keeps_its_level() -> None:
    root = logging.getLogger()
    theirs = logging.NullHandler(logging.DEBUG)
    root.addHandler(theirs)
    try:
        assert CliRunner().invoke(main, ["brokers", "--help"]).exit_code == 0
        assert theirs.level == logging.DEBUG
    finally:
        root.removeHandler(theirs)


@pytest.mark.usefixtures("restored_logging")
def test_the_console_handler_it_makes_shows_warnings_and_above() -> None:
    root = logging.getLogger()
    root.handlers[:] = []
    assert CliRunner().invoke(main, ["brokers", "--help"]).exit_code == 0
    assert [h.level for h in root.handlers] == [logging.WARNING]
