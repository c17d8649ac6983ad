"""An admin command without ``--zookeeper`` says where a ZooKeeper comes from, not only that the option is missing.

A user new to the tool typically runs ``demo`` or ``cluster`` (embedded store) and then ``topics list`` from
another terminal; click's bare ``Missing option '--zookeeper'.`` left them guessing why there is nothing to
connect to. The message keeps click's first sentence and Kafka's exit status 1."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from zkcontroller.admin.cli import SERVER_HINT
from zkcontroller.cli import main

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


@pytest.mark.parametrize("argv", [["brokers", "list"], ["controller", "show"]])
def test_brokers_and_controller_without_either_server_name_bootstrap_server(argv: list[str]) -> None:
    """They take --bootstrap-server too now (DescribeCluster); not Kafka's tools: click's usage status 2."""
    result = CliRunner().invoke(main, argv, env={"ZKCONTROLLER_ZOOKEEPER": None})
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == (
        f"Error: Only one of --bootstrap-server or --zookeeper must be specified. {SERVER_HINT}")
    assert result.stdout == ""


@pytest.mark.parametrize("argv", [["topics", "list"], ["topics", "--describe"], ["topics", "create", "t"],
                                  ["leader-election", "--election-type", "preferred", "--all-topic-partitions"]])
def test_topics_without_either_server_names_bootstrap_server(argv: list[str]) -> None:
    """`topics` and `leader-election` take --bootstrap-server (TopicCommand's "Only one of ..." when neither is
    given): the hint says a cluster on the embedded store is reached that way."""
    result = CliRunner().invoke(main, argv, env={"ZKCONTROLLER_ZOOKEEPER": None})
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[-1] == (
        f"Error: Only one of --bootstrap-server or --zookeeper must be specified. {SERVER_HINT}")
    assert "--bootstrap-server HOST:PORT" in SERVER_HINT
    assert result.stdout == ""


def test_configs_without_either_server_says_so_in_kafkas_words() -> None:
    result = CliRunner().invoke(main, ["configs", "--entity-type", "topics", "--describe"],
                                env={"ZKCONTROLLER_ZOOKEEPER": None})
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[-1] == (
        "Error: One of the required --bootstrap-server or --zookeeper arguments must be specified. "
        f"{SERVER_HINT}")
