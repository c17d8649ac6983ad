"""``zkcontroller reassign`` (kafka-reassign-partitions.sh --zookeeper) against a running cluster on both backends,
and its input checks (which never reach ZooKeeper)."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory
from tests.integration.test_controller_cluster import create_topic, wait_for_states
from tests.integration.test_reassignment import TP, assignment, join_isr

from zkcontroller.admin.deprecation import REASSIGN_ZOOKEEPER_DEPRECATED
from zkcontroller.admin.errors import AdminError
from zkcontroller.admin.reassign import (
    ReassignCommand,
    ReassignmentInputError,
    list_lines,
    parse_reassignment_json,
    parse_topics_to_move_json,
    unreachable_brokers_line,
)
from zkcontroller.cli import main
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = [pytest.mark.hand_written_isr,  # ISRs are written by hand, as a Kafka 2.6 leader does
              pytest.mark.usefixtures("restored_logging")]  # the CLI run in-process sets kazoo's level


async def test_execute_list_verify_and_complete(
    make_cluster: ClusterFactory, admin: KafkaZkClient, session: CoordinationSession
) -> None:
    cluster = await make_cluster([1, 2, 3])
    await cluster.wait_for_controller()
    await create_topic(admin, "moving", {0: [1, 2]})
    await wait_for_states(admin, "moving", 1, lambda s: s[0].leader_and_isr.isr == (1, 2), "moving online")
    command = ReassignCommand(admin)
    targets = parse_reassignment_json(json.dumps(
        {"version": 1, "partitions": [{"topic": "moving", "partition": 0, "replicas": [2, 3]}]}))
    rollback = await command.execute(targets)
    assert json.loads(rollback) == {"version": 1, "partitions": [
        {"topic": "moving", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]}]}
    with pytest.raises(AdminError, match="existing partition assignment"):
        await command.execute(targets)

    async def listed() -> bool:
        return list_lines(await command.list()) == [
            "Current partition reassignments:", "moving-0: replicas: 2,3,1. adding: 3. removing: 1."]

    await wait_until(listed, timeout_s=30.0, what="the reassignment listed")
    (status,) = await command.verify(targets)
    assert not status.complete and status.message == "Reassignment of partition moving-0 is still in progress."
    assert status.in_isr == 1  # broker 2 is in the ISR, broker 3 not yet

    await join_isr(admin, session, 3)

    def metadata_view(broker_id: int):
        def view(tp: TopicPartition):
            info = cluster._running(broker_id).control_plane.metadata_cache.partition_info(tp)
            return None if info is None else tuple(info.replicas)
        return view

    views = {s.broker_id: metadata_view(s.broker_id) for s in cluster.running_brokers()}

    async def complete() -> bool:
        (s,) = await command.verify(targets, views)
        return s.complete

    await wait_until(complete, timeout_s=30.0, what="verify reports complete (ZooKeeper and every broker)")
    (alone,) = await command.verify(targets)
    assert alone.complete and alone.message == "Reassignment of partition moving-0 is complete."
    unasked = {**views, 9: "localhost:9101: no answer"}  # a broker that could not be asked is named, not trusted
    (s,) = await command.verify(targets, unasked)
    assert not s.complete
    assert s.message == "Reassignment of partition moving-0 is still in progress (could not ask broker 9)."
    assert unreachable_brokers_line(unasked) == ("Could not ask broker 9 for its metadata: "
                                                 "broker 9: localhost:9101: no answer")
    assert unreachable_brokers_line(views) is None
    assert await assignment(admin) == ReplicaAssignment((2, 3))
    assert list_lines(await command.list()) == ["No partition reassignments found."]


async def test_check_brokers_names_a_broker_whose_registration_is_corrupt(
    admin: KafkaZkClient, session: CoordinationSession
) -> None:
    # A registered broker whose registration cannot be read is a broker that did not confirm the target: named
    # with why, never skipped (which would let --verify --check-brokers say complete without it).
    await session.ensure_path(paths.BROKER_IDS)
    await session.create(paths.broker_id_path(9), b"{not json")
    views = await ReassignCommand(admin).broker_views({"moving"})
    assert list(views) == [9]
    line = unreachable_brokers_line(views)
    assert line is not None
    assert line.startswith("Could not ask broker 9 for its metadata: broker 9: its registration cannot be read: "
                           "invalid JSON"), line


async def test_cancel_through_zookeeper_restores_the_original_replicas(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    cluster = await make_cluster([1, 2, 3])
    await cluster.wait_for_controller()
    await create_topic(admin, "moving", {0: [1, 2]})
    await wait_for_states(admin, "moving", 1, lambda s: True, "moving online")
    command = ReassignCommand(admin)
    await command.execute({TP: (2, 3)})

    async def started() -> bool:
        return (await assignment(admin)).is_being_reassigned

    await wait_until(started, what="reassignment started")
    assert await command.cancel([TP]) == [TP]

    async def restored() -> bool:
        return (await assignment(admin) == ReplicaAssignment((2, 1))
                and not await admin.path_exists(paths.REASSIGN_PARTITIONS))

    await wait_until(restored, what="original replicas restored, znode gone")
    assert await command.cancel([TP]) == []


async def test_invalid_input_is_refused_and_changes_nothing(
    make_cluster: ClusterFactory, admin: KafkaZkClient, backend: CoordinationBackend
) -> None:
    cluster = await make_cluster([1, 2])
    await cluster.wait_for_controller()
    await create_topic(admin, "t", {0: [1, 2]})
    command = ReassignCommand(admin, random.Random(7))
    with pytest.raises(AdminError, match="non-existent partitions: t-7"):
        await command.execute({TopicPartition("t", 7): (1, 2)})
    with pytest.raises(AdminError, match="non-existent brokerIDs: 9"):
        await command.execute({TopicPartition("t", 0): (1, 9)})
    # an unknown topic is skipped by --generate, as Kafka's getReplicaAssignmentForTopics does
    assert await command.generate(["nope"], [1, 2]) == ('{"version":1,"partitions":[]}',) * 2
    assert not await admin.path_exists(paths.REASSIGN_PARTITIONS)
    assert await assignment(admin, TopicPartition("t", 0)) == ReplicaAssignment((1, 2))
    current, proposed = await command.generate(["t"], [1, 2])
    assert json.loads(current)["partitions"][0]["replicas"] == [1, 2]
    assert sorted(json.loads(proposed)["partitions"][0]["replicas"]) == [1, 2]


@pytest.mark.parametrize(("text", "message"), [
    ('{"version":1,\n "partitions": [}', "line 2, column 17"),
    ('{"version":1,"partitions":[]}', "Partition reassignment list cannot be empty"),
    ('{"partitions":[{"topic":"t","partition":0,"replicas":[]}]}', "Empty replica list"),
    ('{"partitions":[{"topic":"t","partition":0,"replicas":[1,1]}]}', "t-0 contains multiple entries for 1"),
    ('{"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[2]}]}',
     "duplicate topic partitions: t-0"),
    ('{"partitions":[{"topic":"t","partition":"0","replicas":[1]}]}', "partitions[0]"),
])
def test_bad_reassignment_files_name_what_and_where(text: str, message: str) -> None:
    with pytest.raises(ReassignmentInputError) as raised:
        parse_reassignment_json(text, "plan.json")
    assert message in str(raised.value)
    assert not str(raised.value).endswith("empty.")  # Kafka's text has no full stop


def test_bad_topics_file_and_cli_errors_exit_1_without_touching_zookeeper(tmp_path: Path) -> None:
    with pytest.raises(ReassignmentInputError, match="duplicate entries: a"):
        parse_topics_to_move_json('{"topics":[{"topic":"a"},{"topic":"a"}]}')
    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,\n"partitions":[{"topic":"t",}]}')
    runner = CliRunner()
    # an unreachable address: the command must fail on the file before any connection is tried
    result = runner.invoke(main, ["reassign", "--execute", "--reassignment-json-file", str(plan),
                                  "--zookeeper", "127.0.0.1:1"])
    assert result.exit_code == 1 and "malformed JSON at line 2, column 28" in result.output
    result = runner.invoke(main, ["reassign", "--zookeeper", "127.0.0.1:1"])
    assert result.exit_code == 1 and "exactly one action" in result.output
    # two actions: refused, not "the last flag wins" (which ran --execute for `--verify --execute`)
    for two in (["--verify", "--execute"], ["--generate", "--execute"], ["--execute", "--cancel"]):
        result = runner.invoke(main, ["reassign", *two, "--reassignment-json-file", str(plan),
                                      "--zookeeper", "127.0.0.1:1"])
        assert result.exit_code == 1 and "exactly one action" in result.output, (two, result.output)


async def test_the_cli_against_a_real_zookeeper(
    make_cluster: ClusterFactory, admin: KafkaZkClient, session: CoordinationSession, backend: CoordinationBackend,
    tmp_path: Path,
) -> None:
    if not isinstance(backend, ZooKeeperBackend):
        pytest.skip("another process reaches only a real ZooKeeper")
    cluster = await make_cluster([1, 2, 3], listeners=ListenerPorts(base=None))
    await cluster.wait_for_controller()
    await create_topic(admin, "moving", {0: [1, 2]})
    await create_topic(admin, "doomed", {0: [1, 2]})
    await wait_for_states(admin, "moving", 1, lambda s: True, "moving online")
    runner = CliRunner()

    async def run(*argv: str):
        result = await asyncio.to_thread(runner.invoke, main, [*argv, "--zookeeper", backend.hosts],
                                         catch_exceptions=False)
        return result

    moves = tmp_path / "moves.json"
    moves.write_text('{"topics":[{"topic":"moving"}],"version":1}')
    generated = await run("reassign", "--generate", "--topics-to-move-json-file", str(moves), "--broker-list", "2,3")
    assert generated.exit_code == 0, generated.output
    notice, *out = generated.output.splitlines()
    assert notice == REASSIGN_ZOOKEEPER_DEPRECATED  # Kafka's, on stdout, before anything else
    assert out[0] == "Current partition replica assignment"
    assert out[3] == "Proposed partition reassignment configuration"
    assert sorted(json.loads(out[4])["partitions"][0]["replicas"]) == [2, 3]

    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[2,3]}]}')
    executed = await run("reassign", "--execute", "--reassignment-json-file", str(plan))
    assert executed.exit_code == 0, executed.output
    assert "Save this to use as the --reassignment-json-file option during rollback" in executed.output
    assert "Successfully started partition reassignment for moving-0" in executed.output

    async def started() -> bool:
        return (await assignment(admin)).is_being_reassigned

    await wait_until(started, timeout_s=30.0, what="reassignment started")
    listed = await run("reassign", "--list")
    assert listed.output.splitlines() == [REASSIGN_ZOOKEEPER_DEPRECATED, "Current partition reassignments:",
                                          "moving-0: replicas: 2,3,1. adding: 3. removing: 1."]
    verified = await run("reassign", "--verify", "--reassignment-json-file", str(plan))
    assert "Reassignment of partition moving-0 is still in progress." in verified.output
    await join_isr(admin, session, 3)

    async def zookeeper_done() -> bool:
        return (await assignment(admin)) == ReplicaAssignment((2, 3))

    await wait_until(zookeeper_done, timeout_s=30.0, what="ZooKeeper holds the new replicas")
    # Kafka's --verify reads ZooKeeper alone, so it is complete; it used to ask every broker over the wire and,
    # none answering, never said complete.
    done = await run("reassign", "--verify", "--reassignment-json-file", str(plan))
    assert done.exit_code == 0, done.output
    assert "Reassignment of partition moving-0 is complete." in done.output

    async def complete() -> bool:  # --check-brokers also asks each broker's listener (free ports) for Metadata
        result = await run("reassign", "--verify", "--check-brokers", "--reassignment-json-file", str(plan))
        return "Reassignment of partition moving-0 is complete." in result.output

    await wait_until(complete, timeout_s=30.0, what="--verify --check-brokers reports complete", poll_s=0.2)
    # brokers that do not answer: not complete, and the unreachable ones are named once, in one line
    for listener in cluster.listeners.values():
        await listener.close()
    unasked = await run("reassign", "--verify", "--check-brokers", "--reassignment-json-file", str(plan))
    lines = unasked.output.splitlines()
    assert "Reassignment of partition moving-0 is still in progress (could not ask brokers 1,2,3)." in lines
    (why,) = [line for line in lines if line.startswith("Could not ask")]
    assert why.startswith(f"Could not ask brokers 1,2,3 for their metadata: broker 1: "
                          f"127.0.0.1:{cluster.listeners[1].last_port}:"), why

    deleted = await run("topics", "--delete", "--topic", "doomed")
    assert deleted.output.splitlines()[0] == "Topic doomed is marked for deletion."

    async def gone() -> bool:
        return not await admin.path_exists(paths.topic_path("doomed"))

    await wait_until(gone, timeout_s=30.0, what="doomed deleted")
