"""The admin commands on corrupt znodes (not JSON, JSON of the wrong shape, no data at all), against Kafka 2.8.2's
tools. Where Kafka's tool fails the whole command, ours fails with one line naming the znode and what is wrong
(never a traceback, never a misleading "does not exist"); where a line per topic, partition or entity can be
written for the good ones, they are all written, the corrupt ones are shown where they belong, and the command
exits non-zero."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.contract.admin.test_admin_cli import Cli, cli  # noqa: F401  (the fixture, on a real ZooKeeper)

from zkcontroller.admin.cli import brokers, topics
from zkcontroller.admin.configs import configs
from zkcontroller.admin.leader_election import leader_election
from zkcontroller.admin.reassign_cli import reassign
from zkcontroller.coordination.api import ANY_VERSION
from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import NO_FENCING

pytestmark = [pytest.mark.zookeeper, pytest.mark.usefixtures("restored_logging")]

CORRUPT = {
    "not-json": (b"garbage", "invalid JSON (Expecting value: line 1 column 1 (char 0))"),
    "wrong-shape": (b"[1]", "expected a JSON object, got array"),
    "no-data": (b"", "no JSON value (0 bytes of data): expected a JSON object"),
}
TOPIC_KINDS = pytest.mark.parametrize("kind", list(CORRUPT))


async def _three_topics(cli: Cli) -> None:  # noqa: F811
    """Topics a, b and c, two partitions each on brokers 1–3, every partition led by its first replica."""
    for topic in ("a", "b", "c"):
        created = await cli(topics, "create", topic, "--partitions", "2", "--replication-factor", "2", "--seed", "0")
        assert created.exit_code == 0, created.output
        assignment = (await cli.zk.get_topic_assignments([topic])).values[topic].assignment
        await cli.zk.create_topic_partition_states(
            {tp: LeaderIsrAndControllerEpoch(LeaderAndIsr(ra.replicas[0], 0, ra.replicas), 1)
             for tp, ra in assignment.items()}, NO_FENCING)


async def _corrupt(cli: Cli, path: str, data: bytes) -> None:  # noqa: F811
    await cli.zk.session.set_data(path, data, ANY_VERSION)


@TOPIC_KINDS
async def test_alter_partitions_names_the_corrupt_topic_znode(cli: Cli, kind: str) -> None:  # noqa: F811
    """Kafka: the Jackson error (wrong shape, no data), or "The topic b does not exist" (not JSON)."""
    await _three_topics(cli)
    data, reason = CORRUPT[kind]
    await _corrupt(cli, paths.topic_path("b"), data)
    result = await cli(topics, "alter", "b", "--partitions", "3")
    assert result.exit_code == 1
    assert result.output.endswith(f"\nError: Malformed znode /brokers/topics/b: {reason}\n")
    assert (await cli.zk.session.get_data(paths.topic_path("b")))[0] == data


@TOPIC_KINDS
async def test_placing_commands_fail_alike_on_a_corrupt_broker_registration(
        cli: Cli, kind: str, tmp_path: Path) -> None:  # noqa: F811
    """Kafka's getBrokerMetadatas throws ("Failed to parse ZooKeeper registration for broker 3"); placing the
    replicas on brokers 1 and 2 only said "Replication factor: 3 larger than available brokers: 2". The placing
    commands say it in one sentence (create and reassign --generate had two)."""
    await _three_topics(cli)
    data, reason = CORRUPT[kind]
    await _corrupt(cli, paths.broker_id_path(3), data)
    error = f"Error: Failed to parse ZooKeeper registration for broker 3 (/brokers/ids/3): {reason}\n"
    created = await cli(topics, "create", "d", "--partitions", "1", "--replication-factor", "3")
    assert (created.exit_code, created.output) == (1, error)
    assert not await cli.zk.path_exists(paths.topic_path("d"))
    altered = await cli(topics, "alter", "a", "--partitions", "3")
    assert altered.exit_code == 1 and altered.output.endswith("\n" + error)
    to_move = tmp_path / "topics.json"
    to_move.write_text(json.dumps({"version": 1, "topics": [{"topic": "a"}]}))
    generated = await cli(reassign, "--generate", "--topics-to-move-json-file", str(to_move), "--broker-list", "1,2,3")
    assert generated.exit_code == 1 and generated.output.endswith("\n" + error)


async def _elect(cli: Cli, *args: str) -> Result:  # noqa: F811
    argv = ["--zookeeper", cli.zookeeper, "--election-type", "preferred", *args]
    return await asyncio.to_thread(CliRunner().invoke, leader_election, argv, catch_exceptions=False)


@TOPIC_KINDS
async def test_preferred_election_fails_on_a_corrupt_topic_it_reads(cli: Cli, kind: str) -> None:  # noqa: F811
    """Kafka's getPartitionsForTopics throws for the wrong shape or no data; for data that is not JSON it says
    the partitions asked for "don't exist". Nothing is requested; a topic not asked for is not read."""
    await _three_topics(cli)
    data, reason = CORRUPT[kind]
    await _corrupt(cli, paths.topic_path("b"), data)
    for args in (("--all-topic-partitions",), ("--topic", "b", "--partition", "0")):
        result = await _elect(cli, *args)
        assert result.exit_code == 1
        assert result.output.endswith(f"\nError: Malformed znode /brokers/topics/b: {reason}\n")
        assert not await cli.zk.path_exists(paths.PREFERRED_REPLICA_ELECTION)
    other = await _elect(cli, "--topic", "a", "--partition", "0")
    assert other.exit_code == 0
    assert "Successfully started preferred replica election for partitions Set(a-0)" in other.output


async def test_election_in_progress_with_an_unreadable_request(cli: Cli) -> None:  # noqa: F811
    await _three_topics(cli)
    await cli.zk.session.create(paths.PREFERRED_REPLICA_ELECTION, b"[1]")
    result = await _elect(cli, "--topic", "a", "--partition", "0")
    assert result.exit_code == 1
    assert result.output.endswith(
        "\nError: Preferred replica leader election currently in progress for partitions it cannot tell (Malformed "
        "znode /admin/preferred_replica_election: expected a JSON object, got array). Aborting operation\n")


STRING_VALUE = (b'{"version":1,"config":{"retention.ms":1000}}', "config.retention.ms: expected a string, got number")
"""Kafka's one config error (``to[String]`` throws); it reads the other three kinds as no overrides."""
CONFIG_KINDS = pytest.mark.parametrize("data, reason", [CORRUPT["not-json"], CORRUPT["wrong-shape"], STRING_VALUE],
                                       ids=["not-json", "wrong-shape", "string-value"])


