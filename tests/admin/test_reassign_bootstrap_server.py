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

from zkcontroller.cli import main
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
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
        "Clearing broker-level throttles on brokers 1,2,3",
        "Clearing topic-level throttles on topic moving"]
    assert "leader.replication.throttled.replicas" not in await zk.get_entity_configs(ConfigType.TOPIC, "moving")
    back = await reassign("--verify", "--reassignment-json-file", plan(tmp_path, "back.json", {("moving", 0): [1, 2]}),
                          "--bootstrap-server", bootstrap, "--preserve-throttles")
    assert back.output.splitlines() == [
        "Status of partition reassignment:",
        "There is no active reassignment of partition moving-0, but replica set is 2,3 rather than 1,2."]


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
                                            "Reassignment of partition stuck-0 is still in progress."]
    cancelled = await reassign("--cancel", "--reassignment-json-file", stuck, "--bootstrap-server", at)
    assert (cancelled.exit_code, cancelled.output) == (
        0, "Successfully cancelled partition reassignment for: stuck-0\n")
    none = await reassign("--cancel", "--reassignment-json-file", stuck, "--bootstrap-server", at)
    assert none.output == "None of the specified partition reassignments are active.\n"


async def test_neither_server_and_both() -> None:
    result = await reassign("--list")
    assert result.exit_code == 1 and "Error: Please specify --bootstrap-server." in result.output
    both = await asyncio.to_thread(CliRunner().invoke, main, [
        "reassign", "--list", "--bootstrap-server", "127.0.0.1:1", "--zookeeper", "127.0.0.1:1",
        "--command-config", "/nonexistent/admin.properties"])
    assert both.output.splitlines()[0].startswith("Warning: ignoring deprecated --zookeeper option")
    assert both.output.splitlines()[-1].startswith("Error: cannot read --command-config /nonexistent")
