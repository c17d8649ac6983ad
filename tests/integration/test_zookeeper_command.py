"""``zkcontroller zookeeper`` keeps its data across restarts (under the user's state directory by default) and
says where; a port out of range is one line of error."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.helpers import tool_missing, wait_until

from zkcontroller.cli import main
from zkcontroller.cluster.zookeeper_server import find_classpath, four_letter_word, free_port
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend

pytestmark = [pytest.mark.zookeeper, pytest.mark.usefixtures("restored_logging")]


@pytest.fixture
def state_home(tmp_path: Path) -> Iterator[dict[str, str]]:
    try:
        find_classpath()
    except Exception as e:
        tool_missing("zookeeper", str(e))
    yield {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}


def _start(port: int, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "zkcontroller.cli", "zookeeper", "--port", str(port)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


async def _stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    return out


async def test_data_survives_a_restart_in_the_default_directory(state_home: dict[str, str]) -> None:
    port = free_port()
    proc = _start(port, state_home)
    try:
        await wait_until(lambda: four_letter_word("127.0.0.1", port, "ruok", 0.5) == "imok", timeout_s=60,
                         what="the ZooKeeper server to answer", poll_s=0.1)
        backend = ZooKeeperBackend(f"127.0.0.1:{port}")
        session = await backend.new_session(6000)
        await session.create("/kept", b"across restarts")
        await session.close()
    finally:
        out = await _stop(proc)
    data_dir = Path(state_home["XDG_STATE_HOME"]) / "zkcontroller" / f"zookeeper-{port}"
    assert f"ZooKeeper data in {data_dir}" in out
    assert data_dir.is_dir()

    proc = _start(port, state_home)
    try:
        await wait_until(lambda: four_letter_word("127.0.0.1", port, "ruok", 0.5) == "imok", timeout_s=60,
                         what="the restarted server to answer", poll_s=0.1)
        session = await ZooKeeperBackend(f"127.0.0.1:{port}").new_session(6000)
        data, _ = await session.get_data("/kept")
        await session.close()
        assert data == b"across restarts"
    finally:
        await _stop(proc)


def test_port_out_of_range_is_one_line() -> None:
    result = CliRunner().invoke(main, ["zookeeper", "--port", "70000"])
    assert result.exit_code == 2
    assert "70000 is not a TCP port (1-65535)" in result.output
    assert "Traceback" not in result.output


def test_port_already_in_use_is_an_error_not_a_false_listening(tmp_path: Path) -> None:
    """Something answering `ruok` on the port (another ZooKeeper) used to pass the readiness probe: the command
    said "ZooKeeper listening", then exited 0 when its own server failed to bind."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]

        def answer_imok() -> None:
            while True:
                try:
                    conn, _ = other.accept()
                except OSError:
                    return
                with conn:
                    conn.recv(4)
                    conn.sendall(b"imok")

        threading.Thread(target=answer_imok, daemon=True).start()
        result = CliRunner().invoke(main, ["zookeeper", "--port", str(port), "--data-dir", str(tmp_path / "zk")])
    assert result.exit_code == 1, result.output
    assert f"port {port} on 127.0.0.1 is already in use" in result.output
    assert "ZooKeeper listening" not in result.output
    assert "Traceback" not in result.output