@CONFIG_KINDS
async def test_describe_flags_a_corrupt_topic_config(cli: Cli, data: bytes, reason: str) -> None:  # noqa: F811
    """It showed "Configs: " (no overrides), as Kafka does for all but a value that is not a string."""
    await _three_topics(cli)
    await _corrupt(cli, paths.topic_config_path("b"), data)
    result = await cli(topics, "describe")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert ("Topic: b\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: "
            f"\tCorrupt: /config/topics/b: {reason}") in lines
    assert sum(line.startswith(("Topic: ", "\tTopic: ")) for line in lines) == 9  # a, b and c, all described
    assert lines[-1] == "Error: 1 corrupt znode (see the lines above)"
    overrides = await cli(topics, "describe", "--topics-with-overrides")
    assert [line for line in overrides.output.splitlines() if line.startswith("Topic: ")] == [
        f"Topic: b\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: \tCorrupt: /config/topics/b: {reason}"]


@CONFIG_KINDS
async def test_configs_describe_shows_every_entity_and_flags_the_corrupt_one(
    cli: Cli, data: bytes, reason: str  # noqa: F811
) -> None:
    """It stopped at the corrupt node, showing none of the others."""
    await _three_topics(cli)
    await cli.zk.set_or_create_entity_configs("topics", "c", {"retention.ms": "5"})
    await _corrupt(cli, paths.topic_config_path("b"), data)
    result = await cli(configs, "--describe", "--entity-type", "topics")
    assert result.exit_code == 1
    assert result.output.splitlines()[-4:] == [
        "Configs for topic 'a' are ",
        f"Configs for topic 'b' are unknown\tCorrupt: /config/topics/b: {reason}",
        "Configs for topic 'c' are retention.ms=5",
        "Error: 1 corrupt znode (see the lines above)",
    ]
    one = await cli(configs, "--describe", "--topic", "c")
    assert one.exit_code == 0 and one.output.endswith("Configs for topic 'c' are retention.ms=5\n")


@TOPIC_KINDS
async def test_describe_and_brokers_list_flag_a_corrupt_registration(cli: Cli, kind: str) -> None:  # noqa: F811
    """Kafka's describe throws on it before any line; the topics are described here, with it flagged first."""
    await _three_topics(cli)
    data, reason = CORRUPT[kind]  # no data: Kafka's asJsonObject failure on Jackson's MissingNode, not bad JSON
    await _corrupt(cli, paths.broker_id_path(2), data)
    described = await cli(topics, "describe", "--topic", "a")
    assert described.exit_code == 1
    lines = described.output.splitlines()
    assert lines[0] == f"Broker: 2\tCorrupt: /brokers/ids/2: {reason}"
    assert lines[1].startswith("Topic: a\tPartitionCount: 2") and len(lines) == 5
    listed = await cli(brokers, "list")
    assert listed.exit_code == 1
    assert [line.split("\t", 1)[0] for line in listed.output.splitlines()] == [
        "Broker: 1", "Broker: 2", "Broker: 3", "Error: 1 corrupt znode (see the lines above)"]
    assert listed.output.splitlines()[1] == f"Broker: 2\tCorrupt: /brokers/ids/2: {reason}"


