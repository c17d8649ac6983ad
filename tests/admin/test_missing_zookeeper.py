"""An admin command without ``--zookeeper`` says where a ZooKeeper comes from, not only that the option is missing.

A user new to the tool typically runs ``demo`` or ``cluster`` (embedded store) and then ``topics list`` from
another terminal; click's bare ``Missing option '--zookeeper'.`` left them guessing why there is nothing to
connect to. The message keeps click's first sentence and Kafka's exit status 1."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from zkcontroller.admin.cli import MISSING_ZOOKEEPER_HINT, SERVER_HINT
from zkcontroller.cli import main
from zkcontroller.cluster.prompt_help import IN_PROCESS

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


@pytest.mark.parametrize(("argv", "status"), [
    (["brokers", "list"], 2),  # not one of Kafka's tools: click's usage status (docs/admin.md)
    (["controller", "show"], 2),
])
def test_a_missing_zookeeper_says_where_one_comes_from(argv: list[str], status: int) -> None:
    result = CliRunner().invoke(main, argv, env={"ZKCONTROLLER_ZOOKEEPER": None})
    assert result.exit_code == status, result.output
    error = result.stderr.splitlines()[-1]
    assert error == f"Error: Missing option '--zookeeper'. {MISSING_ZOOKEEPER_HINT}"
    assert "`zkcontroller zookeeper` starts one" in error
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


def test_the_hint_sends_what_the_prompt_lacks_to_the_brokers_listeners() -> None:
    """It said "or use `cluster`'s prompt" after `reassign --list` and `configs`, verbs the prompt does not have;
    on the embedded store those go through a Kafka client on the listeners, whose flags it names as `cluster` has
    them."""
    assert not {"reassign", "configs"} & set(IN_PROCESS.verbs())
    assert {"create", "describe", "delete", "elect"} <= set(IN_PROCESS.verbs())
    assert ("`cluster`'s prompt creates, describes and deletes topics and elects leaders; client quotas go "
            "through a Kafka client") in MISSING_ZOOKEEPER_HINT
    assert "`topics`, `leader-election`, `reassign` and `configs` (topics, brokers) take --bootstrap-server" in (
        MISSING_ZOOKEEPER_HINT)
    cluster = main.commands["cluster"]  # type: ignore[attr-defined]  # a click.Group
    flags = {flag for param in cluster.params for flag in param.opts}
    named = set(re.findall(r"--[a-z-]+", MISSING_ZOOKEEPER_HINT.split(": ", 1)[1]))
    named -= {"--zookeeper", "--bootstrap-server"}
    assert named and named <= flags, named - flags
