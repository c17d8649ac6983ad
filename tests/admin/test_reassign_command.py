"""``zkcontroller reassign --execute`` checks a plan in Kafka 2.8's order (ReassignPartitionsCommand's ZooKeeper
path): partitions that do not exist, then brokers that do not, and only then a reassignment already pending."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.contract.admin.test_admin_cli import Cli, cli  # noqa: F401  (the fixture, on a real ZooKeeper)

from zkcontroller.admin.cli import topics
from zkcontroller.admin.deprecation import REASSIGN_ZOOKEEPER_DEPRECATED
from zkcontroller.admin.reassign_cli import reassign
from zkcontroller.model import TopicPartition
from zkcontroller.zk.fencing import NO_FENCING
from zkcontroller.zk.znodes.config import ConfigEntityChangeNotificationSequenceZNode as ConfigChangeZNode

pytestmark = pytest.mark.zookeeper

W = REASSIGN_ZOOKEEPER_DEPRECATED + "\n"
"""ReassignPartitionsCommand's notice, on stdout once the arguments are checked."""

EXISTING = ("Cannot execute because there is an existing partition assignment.  Use --additional to override this "
            "and create a new partition assignment in addition to the existing one. The --additional flag can also be "
            "used to change the throttle by resubmitting the current reassignment.")  # Kafka 2.8.2's, two spaces


def _plan(path: Path, *moves: tuple[str, int, list[int]]) -> str:
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r} for t, p, r in moves]}))
    return str(path)


async def test_plan_errors_come_before_a_pending_reassignment(cli: Cli, tmp_path: Path) -> None:  # noqa: F811
    assert (await cli(topics, "create", "t", "--replica-assignment", "1")).exit_code == 0
    # no controller runs here, so the first reassignment stays pending in /admin/reassign_partitions
    started = await cli(reassign, "--execute", "--reassignment-json-file", _plan(tmp_path / "a.json", ("t", 0, [2])))
    assert started.exit_code == 0, started.output
    for plan, message in [
        (_plan(tmp_path / "b.json", ("t", 7, [2]), ("nope", 0, [1])),
         "The proposed assignment contains non-existent partitions: nope-0, t-7"),
        (_plan(tmp_path / "c.json", ("t", 0, [9])), "The proposed assignment contains non-existent brokerIDs: 9"),
        (_plan(tmp_path / "d.json", ("t", 0, [3])), EXISTING),
    ]:
        result = await cli(reassign, "--execute", "--reassignment-json-file", plan)
        assert (result.exit_code, result.output) == (1, f"{W}Error: {message}\n")
    assert await cli.zk.get_partition_reassignment() is not None


async def test_verify_clears_throttles_once_nothing_is_pending(cli: Cli, tmp_path: Path) -> None:  # noqa: F811
    assert (await cli(topics, "create", "t", "--replica-assignment", "1", "--config",
                      "leader.replication.throttled.replicas=0:1", "--config", "retention.ms=5")).exit_code == 0
    await cli.zk.set_or_create_entity_configs("brokers", "1", {"leader.replication.throttled.rate": "100",
                                                               "log.cleaner.threads": "2"})
    plan = _plan(tmp_path / "plan.json", ("t", 0, [1]))

    kept = await cli(reassign, "--verify", "--preserve-throttles", "--reassignment-json-file", plan)
    assert kept.exit_code == 0 and "Clearing" not in kept.output
    assert "leader.replication.throttled.replicas" in await cli.zk.get_entity_configs("topics", "t")

    await cli.zk.create_partition_reassignment({TopicPartition("other", 0): (2,)})  # someone else's, pending
    pending = await cli(reassign, "--verify", "--reassignment-json-file", plan)
    assert "Reassignment of partition t-0 is complete." in pending.output and "Clearing" not in pending.output
    await cli.zk.delete_partition_reassignment(NO_FENCING)

    cleared = await cli(reassign, "--verify", "--reassignment-json-file", plan)
    assert cleared.exit_code == 0, cleared.output
    shown = [line for line in cleared.output.splitlines() if line.startswith(("Status", "Reassignment", "Clearing"))]
    assert shown == [
        "Status of partition reassignment:", "Reassignment of partition t-0 is complete.",
        "Clearing broker-level throttles on brokers 1,2,3", "Clearing topic-level throttles on topic t"]
    assert await cli.zk.get_entity_configs("topics", "t") == {"retention.ms": "5"}
    assert await cli.zk.get_entity_configs("brokers", "1") == {"log.cleaner.threads": "2"}
    notified = await cli.zk.read_notifications(ConfigChangeZNode, await cli.zk.get_notification_sequence_numbers(
        ConfigChangeZNode))
    assert sorted(notified.values.values()) == ["brokers/1", "topics/t"]  # only what had a throttle


def _topics_to_move(path: Path, *names: str) -> str:
    path.write_text(json.dumps({"version": 1, "topics": [{"topic": t} for t in names]}))
    return str(path)


