"""`cluster --processes N --zookeeper-ensemble 1`: the option allows one server, which ZooKeeper runs standalone."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers import tool_missing

from zkcontroller.cluster.zookeeper_ensemble import ZooKeeperEnsemble
from zkcontroller.cluster.zookeeper_server import ZooKeeperNotInstalled

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(120)]


def test_an_ensemble_of_one_server_starts(tmp_path: Path) -> None:
    """It waited 90 s for a leader and followers that a lone server never has (it reports ``standalone``), then
    ended the command with "the ensemble did not form"."""
    ensemble = ZooKeeperEnsemble(tmp_path, 1)
    try:
        try:
            ensemble.start(timeout_s=30)
        except ZooKeeperNotInstalled as e:
            tool_missing("zookeeper", str(e))
        assert ensemble.status_lines() == [
            f"zookeeper 1: 127.0.0.1:{ensemble.client_ports[1]}, pid {ensemble.processes[1].pid}, standalone"]
    finally:
        ensemble.stop()