@TOPIC_KINDS
async def test_reassign_list_shows_the_readable_topics_and_flags_the_rest(cli: Cli, kind: str) -> None:  # noqa: F811
    """It stopped at the first corrupt topic znode; and a submission it could not read went unsaid."""
    await _three_topics(cli)
    data, reason = CORRUPT[kind]
    await _corrupt(cli, paths.topic_path("b"), data)
    await cli.zk.session.create(paths.REASSIGN_PARTITIONS, b"{not json")
    result = await cli(reassign, "--list")
    assert result.exit_code == 1
    assert result.output.splitlines()[-4:] == [
        "No partition reassignments found.",
        f"Topic: b\tCorrupt: /brokers/topics/b: {reason}",
        "Submitted in /admin/reassign_partitions, which cannot be read\tCorrupt: /admin/reassign_partitions: "
        "invalid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
        "Error: 2 corrupt znodes (see the lines above)",
    ]


@TOPIC_KINDS
async def test_describe_flags_a_corrupt_topic_of_each_kind(cli: Cli, kind: str) -> None:  # noqa: F811
    """Kafka: a topic znode with no data read as no partitions ("Topic b doesn't exist!")."""
    await _three_topics(cli)
    data, reason = CORRUPT[kind]
    await _corrupt(cli, paths.topic_path("b"), data)
    described = await cli(topics, "describe")
    assert described.exit_code == 1
    lines = described.output.splitlines()
    assert lines[3] == f"Topic: b\tCorrupt: /brokers/topics/b: {reason}" and len(lines) == 8


@TOPIC_KINDS
async def test_list_prints_a_corrupt_topic_plainly_as_kafka_does(cli: Cli, kind: str) -> None:  # noqa: F811
    """Kafka's ``--list`` reads only the children of /brokers/topics and /admin/delete_topics, never a topic's
    data: scripts parse its stdout, so a corrupt topic is one plain name there and the command succeeds."""
    await _three_topics(cli)
    await _corrupt(cli, paths.topic_path("b"), CORRUPT[kind][0])
    await cli.zk.create_delete_topic_path("c")
    listed = await cli(topics, "list")
    assert (listed.exit_code, listed.stdout, listed.stderr) == (0, "a\nb\nc - marked for deletion\n", "")


@CONFIG_KINDS
async def test_config_alterations_overwrite_no_corrupt_config(cli: Cli, data: bytes, reason: str) -> None:  # noqa: F811
    """Kafka reads all but a non-string value as no overrides and writes the new set over the node."""
    await _three_topics(cli)
    await _corrupt(cli, paths.topic_config_path("b"), data)
    error = f"Error: Malformed znode /config/topics/b: {reason}\n"
    altered = await cli(topics, "alter", "b", "--config", "retention.ms=5")
    assert altered.exit_code == 1 and altered.output.endswith(error)
    configured = await cli(configs, "--alter", "--topic", "b", "--add-config", "retention.ms=6")
    assert configured.exit_code == 1 and configured.output.endswith(error)
    assert (await cli.zk.session.get_data(paths.topic_config_path("b")))[0] == data


@CONFIG_KINDS
async def test_verify_clears_the_throttles_it_can_read(
    cli: Cli, tmp_path: Path, data: bytes, reason: str  # noqa: F811
) -> None:
    """It stopped at the unreadable node, leaving the throttles after it in place."""
    await _three_topics(cli)
    throttle = {"leader.replication.throttled.rate": "100"}
    for broker in ("1", "3"):
        await cli.zk.set_or_create_entity_configs("brokers", broker, throttle)
    await cli.zk.set_or_create_entity_configs("brokers", "2", {})
    await _corrupt(cli, paths.config_entity_path("brokers", "2"), data)
    target = tmp_path / "target.json"
    current = (await cli.zk.get_topic_assignments(["a"])).values["a"].assignment
    target.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "a", "partition": tp.partition, "replicas": list(ra.replicas)} for tp, ra in current.items()]}))
    result = await cli(reassign, "--verify", "--reassignment-json-file", str(target))
    assert result.exit_code == 1
    assert f"Not cleared, its config cannot be read\tCorrupt: /config/brokers/2: {reason}\n" in result.output
    assert result.output.endswith("Error: 1 corrupt znode (see the lines above)\n")
    assert await cli.zk.get_entity_configs("brokers", "1") == {}
    assert await cli.zk.get_entity_configs("brokers", "3") == {}
    assert (await cli.zk.session.get_data(paths.config_entity_path("brokers", "2")))[0] == data
