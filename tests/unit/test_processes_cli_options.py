"""`zkcontroller cluster --processes` options a user can get wrong: each is one line before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["cluster", *args], catch_exceptions=False)
    return result.exit_code, result.output


@pytest.mark.parametrize(("args", "message"), [
    (["--processes", "3", "--brokers", "5"], "--brokers and --processes both give the number of brokers"),
    (["--processes", "3", "--broker-ids", "1,2"], "--broker-ids 1,2 names 2 brokers, --processes 3"),
])
def test_conflicting_broker_counts_are_a_usage_error(args: list[str], message: str) -> None:
    """One of the two counts used to win without a word (--processes over --brokers, --broker-ids over
    --processes). Nothing is started: the connect string names no server that could answer."""
    code, out = invoke(*args, "--zookeeper", "127.0.0.1:1")
    assert code == 2, out
    assert message in out, out


@pytest.mark.usefixtures("unreachable_zookeeper_gives_up_soon")
def test_broker_ids_matching_processes_are_fine_to_give() -> None:
    """``--processes 2 --broker-ids 5,7`` names the two brokers' ids (it gets as far as ZooKeeper)."""
    code, out = invoke("--processes", "2", "--broker-ids", "5,7", "--zookeeper", "127.0.0.1:1")
    assert out.strip() == "Error: cannot connect to ZooKeeper at 127.0.0.1:1", out
    assert code == 1


def test_a_log_dir_that_cannot_be_created_is_one_line(tmp_path: Path) -> None:
    """It was a FileNotFoundError traceback from mkdir, after the option checks had passed."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code, out = invoke("--processes", "1", "--log-dir", str(blocker / "cluster"), "--zookeeper", "127.0.0.1:1")
    assert code == 1, out
    assert out.strip().startswith(f"Error: --log-dir {blocker / 'cluster'}: directory is not writable ("), out


def test_the_log_dir_help_says_what_broker_processes_put_there() -> None:
    """It said only "state-change.log, controller.log and events.jsonl", which broker processes do not write
    there (each writes its own broker-N.log)."""
    code, out = invoke("--help")
    assert code == 0
    assert "broker-N.log" in " ".join(out.split()), out


def test_a_lost_own_zookeeper_is_named_as_such_not_as_none() -> None:
    """Without --zookeeper the command starts its own; losing it said "cannot connect to ZooKeeper at None"."""
    import click
    import pytest

    from zkcontroller.cli import _unreachable_zookeeper_is_one_line
    from zkcontroller.coordination.errors import ConnectionLossError

    with pytest.raises(click.ClickException) as lost, _unreachable_zookeeper_is_one_line(None):
        raise ConnectionLossError("/brokers/ids")
    assert lost.value.message == "lost the connection to the ZooKeeper this command started"
    with pytest.raises(click.ClickException) as given, _unreachable_zookeeper_is_one_line("127.0.0.1:1"):
        raise ConnectionLossError()
    assert given.value.message == "cannot connect to ZooKeeper at 127.0.0.1:1"
