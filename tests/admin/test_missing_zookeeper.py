"""An admin command without ``--zookeeper`` says where a ZooKeeper comes from, not only that the option is missing.

A user new to the tool typically runs ``demo`` or ``cluster`` (embedded store) and then ``topics list`` from
another terminal; click's bare ``Missing option '--zookeeper'.`` left them guessing why there is nothing to
connect to. The message keeps click's first sentence and Kafka's exit status 1."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from zkcontroller.admin.cli import MISSING_ZOOKEEPER_HINT
from zkcontroller.cli import main

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


@pytest.mark.parametrize(("argv", "status"), [
    (["topics", "list"], 1),
    (["topics", "--describe"], 1),
    (["brokers", "list"], 2),  # not one of Kafka's tools: click's usage status (docs/admin.md)
    (["controller", "show"], 2),
    (["configs", "--entity-type", "topics", "--describe"], 1),
    (["reassign", "--list"], 1),
    (["leader-election", "--election-type", "preferred", "--all-topic-partitions"], 1),
])
def test_a_missing_zookeeper_says_where_one_comes_from(argv: list[str], status: int) -> None:
    result = CliRunner().invoke(main, argv, env={"ZKCONTROLLER_ZOOKEEPER": None})
    assert result.exit_code == status, result.output
    error = result.stderr.splitlines()[-1]
    assert error == f"Error: Missing option '--zookeeper'. {MISSING_ZOOKEEPER_HINT}"
    assert "`zkcontroller zookeeper` starts one" in error
    assert result.stdout == ""
