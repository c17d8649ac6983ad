"""The end of standard input at the `cluster --processes` prompt: Ctrl-D at a terminal quits; a closed pipe
keeps the cluster serving and says how to stop it."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.test_process_cluster_prompt import processes_naming

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(180)]

CLUSTER = [sys.executable, "-m", "zkcontroller.cli", "cluster", "--processes", "1"]


def kill_all(proc: subprocess.Popen[Any], files: str) -> None:
    """After a failure: the command and the brokers and ZooKeeper it started (sessions of their own)."""
    proc.kill()
    proc.wait()
    for pid in processes_naming(files):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def read_until(fd: int, marker: bytes, timeout_s: float) -> bytes:
    """Output from the pty's controller side until ``marker`` shows (bounded)."""
    seen = b""
    deadline = time.monotonic() + timeout_s
    while marker not in seen:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"no {marker!r} within {timeout_s}s: {seen.decode(errors='replace')}")
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            seen += chunk
    return seen


def test_ctrl_d_at_a_terminal_quits(tmp_path: Path) -> None:
    """Ctrl-D used to leave the prompt waiting forever, without a word, with the cluster running."""
    files = str(tmp_path / "cluster")
    controller, terminal = pty.openpty()
    proc = subprocess.Popen([*CLUSTER, "--log-dir", files], stdin=terminal, stdout=terminal, stderr=terminal,
                            start_new_session=True)
    os.close(terminal)
    try:
        read_until(controller, b"help | quit", 90)
        os.write(controller, b"\x04")  # Ctrl-D: the line discipline ends the input
        try:
            code = proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            raise AssertionError("still running 40 s after Ctrl-D at the prompt") from None
    finally:
        if proc.poll() is None:
            kill_all(proc, files)
        os.close(controller)
    assert code == 0
    assert processes_naming(files) == [], "processes outlived the cluster"


def test_a_closed_pipe_keeps_serving_and_says_so(tmp_path: Path) -> None:
    files = str(tmp_path / "cluster")
    proc = subprocess.Popen([*CLUSTER, "--log-dir", files], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if "standard input ended" in line:
                break
        else:
            raise AssertionError(f"no word on the end of input: {''.join(seen)}")
        assert line.strip() == ("standard input ended: the cluster keeps running until Ctrl-C or SIGTERM "
                                f"(pid {proc.pid})")
        assert proc.poll() is None, "it stopped serving"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=40) == 0
    finally:
        if proc.poll() is None:
            kill_all(proc, files)
        assert proc.stdout is not None
        proc.stdout.close()
    assert processes_naming(files) == []
