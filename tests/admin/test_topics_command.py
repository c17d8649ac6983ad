"""``zkcontroller topics`` as a kafka-topics user meets it, checked against Kafka 2.8.2's TopicCommand."""

from __future__ import annotations

import pytest
from tests.contract.admin.test_admin_cli import Cli, cli  # noqa: F401  (the fixture, on a real ZooKeeper)

from zkcontroller.admin.cli import topics

pytestmark = pytest.mark.zookeeper

FORMAT_WARNING = ("WARNING: The configuration message.format.version=2.7 is specified. This configuration will be "
                  "ignored if the version is newer than the inter.broker.protocol.version specified in the broker.")
COLLISION_WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
                     "could collide. To avoid issues it is best to use either, but not both.")


async def test_create_warns_of_message_format_version_once_the_configs_are_valid(cli: Cli) -> None:  # noqa: F811
    refused = await cli(topics, "create", "a.b", "--partitions", "1", "--replication-factor", "1",
                        "--config", "message.format.version=2.7", "--config", "x=1")
    assert (refused.exit_code, refused.output) == (1, "Error: Unknown topic config name: x\n")
    created = await cli(topics, "create", "a.b", "--partitions", "1", "--replication-factor", "1",
                        "--config", "message.format.version=2.7")
    assert (created.exit_code, created.output) == (0, f"{FORMAT_WARNING}\n{COLLISION_WARNING}\nCreated topic a.b.\n")


@pytest.mark.parametrize(("partitions", "rf", "message"), [
    ("0", "1", "Number of partitions must be larger than 0."),
    ("1", "0", "Replication factor must be larger than 0."),
    ("1", "4", "Replication factor: 4 larger than available brokers: 3."),
])
async def test_create_refusals_in_adminutils_words(cli: Cli, partitions: str, rf: str, message: str) -> None:  # noqa: F811
    result = await cli(topics, "create", "t", "--partitions", partitions, "--replication-factor", rf)
    assert (result.exit_code, result.output) == (1, f"Error: {message}\n")
