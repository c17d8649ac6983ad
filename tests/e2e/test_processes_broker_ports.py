"""`zkcontroller broker` whose listener or metrics port is taken: Kafka's one fatal line, not a traceback."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port another process (this test) is listening on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield int(s.getsockname()[1])


def start_broker(tmp_path: Path, properties: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "server.properties"
    # Nothing listens on port 1: the broker must fail on its port before it ever tries ZooKeeper.
    config.write_text(f"broker.id=1\nzookeeper.connect=127.0.0.1:1\n{properties}")
    return subprocess.run([sys.executable, "-m", "zkcontroller.cli", "broker", "--config", str(config)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=45)


def test_a_taken_listener_port_is_kafkas_fatal_line(tmp_path: Path, taken_port: int) -> None:
    """It was an OSError traceback (asyncio's create_server), which `cluster --processes` then showed as the
    tail of the broker's log."""
    result = start_broker(tmp_path, f"listeners=PLAINTEXT://127.0.0.1:{taken_port}\n")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last == (f"Error: Socket server failed to bind to 127.0.0.1:{taken_port}: Address already in use."), \
        result.stderr
    assert "Fatal error during KafkaServer startup. Prepare to shutdown" in result.stderr, result.stderr


def test_a_taken_metrics_port_is_one_line(tmp_path: Path, taken_port: int) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        listener = int(s.getsockname()[1])
    result = start_broker(tmp_path, f"listeners=PLAINTEXT://127.0.0.1:{listener}\n"
                                    f"metrics.prometheus.port={taken_port}\n")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last == (f"Error: Prometheus metrics failed to bind to 127.0.0.1:{taken_port}: Address already in use "
                    "(metrics.prometheus.port)."), result.stderr
