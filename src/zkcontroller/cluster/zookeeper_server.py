"""Run a real ZooKeeper server (Debian's ``zookeeper`` package) as a child process on loopback.

Used by the test suite, the benchmarks and ``zkcontroller zookeeper`` for a local ensemble of one. The
server is the real thing, ``org.apache.zookeeper.server.ZooKeeperServerMain``, with a config we write.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from zkcontroller.runtime.poll import poll_until_sync

PORT_POLL_S = 0.1
"""How often a start-up wait asks a ZooKeeper server starting (a JVM: seconds) whether it answers."""

DEBIAN_JAR = Path("/usr/share/java/zookeeper.jar")
MAIN_CLASS = "org.apache.zookeeper.server.ZooKeeperServerMain"


class ZooKeeperNotInstalled(RuntimeError):
    """No ZooKeeper server jar or no java: install Debian's ``zookeeper`` package."""


def find_classpath() -> str:
    """The server's class path: ``$ZOOKEEPER_CLASSPATH``, else Debian's jar (its manifest lists the rest)."""
    env = os.environ.get("ZOOKEEPER_CLASSPATH")
    if env:
        return env
    if DEBIAN_JAR.exists():
        return str(DEBIAN_JAR)
    raise ZooKeeperNotInstalled(
        f"no ZooKeeper server found at {DEBIAN_JAR} and ZOOKEEPER_CLASSPATH is unset (apt-get install zookeeper)"
    )


class PortInUseError(RuntimeError):
    """The client port is taken: starting anyway would let ``ruok`` be answered by whatever holds it."""


def ensure_port_free(port: int) -> None:
    """Fail if something already listens on 127.0.0.1:``port`` (ZooKeeper binds with SO_REUSEADDR too, so a
    port left in TIME_WAIT passes, as it would for the server)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError as e:
            raise PortInUseError(f"port {port} on 127.0.0.1 is already in use ({e.strerror}): another ZooKeeper "
                                 "or service is listening there; pick another --port") from None


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports free now: all held at once while picked, so no two picks are the same
    port (picked one by one and released, two could be). Another process can still take one before it is used:
    pick them as late as possible."""
    with contextlib.ExitStack() as held:
        ports = []
        for _ in range(count):
            s = held.enter_context(socket.socket())
            s.bind(("127.0.0.1", 0))
            ports.append(int(s.getsockname()[1]))
        return ports


def four_letter_word(host: str, port: int, word: str, timeout_s: float = 2.0) -> str:
    """Send one of ZooKeeper's four-letter admin commands and return the answer ('' if unreachable)."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as s:
            s.sendall(word.encode())
            chunks = []
            while chunk := s.recv(4096):
                chunks.append(chunk)
            return b"".join(chunks).decode(errors="replace")
    except OSError:
        return ""


def default_data_dir(port: int) -> Path:
    """Where ``zkcontroller zookeeper`` keeps its data when not told: under the user's state directory
    (``$XDG_STATE_HOME``, else ``~/.local/state``), one directory per port, so it survives restarts as a
    ZooKeeper's data does."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "zkcontroller" / f"zookeeper-{port}"


class ZooKeeperServerProcess:
    """One standalone ZooKeeper server on 127.0.0.1. ``tick_time_ms`` bounds the session timeouts it
    accepts (2 to 20 ticks by default; we widen the upper bound to 60 s)."""

    def __init__(self, data_dir: Path | None = None, port: int | None = None, tick_time_ms: int = 500) -> None:
        self.port = port or free_port()
        self.tick_time_ms = tick_time_ms
        self._own_dir = data_dir is None
        self.data_dir = data_dir or Path(tempfile.mkdtemp(prefix="zkcontroller-zk-"))
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def connect_string(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _write_config(self) -> Path:
        (self.data_dir / "data").mkdir(parents=True, exist_ok=True)
        cfg = self.data_dir / "zoo.cfg"
        cfg.write_text(
            f"tickTime={self.tick_time_ms}\n"
            f"dataDir={self.data_dir / 'data'}\n"
            f"clientPort={self.port}\n"
            "clientPortAddress=127.0.0.1\n"
            f"minSessionTimeout={2 * self.tick_time_ms}\n"
            "maxSessionTimeout=60000\n"
            "maxClientCnxns=0\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=*\n"
            "snapCount=1000000\n"
        )
        return cfg

    def start(self, timeout_s: float = 60.0) -> None:
        java = shutil.which("java")
        if java is None:
            raise ZooKeeperNotInstalled("java not found on PATH")
        ensure_port_free(self.port)  # else the readiness probe below could be answered by another server
        cfg = self._write_config()
        log = (self.data_dir / "zookeeper.out").open("ab")
        self._proc = subprocess.Popen(
            [java, "-Xmx512m", "-cp", find_classpath(), MAIN_CLASS, str(cfg)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            # Out of the caller's process group: a terminal's Ctrl-C must not stop ZooKeeper under brokers that
            # are still shutting down; the caller stops it last (`stop`).
            start_new_session=True,
        )
        proc = self._proc

        def answering() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited with {proc.returncode}; see {log.name}")
            return four_letter_word("127.0.0.1", self.port, "ruok", 0.5) == "imok"

        if poll_until_sync(answering, timeout_s, PORT_POLL_S):  # on the caller's thread (to_thread at the prompt)
            return
        self.stop()
        raise TimeoutError(f"ZooKeeper did not answer on port {self.port} within {timeout_s}s")

    @property
    def pid(self) -> int | None:
        """The server process's id (None: not running here), for a test that pauses it."""
        return self._proc.pid if self._proc is not None else None

    def wait(self) -> int:
        """Block until the server process exits; returns its exit code."""
        assert self._proc is not None, "server not started"
        return self._proc.wait()

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def cleanup(self) -> None:
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> ZooKeeperServerProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