async def test_generate_skips_topics_that_do_not_exist(cli: Cli, tmp_path: Path) -> None:  # noqa: F811
    """Kafka's ZooKeeper --generate reads the assignments with getReplicaAssignmentForTopics, which reads a
    missing topic znode as no partitions: an unknown topic is left out of both JSONs, and with no topic named
    existing both are empty; nothing is refused and nothing is written."""
    assert (await cli(topics, "create", "t", "--replica-assignment", "1:2")).exit_code == 0
    generated = await cli(reassign, "--generate", "--broker-list", "2,3", "--topics-to-move-json-file",
                          _topics_to_move(tmp_path / "a.json", "nope", "t"))
    assert generated.exit_code == 0, generated.output
    notice, *lines = generated.output.split("\n")
    assert notice == REASSIGN_ZOOKEEPER_DEPRECATED
    assert lines[0] == "Current partition replica assignment"
    assert json.loads(lines[1]) == {"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]}]}
    assert lines[3] == "Proposed partition reassignment configuration"
    proposed = json.loads(lines[4])["partitions"]
    assert [(p["topic"], p["partition"], sorted(p["replicas"])) for p in proposed] == [("t", 0, [2, 3])]

    generated = await cli(reassign, "--generate", "--broker-list", "2,3", "--topics-to-move-json-file",
                          _topics_to_move(tmp_path / "b.json", "nope", "gone"))
    empty = '{"version":1,"partitions":[]}'
    assert (generated.exit_code, generated.output) == (
        0, f"{W}Current partition replica assignment\n{empty}\n\nProposed partition reassignment configuration\n"
           f"{empty}\n")
    assert await cli.zk.get_partition_reassignment() is None


async def test_generate_leaves_out_brokers_that_are_not_registered(cli: Cli, tmp_path: Path) -> None:  # noqa: F811
    """getBrokerMetadatas(mode, Some(brokers)) keeps only the registered brokers named (1-3 are here), so an
    unknown id is not refused as --execute refuses it: the replication factor is checked against those found."""
    assert (await cli(topics, "create", "t", "--replica-assignment", "1:2")).exit_code == 0
    assert (await cli(topics, "create", "u", "--replica-assignment", "1")).exit_code == 0
    generated = await cli(reassign, "--generate", "--broker-list", "2,9", "--topics-to-move-json-file",
                          _topics_to_move(tmp_path / "t.json", "t"))
    assert (generated.exit_code, generated.output) == (1, f"{W}Error: Replication factor: 2 larger than available "
                                                          "brokers: 1.\n")
    generated = await cli(reassign, "--generate", "--broker-list", "3,9", "--topics-to-move-json-file",
                          _topics_to_move(tmp_path / "u.json", "u"))
    assert generated.exit_code == 0, generated.output
    assert json.loads(generated.output.split("\n")[5])["partitions"] == [
        {"topic": "u", "partition": 0, "replicas": [3], "log_dirs": ["any"]}]


async def test_generate_reads_broker_ids_as_java_and_before_the_topics(cli: Cli, tmp_path: Path) -> None:  # noqa: F811
    """parseGenerateAssignmentArgs: ``split(',').map(_.toInt)`` on --broker-list, before the topics JSON is read,
    with Kafka's "Error: " line (NumberFormatException's message)."""
    assert (await cli(topics, "create", "t", "--replica-assignment", "1")).exit_code == 0
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{")
    generated = await cli(reassign, "--generate", "--broker-list", "2, 3", "--topics-to-move-json-file",
                          str(bad_json))
    assert (generated.exit_code, generated.output) == (1, f'{W}Error: For input string: " 3"\n')
    generated = await cli(reassign, "--generate", "--broker-list", "+2,02", "--topics-to-move-json-file",
                          str(bad_json))
    assert (generated.exit_code, generated.output) == (1, f"{W}Error: Broker list contains duplicate entries: 2\n")
    generated = await cli(reassign, "--generate", "--broker-list", "+3,", "--topics-to-move-json-file",
                          _topics_to_move(tmp_path / "t.json", "t"))
    assert generated.exit_code == 0, generated.output
    assert json.loads(generated.output.split("\n")[5])["partitions"] == [
        {"topic": "t", "partition": 0, "replicas": [3], "log_dirs": ["any"]}]


async def test_execute_with_a_throttle_writes_it_before_the_request(cli: Cli, tmp_path: Path) -> None:  # noqa: F811
    """The ZooKeeper path's --throttle: each moving topic's throttled replicas (its overrides kept) and both rates
    on every reassigning broker, each with its notification, then the znode; Kafka's lines around them."""
    created = await cli(topics, "create", "t", "--replica-assignment", "1:2", "--config", "retention.ms=5")
    assert created.exit_code == 0, created.output
    await cli.zk.set_or_create_entity_configs("brokers", "3", {"log.cleaner.threads": "2"})
    result = await cli(reassign, "--execute", "--throttle", "2048", "--reassignment-json-file",
                       _plan(tmp_path / "plan.json", ("t", 0, [2, 3])))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()  # the progress bar (stderr) follows
    assert lines[lines.index("Save this to use as the --reassignment-json-file option during rollback") + 1:][:3] == [
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle "
        "is removed.",
        "The inter-broker throttle limit was set to 2048 B/s",
        "Successfully started partition reassignment for t-0"]
    assert await cli.zk.get_entity_configs("topics", "t") == {
        "retention.ms": "5", "leader.replication.throttled.replicas": "0:1,0:2",
        "follower.replication.throttled.replicas": "0:3"}
    rates = {"leader.replication.throttled.rate": "2048", "follower.replication.throttled.rate": "2048"}
    assert await cli.zk.get_entity_configs("brokers", "1") == rates
    assert await cli.zk.get_entity_configs("brokers", "3") == {"log.cleaner.threads": "2", **rates}
    notified = await cli.zk.read_notifications(ConfigChangeZNode, await cli.zk.get_notification_sequence_numbers(
        ConfigChangeZNode))
    assert sorted(notified.values.values()) == ["brokers/1", "brokers/2", "brokers/3", "topics/t"]
    assert await cli.zk.get_partition_reassignment() == {TopicPartition("t", 0): (2, 3)}

    for option in ("--additional", "--replica-alter-log-dirs-throttle"):
        refused = await cli(reassign, "--execute", option, *(["5"] if option.endswith("throttle") else []),
                            "--reassignment-json-file", "plan.json")
        assert refused.exit_code == 1
        assert refused.output.splitlines()[-1] == (
            f'Error: You must specify --bootstrap-server when using "[{option[2:]}]"')
