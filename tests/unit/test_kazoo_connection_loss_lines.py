"""A ZooKeeper outage in the logs: a `KazooSession` says when its connection is lost and when it is back, as
ZooKeeper's ClientCnxn does under Kafka. Only the session's expiry was logged, so an outage shorter than the
session timeout left no trace at all. A ZooKeeper of the test's own is stopped and restarted."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from tests.helpers import tool_missing, wait_until

from zkcontroller.cluster.zookeeper_server import ZooKeeperNotInstalled, ZooKeeperServerProcess
from zkcontroller.coordination.api import SessionState
from zkcontroller.coordination.kazoo_store import KazooSession

CNXN = "org.apache.zookeeper.ClientCnxn"

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(180)]


async def test_a_lost_connection_and_its_return_are_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=CNXN)
    server = ZooKeeperServerProcess(tmp_path / "zk", tick_time_ms=2000)  # sessions up to 40 s: a restart fits
    try:
        server.start()
    except ZooKeeperNotInstalled as e:
        tool_missing("zookeeper", str(e))
    session = None
    try:
        session = await KazooSession.connect(server.connect_string, session_timeout_ms=40_000)
        assert session.disconnected_for_s is None
        server.stop()
        await wait_until(lambda: session.state is SessionState.DISCONNECTED, 30, "the connection lost")
        lost = [r for r in caplog.records if r.name == CNXN and r.levelno == logging.WARNING]
        assert [r.getMessage() for r in lost] == [
            f"Connection to ZooKeeper at {server.connect_string} lost for session 0x{session.session_id:x}, "
            "closing socket connection and attempting reconnect (the session expires 40000 ms after the loss)"]
        assert session.disconnected_for_s is not None
        server.start()
        await wait_until(lambda: session.state is SessionState.CONNECTED, 60, "the connection back")
        back = [r.getMessage() for r in caplog.records if r.name == CNXN and r.levelno == logging.INFO]
        assert len(back) == 1 and back[0].startswith(
            f"Session establishment complete on server 127.0.0.1:{server.port}, "
            f"sessionid = 0x{session.session_id:x}, after "), back
        assert back[0].endswith(" ms without a connection")
        assert session.disconnected_for_s is None
    finally:
        if session is not None:
            await session.close()
        server.cleanup()
