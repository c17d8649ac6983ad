"""``quit`` at the ``cluster --processes`` prompt says what it stops and that all brokers stopped, as the in-process
cluster's ``quit`` does (it used to print nothing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from zkcontroller.cluster.process_cluster import ProcessCluster


def test_stop_reports_each_running_broker_then_all_stopped(tmp_path: Path) -> None:
    cluster = ProcessCluster([1, 2, 3], tmp_path)
    sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
    cluster.brokers[1].process = subprocess.Popen(sleeper)
    cluster.brokers[3].process = subprocess.Popen(sleeper)
    exited = subprocess.Popen([sys.executable, "-c", "pass"])
    exited.wait(30)
    cluster.brokers[2].process = exited  # killed earlier at the prompt: nothing to stop
    said: list[str] = []
    cluster.stop(said.append)
    assert said == [f"stopping broker 1 (pid {cluster.brokers[1].process.pid})",
                    f"stopping broker 3 (pid {cluster.brokers[3].process.pid})",
                    "all brokers stopped"]
    assert all(b.process is not None and b.process.poll() is not None for b in cluster.brokers.values())


def test_nothing_is_said_when_no_broker_was_started(tmp_path: Path) -> None:
    said: list[str] = []
    ProcessCluster([1], tmp_path).stop(said.append)
    assert said == []
