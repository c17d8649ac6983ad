"""Brokers on a three-server ZooKeeper ensemble: killing the ZooKeeper leader loses no write and changes no
controller; the sessions move to the surviving servers, as Kafka's do."""

from __future__ import annotations

import asyncio
import random
import signal

import pytest
from tests.e2e.test_broker_processes import _all_led, wait_for_kcat
from tests.helpers import QUICK_SHUTDOWN_RETRIES, tool_missing, wait_until

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.process_cluster import ProcessCluster, ProcessClusterShell, wait_registered
from zkcontroller.cluster.zookeeper_server import ZooKeeperNotInstalled
from zkcontroller.coordination.connect import make_backend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(240)]


async def test_killing_the_zookeeper_leader_loses_no_write_and_keeps_the_controller(tmp_path):
    """Through the product path: ``cluster --processes 3 --zookeeper-ensemble 3`` and its prompt's zk verbs."""
    cluster = ProcessCluster([1, 2, 3], tmp_path, session_timeout_ms=10000, zookeeper_ensemble=3,
                             extra=QUICK_SHUTDOWN_RETRIES)
    try:
        await asyncio.to_thread(cluster.start)
    except ZooKeeperNotInstalled as e:
        tool_missing("zookeeper", str(e))
    backend = make_backend(cluster.zookeeper_connect, wall_clock_ms)
    try:
        session = await backend.new_session(10000)
        zk = KafkaZkClient(session, wall_clock_ms)
        out: list[str] = []
        shell = ProcessClusterShell(cluster, zk, out.append)
        await wait_registered(zk, [1, 2, 3], cluster=cluster)  # a broker that exits fails it at once, with its log
        admin = TopicAdmin(zk, random.Random(3))
        await admin.create_topic("before", 4, 3)
        addr = cluster.bootstrap.split(",")[0]
        await wait_for_kcat(addr, lambda m: _all_led(m, "before", 4, {1, 2, 3}), "before led")
        controller, epoch = await zk.get_controller_id(), (await zk.get_controller_epoch())[0]

        assert await shell.run_command("zk-status")
        roles = [line.rsplit(", ", 1)[1] for line in out if line.startswith("zookeeper ")]
        assert sorted(roles) == ["follower", "follower", "leader"], out
        ensemble = cluster.ensemble
        assert ensemble is not None
        leader = ensemble.leader()
        assert leader is not None
        assert await shell.run_command(f"zk-kill {leader}")
        assert out[-1] == f"zk-kill {leader}: done"
        await wait_until(lambda: ensemble.leader() not in (None, leader), timeout_s=30, what="a new ZooKeeper leader",
                         poll_s=0.2)

        async def write_lands() -> bool:
            try:
                await admin.create_topic("after", 2, 3)
            except Exception:  # the admin's own session may still be reconnecting
                return False
            return True

        await wait_until(write_lands, timeout_s=30, what="a write after the failover", poll_s=0.5)
        await wait_for_kcat(addr, lambda m: _all_led(m, "after", 2, {1, 2, 3}) and _all_led(m, "before", 4, {1, 2, 3})
                            and len(m["brokers"]) == 3, "both topics led by the same three brokers")
        assert sorted(await zk.get_all_topics_in_cluster()) == ["after", "before"]
        assert (await zk.get_controller_id(), (await zk.get_controller_epoch())[0]) == (controller, epoch)

        assert await shell.run_command(f"zk-start {leader}")  # the killed server rejoins as a follower
        await wait_until(lambda: ensemble.mode(leader) == "follower", timeout_s=60, what="the old leader rejoins",
                         poll_s=0.5)
        assert await shell.run_command(f"zk-kill {leader + 10}")
        assert out[-1] == f"error: ZooKeeper server {leader + 10} does not exist: the ensemble has servers 1, 2, 3"
        await session.close()
    finally:
        for b in cluster.brokers.values():  # brokers first, while ZooKeeper still answers their goodbyes
            if b.process is not None and b.process.poll() is None:
                b.process.send_signal(signal.SIGTERM)
        await backend.close()
        await asyncio.to_thread(cluster.stop)
