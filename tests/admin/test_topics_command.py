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


async def test_alter_refuses_an_internal_topic_before_warning(cli: Cli) -> None:  # noqa: F811
    assert (await cli(topics, "create", "__consumer_offsets", "--partitions", "1",
                      "--replication-factor", "1")).exit_code == 0
    result = await cli(topics, "--alter", "--topic", "__consumer_offsets", "--partitions", "2")
    assert (result.exit_code, result.output) == (
        1, "Error: The number of partitions for the internal topic __consumer_offsets cannot be changed.\n")


async def test_alter_takes_a_pattern_and_if_exists(cli: Cli) -> None:  # noqa: F811
    for name in ("logs-a", "logs-b"):
        assert (await cli(topics, "create", name, "--partitions", "1", "--replication-factor", "1")).exit_code == 0
    result = await cli(topics, "--alter", "--topic", "logs-.*", "--partitions", "2")
    assert result.exit_code == 0 and result.output.count("Adding partitions succeeded!\n") == 2
    found = await cli.zk.get_partitions_for_topics(["logs-a", "logs-b"])
    assert {t: len(ps) for t, ps in found.values.items()} == {"logs-a": 2, "logs-b": 2}
    quiet = await cli(topics, "--alter", "--topic", "nope", "--partitions", "2", "--if-exists")
    assert (quiet.exit_code, quiet.output) == (0, "")
    loud = await cli(topics, "--alter", "--topic", "nope", "--partitions", "2")
    assert (loud.exit_code, loud.output) == (1, "Error: Topic 'nope' does not exist as expected\n")


async def test_alter_changes_configs_through_the_one_config_path(cli: Cli) -> None:  # noqa: F811
    assert (await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1",
                      "--config", "retention.ms=5", "--config", "segment.ms=9")).exit_code == 0
    result = await cli(topics, "--alter", "--topic", "t", "--config", "flush.ms=3",
                       "--delete-config", "segment.ms", "--delete-config", "cleanup.policy")  # absent: no error
    assert (result.exit_code, result.output) == (0, (
        "WARNING: Altering topic configuration from this script has been deprecated and may be removed in future "
        "releases.\n         Going forward, please use zkcontroller configs for this functionality\n"
        "Updated config for topic t.\n"))
    assert await cli.zk.get_entity_configs("topics", "t") == {"retention.ms": "5", "flush.ms": "3"}
    assert len(await cli.zk.get_children("/config/changes")) == 1  # change_topic_config's notification
    for args, message in [(("--delete-config", "bogus"), "Unknown topic config name: bogus"),
                          (("--config", "flush.ms=-1"),
                           "Invalid value -1 for configuration flush.ms: Value must be at least 0")]:
        refused = await cli(topics, "--alter", "--topic", "t", *args)
        assert (refused.exit_code, refused.output) == (1, f"Error: {message}\n")
    assert await cli.zk.get_entity_configs("topics", "t") == {"retention.ms": "5", "flush.ms": "3"}


@pytest.mark.parametrize(("args", "message"), [
    (("--replica-assignment", "1", "--partitions", "1"),
     'Option "[replica-assignment]" can\'t be used with option "[partitions]"'),
    (("--replica-assignment", "1", "--replication-factor", "1"),
     'Option "[replica-assignment]" can\'t be used with option "[replication-factor]"'),
    (("--replication-factor", "1"), 'Missing required argument "[partitions]"'),
    (("--partitions", "1"), 'Missing required argument "[replication-factor]"'),
])
async def test_create_usage_errors_in_topic_commands_words(cli: Cli, args: tuple[str, ...], message: str) -> None:  # noqa: F811
    result = await cli(topics, "create", "t", *args)
    assert result.exit_code == 1 and result.output.endswith(f"Error: {message}\n")  # printUsageAndDie: 1
    assert await cli.zk.get_all_topics_in_cluster() == set()


@pytest.mark.parametrize(("args", "message"), [
    (("--if-exists",), 'Missing required argument "[topic]"'),
    (("--under-replicated-partitions", "--unavailable-partitions"),
     'Option "[under-replicated-partitions]" can\'t be used with option "[unavailable-partitions]"'),
    (("--topics-with-overrides", "--unavailable-partitions"),
     'Option "[unavailable-partitions]" can\'t be used with option "[topics-with-overrides]"'),
])
async def test_describe_usage_errors_in_topic_commands_words(cli: Cli, args: tuple[str, ...], message: str) -> None:  # noqa: F811
    result = await cli(topics, "describe", *args)
    assert result.exit_code == 1 and result.output.endswith(f"Error: {message}\n")  # printUsageAndDie: 1


@pytest.mark.zookeeper
async def test_replica_assignment_ids_are_javas_to_int(cli: Cli) -> None:  # noqa: F811
    """TopicCommand.parseReplicaAssignment: ``split(",")``, ``split(":")``, ``trim.toInt`` on each id."""
    created = await cli(topics, "create", "t", "--replica-assignment", "+1: 02,\u0663:1,")
    assert (created.exit_code, created.output) == (0, "Created topic t.\n")
    assignment = (await cli.zk.get_topic_assignments(["t"])).values["t"].assignment
    assert {tp.partition: list(ra.replicas) for tp, ra in assignment.items()} == {0: [1, 2], 1: [3, 1]}
    refused = await cli(topics, "create", "u", "--replica-assignment", "1:1_0")
    assert (refused.exit_code, refused.output) == (1, 'Error: For input string: "1_0"\n')
    assert not await cli.zk.path_exists("/brokers/topics/u")


@pytest.mark.zookeeper
async def test_alter_delete_config_key_is_trimmed_as_java(cli: Cli) -> None:  # noqa: F811
    """parseTopicConfigsToBeDeleted: ``String.trim`` (chars up to U+0020), so a no-break space stays and the name
    is unknown to LogConfig.validateNames."""
    assert (await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1",
                      "--config", "retention.ms=5")).exit_code == 0
    refused = await cli(topics, "alter", "t", "--delete-config", "retention.ms\u00a0")
    assert (refused.exit_code, refused.output) == (1, "Error: Unknown topic config name: retention.ms\u00a0\n")
    altered = await cli(topics, "alter", "t", "--delete-config", "\x00retention.ms\x1f")
    assert altered.exit_code == 0, altered.output
    assert await cli.zk.get_entity_configs("topics", "t") == {}
