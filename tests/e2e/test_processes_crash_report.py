"""A broker process that dies on its own while the `cluster --processes` prompt waits is reported there."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from tests.e2e.test_process_cluster_prompt import processes_naming

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(180)]


def next_line_with(lines: queue.Queue[str | None], text: str, timeout_s: float) -> tuple[str, list[str]]:
    """The first output line containing ``text`` within the bound, and the lines read up to it."""
    seen: list[str] = []
    while True:
        try:
            line = lines.get(timeout=timeout_s)
        except queue.Empty:
            raise AssertionError(f"no line with {text!r} within {timeout_s}s: {''.join(seen)}") from None
        if line is None:
            raise AssertionError(f"output ended without {text!r}: {''.join(seen)}")
        seen.append(line)
        if text in line:
            return line, seen


def test_a_broker_killed_from_outside_is_reported_with_its_log_tail(tmp_path: Path) -> None:
    """Only `status` used to show it (``exited (-9)``); the prompt said nothing, as if the broker still ran."""
    files = tmp_path / "cluster"
    proc = subprocess.Popen([sys.executable, "-m", "zkcontroller.cli", "cluster", "--processes", "2",
                             "--log-dir", str(files)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        next_line_with(lines, "help | quit", 90)
        broker_2 = processes_naming(str(files / "server-2.properties"))
        assert len(broker_2) == 1, broker_2
        os.kill(broker_2[0], signal.SIGKILL)  # as the OOM killer would: not through the prompt
        line, _ = next_line_with(lines, "broker 2", 60)
        assert line.strip() == (f"broker 2 (pid {broker_2[0]}) exited with -9, not through this prompt "
                                f"(last lines of {files / 'broker-2.log'}):"), line
        assert proc.stdin is not None
        proc.stdin.write("kill 1\nquit\n")  # a kill through the prompt is not reported
        proc.stdin.flush()
        _, rest = next_line_with(lines, "kill 1: done", 60)
        assert proc.wait(timeout=40) == 0
        while (line := lines.get(timeout=30)) is not None:  # the reader thread reaches EOF
            rest.append(line)
        assert not any("broker 1 (pid" in line for line in rest), rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
            for pid in processes_naming(str(files)):
                os.kill(pid, signal.SIGKILL)
    assert processes_naming(str(files)) == []
