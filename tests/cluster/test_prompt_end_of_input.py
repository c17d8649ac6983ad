"""End of input at the ``zkcontroller cluster`` prompt. At a terminal, Ctrl-D left the prompt sitting there,
ignoring every key after it, until Ctrl-C; now it quits. Without a terminal (standard input closed) the cluster
keeps serving, as before, and now says so instead of printing a prompt nobody can answer."""

from __future__ import annotations

import contextlib
import os
import pty
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

pytestmark = pytest.mark.timeout(120)

ARGV = [sys.executable, "-m", "zkcontroller.cli", "cluster", "--brokers", "2", "--no-listeners"]
BOUND_S = 60.0


def _read_until(proc: subprocess.Popen[str], wanted: str) -> str:
    """Output up to the first line containing ``wanted`` (the process is killed, failing this, after the bound)."""
    assert proc.stdout is not None
    timer = threading.Timer(BOUND_S, proc.kill)
    timer.start()
    seen = []
    try:
        for line in proc.stdout:
            seen.append(line)
            if wanted in line:
                return "".join(seen)
    finally:
        timer.cancel()
    raise AssertionError(f"never printed {wanted!r}: {''.join(seen)}")


@contextlib.contextmanager
def _cluster(stdin: int) -> Iterator[subprocess.Popen[str]]:
    """``zkcontroller cluster`` reading ``stdin``, its output merged on a pipe; killed on the way out if running."""
    proc = subprocess.Popen(ARGV, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def _rest_of_output(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    return proc.stdout.read().rstrip()


def test_ctrl_d_at_a_terminal_quits() -> None:
    main, follower = pty.openpty()
    try:
        with _cluster(follower) as proc:
            os.close(follower)
            _read_until(proc, "help | quit")
            os.write(main, b"\x04")  # Ctrl-D on an empty line: the terminal ends the input
            try:
                assert proc.wait(timeout=BOUND_S) == 0
            except subprocess.TimeoutExpired:
                raise AssertionError("still running after Ctrl-D") from None
            assert _rest_of_output(proc).endswith("all brokers stopped")
    finally:
        os.close(main)


def test_closed_input_without_a_terminal_keeps_serving_and_says_so() -> None:
    with _cluster(subprocess.DEVNULL) as proc:
        _read_until(proc, "standard input is closed: the cluster keeps running until interrupted")
        assert proc.poll() is None  # still serving
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=BOUND_S) == 0
        assert _rest_of_output(proc).endswith("stopped")


def test_a_second_sigterm_does_not_cut_the_brokers_shutdown_short() -> None:
    """SIGTERM to the process group under ``uv run`` (``timeout``, systemd) arrives twice: the one sent and the one
    uv forwards. The second cancelled the shutdown the first began: "stopping broker 2" then "stopped", and the
    other brokers were never stopped (on a real ZooKeeper their sessions outlived the command)."""
    proc = subprocess.Popen(ARGV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdin is not None
        proc.stdin.write("create a 4 2\n")  # replicated: each broker's controlled shutdown has leaders to move
        proc.stdin.close()
        _read_until(proc, "standard input is closed")
        proc.send_signal(signal.SIGTERM)
        _read_until(proc, "stopping broker 2")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=BOUND_S) == 0
        rest = _rest_of_output(proc)
        assert "stopping broker 1" in rest and rest.endswith("all brokers stopped\nstopped"), rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
