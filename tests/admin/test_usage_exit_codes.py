"""Usage errors of the Kafka-style admin commands exit 1, as Kafka's ``CommandLineUtils.printUsageAndDie``
(``Exit.exit(1)``) does, with click's message on stderr; the other commands keep click's 2. No ZooKeeper is
reached: every case here fails on its arguments (the address given is one nothing listens on)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from zkcontroller.admin.cli import topics
from zkcontroller.admin.configs import configs
from zkcontroller.cli import main

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level

NOWHERE = "127.0.0.1:1"


@pytest.mark.parametrize(("argv", "message"), [
    (["topics", "list"], "Only one of --bootstrap-server or --zookeeper must be specified"),  # its check
    (["topics", "create", "t", "--partitions", "1", "--zookeeper", NOWHERE],
     'Missing required argument "[replication-factor]"'),  # a subcommand's callback
    (["topics", "--create", "--delete", "--topic", "t"], "Command must include exactly one action"),  # the layout
    (["topics", "nope"], "No such command 'nope'"),
    (["topics", "list", "--bogus"], "No such option '--bogus'"),
    (["configs", "--zookeeper", NOWHERE], "Command must include exactly one action: --describe, --alter"),
    (["configs", "--zookeeper", NOWHERE, "--describe", "--entity-type", "broker-loggers"],
     "Invalid value for '--entity-type'"),
    (["configs", "--zookeeper", NOWHERE, "--alter", "--entity-type", "topics", "--add-config", "a=1"],
     "an entity name must be specified with --alter of topics"),
    (["reassign", "--zookeeper", NOWHERE], "Command must include exactly one action"),
    (["reassign", "--zookeeper", NOWHERE, "--generate"], "--topics-to-move-json-file is required for this action"),
    (["leader-election", "--zookeeper", NOWHERE], "Missing option '--election-type'"),
    (["leader-election", "--zookeeper", NOWHERE, "--election-type", "preferred", "--topic", "t"],
     "--topic and --partition must be given together"),
])
def test_kafka_style_usage_errors_exit_1_on_stderr(argv: list[str], message: str) -> None:
    result = CliRunner().invoke(main, argv, env={"ZKCONTROLLER_ZOOKEEPER": None})
    assert result.exit_code == 1, result.output
    assert f"Error: {message}" in result.stderr
    assert result.stdout == ""


def test_the_commands_run_on_their_own_exit_1_too() -> None:
    for command, argv in ((topics, ["list"]), (configs, ["--zookeeper", NOWHERE])):
        result = CliRunner().invoke(command, argv, env={"ZKCONTROLLER_ZOOKEEPER": None})
        assert (result.exit_code, result.stdout) == (1, ""), result.output
        assert "Error: " in result.stderr


@pytest.mark.parametrize("argv", [
    ["nope"],  # the top-level group
    ["--bogus"],
    ["sim", "--bogus"],
    ["analyze", "--bogus"],
    ["brokers", "list", "--bogus"],  # ours, not a Kafka tool
])
def test_other_usage_errors_keep_clicks_2(argv: list[str]) -> None:
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, result.output
    assert "Error: " in result.stderr
