"""The `cluster --processes` prompt with no ZooKeeper answering: its commands fail within a bound."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from zkcontroller.cluster.process_cluster import ProcessCluster, ProcessClusterShell
from zkcontroller.cluster.zookeeper_server import ZooKeeperNotInstalled, ZooKeeperServerProcess
from zkcontroller.coordination.connect import make_backend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(120)]


@pytest.mark.parametrize("line", ["status", "describe", "create orders 1 1"])
async def test_a_command_reading_a_zookeeper_that_is_gone_fails_within_its_bound(tmp_path: Path, line: str) -> None:
    """`status` after `zk-kill` of the last ensemble server used to wait for ever, and the prompt with it
    (so `zk-start` could not be typed)."""
    server = ZooKeeperServerProcess(tmp_path / "zk")
    try:
        server.start()
    except ZooKeeperNotInstalled as e:
        pytest.skip(f"real ZooKeeper unavailable: {e}")
    backend = make_backend(server.connect_string, wall_clock_ms)
    try:
        session = await backend.new_session()
        out: list[str] = []
        cluster = ProcessCluster([1], tmp_path / "cluster", zookeeper=server.connect_string)  # brokers not started
        shell = ProcessClusterShell(cluster, KafkaZkClient(session, wall_clock_ms), out.append, zk_timeout_s=2)
        server.stop()
        try:
            assert await asyncio.wait_for(shell.run_command(line), 20)
        except TimeoutError:
            raise AssertionError(f"{line!r} still waiting for ZooKeeper after 20 s") from None
        assert out[-1] == (f"error: ZooKeeper ({server.connect_string}) did not answer within 2 s; the brokers "
                           "keep running (zk-status shows an ensemble's servers)"), out
    finally:
        await backend.close()
        server.cleanup()
