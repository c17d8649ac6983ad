"""A directory ``demo``, ``cluster`` or ``zookeeper`` cannot create is one ``Error:`` line naming the option, exit 1.

Each was a FileNotFoundError traceback from mkdir (``demo --log-dir``, in-process ``cluster --log-dir`` and
``zookeeper --data-dir``), after the brokers' or ZooKeeper's set-up had begun.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


@pytest.mark.parametrize(("command", "option"), [
    (["demo", "--no-listeners"], "--log-dir"),
    (["cluster", "--no-listeners"], "--log-dir"),
    (["zookeeper", "--port", "2199"], "--data-dir"),
])
def test_a_directory_that_cannot_be_created_is_one_line(tmp_path: Path, command: list[str], option: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    target = blocker / "dir"  # under a file: mkdir fails whoever runs the test, root included
    result = CliRunner().invoke(main, [*command, option, str(target)], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert result.output == f"Error: {option} {target}: directory is not writable (Not a directory)\n"
