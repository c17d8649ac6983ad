"""`zkcontroller cluster --processes N` stopped by SIGTERM: brokers and ZooKeeper stop, and the command exits."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.helpers import sigterm_at_prompt

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(180)]


def processes_naming(text: str) -> list[int]:
    """Pids of the processes whose command line contains ``text`` (the cluster's brokers and ZooKeeper name
    their files under its --log-dir)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text in cmdline.read_bytes().decode(errors="replace"):
                found.append(int(cmdline.parent.name))
        except OSError:  # exited meanwhile
            continue
    return found


def test_sigterm_at_an_idle_process_cluster_prompt_stops_everything(tmp_path: Path) -> None:
    """It used to stop the broker processes and ZooKeeper and then wait forever, in asyncio.run's executor
    shutdown, for the thread reading a line from the still-open standard input."""
    files = str(tmp_path / "cluster")
    running: list[int] = []
    returncode, out = sigterm_at_prompt(
        [sys.executable, "-m", "zkcontroller.cli", "cluster", "--processes", "2", "--log-dir", files],
        at_prompt=lambda: running.extend(processes_naming(files)))
    assert returncode == 0, out
    assert out.rstrip().endswith("stopped"), out
    assert len(running) >= 4, f"expected the command, two brokers and ZooKeeper under {files}: {running}"
    assert processes_naming(files) == [], "processes outlived the cluster"
