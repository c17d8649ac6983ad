"""``zkcontroller topics ... --bootstrap-server``: Kafka 2.8.2's TopicCommand through the AdminClient, against
in-process brokers on the embedded store (which no other process could reach through ZooKeeper).

The CLI runs in a worker thread (it has its own event loop) while the brokers run on the test's loop; every wait
is on a condition with a bound."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.helpers import wait_until
from tests.integration.listening import listening_cluster

from zkcontroller.cli import main
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster

pytestmark = pytest.mark.usefixtures("restored_logging")


@pytest.fixture(name="brokers")
async def brokers_fixture() -> AsyncIterator[tuple[LocalCluster, str]]:
    """Three brokers on free loopback ports and their bootstrap list."""
    async with listening_cluster([1, 2, 3], ListenerPorts(base=None, host="127.0.0.1"), 4000) as (cluster, _zk):
        yield cluster, ",".join(cluster.listeners[b].address or "" for b in (1, 2, 3))


async def topics(*argv: str, env: dict[str, str | None] | None = None) -> Result:
    return await asyncio.to_thread(CliRunner().invoke, main, ["topics", *argv],
                                   env={"ZKCONTROLLER_ZOOKEEPER": None, **(env or {})})


def led_everywhere(cluster: LocalCluster, topic: str, partitions: int) -> bool:
    from zkcontroller.model import TopicPartition
    for server in cluster.running_brokers():
        assert server.control_plane is not None
        for p in range(partitions):
            state = server.control_plane.metadata_cache.partition_info(TopicPartition(topic, p))
            if state is None or state.leader < 0:
                return False
    return True


async def test_create_list_describe_alter_delete(brokers: tuple[LocalCluster, str]) -> None:
    cluster, bootstrap = brokers
    # the first address refuses: the client goes on to the next, as Kafka's bootstrap does
    servers = f"127.0.0.1:1,{bootstrap}"
    created = await topics("create", "orders", "--bootstrap-server", servers, "--partitions", "3",
                           "--replication-factor", "2", "--config", "cleanup.policy=compact")
    assert (created.exit_code, created.output) == (0, "Created topic orders.\n")
    await wait_until(lambda: led_everywhere(cluster, "orders", 3), timeout_s=30, what="orders led")

    listed = await topics("list", "--bootstrap-server", servers)
    assert (listed.exit_code, listed.output) == (0, "orders\n")

    described = await topics("describe", "--topic", "orders", "--bootstrap-server", bootstrap)
    assert described.exit_code == 0, described.output
    head, *parts = described.output.splitlines()
    assert re.fullmatch(r"Topic: orders\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: 3\tReplicationFactor: 2"
                        r"\tConfigs: cleanup.policy=compact", head), head
    assert [line.split("\t")[2] for line in parts] == ["Partition: 0", "Partition: 1", "Partition: 2"]
    for line in parts:
        fields = dict(f.split(": ", 1) for f in line.strip("\t").split("\t"))
        assert fields["Topic"] == "orders" and len(fields["Replicas"].split(",")) == 2
        assert fields["Leader"] in fields["Replicas"].split(",")

    # alter: partitions only, as Kafka's AdminClient path
    altered = await topics("alter", "orders", "--bootstrap-server", bootstrap, "--partitions", "5")
    assert (altered.exit_code, altered.output) == (0, ""), altered.output
    await wait_until(lambda: led_everywhere(cluster, "orders", 5), timeout_s=30, what="orders has 5 partitions")
    described = await topics("describe", "--topic", "orders", "--bootstrap-server", bootstrap)
    assert "\tPartitionCount: 5\t" in described.output.splitlines()[0]

    # Kafka's layout works too, and the broker's message is the error
    again = await topics("--create", "--topic", "orders", "--bootstrap-server", bootstrap, "--partitions", "1",
                         "--replication-factor", "1")
    assert again.exit_code == 1 and again.output.splitlines()[-1] == "Error: Topic 'orders' already exists."
    quiet = await topics("create", "orders", "--bootstrap-server", bootstrap, "--partitions", "1",
                         "--replication-factor", "1", "--if-not-exists")
    assert (quiet.exit_code, quiet.output) == (0, "")

    deleted = await topics("delete", "orders", "--bootstrap-server", bootstrap)
    assert (deleted.exit_code, deleted.output) == (0, "")

    async def gone() -> bool:
        return (await topics("list", "--bootstrap-server", bootstrap)).output == "\n"
    await wait_until(gone, timeout_s=30, what="orders deleted")
    missing = await topics("describe", "--topic", "orders", "--bootstrap-server", bootstrap)
    assert missing.exit_code == 1 and missing.output.splitlines()[-1] == (
        "Error: Topic 'orders' does not exist as expected")
    assert (await topics("delete", "orders", "--if-exists", "--bootstrap-server", bootstrap)).exit_code == 0


async def test_broker_defaults_and_invalid_requests(brokers: tuple[LocalCluster, str]) -> None:
    cluster, bootstrap = brokers
    # no --partitions / --replication-factor: the broker's defaults (1 and 1), as NewTopic's empty values
    plain = await topics("create", "plain", "--bootstrap-server", bootstrap)
    assert (plain.exit_code, plain.output) == (0, "Created topic plain.\n")
    await wait_until(lambda: led_everywhere(cluster, "plain", 1), timeout_s=30, what="plain led")
    described = await topics("describe", "--topic", "plain", "--bootstrap-server", bootstrap)
    assert "\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n" in described.output

    too_many = await topics("create", "big", "--bootstrap-server", bootstrap, "--partitions", "1",
                            "--replication-factor", "5")
    assert too_many.exit_code == 1
    assert too_many.output.splitlines()[-1] == "Error: Replication factor: 5 larger than available brokers: 3."
    zero = await topics("create", "none", "--bootstrap-server", bootstrap, "--partitions", "0",
                        "--replication-factor", "1")
    assert zero.exit_code == 1 and zero.output.splitlines()[-1] == "Error: The partitions must be greater than 0"
    shrink = await topics("alter", "plain", "--bootstrap-server", bootstrap, "--partitions", "1")
    assert shrink.exit_code == 1 and shrink.output.splitlines()[-1] == (
        "Error: Topic already has 1 partitions.")
    bad_name = await topics("create", "bad name", "--bootstrap-server", bootstrap, "--partitions", "1",
                            "--replication-factor", "1")
    assert bad_name.exit_code == 1 and "Error: " in bad_name.output and "Traceback" not in bad_name.output


async def test_min_isr_reports_with_bootstrap_server(brokers: tuple[LocalCluster, str]) -> None:
    cluster, bootstrap = brokers
    for name, min_isr in (("strict", "2"), ("loose", "1")):
        made = await topics("create", name, "--bootstrap-server", bootstrap, "--replica-assignment", "1:2,2:3",
                            "--config", f"min.insync.replicas={min_isr}")
        assert made.exit_code == 0, made.output
        await wait_until(lambda n=name: led_everywhere(cluster, n, 2), timeout_s=30, what=f"{name} led")

    async def report(flag: str) -> list[str]:
        result = await topics("describe", flag, "--bootstrap-server", bootstrap)
        assert result.exit_code == 0, result.output
        return [re.sub(r"\tLeader: \d+", "", line) for line in result.output.splitlines()]

    async def full_isr() -> bool:
        return len(await report("--at-min-isr-partitions")) == 2
    await wait_until(full_isr, timeout_s=30, what="every ISR full")
    assert await report("--at-min-isr-partitions") == [
        "\tTopic: strict\tPartition: 0\tReplicas: 1,2\tIsr: 1,2",
        "\tTopic: strict\tPartition: 1\tReplicas: 2,3\tIsr: 2,3"]
    assert await report("--under-min-isr-partitions") == []
    both = await topics("describe", "--at-min-isr-partitions", "--under-min-isr-partitions",
                        "--bootstrap-server", bootstrap)
    assert both.exit_code == 1 and ('Option "[under-min-isr-partitions]" can\'t be used with option '
                                    '"[at-min-isr-partitions]"') in both.output


async def test_nothing_reachable_is_one_bounded_error(tmp_path: Path) -> None:
    config = tmp_path / "admin.properties"
    config.write_text("# bounded for the test\ndefault.api.timeout.ms=1500\n")
    started = time.monotonic()
    result = await topics("list", "--bootstrap-server", "127.0.0.1:1", "--command-config", str(config))
    assert result.exit_code == 1
    assert result.output == "Error: Timed out waiting for a node assignment. Call: listTopics\n"
    assert time.monotonic() - started < 30  # bounded by the setting, not Kafka's 60 s default (no timing pass/fail)
    bad = await topics("list", "--bootstrap-server", "nocolon")
    assert (bad.exit_code, bad.output) == (1, "Error: Invalid url in bootstrap.servers: nocolon\n")


@pytest.mark.parametrize(("argv", "message"), [
    (["list", "--bootstrap-server", "h:1", "--zookeeper", "z:2181"],
     "Error: Only one of --bootstrap-server or --zookeeper must be specified"),
    (["alter", "t", "--bootstrap-server", "h:1", "--config", "a=b", "--partitions", "3"],
     'Error: Option combination "[bootstrap-server],[config]" can\'t be used with option "[alter]"'),
    (["alter", "t", "--bootstrap-server", "h:1"], 'Error: Missing required argument "[partitions]"'),
    (["alter", "t", "--bootstrap-server", "h:1", "--partitions", "3", "--delete-config", "a"],
     'Error: Option "[delete-config]" can\'t be used with option "[bootstrap-server]"'),
])
async def test_argument_checks_before_any_connection(argv: list[str], message: str) -> None:
    result = await topics(*argv)  # nobody listens at h:1; every refusal comes first
    assert result.exit_code == 1
    assert result.output.splitlines()[-1].startswith(message), result.output


async def test_a_zookeeper_from_the_environment_gives_way_to_bootstrap_server(tmp_path: Path) -> None:
    config = tmp_path / "admin.properties"
    config.write_text("default.api.timeout.ms=200\n")
    result = await topics("list", "--bootstrap-server", "127.0.0.1:1", "--command-config", str(config),
                          env={"ZKCONTROLLER_ZOOKEEPER": "127.0.0.1:1"})
    assert result.output == "Error: Timed out waiting for a node assignment. Call: listTopics\n"
