"""``zkcontroller reassign ... --bootstrap-server``: Kafka 2.8.2's ReassignPartitionsCommand AdminClient path
(AlterPartitionReassignments, ListPartitionReassignments, Metadata, IncrementalAlterConfigs) against in-process
brokers on the embedded store. Every wait is bounded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.helpers import wait_until
from tests.integration.listening import listening_cluster
from tests.wire.admin_fixture import controller, create, others

from zkcontroller.admin import reassign as reassign_module
from zkcontroller.cli import main
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.model import TopicPartition
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.paths import ConfigType

pytestmark = [pytest.mark.usefixtures("restored_logging"), pytest.mark.timeout(120)]


@pytest.fixture(name="brokers")
async def brokers_fixture() -> AsyncIterator[tuple[LocalCluster, KafkaZkClient, str]]:
    """Three brokers on loopback; sessions long enough that a crashed broker stays registered."""
    async with listening_cluster([1, 2, 3], ListenerPorts(base=None, host="127.0.0.1"), 30_000) as (cluster, zk):
        yield cluster, zk, ",".join(cluster.listeners[b].address or "" for b in (1, 2, 3))


async def reassign(*argv: str) -> Result:
    return await asyncio.to_thread(CliRunner().invoke, main, ["reassign", *argv],
                                   env={"ZKCONTROLLER_ZOOKEEPER": None})


def plan(tmp_path: Path, name: str, moves: dict[tuple[str, int], list[int]]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r} for (t, p), r in moves.items()]}))
    return str(path)


async def test_generate_execute_verify_list(brokers: tuple[LocalCluster, KafkaZkClient, str], tmp_path: Path) -> None:
    cluster, zk, bootstrap = brokers
    await create(cluster, zk, "moving", {0: [1, 2]})
    await zk.set_or_create_entity_configs(ConfigType.TOPIC, "moving",
                                          {"leader.replication.throttled.replicas": "0:1"})
    listed = await reassign("--list", "--bootstrap-server", bootstrap)
    assert (listed.exit_code, listed.output) == (0, "No partition reassignments found.\n")

    topics = tmp_path / "topics.json"
    topics.write_text('{"topics": [{"topic": "moving"}], "version": 1}')
    generated = await reassign("--generate", "--topics-to-move-json-file", str(topics), "--broker-list", "2,3",
                               "--bootstrap-server", bootstrap)
    assert generated.exit_code == 0, generated.output
    lines = generated.output.splitlines()
    assert lines[:2] == ["Current partition replica assignment",
                         '{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[1,2],'
                         '"log_dirs":["any","any"]}]}']
    assert lines[3] == "Proposed partition reassignment configuration"
    assert sorted(json.loads(lines[4])["partitions"][0]["replicas"]) == [2, 3]

    move = plan(tmp_path, "move.json", {("moving", 0): [2, 3]})
    bad = plan(tmp_path, "bad.json", {("moving", 0): [2, 9]})
    unknown = await reassign("--execute", "--reassignment-json-file", bad, "--bootstrap-server", bootstrap)
    assert (unknown.exit_code, unknown.output.splitlines()[-1]) == (1, "Error: Unknown broker id 9")
    executed = await reassign("--execute", "--reassignment-json-file", move, "--bootstrap-server", bootstrap)
    assert executed.exit_code == 0, executed.output
    assert executed.output == (
        "Current partition replica assignment\n\n"
        '{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}\n\n'
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Successfully started partition reassignment for moving-0\n")

    async def complete() -> bool:
        result = await reassign("--verify", "--reassignment-json-file", move, "--bootstrap-server", bootstrap)
        return "Reassignment of partition moving-0 is complete." in result.output
    await wait_until(complete, timeout_s=30, what="the move completed")
    verified = await reassign("--verify", "--reassignment-json-file", move, "--bootstrap-server", bootstrap)
    assert verified.output.splitlines() == [
        "Status of partition reassignment:",
        "Reassignment of partition moving-0 is complete.",
        "",  # Kafka 2.8.2 prints its (empty) log-dir move states
        "Clearing broker-level throttles on brokers 1,2,3",
        "Clearing topic-level throttles on topic moving"]
    assert "leader.replication.throttled.replicas" not in await zk.get_entity_configs(ConfigType.TOPIC, "moving")
    back = await reassign("--verify", "--reassignment-json-file", plan(tmp_path, "back.json", {("moving", 0): [1, 2]}),
                          "--bootstrap-server", bootstrap, "--preserve-throttles")
    assert back.output.splitlines() == [
        "Status of partition reassignment:",
        "There is no active reassignment of partition moving-0, but replica set is 2,3 rather than 1,2.", ""]


async def test_an_ongoing_reassignment_is_listed_refused_again_and_cancelled(
        brokers: tuple[LocalCluster, KafkaZkClient, str], tmp_path: Path) -> None:
    """A target on a broker just killed (registered until its session expires) cannot catch up: the move stays."""
    cluster, zk, _bootstrap = brokers
    dead = others(cluster)[0].broker_id
    a, b = (x for x in cluster.broker_ids if x != dead)
    await create(cluster, zk, "stuck", {0: [a, b]})
    await cluster.crash_broker(dead)
    at = cluster.listeners[controller(cluster).broker_id].address or ""
    stuck = plan(tmp_path, "stuck.json", {("stuck", 0): [a, b, dead]})
    started = await reassign("--execute", "--reassignment-json-file", stuck, "--bootstrap-server", at)
    assert started.exit_code == 0, started.output
    listed = await reassign("--list", "--bootstrap-server", at)
    assert listed.output.splitlines() == ["Current partition reassignments:",
                                          f"stuck-0: replicas: {a},{b},{dead}. adding: {dead}."]
    again = await reassign("--execute", "--reassignment-json-file", stuck, "--bootstrap-server", at)
    assert again.exit_code == 1 and "Cannot execute because there is an existing partition assignment." in (
        again.output)
    verified = await reassign("--verify", "--reassignment-json-file", stuck, "--bootstrap-server", at)
    assert verified.output.splitlines() == ["Status of partition reassignment:",
                                            "Reassignment of partition stuck-0 is still in progress.", ""]
    # the throttles stay: clearing them would wait for the killed broker, as Kafka's tool would
    cancelled = await reassign("--cancel", "--reassignment-json-file", stuck, "--bootstrap-server", at,
                               "--preserve-throttles")
    assert (cancelled.exit_code, cancelled.output) == (
        0, "Successfully cancelled partition reassignment for: stuck-0\n"
           "None of the specified partition moves are active.\n")
    await zk.set_or_create_entity_configs(ConfigType.TOPIC, "stuck", {"leader.replication.throttled.replicas": "*"})
    config = tmp_path / "admin.properties"
    config.write_text("default.api.timeout.ms=1500\n")
    none = await reassign("--cancel", "--reassignment-json-file", plan(tmp_path, "live.json", {("stuck", 0): [a, b]}),
                          "--bootstrap-server", at, "--command-config", str(config))
    assert none.output.splitlines()[:3] == [
        "None of the specified partition reassignments are active.",
        "None of the specified partition moves are active.",
        f"Clearing broker-level throttles on brokers {','.join(map(str, sorted(cluster.broker_ids)))}"]
    assert none.exit_code == 1  # the killed broker, still registered, cannot be reached to clear its rates
    assert none.output.splitlines()[-1] == (
        "Error: Timed out waiting for a node assignment. Call: incrementalAlterConfigs")
    assert await zk.get_entity_configs(ConfigType.TOPIC, "stuck") == {  # the topics come after the brokers
        "leader.replication.throttled.replicas": "*"}


async def test_neither_server_and_both() -> None:
    result = await reassign("--list")
    assert result.exit_code == 1 and "Error: Please specify --bootstrap-server." in result.output
    both = await asyncio.to_thread(CliRunner().invoke, main, [
        "reassign", "--list", "--bootstrap-server", "127.0.0.1:1", "--zookeeper", "127.0.0.1:1",
        "--command-config", "/nonexistent/admin.properties"])
    assert both.output.splitlines()[0].startswith("Warning: ignoring deprecated --zookeeper option")
    assert both.output.splitlines()[-1].startswith("Error: cannot read --command-config /nonexistent")


async def test_execute_with_a_throttle_sets_then_verify_clears_it(
        brokers: tuple[LocalCluster, KafkaZkClient, str], tmp_path: Path) -> None:
    """ReassignPartitionsCommand's modifyReassignmentThrottle through IncrementalAlterConfigs: the topic's leader
    throttle on the sources, its follower throttle on the new replicas, both rates on every broker that sends or
    receives; --verify clears them all once nothing is moving."""
    cluster, zk, bootstrap = brokers
    await create(cluster, zk, "slow", {0: [1, 2], 1: [2, 1]})
    move = plan(tmp_path, "move.json", {("slow", 0): [2, 3], ("slow", 1): [2, 1]})
    executed = await reassign("--execute", "--reassignment-json-file", move, "--throttle", "50000",
                              "--bootstrap-server", bootstrap)
    assert executed.exit_code == 0, executed.output
    assert executed.output.splitlines()[-3:] == [
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle "
        "is removed.",
        "The inter-broker throttle limit was set to 50000 B/s",
        "Successfully started partition reassignments for slow-0,slow-1"]
    assert await zk.get_entity_configs(ConfigType.TOPIC, "slow") == {
        "leader.replication.throttled.replicas": "0:1,0:2,1:1,1:2",
        "follower.replication.throttled.replicas": "0:3"}
    for broker in ("1", "2", "3"):
        assert await zk.get_entity_configs(ConfigType.BROKER, broker) == {
            "leader.replication.throttled.rate": "50000", "follower.replication.throttled.rate": "50000"}

    async def complete() -> bool:
        listed = await reassign("--list", "--bootstrap-server", bootstrap)
        return listed.output == "No partition reassignments found.\n"
    await wait_until(complete, timeout_s=30, what="the move completed")
    verified = await reassign("--verify", "--reassignment-json-file", move, "--bootstrap-server", bootstrap)
    assert verified.output.splitlines()[-2:] == ["Clearing broker-level throttles on brokers 1,2,3",
                                                 "Clearing topic-level throttles on topic slow"]
    assert await zk.get_entity_configs(ConfigType.TOPIC, "slow") == {}
    for broker in ("1", "2", "3"):
        assert await zk.get_entity_configs(ConfigType.BROKER, broker) == {}


async def test_additional_runs_beside_an_ongoing_move_and_a_throttle_needs_every_moving_broker(
        brokers: tuple[LocalCluster, KafkaZkClient, str], tmp_path: Path) -> None:
    """--additional starts a second reassignment while one is stuck on a killed (still registered) broker; a
    throttle then covers the stuck move too, as Kafka's calculateProposedMoveMap does, so it must reach the killed
    broker: that fails (bounded by default.api.timeout.ms) and nothing new is submitted."""
    cluster, zk, _bootstrap = brokers
    dead = others(cluster)[0].broker_id
    a, b = (x for x in cluster.broker_ids if x != dead)
    await create(cluster, zk, "stuck", {0: [a, b]})
    await create(cluster, zk, "other", {0: [a]})
    await cluster.crash_broker(dead)
    at = cluster.listeners[controller(cluster).broker_id].address or ""
    started = await reassign("--execute", "--reassignment-json-file",
                             plan(tmp_path, "stuck.json", {("stuck", 0): [a, b, dead]}), "--bootstrap-server", at)
    assert started.exit_code == 0, started.output
    second = plan(tmp_path, "second.json", {("other", 0): [b]})
    refused = await reassign("--execute", "--reassignment-json-file", second, "--bootstrap-server", at)
    assert refused.exit_code == 1 and "Use --additional to override this" in refused.output

    config = tmp_path / "admin.properties"
    config.write_text("default.api.timeout.ms=1500\n")
    throttled = await reassign("--execute", "--additional", "--throttle", "1024", "--reassignment-json-file",
                               second, "--bootstrap-server", at, "--command-config", str(config))
    assert throttled.exit_code == 1, throttled.output
    assert throttled.output.splitlines()[-1] == (
        "Error: Timed out waiting for a node assignment. Call: incrementalAlterConfigs")
    assert await zk.get_entity_configs(ConfigType.TOPIC, "stuck") == {  # set before the brokers, as Kafka
        "leader.replication.throttled.replicas": f"0:{a},0:{b}", "follower.replication.throttled.replicas": f"0:{dead}"}
    listed = await reassign("--list", "--bootstrap-server", at)
    assert "other-0" not in listed.output

    added = await reassign("--execute", "--additional", "--reassignment-json-file", second, "--bootstrap-server", at)
    assert added.exit_code == 0, added.output
    assert added.output.splitlines()[-1] == "Successfully started partition reassignment for other-0"


@pytest.mark.parametrize(("argv", "message"), [
    (["--verify", "--reassignment-json-file", "f.json", "--throttle", "10", "--bootstrap-server", "h:1"],
     'Error: Option "[throttle]" can\'t be used with action "[verify]"'),
    (["--list", "--additional", "--bootstrap-server", "h:1"],
     'Error: Option "[additional]" can\'t be used with action "[list]"'),
    (["--verify", "--reassignment-json-file", "f.json", "--additional", "--throttle", "10", "--bootstrap-server",
      "h:1"], 'Error: Option "[additional]" can\'t be used with action "[verify]"'),  # the first typed
    (["--execute", "--reassignment-json-file", "f.json", "--additional", "--zookeeper", "h:1"],
     'Error: You must specify --bootstrap-server when using "[additional]"'),
    (["--execute", "--reassignment-json-file", "f.json", "--replica-alter-log-dirs-throttle", "10",
      "--bootstrap-server", "h:1"], "Error: --replica-alter-log-dirs-throttle: these brokers do not move replicas"),
    (["--execute", "--reassignment-json-file", "f.json", "--throttle", "fast", "--bootstrap-server", "h:1"],
     "Error: Invalid value for '--throttle': Cannot parse argument 'fast' of option throttle"),
])
async def test_execute_only_options_are_checked_before_anything_is_read(argv: list[str], message: str) -> None:
    result = await reassign(*argv)  # f.json does not exist and nothing listens at h:1: the checks come first
    assert result.exit_code == 1
    assert result.output.splitlines()[-1].startswith(message), result.output


def test_throttled_replicas_cover_ongoing_moves_sorted_as_strings() -> None:
    """calculateProposedMoveMap keeps an ongoing move's sources for a resubmitted partition and adds the other
    ongoing moves; the throttle lists are Scala TreeSet[String]s (so 10:1 sorts before 2:1)."""
    ongoing = {("t", 2): ((1, 2, 3), (3,)), ("u", 0): ((4, 5), (5,))}  # replicas, adding
    targets = {TopicPartition("t", 2): [2, 4], TopicPartition("t", 10): [1, 3]}
    current = {TopicPartition("t", 2): (1, 2, 3), TopicPartition("t", 10): (2,)}
    moves = reassign_module.proposed_move_map(ongoing, targets, current)
    assert moves == {"t": {2: (frozenset({1, 2}), frozenset({4})), 10: (frozenset({2}), frozenset({1, 3}))},
                     "u": {0: (frozenset({4}), frozenset({5}))}}
    assert reassign_module.throttled_replicas(moves) == {"t": ("10:2,2:1,2:2", "10:1,10:3,2:4"),
                                                            "u": ("0:4", "0:5")}
