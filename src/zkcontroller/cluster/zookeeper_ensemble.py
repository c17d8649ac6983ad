"""A ZooKeeper ensemble on loopback (Debian's ``zookeeper``: one QuorumPeerMain per server), for
``zkcontroller cluster --processes N --zookeeper-ensemble M`` and the tests: brokers see a real quorum, and
the prompt can kill and restart single servers (zk-kill, zk-start) to watch sessions move between them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from zkcontroller.cluster.zookeeper_server import (
    PORT_POLL_S,
    ZooKeeperNotInstalled,
    find_classpath,
    four_letter_word,
    free_ports,
)
from zkcontroller.runtime.poll import poll_until_sync

QUORUM_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"


class ZooKeeperEnsemble:
    def __init__(self, directory: Path, size: int = 3, tick_time_ms: int = 500) -> None:
        self.directory = directory
        self.ids = list(range(1, size + 1))
        ports = iter(free_ports(3 * len(self.ids)))
        self.client_ports = {i: next(ports) for i in self.ids}
        self.peer_ports = {i: (next(ports), next(ports)) for i in self.ids}
        self.tick_time_ms = tick_time_ms
        self.processes: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def connect_string(self) -> str:
        return ",".join(f"127.0.0.1:{self.client_ports[i]}" for i in self.ids)

    def _config(self, i: int) -> Path:
        data = self.directory / f"zk{i}"
        data.mkdir(parents=True, exist_ok=True)
        (data / "myid").write_text(f"{i}\n")
        servers = "".join(f"server.{j}=127.0.0.1:{q}:{e}\n" for j, (q, e) in self.peer_ports.items())
        cfg = data / "zoo.cfg"
        cfg.write_text(f"tickTime={self.tick_time_ms}\ninitLimit=20\nsyncLimit=10\ndataDir={data}\n"
                       f"clientPort={self.client_ports[i]}\nclientPortAddress=127.0.0.1\n"
                       f"minSessionTimeout={2 * self.tick_time_ms}\nmaxSessionTimeout=60000\n"
                       "admin.enableServer=false\n4lw.commands.whitelist=*\n" + servers)
        return cfg

    def start(self, timeout_s: float = 90.0) -> None:
        """Start every server and wait (bounded) until they have formed a quorum with one leader."""
        self.directory.mkdir(parents=True, exist_ok=True)
        for i in self.ids:
            self.start_server(i)
        def formed() -> bool:
            if len(self.ids) == 1:  # a lone server runs standalone: no leader or follower ever shows
                return self.mode(self.ids[0]) == "standalone"
            return self.leader() is not None and all(self.mode(i) in ("leader", "follower") for i in self.ids)

        if poll_until_sync(formed, timeout_s, PORT_POLL_S):  # on the caller's thread (to_thread at the prompt)
            return
        raise TimeoutError(f"the ensemble did not form within {timeout_s}s")

    def _check_exists(self, i: int) -> None:
        """A server this ensemble does not have is named as such ("not running" would suggest zk-start brings it),
        with the servers it has."""
        if i not in self.ids:
            raise ValueError(f"ZooKeeper server {i} does not exist: the ensemble has servers "
                             f"{', '.join(map(str, self.ids))}")

    def start_server(self, i: int) -> None:
        """Start server ``i`` (again, after a kill): it rejoins the quorum with its data."""
        self._check_exists(i)
        running = self.processes.get(i)
        if running is not None and running.poll() is None:
            raise ValueError(f"ZooKeeper server {i} is already running (pid {running.pid})")
        java = shutil.which("java")
        if java is None:
            raise ZooKeeperNotInstalled("java not found on PATH")
        command = [java, "-Xmx256m", "-cp", find_classpath(), QUORUM_MAIN, str(self._config(i))]
        with (self.directory / f"zk{i}.out").open("ab") as log:
            # A session of its own, as a single server's: Ctrl-C reaches the cluster command alone, which stops
            # the ensemble after the brokers.
            self.processes[i] = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                                 stdin=subprocess.DEVNULL, start_new_session=True)

    def status_lines(self) -> list[str]:
        """One line per server: address, pid, and its role as it reports it (``srvr``)."""
        lines = []
        for i in self.ids:
            p = self.processes.get(i)
            alive = p is not None and p.poll() is None
            role = (self.mode(i) or "not serving") if alive else "stopped"
            pid = p.pid if alive and p is not None else "-"
            lines.append(f"zookeeper {i}: 127.0.0.1:{self.client_ports[i]}, pid {pid}, {role}")
        return lines

    def mode(self, i: int) -> str | None:
        for line in four_letter_word("127.0.0.1", self.client_ports[i], "srvr", 1.0).splitlines():
            if line.startswith("Mode:"):
                return line.split(":", 1)[1].strip()
        return None

    def leader(self) -> int | None:
        return next((i for i in self.ids if i in self.processes and self.processes[i].poll() is None
                     and self.mode(i) == "leader"), None)

    def kill(self, i: int) -> None:
        """SIGKILL server ``i`` (a crashed ZooKeeper host)."""
        self._check_exists(i)
        p = self.processes.get(i)
        if p is None or p.poll() is not None:
            raise ValueError(f"ZooKeeper server {i} is not running")
        p.kill()
        p.wait(10)

    def stop(self) -> None:
        for p in self.processes.values():
            if p.poll() is None:
                p.terminate()
        for p in self.processes.values():
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
