"""A file an admin command reads that is not UTF-8, missing or a directory is one ``Error:`` line naming the
option, the file and why, exit code 1, from every command that reads one (`admin.user_files`); `reassign` ended
with a UnicodeDecodeError traceback, and ``leader-election`` refused a missing file (and every command a directory)
with click's usage error. Kafka's tools reach the file in ``Utils.readFileAsString`` and fail there, exit code 1:
``ReassignPartitionsCommand.main`` prints ``Error: `` and the exception's message, ``LeaderElectionCommand`` and
``PreferredReplicaLeaderElectionCommand`` let the ``NoSuchFileException`` end the JVM; none prints a usage text.

The file is read before any ZooKeeper is contacted, so the connect string here names nothing that runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level

NOT_UTF8 = b"\xff\xfe{"
REASON = "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"


FILE_COMMANDS = [
    (["reassign", "--execute", "--reassignment-json-file"], "--reassignment-json-file"),
    (["reassign", "--verify", "--reassignment-json-file"], "--reassignment-json-file"),
    (["reassign", "--cancel", "--reassignment-json-file"], "--reassignment-json-file"),
    (["reassign", "--generate", "--broker-list", "1,2", "--topics-to-move-json-file"], "--topics-to-move-json-file"),
    (["leader-election", "--election-type", "preferred", "--path-to-json-file"], "--path-to-json-file"),
]


@pytest.mark.parametrize(("args", "option"), FILE_COMMANDS)
def test_a_file_that_is_not_utf8_is_one_error_line(tmp_path: Path, args: list[str], option: str) -> None:
    path = tmp_path / "b.json"
    path.write_bytes(NOT_UTF8)
    result = CliRunner().invoke(main, [*args, str(path), "--zookeeper", "127.0.0.1:1"], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert result.stderr == f"Error: cannot read {option} {path}: {REASON}\n"


def test_a_missing_reassignment_file_names_the_option_and_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    result = CliRunner().invoke(main, ["reassign", "--execute", "--reassignment-json-file", str(path),
                                       "--zookeeper", "127.0.0.1:1"], catch_exceptions=False)
    assert (result.exit_code, result.stderr) == (
        1, f"Error: cannot read --reassignment-json-file {path}: No such file or directory\n")


@pytest.mark.parametrize(("args", "option"), FILE_COMMANDS)
@pytest.mark.parametrize(("name", "reason"), [("nope.json", "No such file or directory"), (".", "Is a directory")])
def test_a_missing_file_or_a_directory_is_the_same_one_error_line(tmp_path: Path, args: list[str], option: str,
                                                                   name: str, reason: str) -> None:
    path = tmp_path / name
    result = CliRunner().invoke(main, [*args, str(path), "--zookeeper", "127.0.0.1:1"], catch_exceptions=False)
    assert (result.exit_code, result.stderr) == (1, f"Error: cannot read {option} {path}: {reason}\n")
    assert "Usage:" not in result.output


@pytest.mark.parametrize("args", [[], ["--config"]])
def test_the_brokers_properties_file_being_a_directory_is_its_one_error_line(tmp_path: Path, args: list[str]
                                                                              ) -> None:
    result = CliRunner().invoke(main, ["broker", *args, str(tmp_path)], catch_exceptions=False)
    assert (result.exit_code, result.stderr) == (1, f"Error: cannot read {tmp_path}: Is a directory\n")
