"""``zkcontroller cluster`` failing at start-up: one ``Error:`` line, exit 1, the brokers started so far stopped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from kazoo.client import KazooClient

from zkcontroller.cli import main
from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess
from zkcontroller.model import Broker, BrokerInfo, EndPoint
from zkcontroller.zk.znodes.brokers import BrokerIdZNode

pytestmark = [pytest.mark.usefixtures("restored_logging"), pytest.mark.zookeeper, pytest.mark.timeout(120)]


def test_a_broker_id_another_cluster_holds_is_one_error_line(
    zookeeper_server: ZooKeeperServerProcess, tmp_path: Path,
) -> None:
    """Another cluster's live session holds /brokers/ids/2: the registration wait ends in its NodeExistsError,
    whose text names the id and the cause; it was a 40-line traceback, and the session of the broker that could
    not register was left open. (A plain kazoo client holds it: the command runs in this, the main, thread.)"""
    chroot = f"/second-cluster-{os.getpid()}"
    holder = KazooClient(hosts=zookeeper_server.connect_string)
    holder.start(timeout=30)
    try:
        info = BrokerInfo(Broker(2, (EndPoint("localhost", 9094, "PLAINTEXT", "PLAINTEXT"),), None))
        holder.create(f"{chroot}/brokers/ids/2", BrokerIdZNode.encode(info, 0), ephemeral=True, makepath=True)
        argv = ["cluster", "--broker-ids", "1,2", "--zookeeper", zookeeper_server.connect_string + chroot,
                "--session-timeout-ms", "100", "--no-listeners", "--log-dir", str(tmp_path)]
        result = CliRunner().invoke(main, argv, input="quit\n")
        lines = result.output.strip().splitlines()
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (result.output, result.exception)
        assert "Traceback" not in result.output
        assert result.stderr.splitlines() == [  # its one line (stdout's may come after it: CliRunner buffers it)
            "Error: broker id 2 is still registered by another live session after 2100 ms: is another broker "
            "running with it? for /brokers/ids/2"]
        assert lines[-2:] == ["stopping broker 1", "all brokers stopped"]
        assert sorted(holder.get_children(f"{chroot}/brokers/ids")) == ["2"]  # broker 1 gone, the other 2 kept
    finally:
        holder.stop()
        holder.close()
