"""``zkcontroller cluster --zookeeper ... --port-base 0`` as a user runs it: in-process brokers on free loopback
ports that kcat reads, that ``reassign --verify --check-brokers`` asks, that the prompt's ``kill``/``start`` close
and reopen, and that ``quit`` closes. Every wait is on a condition with a bound."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.helpers import tool_missing

from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(240)]

KCAT = shutil.which("kcat")
CLI = [sys.executable, "-m", "zkcontroller.cli"]


class Prompt:
    """The cluster command, its output read on a thread so every wait for a line has a bound."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def send(self, command: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def expect(self, pattern: str, timeout_s: float = 60.0) -> re.Match[str]:
        """The next line matching ``pattern`` (after any "> " prompts before it)."""
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(line)
            if found := re.search(pattern, re.sub(r"^(> )+", "", line)):
                return found
        raise AssertionError(f"no line matching {pattern!r} within {timeout_s} s:\n" + "\n".join(self.seen))


@pytest.fixture
def cluster_prompt(zookeeper_server: ZooKeeperServerProcess, tmp_path: Path) -> Iterator[tuple[Prompt, str]]:
    if KCAT is None:
        tool_missing("kcat", "not on PATH (the wire end-to-end tests need it)")
    connect = f"{zookeeper_server.connect_string}/listeners-{os.getpid()}-{time.monotonic_ns()}"
    prompt = Prompt([*CLI, "cluster", "--brokers", "3", "--zookeeper", connect, "--port-base", "0",
                     "--session-timeout-ms", "6000", "--log-dir", str(tmp_path / "logs")])
    try:
        yield prompt, connect
    finally:
        if prompt.proc.poll() is None:
            prompt.proc.kill()
        prompt.proc.wait(30)


def kcat(address: str) -> dict | None:
    assert KCAT is not None
    done = subprocess.run([KCAT, "-L", "-J", "-b", address, "-m", "3"], capture_output=True, text=True, timeout=20)
    return json.loads(done.stdout) if done.returncode == 0 and done.stdout.strip() else None


def wait_for(check: Callable[[], object], what: str, timeout_s: float = 60.0) -> object:
    deadline = time.monotonic() + timeout_s
    while not (result := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.2)  # polling a condition with a bound, across processes
    return result


def refused(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=30).close()
    except ConnectionRefusedError:
        return True
    return False


def test_cluster_command_serves_kcat_and_reassign_check_brokers(cluster_prompt: tuple[Prompt, str],
                                                                tmp_path: Path) -> None:
    prompt, connect = cluster_prompt
    prompt.expect(r"^cluster up: brokers 1, 2, 3")
    listening = {int(m[1]): m[2] for m in (prompt.expect(rf"^broker ({b}) listens on (127\.0\.0\.1:\d+)$")
                                           for b in (1, 2, 3))}
    prompt.expect(r"^  help \| quit")
    prompt.send("create moving 1 2")
    prompt.expect(r"^1 of 1 partitions have a leader\.", 60)

    def led(address: str, exclude: int = -1) -> dict | None:
        md = kcat(address)
        parts = [p for t in (md or {}).get("topics", []) if t["topic"] == "moving" for p in t["partitions"]]
        return md if parts and all(p["leader"] not in (-1, exclude) for p in parts) else None

    md = wait_for(lambda: led(listening[3]), "kcat to show moving led")
    assert isinstance(md, dict)
    assert {b["id"]: b["name"] for b in md["brokers"]} == listening
    (partition,) = md["topics"][0]["partitions"]
    current = [r["id"] for r in partition["replicas"]]
    target = [current[1], next(b for b in (1, 2, 3) if b not in current)]

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "moving", "partition": 0,
                                                              "replicas": target}]}))
    executed = subprocess.run([*CLI, "reassign", "--execute", "--reassignment-json-file", str(plan),
                               "--zookeeper", connect], capture_output=True, text=True, timeout=60)
    assert executed.returncode == 0, executed.stdout + executed.stderr

    def verified() -> bool:
        done = subprocess.run([*CLI, "reassign", "--verify", "--check-brokers", "--reassignment-json-file",
                               str(plan), "--zookeeper", connect], capture_output=True, text=True, timeout=60)
        assert "Could not ask" not in done.stdout, done.stdout  # every broker answers on its listener
        return "Reassignment of partition moving-0 is complete." in done.stdout

    wait_for(verified, "reassign --verify --check-brokers to report complete", 90)

    md = wait_for(lambda: led(listening[1]), "moving led")
    assert isinstance(md, dict)
    leader = int(md["topics"][0]["partitions"][0]["leader"])
    survivor = next(b for b in (1, 2, 3) if b != leader)
    prompt.send(f"kill {leader}")
    prompt.expect(rf"^kill {leader}: done")
    assert refused(listening[leader])
    wait_for(lambda: led(listening[survivor], exclude=leader), f"broker {survivor} to show a leader other than "
             f"killed broker {leader}")
    prompt.send(f"start {leader}")
    prompt.expect(rf"^start {leader}: done", 60)
    prompt.send("status")
    for b, address in listening.items():  # the restarted broker is back on the port it registered before
        prompt.expect(rf"^broker {b} listens on {re.escape(address)}$")
    wait_for(lambda: (m := kcat(listening[leader])) and {b["id"] for b in m["brokers"]} == {1, 2, 3},
             "the restarted broker to answer with every broker")

    prompt.send("quit")
    assert prompt.proc.wait(60) == 0
    assert all(refused(address) for address in listening.values())
