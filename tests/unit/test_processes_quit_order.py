"""`ProcessCluster.stop` (``quit`` at the ``cluster --processes`` prompt) stops the brokers one at a time, the one
whose ActiveControllerCount metric is 1 last, resumes paused ones first, and SIGKILLs one that overruns its bound
or the bound for all, saying so. Stand-in processes: a sleeper per broker, and a metrics endpoint for the
controller's (tests/cluster/test_processes_quit_order.py runs the real brokers)."""

from __future__ import annotations

import http.server
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from zkcontroller.cluster import process_cluster
from zkcontroller.cluster.process_cluster import ACTIVE_CONTROLLER_COUNT, TEARDOWN_SIGNAL, ProcessCluster

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]
STUBBORN = [sys.executable, "-c", f"import signal, sys, time; signal.signal({int(TEARDOWN_SIGNAL)}, signal.SIG_IGN); "
            "print('ready', flush=True); time.sleep(120)"]
"""A broker that ignores the stop: only SIGKILL ends it (it says ``ready`` once the signal is ignored)."""


@pytest.fixture
def controller_metrics() -> Iterator[int]:
    """A /metrics endpoint that says its broker is the active controller; its port."""
    class Metrics(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = f"# TYPE {ACTIVE_CONTROLLER_COUNT} gauge\n{ACTIVE_CONTROLLER_COUNT} 1.0\n".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Metrics)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def started(cluster: ProcessCluster, command: list[str]) -> None:
    for b in cluster.brokers.values():
        b.process = subprocess.Popen(command, stdout=subprocess.PIPE)
        assert b.process.stdout is not None
        if command is STUBBORN:
            assert b.process.stdout.readline() == b"ready\n"


def test_the_controller_is_stopped_last_and_a_paused_broker_is_resumed_first(tmp_path: Path,
                                                                             controller_metrics: int) -> None:
    cluster = ProcessCluster([1, 2, 3], tmp_path)
    cluster.brokers[1].metrics_port = controller_metrics
    started(cluster, SLEEPER)
    cluster.signal(2, signal.SIGSTOP)  # paused: it could not act on the stop (the wait ran into its bound)
    said: list[str] = []
    try:
        cluster.stop(said.append)
    finally:
        for b in cluster.brokers.values():
            assert b.process is not None
            b.process.kill()
            b.process.wait()
    pids = {i: b.process.pid for i, b in cluster.brokers.items() if b.process is not None}
    assert said == [f"stopping broker 2 (pid {pids[2]})", f"stopping broker 3 (pid {pids[3]})",
                    f"stopping broker 1 (pid {pids[1]}), the controller, last", "all brokers stopped"]
    assert all(b.process is not None and b.process.returncode == -TEARDOWN_SIGNAL for b in cluster.brokers.values())


def test_a_broker_that_does_not_stop_is_killed_within_its_bound_and_the_others_are_stopped_together(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first broker overruns its own bound; the others, stopped together then, the bound for all. One at a
    time, with ZooKeeper gone, each waited out its bound in turn."""
    monkeypatch.setattr(process_cluster, "STOP_BOUND_S", 0.5)
    monkeypatch.setattr(process_cluster, "STOP_ALL_BOUND_S", 0.75)
    cluster = ProcessCluster([1, 2, 3], tmp_path)
    started(cluster, STUBBORN)
    said: list[str] = []
    cluster.stop(said.append)
    assert [line.split(" (pid")[0] for line in said] == [
        "stopping broker 1", "broker 1 did not stop within 0.5 s: killing it",
        "stopping the other brokers together: a controlled shutdown that does not end within its bound means "
        "ZooKeeper or the controller does not answer, and theirs would wait as long",
        "stopping broker 2", "stopping broker 3",
        "broker 2 did not stop before the stop's bound of 0.75 s for all brokers ran out: killing it",
        "broker 3 did not stop before the stop's bound of 0.75 s for all brokers ran out: killing it",
        "all brokers stopped"]
    assert all(b.process is not None and b.process.returncode == -signal.SIGKILL for b in cluster.brokers.values())
