"""The CLI's console handler shows WARNING and above; setting that up must not change handlers it did not make.

`main` set every root handler it found to WARNING. Run in-process (CliRunner), that included pytest's capture
handlers, which live for the whole session: caplog then missed INFO records in every later test that did not set
its own level."""

from __future__ import annotations

import io
import logging

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main
from zkcontroller.runtime.log_lines import TRACE, KafkaLevelFormatter

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


@pytest.mark.usefixtures("restored_logging")
def test_the_console_names_levels_as_kafka_does_for_a_logger_we_do_not_configure() -> None:
    """Kafka's log4j layout says WARN (and FATAL); the console handler printed Python's WARNING for every logger
    whose lines did not go through our own handlers, such as asyncio's."""
    root = logging.getLogger()
    root.handlers[:] = []
    assert CliRunner().invoke(main, ["brokers", "--help"]).exit_code == 0
    (console,) = root.handlers
    assert isinstance(console, logging.StreamHandler)
    out = io.StringIO()
    console.setStream(out)
    other = logging.Handler()  # another handler on the same record sees Python's names, as before
    seen: list[str] = []
    other.emit = lambda record: seen.append(record.levelname)  # type: ignore[method-assign]
    root.addHandler(other)
    foreign = logging.getLogger("asyncio")
    foreign.warning("Executing %s took %.3f seconds", "<Task>", 0.2)
    foreign.error("Task exception was never retrieved")
    foreign.critical("the loop is gone")
    lines = out.getvalue().splitlines()
    assert [line.split(" ")[2:4] for line in lines] == [["WARN", "asyncio:"], ["ERROR", "asyncio:"],
                                                        ["FATAL", "asyncio:"]]
    assert lines[0].endswith(" WARN asyncio: Executing <Task> took 0.200 seconds")
    assert seen == ["WARNING", "ERROR", "CRITICAL"]
    assert logging.getLevelName(logging.WARNING) == "WARNING"  # Python's own names are not renamed


def test_the_level_formatter_maps_each_of_kafkas_levels() -> None:
    formatter = KafkaLevelFormatter("%(levelname)s %(name)s")
    levels = [TRACE, logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL, 7]
    records = [logging.LogRecord("asyncio", level, __file__, 1, "m", None, None) for level in levels]
    assert [formatter.format(r) for r in records] == [
        "TRACE asyncio", "DEBUG asyncio", "INFO asyncio", "WARN asyncio", "ERROR asyncio", "FATAL asyncio",
        "Level 7 asyncio"]
    assert [r.levelname for r in records][3:6] == ["WARNING", "ERROR", "CRITICAL"]
