"""Usage errors at the `cluster --processes` prompt: one line that says what to type, not Python's wording."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from zkcontroller.cluster.process_cluster import ProcessCluster, ProcessClusterShell
from zkcontroller.cluster.zookeeper_ensemble import ZooKeeperEnsemble
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


@pytest.mark.parametrize(("line", "what"), [("create orders x", "PARTITIONS"), ("create orders 3 two", "RF"),
                                            ("create orders --5", "PARTITIONS")])
async def test_a_count_that_is_not_a_number_is_a_usage_line(tmp_path: Path, line: str, what: str) -> None:
    """It was ``error: invalid literal for int() with base 10: 'x'`` (and still was for ``--5``); the words are the
    in-process prompt's (`prompt_verbs`)."""
    backend = EmbeddedBackend(wall_clock_ms)
    session = await backend.new_session()
    out: list[str] = []
    shell = ProcessClusterShell(ProcessCluster([1, 2, 3], tmp_path), KafkaZkClient(session, wall_clock_ms),
                                out.append)  # never started: a usage error reaches no broker and no store
    try:
        assert await shell.run_command(line)
    finally:
        await session.close()
        await backend.close()
    assert out == [f"error: {what} must be a whole number, got {line.split()[-1]!r}; "
                   "usage: create TOPIC [PARTITIONS [RF]]"]


@pytest.mark.parametrize(("line", "error"), [
    ("status extra", "status takes no arguments, got 'extra'; usage: status"),
    ("zk-status all", "zk-status takes no arguments, got 'all'; usage: zk-status"),
    ("quit now", "quit takes no arguments, got 'now'; usage: quit"),
    ("describe a b", "usage: describe [TOPIC]"),
    ("create orders 2 2 compact", "usage: create TOPIC [PARTITIONS [RF]]"),
])
async def test_extra_words_are_a_usage_line(tmp_path: Path, line: str, error: str) -> None:
    """They were dropped without a sign (``status extra`` printed the status; ``describe a b`` described a)."""
    backend = EmbeddedBackend(wall_clock_ms)
    session = await backend.new_session()
    out: list[str] = []
    shell = ProcessClusterShell(ProcessCluster([1, 2, 3], tmp_path), KafkaZkClient(session, wall_clock_ms),
                                out.append)  # never started: a usage error reaches no broker
    try:
        assert await shell.run_command(line)
    finally:
        await session.close()
        await backend.close()
    assert out == [f"error: {error}"]


async def test_an_unknown_verb_is_one_line_naming_the_verbs(tmp_path: Path) -> None:
    """It printed "unknown command 'foo'" and then the 11 lines of help, burying the mistake typed."""
    backend = EmbeddedBackend(wall_clock_ms)
    session = await backend.new_session()
    out: list[str] = []
    shell = ProcessClusterShell(ProcessCluster([1, 2, 3], tmp_path), KafkaZkClient(session, wall_clock_ms),
                                out.append)
    try:
        assert await shell.run_command("expire 1")  # the in-process prompt's verb
    finally:
        await session.close()
        await backend.close()
    assert out == ["error: unknown command 'expire'; commands: status, create, describe, stop, kill, pause, resume, "
                   "start, elect, delete, zk-status, zk-kill, zk-start, help, quit (`help` says what each does)"]


def test_zk_kill_of_a_server_the_ensemble_does_not_have_names_its_servers(tmp_path: Path) -> None:
    """It said ``ZooKeeper server 9 is not running``, as if it were one that could be started; zk-start says the
    same."""
    ensemble = ZooKeeperEnsemble(tmp_path, 3)  # not started: the check comes first
    with pytest.raises(ValueError, match=r"^ZooKeeper server 9 does not exist: the ensemble has servers 1, 2, 3$"):
        ensemble.kill(9)
    with pytest.raises(ValueError, match=r"^ZooKeeper server 9 does not exist: the ensemble has servers 1, 2, 3$"):
        ensemble.start_server(9)


def _stand_in() -> subprocess.Popen[bytes]:
    """A process the verbs can signal, in place of a broker."""
    return subprocess.Popen(["sleep", "60"])


async def test_signal_verbs_say_what_happened(tmp_path: Path) -> None:
    """``stop N: done`` came at once after SIGTERM, while the broker was still in its controlled shutdown, and
    ``resume N: done`` on a broker that was not paused."""
    backend = EmbeddedBackend(wall_clock_ms)
    session = await backend.new_session()
    out: list[str] = []
    cluster = ProcessCluster([1], tmp_path)
    stand_in = _stand_in()
    cluster.brokers[1].process = stand_in
    shell = ProcessClusterShell(cluster, KafkaZkClient(session, wall_clock_ms), out.append)
    try:
        for line in ("resume 1", "pause 1", "pause 1", "resume 1", "stop 1"):
            assert await shell.run_command(line)
        assert stand_in.wait(10) == -15  # the stop's SIGTERM
    finally:
        if stand_in.poll() is None:
            stand_in.kill()
            stand_in.wait()
        await session.close()
        await backend.close()
    assert out == ["error: broker 1 is not paused (running)", "pause 1: done", "error: broker 1 is already paused",
                   "resume 1: done",
                   "stop 1: controlled shutdown under way (`status` shows it stopping until the process exits)"]
