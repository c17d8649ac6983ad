"""`zkcontroller cluster --processes N` as a user meets it: start-up failures and Ctrl-C at the prompt."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from tests.e2e.test_process_cluster_prompt import processes_naming

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(180)]

CLUSTER = [sys.executable, "-m", "zkcontroller.cli", "cluster"]
BROKERS_REFUSE_THEIR_CONFIG = [sys.executable, "-c", (
    "from zkcontroller.cluster import process_cluster as pc\n"
    "written = pc.ProcessCluster._properties\n"
    "pc.ProcessCluster._properties = lambda self, b: {**written(self, b), 'zookeeper.session.timeout.ms': '0'}\n"
    "from zkcontroller.cli import main\n"
    "main()\n"), "cluster"]
"""The command, with every broker's server.properties holding a value the broker refuses at start-up (the
command's own options refuse it before any broker starts)."""


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(argv: list[str], files: Path, timeout_s: float) -> tuple[int, str]:
    """The command's exit status and output; past the bound, it and what it started are killed."""
    try:
        result = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        for pid in processes_naming(str(files)):  # brokers and ZooKeeper run in sessions of their own
            os.kill(pid, signal.SIGKILL)
        raise
    return result.returncode, result.stdout


def test_an_unreachable_zookeeper_is_one_line_and_starts_no_broker(tmp_path: Path) -> None:
    """The broker processes used to be launched first, then the prompt's own session failed and the command
    exited without stopping them: they ran on, orphaned, until their own connect gave up."""
    files = tmp_path / "cluster"
    port = closed_port()
    code, out = run([*CLUSTER, "--processes", "2", "--zookeeper", f"127.0.0.1:{port}", "--log-dir", str(files)],
                    files, timeout_s=60)
    assert code == 1, out
    assert out.strip().splitlines() == [f"Connecting to ZooKeeper at 127.0.0.1:{port} ...",  # after 1 s of 15
                                        f"Error: cannot connect to ZooKeeper at 127.0.0.1:{port}"], out
    assert not list(files.glob("broker-*.log")), "a broker was launched against a ZooKeeper nobody reached"
    assert processes_naming(str(files)) == []


def test_a_broker_that_dies_on_start_up_ends_the_command_with_its_log_tail(tmp_path: Path) -> None:
    """It used to wait the full minute for a registration that could not come, then print a traceback
    (TimeoutError) that did not say why; the reason was in the broker's log file."""
    files = tmp_path / "cluster"
    code, out = run([*BROKERS_REFUSE_THEIR_CONFIG, "--processes", "2", "--log-dir", str(files)], files, timeout_s=45)
    assert code == 1, out
    assert "Traceback" not in out, out
    # Both brokers fail alike; whichever exits first is named.
    assert re.search(rf"^Error: broker ([12]) exited with 1 during start-up \(last lines of "
                     rf"{re.escape(str(files))}/broker-\1\.log\):$", out, re.MULTILINE), out
    assert "Invalid value 0 for configuration zookeeper.session.timeout.ms" in out, out
    assert processes_naming(str(files)) == [], "processes outlived the command"


def test_ctrl_c_at_the_prompt_stops_every_broker_in_order(tmp_path: Path) -> None:
    """A terminal's Ctrl-C signals the whole foreground process group. The brokers and ZooKeeper used to share
    the command's, so ZooKeeper died at once while the brokers began their controlled shutdowns against it;
    they hung until the command killed them, 20 s each, one after the other."""
    files = tmp_path / "cluster"
    proc = subprocess.Popen([*CLUSTER, "--processes", "2", "--log-dir", str(files)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if line.startswith("  help | quit"):
                break
        else:
            raise AssertionError(f"no prompt: {''.join(seen)}")
        os.killpg(proc.pid, signal.SIGINT)  # as the terminal does: the command and everything in its group
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running 30 s after Ctrl-C\n{_post_mortem(proc, files, seen)}") from None
        out = "".join(seen) + proc.stdout.read()
    finally:
        if proc.poll() is None:  # and what it started, in sessions of their own
            os.killpg(proc.pid, signal.SIGKILL)
            for pid in processes_naming(str(files)):
                os.kill(pid, signal.SIGKILL)
        proc.communicate()
    assert code == 0, out
    assert out.rstrip().endswith("stopped"), out
    for broker_id in (1, 2):
        log = (files / f"broker-{broker_id}.log").read_text()
        assert "Controlled shutdown succeeded" in log, log
        assert log.rstrip().endswith("shut down completed (kafka.server.KafkaServer)"), log
    assert processes_naming(str(files)) == [], "processes outlived the cluster"


def _post_mortem(proc: subprocess.Popen[str], files: Path, seen: list[str]) -> str:
    """What a hung Ctrl-C left behind: the command's output (after killing it and what it started) and each
    process's log tail, so a failure under load says where it stopped."""
    os.killpg(proc.pid, signal.SIGKILL)
    for pid in processes_naming(str(files)):
        os.kill(pid, signal.SIGKILL)
    out, _ = proc.communicate()
    tails = [f"--- {log.name}:\n" + "".join(log.read_text(errors="replace").splitlines(keepends=True)[-40:])
             for log in sorted(files.glob("*.log"))]
    return "".join(seen) + (out or "") + "\n".join(tails)

