"""Options Kafka's tools declare ``ofType(classOf[Integer])`` (kafka-topics' ``--partitions`` and
``--replication-factor``, kafka-leader-election's ``--partition``) are converted as joptsimple converts them,
with ``Integer.valueOf``: click's ``int`` took `` 1``, ``1_0`` and values past 32 bits. No ZooKeeper is reached."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from zkcontroller.admin.usage import JAVA_INT
from zkcontroller.cli import main

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level

NOWHERE = "127.0.0.1:1"


@pytest.mark.parametrize(("text", "value"), [("3", 3), ("+3", 3), ("03", 3), ("-1", -1), ("\u0663", 3),
                                             ("2147483647", 2**31 - 1)])
def test_accepted_as_integer_value_of(text: str, value: int) -> None:
    assert JAVA_INT.convert(text, None, None) == value


@pytest.mark.parametrize("text", [" 3", "3 ", "3_0", "2147483648", "\U0001d7d1", "0x3", "", "+"])
def test_refused_with_joptsimples_message(text: str) -> None:
    with pytest.raises(click.BadParameter, match="Cannot parse argument"):
        JAVA_INT.convert(text, None, None)


@pytest.mark.parametrize(("argv", "option", "bad"), [
    (["topics", "create", "t", "--partitions", "1_0", "--replication-factor", "1"], "partitions", "1_0"),
    (["topics", "create", "t", "--partitions", "1", "--replication-factor", " 1"], "replication-factor", " 1"),
    (["topics", "--alter", "--topic", "t", "--partitions", "2147483648"], "partitions", "2147483648"),
    (["leader-election", "--election-type", "preferred", "--topic", "t", "--partition", "0_1"], "partition", "0_1"),
])
def test_the_commands_refuse_what_kafka_refuses(argv: list[str], option: str, bad: str) -> None:
    result = CliRunner().invoke(main, [*argv, "--zookeeper", NOWHERE])
    assert result.exit_code == 1, result.output
    assert f"Error: Invalid value for '--{option}': Cannot parse argument '{bad}' of option {option}" in result.stderr
