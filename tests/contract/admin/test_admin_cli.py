"""The admin commands, run with click's CliRunner against the real ZooKeeper server (own chroot per test).

The commands call ``asyncio.run``, so they are invoked in a worker thread while this test's loop keeps the
brokers' registration session alive.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from zkcontroller.admin.cli import brokers, controller, topics
from zkcontroller.admin.configs import configs
from zkcontroller.admin.deprecation import ZOOKEEPER_DEPRECATED
from zkcontroller.admin.leader_election import leader_election
from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.coordination.kazoo_store import KazooSession
from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import NO_FENCING, KafkaZkClient

from .conftest import register_brokers

pytestmark = [pytest.mark.zookeeper, pytest.mark.usefixtures("restored_logging")]
_chroots = itertools.count()


@dataclass
class Cli:
    zookeeper: str
    zk: KafkaZkClient

    async def __call__(self, group: click.Group, *args: str) -> Result:
        runner = CliRunner()
        argv = [args[0], "--zookeeper", self.zookeeper, *args[1:]]
        return await asyncio.to_thread(runner.invoke, group, argv, catch_exceptions=False)


@pytest.fixture
async def cli(zookeeper_server: ZooKeeperServerProcess, restored_logging: None) -> AsyncIterator[Cli]:
    """Brokers 1–3 registered under a fresh chroot, and a runner pointed at it (the commands, run in-process, set
    kazoo's level: `restored_logging` puts it back)."""
    chroot = f"/cli-{os.getpid()}-{next(_chroots)}"
    backend = ZooKeeperBackend(zookeeper_server.connect_string, chroot)
    session = await backend.new_session()
    zk = KafkaZkClient(session, wall_clock_ms)
    await zk.create_top_level_paths()
    await register_brokers(zk, [1, 2, 3])
    yield Cli(zookeeper_server.connect_string + chroot, zk)
    await session.close()
    await backend.close()


async def test_create_describe_list_delete(cli: Cli) -> None:
    result = await cli(topics, "create", "orders", "--partitions", "3", "--replication-factor", "2",
                       "--config", "unclean.leader.election.enable=true", "--seed", "0")
    assert result.exit_code == 0, result.output
    assert result.output == "Created topic orders.\n"
    assignment = (await cli.zk.get_topic_assignments(["orders"])).values["orders"].assignment
    await cli.zk.create_topic_partition_states(
        {tp: LeaderIsrAndControllerEpoch(LeaderAndIsr(ra.replicas[0], 0, ra.replicas[:1]), 1)
         for tp, ra in assignment.items()}, NO_FENCING)

    result = await cli(topics, "describe", "--topic", "orders")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == ("Topic: orders\tPartitionCount: 3\tReplicationFactor: 2"
                        "\tConfigs: unclean.leader.election.enable=true")
    for p, line in enumerate(lines[1:]):
        replicas = assignment[TopicPartition("orders", p)].replicas
        assert line == (f"\tTopic: orders\tPartition: {p}\tLeader: {replicas[0]}"
                        f"\tReplicas: {replicas[0]},{replicas[1]}\tIsr: {replicas[0]}")
    under = await cli(topics, "describe", "--under-replicated-partitions")
    assert under.output.splitlines() == lines[1:]  # every ISR has one of two replicas
    unavailable = await cli(topics, "describe", "--unavailable-partitions")
    assert unavailable.exit_code == 0 and unavailable.output == ""

    assert (await cli(topics, "list")).output == "orders\n"
    deleted = await cli(topics, "delete", "orders")
    assert deleted.exit_code == 0
    assert deleted.output.startswith("Topic orders is marked for deletion.\n")
    assert (await cli(topics, "list")).output == "orders - marked for deletion\n"
    again = await cli(topics, "delete", "orders")
    assert again.exit_code == 0 and again.output == "Topic orders is already marked for deletion.\n"


async def test_corrupt_topic_is_shown_and_fails_describe_but_is_listed_plainly(cli: Cli) -> None:
    await cli.zk.session.create("/brokers/topics/broken", b"garbage")
    described = await cli(topics, "describe")
    assert described.exit_code == 1
    assert "Topic: broken\tCorrupt: /brokers/topics/broken: " in described.output
    assert "Error: 1 corrupt znode (see the lines above)" in described.output
    listed = await cli(topics, "list")
    assert (listed.exit_code, listed.stdout) == (0, "broken\n")  # Kafka's --list never reads a topic's data


async def test_explicit_assignment_and_alter(cli: Cli) -> None:
    result = await cli(topics, "create", "a.b", "--replica-assignment", "1:2,2:3")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("WARNING: Due to limitations in metric names")
    result = await cli(topics, "alter", "a.b", "--partitions", "3", "--replica-assignment", "1:2,2:3,3:1")
    assert result.exit_code == 0, result.output
    assert result.output.endswith("Adding partitions succeeded!\n")
    read = await cli.zk.get_topic_assignments(["a.b"])
    assert {tp.partition: ra.replicas for tp, ra in read.values["a.b"].assignment.items()} == {
        0: (1, 2), 1: (2, 3), 2: (3, 1)}


@pytest.mark.parametrize(("args", "message"), [
    (("create", "bad/name", "--partitions", "1", "--replication-factor", "1"), "is illegal"),
    (("create", "t", "--partitions", "1", "--replication-factor", "4"),
     "Replication factor: 4 larger than available brokers: 3."),
    (("create", "t", "--replica-assignment", "1:1"), "may not contain duplicate entries: 1"),
    (("create", "t", "--replica-assignment", "1:9"), "are not available"),
    (("create", "t", "--partitions", "1", "--replication-factor", "1", "--config", "x"), 'format "key=val"'),
    (("describe", "--topic", "missing"), "Topic 'missing' does not exist as expected"),
    (("delete", "missing"), "Topic 'missing' does not exist as expected"),
    (("alter", "missing", "--partitions", "2"), "does not exist"),
])
async def test_user_errors_exit_non_zero_without_traceback(cli: Cli, args: tuple[str, ...], message: str) -> None:
    result = await cli(topics, *args)
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and message in result.output
    assert "Traceback" not in result.output


async def test_create_existing_topic(cli: Cli) -> None:
    assert (await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1")).exit_code == 0
    result = await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1")
    assert result.exit_code == 1 and "Error: Topic 't' already exists." in result.output
    quiet = await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1", "--if-not-exists")
    assert quiet.exit_code == 0 and quiet.output == ""


async def test_usage_errors(cli: Cli) -> None:
    result = await cli(topics, "create", "t", "--partitions", "1")
    assert result.exit_code == 1 and 'Missing required argument "[replication-factor]"' in result.output
    result = await cli(topics, "create", "t", "--partitions", "1", "--replica-assignment", "1")
    assert result.exit_code == 1 and "can't be used with" in result.output


async def test_brokers_and_controller(cli: Cli) -> None:
    result = await cli(brokers, "list")
    assert result.exit_code == 0
    assert [line.split("\t")[0] for line in result.output.splitlines()] == ["Broker: 1", "Broker: 2", "Broker: 3"]
    assert "Endpoints: PLAINTEXT://host2:9092" in result.output.splitlines()[1]
    assert (await cli(controller, "show")).output == (
        "ActiveController: none\tControllerEpoch: none\tEpochZkVersion: none\n")
    await cli.zk.register_controller_and_increment_controller_epoch(3)
    assert (await cli(controller, "show")).output == "ActiveController: 3\tControllerEpoch: 1\tEpochZkVersion: 1\n"


def test_zookeeper_is_required() -> None:
    result = CliRunner().invoke(topics, ["list"])
    assert result.exit_code == 1 and "--zookeeper" in result.output


@pytest.mark.usefixtures("unreachable_zookeeper_gives_up_soon")
async def test_unreachable_zookeeper_says_it_is_connecting_then_one_error_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from zkcontroller.cluster.zookeeper_server import free_port

    connect = KazooSession.connect.__func__  # type: ignore[attr-defined]  # slow after 0.05 s, inside the 1 s bound
    monkeypatch.setattr(connect, "__kwdefaults__", {**connect.__kwdefaults__, "slow_after_s": 0.05})
    target = f"127.0.0.1:{free_port()}"  # nothing listens there
    result = await asyncio.to_thread(CliRunner().invoke, topics, ["list", "--zookeeper", target])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines == [f"Connecting to ZooKeeper at {target} ...", f"Error: cannot connect to ZooKeeper at {target}"]


async def test_a_missing_chroot_is_one_clear_line_and_is_not_created(
    zookeeper_server: ZooKeeperServerProcess,
) -> None:
    """It read `Error: NO_NODE for chroot /x does not exist ...` (the base error's "CODE for path" layout)."""
    chroot = f"/never-{os.getpid()}-{next(_chroots)}"
    target = zookeeper_server.connect_string + chroot
    result = await asyncio.to_thread(CliRunner().invoke, topics, ["list", "--zookeeper", target])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: ZooKeeper chroot {chroot} does not exist on {zookeeper_server.connect_string}: check the path "
        f"in --zookeeper, or start a broker with zookeeper.connect={target} first (brokers create their chroot)"]
    root = ZooKeeperBackend(zookeeper_server.connect_string)
    session = await root.new_session()
    try:
        assert await session.exists(chroot) is None  # an admin command never creates it
    finally:
        await session.close()
        await root.close()


async def test_leader_election_names_each_missing_partition_and_refuses_bad_files(cli: Cli, tmp_path: Path) -> None:
    assert (await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1")).exit_code == 0

    async def elect(*args: str) -> Result:
        argv = ["--zookeeper", cli.zookeeper, "--election-type", "preferred", *args]
        return await asyncio.to_thread(CliRunner().invoke, leader_election, argv, catch_exceptions=False)

    # The topic exists, partition 5 does not: Kafka's per-partition line, not "the respective topics do not exist"
    missing = await elect("--topic", "t", "--partition", "5")
    assert missing.exit_code == 0
    assert missing.output == (f"{ZOOKEEPER_DEPRECATED}\n"
                              "Created preferred replica election path with \n"  # ZkCommand writes the empty request
                              "Successfully started preferred replica election for partitions Set()\n"
                              "Skipping preferred replica leader election for partition t-5 since it doesn't exist.\n")
    assert await cli.zk.get_preferred_replica_election() == frozenset()  # no controller runs here to delete it
    await cli.zk.delete_preferred_replica_election(NO_FENCING)
    for name, content in [("float", b'{"partitions": [{"topic": "t", "partition": 0.7}]}'),
                          ("bool", b'{"partitions": [{"topic": "t", "partition": true}]}'),
                          ("infinity", b'{"partitions": [{"topic": "t", "partition": Infinity}]}'),
                          ("null-topic", b'{"partitions": [{"topic": null, "partition": 0}]}'),
                          ("binary", b"\xff\xfe")]:
        path = tmp_path / f"{name}.json"
        path.write_bytes(content)
        result = await elect("--path-to-json-file", str(path))
        assert result.exit_code == 1, (name, result.output)
        assert result.output.startswith("Error: ") and str(path) in result.output, (name, result.output)
    assert await cli.zk.get_preferred_replica_election() is None  # nothing was requested


async def test_leader_election_of_an_empty_list_prints_kafkas_zookeeper_lines(cli: Cli, tmp_path: Path) -> None:
    """`{"partitions": []}` printed nothing but the deprecation lines. Kafka 2.8.2's ZooKeeper path
    (PreferredReplicaLeaderElectionCommand.ZkCommand) writes the empty request and prints its two lines, the set
    as Scala prints it; kafka-leader-election --bootstrap-server, which has no ZooKeeper path, prints nothing."""
    path = tmp_path / "empty.json"
    path.write_text('{"partitions":[]}')
    argv = ["--zookeeper", cli.zookeeper, "--election-type", "preferred", "--path-to-json-file", str(path)]
    result = await asyncio.to_thread(CliRunner().invoke, leader_election, argv, catch_exceptions=False)
    assert (result.exit_code, result.output) == (0, f"{ZOOKEEPER_DEPRECATED}\n"
                                                    "Created preferred replica election path with \n"
                                                    "Successfully started preferred replica election for partitions "
                                                    "Set()\n")
    assert await cli.zk.get_preferred_replica_election() == frozenset()
    assert (await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1")).exit_code == 0
    pending = await asyncio.to_thread(CliRunner().invoke, leader_election, [*argv[:4], "--all-topic-partitions"])
    assert (pending.exit_code, pending.output.splitlines()[-1]) == (
        1, "Error: Preferred replica leader election currently in progress for . Aborting operation")


async def test_leader_election_prints_its_partitions_in_the_order_and_class_of_kafkas_scala_sets(
    cli: Cli, tmp_path: Path
) -> None:
    """ZkCommand prints the file's partitions as the Scala ``Set`` it made of them (``Buffer.toSet``), split by
    ``partition`` into those that exist and those that do not; we printed them sorted, always as ``Set``. Up to
    four it is a Set1-Set4, in the file's order; past four a ``HashSet``, whose parts are ``HashSet``s in its trie
    order. The expected lines were printed by that Scala code (scala-library 2.13.18, Kafka's ``TopicPartition``
    hash) for these files."""
    for name, count in (("orders", 3), ("payments", 2)):
        created = await cli(topics, "create", name, "--partitions", str(count), "--replication-factor", "1")
        assert created.exit_code == 0, created.output

    async def elect(*entries: tuple[str, int]) -> list[str]:
        path = tmp_path / "election.json"
        path.write_text(json.dumps({"partitions": [{"topic": t, "partition": p} for t, p in entries]}))
        argv = ["--zookeeper", cli.zookeeper, "--election-type", "preferred", "--path-to-json-file", str(path)]
        result = await asyncio.to_thread(CliRunner().invoke, leader_election, argv, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        await cli.zk.delete_preferred_replica_election(NO_FENCING)  # no controller runs here to delete it
        return result.output.splitlines()[2:]

    assert await elect(("orders", 2), ("orders", 0), ("orders", 9)) == [
        "Created preferred replica election path with orders-2,orders-0",
        "Successfully started preferred replica election for partitions Set(orders-2, orders-0)",
        "Skipping preferred replica leader election for partition orders-9 since it doesn't exist."]
    assert await elect(("payments", 1), ("orders", 0), ("orders", 1), ("orders", 2), ("payments", 0), ("orders", 7),
                       ("nope", 0)) == [
        "Created preferred replica election path with orders-0,orders-1,payments-1,orders-2,payments-0",
        "Successfully started preferred replica election for partitions "
        "HashSet(orders-0, orders-1, payments-1, orders-2, payments-0)",
        "Skipping preferred replica leader election for partition nope-0 since it doesn't exist.",
        "Skipping preferred replica leader election for partition orders-7 since it doesn't exist."]


async def test_delete_takes_kafka_topics_regex_and_if_exists(cli: Cli) -> None:
    """`kafka-topics --delete --topic 'logs-.*'` marks every match, as Kafka's include list does."""
    for name in ("logs-a", "logs-b", "orders"):
        assert (await cli(topics, "create", name, "--partitions", "1", "--replication-factor", "1")).exit_code == 0
    result = await cli(topics, "--delete", "--topic", "logs-.*")
    assert result.exit_code == 0, result.output
    assert [line for line in result.output.splitlines() if line.startswith("Topic ")] == [
        "Topic logs-a is marked for deletion.", "Topic logs-b is marked for deletion."]
    assert sorted(await cli.zk.get_topic_deletions()) == ["logs-a", "logs-b"]
    again = await cli(topics, "delete", "logs-a,orders")
    assert again.exit_code == 0, again.output
    assert again.output.splitlines()[0] == "Topic logs-a is already marked for deletion."
    assert again.output.splitlines()[1] == "Topic orders is marked for deletion."
    quiet = await cli(topics, "--delete", "--topic", "nope.*", "--if-exists")
    assert quiet.exit_code == 0 and quiet.output == ""


async def test_configs_alter_refuses_out_of_range_values_and_writes_nothing(cli: Cli) -> None:
    assert (await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1",
                      "--config", "max.compaction.lag.ms=5")).exit_code == 0
    for add, message in [
        ("segment.bytes=10", "Invalid value 10 for configuration segment.bytes: Value must be at least 14"),
        ("min.cleanable.dirty.ratio=2",
         "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"),
        ("compression.type=brotli", "Invalid value brotli for configuration compression.type: String must be "
                                    "one of: uncompressed, zstd, lz4, snappy, gzip, producer"),
        # checked against the stored overrides too, as changeTopicConfig validates the merged set
        ("min.compaction.lag.ms=6", "conflict topic config setting min.compaction.lag.ms (6) > "
                                    "max.compaction.lag.ms (5)"),
    ]:
        result = await cli(configs, "--alter", "--entity-type", "topics", "--entity-name", "t", "--add-config", add)
        assert (result.exit_code, result.output) == (1, f"{ZOOKEEPER_DEPRECATED}\nError: {message}\n")
    assert await cli.zk.get_entity_configs(paths.ConfigType.TOPIC, "t") == {"max.compaction.lag.ms": "5"}
    assert await cli.zk.get_children("/config/changes") == []  # no notification either

    result = await cli(configs, "--alter", "--entity-type", "topics", "--entity-name", "t",
                       "--add-config", "segment.bytes=14,min.cleanable.dirty.ratio=1,min.compaction.lag.ms=5")
    assert result.exit_code == 0, result.output
    assert await cli.zk.get_entity_configs(paths.ConfigType.TOPIC, "t") == {
        "max.compaction.lag.ms": "5", "segment.bytes": "14", "min.cleanable.dirty.ratio": "1",
        "min.compaction.lag.ms": "5"}


async def test_topic_creation_refuses_out_of_range_config(cli: Cli) -> None:
    result = await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1",
                       "--config", "retention.ms=-2")
    assert (result.exit_code, result.output) == (
        1, "Error: Invalid value -2 for configuration retention.ms: Value must be at least -1\n")
    assert await cli.zk.get_all_topics_in_cluster() == set()
    assert not await cli.zk.path_exists("/config/topics/t")
