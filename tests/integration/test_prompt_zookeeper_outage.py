"""A prompt command held up by a ZooKeeper outage says it waits for ZooKeeper (it printed nothing until the
connection came back), then finishes once the server is back. A ZooKeeper of the test's own is stopped and
restarted; every wait is bounded."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.helpers import tool_missing, wait_until

from zkcontroller.cluster import cluster_shell
from zkcontroller.cluster.cluster_shell import ClusterShell
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.zookeeper_server import ZooKeeperNotInstalled, ZooKeeperServerProcess
from zkcontroller.coordination.api import SessionState
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(180)]


async def test_a_command_waiting_on_a_lost_connection_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster_shell, "ZK_WAIT_NOTICE_S", 0.2)
    server = ZooKeeperServerProcess(tmp_path / "zk", tick_time_ms=2000)  # sessions up to 40 s: a restart fits
    try:
        server.start()
    except ZooKeeperNotInstalled as e:
        tool_missing("zookeeper", str(e))
    backend = ZooKeeperBackend(server.connect_string)
    try:
        session = await backend.new_session(40_000)
        admin = KafkaZkClient(session, wall_clock_ms)
        await admin.create_top_level_paths()
        lines: list[str] = []
        shell = ClusterShell(LocalCluster(backend, [1], wall_clock_ms), admin, out=lines.append)
        server.stop()
        await wait_until(lambda: session.state is SessionState.DISCONNECTED, 30, "the connection lost")
        command = asyncio.create_task(shell.run_command("describe"))
        await wait_until(lambda: any(line.startswith("waiting for ZooKeeper") for line in lines), 30, "the notice")
        notice = next(line for line in lines if line.startswith("waiting for ZooKeeper"))
        assert notice.startswith(f"waiting for ZooKeeper at {server.connect_string} (connection lost ")
        assert notice.endswith(" s ago)")
        assert not command.done()
        server.start()
        assert await asyncio.wait_for(command, 60) is True
        assert [line for line in lines if line.startswith("waiting for ZooKeeper")] == [notice]  # once
    finally:
        await backend.close()
        server.cleanup()
