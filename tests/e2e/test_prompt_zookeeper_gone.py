"""The in-process prompt (`zkcontroller cluster --zookeeper`) when its ZooKeeper goes away under a command: one
clear line (the verb, the znode, ZooKeeper not answering, whether the command took effect), and the prompt's
later commands work once ZooKeeper is back. It printed ZooKeeper's raw "CONNECTION_LOSS at PATH: ... (nothing
else was done)". As in test_processes_prompt_zookeeper_gone, the request is forced into flight first (ZooKeeper
paused), then the server is killed, so the loss fails it rather than leaving it queued (a queued one waits for
ZooKeeper: test_prompt_zookeeper_outage)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from tests.e2e.test_processes_prompt_zookeeper_gone import _stopped
from tests.helpers import wait_until

from zkcontroller.cluster.cluster_shell import ClusterShell
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.zookeeper_server import ZooKeeperNotInstalled, ZooKeeperServerProcess
from zkcontroller.coordination.api import SessionState
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.coordination.kazoo_store import KazooSession
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(180)]


@pytest.mark.parametrize(("line", "outcome"), [
    ("status", "it changed nothing"),
    ("describe", "it changed nothing"),
    ("create orders 1 1", "it wrote nothing, so it did not take effect (run it again once ZooKeeper answers)"),
])
async def test_a_command_whose_zookeeper_goes_away_says_so_and_the_prompt_goes_on(tmp_path: Path, line: str,
                                                                                   outcome: str) -> None:
    server = ZooKeeperServerProcess(tmp_path / "zk", tick_time_ms=2000)  # sessions up to 40 s: a restart fits
    try:
        server.start()
    except ZooKeeperNotInstalled as e:
        pytest.skip(f"real ZooKeeper unavailable: {e}")
    backend = ZooKeeperBackend(server.connect_string)
    try:
        session = await backend.new_session(40_000)
        assert isinstance(session, KazooSession)
        admin = KafkaZkClient(session, wall_clock_ms)
        await admin.create_top_level_paths()
        out: list[str] = []
        shell = ClusterShell(LocalCluster(backend, [1], wall_clock_ms), admin, out=out.append)  # brokers not started
        pid = server.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)  # the request reaches its socket, and no answer comes back
        await wait_until(lambda: _stopped(pid), what="ZooKeeper paused")
        command = asyncio.ensure_future(shell.run_command(line))
        kazoo = session._client  # kazoo's own queues: the only sign that the request left the command
        await wait_until(lambda: bool(kazoo._pending or kazoo._queue), what="a request in flight")
        assert session.state is SessionState.CONNECTED  # so the loss fails it, rather than holding it
        os.kill(pid, signal.SIGKILL)
        server.stop()  # reaps it
        try:
            assert await asyncio.wait_for(command, 30) is True  # the prompt goes on
        except TimeoutError:
            raise AssertionError(f"{line!r} still waiting after ZooKeeper went away: {out}") from None
        verb = line.split()[0]
        head = f"error: ZooKeeper ({server.connect_string}) is not answering: `{verb}` lost its connection at /"
        assert out[-1].startswith(head), out
        assert out[-1].endswith(f"; {outcome}; the brokers keep running and reconnect by themselves"), out
        server.start()
        await wait_until(lambda: session.state is SessionState.CONNECTED, 60, "the connection back")
        out.clear()
        assert await asyncio.wait_for(shell.run_command(line), 30) is True
        assert not any("ZooKeeper" in said for said in out), out  # answered, by a ZooKeeper that is back
    finally:
        await backend.close()
        server.cleanup()
