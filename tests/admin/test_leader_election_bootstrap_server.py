"""``zkcontroller leader-election --bootstrap-server``: Kafka 2.8.2's LeaderElectionCommand (AdminClient only)
through the controller's ElectLeaders API, against in-process brokers on the embedded store. Preferred and
unclean elections both work this way (the ZooKeeper path has preferred only). Every wait is bounded."""

from __future__ import annotations

import asyncio

import pytest
from click.testing import CliRunner, Result
from tests.wire.admin_fixture import Cluster, address, admin_cluster_fixture, controller, create  # noqa: F401
from tests.wire.test_elect_leaders_wire import displaced

from zkcontroller.cli import main

pytestmark = [pytest.mark.usefixtures("restored_logging"), pytest.mark.timeout(120)]


async def elect(*argv: str) -> Result:
    return await asyncio.to_thread(CliRunner().invoke, main, ["leader-election", *argv],
                                   env={"ZKCONTROLLER_ZOOKEEPER": None})


async def test_preferred_unclean_and_failed_elections(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    preferred = await displaced(cluster, zk, "pref")
    await create(cluster, zk, "steady", {0: [preferred, next(b for b in cluster.broker_ids if b != preferred)]})
    at = address(cluster, controller(cluster))

    result = await elect("--bootstrap-server", f"127.0.0.1:1,{at}", "--election-type", "preferred",
                         "--all-topic-partitions")
    assert result.exit_code == 0, result.output
    # for every partition the broker leaves out those that needed no election (KafkaApis' adjustedResults)
    assert result.output == "Successfully completed leader election (PREFERRED) for partitions pref-0\n"

    result = await elect("--bootstrap-server", at, "--election-type", "unclean", "--topic", "steady",
                         "--partition", "0")
    assert (result.exit_code, result.output) == (0, "Valid replica already elected for partitions steady-0\n")

    result = await elect("--bootstrap-server", at, "--election-type", "preferred", "--topic", "nosuch",
                         "--partition", "0")
    assert result.exit_code == 1
    first, last = result.output.splitlines()
    assert first.startswith("Error completing leader election (PREFERRED) for partition: nosuch-0: "
                            "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "), first
    assert last == "Error: 1 replica(s) could not be elected"


async def test_an_empty_file_elects_nothing_and_prints_nothing(admin_cluster: Cluster, tmp_path) -> None:
    cluster, _zk = admin_cluster
    plan = tmp_path / "none.json"
    plan.write_text('{"partitions": []}')
    result = await elect("--bootstrap-server", address(cluster, controller(cluster)), "--election-type",
                         "preferred", "--path-to-json-file", str(plan))
    assert (result.exit_code, result.output) == (0, "")
