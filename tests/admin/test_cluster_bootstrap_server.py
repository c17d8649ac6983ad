"""``brokers list`` and ``controller show`` with ``--bootstrap-server``: Kafka 2.8.2's describeCluster
(DescribeCluster v0, Metadata from a broker without it) against in-process brokers on loopback. Every wait is
bounded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.helpers import OffsetClock, wait_until
from tests.wire.admin_fixture import controller

from zkcontroller.admin.admin_client import AdminClient
from zkcontroller.cli import main
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.protocol.wire.client_apis import DESCRIBE_CLUSTER
from zkcontroller.runtime.clock import wall_clock_ms

pytestmark = [pytest.mark.usefixtures("restored_logging"), pytest.mark.timeout(120)]


@pytest.fixture(name="racked")
async def racked_fixture() -> AsyncIterator[LocalCluster]:
    """Three brokers on loopback, 1 and 2 in racks, 3 in none."""
    backend = EmbeddedBackend(OffsetClock(wall_clock_ms))
    cluster = LocalCluster(backend, [1, 2, 3], wall_clock_ms, session_timeout_ms=30_000,
                           controller_config=ControllerConfig(broker_id=-1, auto_leader_rebalance_enable=False),
                           listeners=ListenerPorts(base=None, host="127.0.0.1"), racks={1: "r1", 2: "r2"})
    try:
        await cluster.start()
        await cluster.wait_for_controller()
        yield cluster
    finally:
        await cluster.shutdown()
        await backend.close()


async def run(*argv: str) -> Result:
    return await asyncio.to_thread(CliRunner().invoke, main, list(argv), env={"ZKCONTROLLER_ZOOKEEPER": None})


def at(cluster: LocalCluster, broker_id: int) -> str:
    return cluster.listeners[broker_id].address or ""


async def test_brokers_and_controller_through_a_broker(racked: LocalCluster) -> None:
    cluster = racked
    active = controller(cluster).broker_id

    async def all_known() -> bool:  # every broker's cache has heard of the three from the controller
        return (await run("brokers", "list", "--bootstrap-server", at(cluster, 3))).output.count("Broker:") == 3
    await wait_until(all_known, timeout_s=30, what="three brokers in broker 3's metadata")
    listed = await run("brokers", "list", "--bootstrap-server", at(cluster, 3))
    assert listed.exit_code == 0, listed.output
    assert listed.output.splitlines() == [
        f"Broker: 1\tRack: r1\tEndpoint: {at(cluster, 1)}",
        f"Broker: 2\tRack: r2\tEndpoint: {at(cluster, 2)}",
        f"Broker: 3\tRack: none\tEndpoint: {at(cluster, 3)}"]
    shown = await run("controller", "show", "--bootstrap-server", f"{at(cluster, 2)},{at(cluster, 1)}")
    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith(f"ActiveController: {active}\tClusterId: ")
    assert "ClusterId: none" not in shown.output


async def test_metadata_when_the_broker_has_no_describe_cluster(racked: LocalCluster) -> None:
    """The Java client's fallback: a broker without DescribeCluster is asked Metadata with no topics."""
    cluster = racked
    async with AdminClient(at(cluster, 1)) as admin:
        described = await admin.describe_cluster()
        for conn in admin._connections.values():  # as a broker that does not list DescribeCluster answers
            conn.versions.pop(DESCRIBE_CLUSTER, None)
        fallen_back = await admin.describe_cluster()
    assert fallen_back.controller_id == described.controller_id >= 0
    assert sorted(fallen_back.brokers, key=lambda b: b.id) == sorted(described.brokers, key=lambda b: b.id)
    assert fallen_back.cluster_id == described.cluster_id


async def test_nothing_reachable_and_both_servers(tmp_path: Path) -> None:
    config = tmp_path / "admin.properties"
    config.write_text("default.api.timeout.ms=1000\n")
    for command in (["brokers", "list"], ["controller", "show"]):
        result = await run(*command, "--bootstrap-server", "127.0.0.1:1", "--command-config", str(config))
        assert (result.exit_code, result.output) == (
            1, "Error: Timed out waiting for a node assignment. Call: listNodes\n")
        bad = await run(*command, "--bootstrap-server", "nocolon")
        assert (bad.exit_code, bad.output) == (1, "Error: Invalid url in bootstrap.servers: nocolon\n")
        both = await run(*command, "--bootstrap-server", "127.0.0.1:1", "--zookeeper", "127.0.0.1:1")
        assert both.exit_code == 2
        assert "Error: Only one of --bootstrap-server or --zookeeper must be specified" in both.output
