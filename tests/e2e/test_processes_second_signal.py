"""Two signals at once (a closed terminal under `uv run`: the terminal's SIGHUP and the one uv forwards) stop
`cluster --processes` once, completely."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.e2e.test_process_cluster_prompt import processes_naming

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(180)]


def test_a_second_signal_does_not_cut_the_stop_short(tmp_path: Path) -> None:
    """The second signal raised KeyboardInterrupt inside asyncio.run's clean-up, before the brokers were
    stopped: the command exited and left them and ZooKeeper running (in sessions of their own)."""
    files = tmp_path / "cluster"
    proc = subprocess.Popen([sys.executable, "-m", "zkcontroller.cli", "cluster", "--processes", "1",
                             "--log-dir", str(files)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    left: list[int] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("  help | quit"):
                break
        proc.send_signal(signal.SIGHUP)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        left = processes_naming(str(files))
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.stdout.close()
    assert left == [], "processes outlived the cluster"
    assert (files / "broker-1.log").read_text().rstrip().endswith("shut down completed (kafka.server.KafkaServer)")
