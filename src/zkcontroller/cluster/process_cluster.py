"""``zkcontroller cluster --processes N``: N broker processes (``zkcontroller broker``) against a real
ZooKeeper, started here when none is given, driven from a prompt.

Every broker gets its own ``server.properties`` and log file in the cluster's directory. The prompt sends
Unix signals, as an operator would: stop = SIGTERM (orderly), kill = SIGKILL (hard failure, the session
times out), pause = SIGSTOP and resume = SIGCONT (a stalled process: the seed articles' split brain).
Status and describe read ZooKeeper; any Kafka tool (``kcat -L -b``) reads the brokers themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zkcontroller.admin.describe import controller_status
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.preferred_election import ELECTION_WAIT_S, elect_preferred, elect_targets
from zkcontroller.cluster.prompt_help import PROCESSES, prompt_error_text
from zkcontroller.cluster.prompt_input import read_line
from zkcontroller.cluster.prompt_verbs import TopicVerbs
from zkcontroller.cluster.server_properties import render
from zkcontroller.cluster.zk_outage import ADMIN_WRITES, connection_lost, outcome_text, recorded
from zkcontroller.cluster.zookeeper_ensemble import ZooKeeperEnsemble
from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess, free_port, free_ports
from zkcontroller.coordination.api import CoordinationSession, SessionState
from zkcontroller.coordination.connect import make_backend
from zkcontroller.coordination.errors import ZkError
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.runtime.poll import poll_until
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

COMMANDS = PROCESSES
"""The prompt's verbs: ``help`` prints the table, an unknown verb's error lists them, each verb's usage error is
its row's (`ProcessClusterShell.handlers` must serve exactly these)."""

HELP = COMMANDS.help()

STOP_BOUND_S = 20.0
"""How long ``stop`` lets one broker's controlled shutdown run before SIGKILL (Kafka's three attempts with their
5 s back-offs take 10 s when the controller cannot move the broker's leadership)."""

STOP_ALL_BOUND_S = 60.0
"""How long ``stop`` takes at most for all the brokers, stopped one after another."""

TEARDOWN_SIGNAL = signal.SIGUSR1
"""What ``stop`` sends each broker: `broker_process.run_broker`'s stop as one step of stopping the whole cluster."""

ACTIVE_CONTROLLER_COUNT = "kafka_controller_kafkacontroller_activecontrollercount"
"""The metric (Kafka's ActiveControllerCount) by which ``stop`` finds the controller, to stop it last."""


class StartupError(Exception):
    """The cluster could not start; the message is what the command prints (one line, or a broker's log tail)."""


def log_tail(path: Path, lines: int = 10) -> str:
    """The last ``lines`` lines of a broker's log file, indented, for an error that points at it."""
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        return f"  ({e})"
    return "\n".join(f"  {line}" for line in text.splitlines()[-lines:])


SESSION_CLOSE_WAIT_S = 5.0
"""How long a command that gave up waits for the admin session to close (kazoo's thread stops within its retry
delay, a second, or a connection attempt's timeout); the close goes on after it in any case."""

REGISTERED_POLL_S = 0.1
"""How often the start-up wait reads the registrations (processes starting take seconds)."""

SIGNALS = {"stop": signal.SIGTERM, "kill": signal.SIGKILL, "pause": signal.SIGSTOP, "resume": signal.SIGCONT}


@dataclass
class BrokerProc:
    broker_id: int
    port: int
    config: Path
    log: Path
    metrics_port: int
    process: subprocess.Popen[bytes] | None = None
    paused: bool = False
    stopping: bool = False
    """SIGTERM sent: the broker is in its controlled shutdown until it exits."""
    exit_expected: bool = False
    """Stopped or killed through the prompt, or its exit already reported: `unexpected_exits` skips it."""

    @property
    def state(self) -> str:
        if self.process is None:
            return "not started"
        code = self.process.poll()
        if code is not None:
            return f"exited ({code})"
        if self.stopping:
            return "stopping"
        return "paused" if self.paused else "running"


class ProcessCluster:
    """Broker processes on loopback; ``zookeeper`` None starts a ZooKeeper server of our own."""

    def __init__(self, broker_ids: list[int], directory: Path | None = None, zookeeper: str | None = None,
                 session_timeout_ms: int = 18000, racks: dict[int, str] | None = None,
                 extra: dict[str, str] | None = None, zookeeper_ensemble: int | None = None) -> None:
        if zookeeper is not None and zookeeper_ensemble is not None:
            raise ValueError("give either a ZooKeeper to use or the size of an ensemble to start, not both")
        self.directory = directory or Path(tempfile.mkdtemp(prefix="zkcontroller-processes-"))
        self.directory.mkdir(parents=True, exist_ok=True)
        self._own_zk: ZooKeeperServerProcess | None = None
        self.ensemble_size = zookeeper_ensemble
        self.ensemble: ZooKeeperEnsemble | None = None
        self._zk_connect = zookeeper
        self.session_timeout_ms = session_timeout_ms
        self.racks = racks or {}
        self.extra = extra or {}
        self.brokers: dict[int, BrokerProc] = {}
        for broker_id in sorted(broker_ids):
            port = free_port()
            self.brokers[broker_id] = BrokerProc(broker_id, port, self.directory / f"server-{broker_id}.properties",
                                                 self.directory / f"broker-{broker_id}.log", free_port())

    @property
    def zookeeper_connect(self) -> str:
        assert self._zk_connect is not None, "not started"
        return self._zk_connect

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{b.port}" for b in self.brokers.values())

    def start(self) -> None:
        self.start_zookeeper()
        self.start_brokers()

    def start_zookeeper(self) -> None:
        """Start a ZooKeeper (or an ensemble) here unless one was given."""
        if self._zk_connect is None and self.ensemble_size is not None:
            self.ensemble = ZooKeeperEnsemble(self.directory / "zookeeper-ensemble", self.ensemble_size)
            self.ensemble.start()
            self._zk_connect = f"{self.ensemble.connect_string}/kafka"
            self._repick_broker_ports()
        if self._zk_connect is None:
            self._own_zk = ZooKeeperServerProcess(self.directory / "zookeeper")
            self._own_zk.start()
            self._zk_connect = f"{self._own_zk.connect_string}/kafka"
            self._repick_broker_ports()

    def _repick_broker_ports(self) -> None:
        """New ports for the brokers never started, once a ZooKeeper of our own has taken its ports: those picked
        at construction were released, and the ZooKeeper's could land on them (a broker then failed to bind its
        metrics port). Given a ZooKeeper, the construction's ports stay, so they can be known before start."""
        fresh = [b for b in self.brokers.values() if b.process is None]
        ports = iter(free_ports(2 * len(fresh)))
        for b in fresh:
            b.port, b.metrics_port = next(ports), next(ports)

    def start_brokers(self) -> None:
        for broker_id in self.brokers:
            self.start_broker(broker_id)

    def exited_broker(self) -> StartupError | None:
        """A broker process that has already exited (during start-up: a bad config, a taken port), with the
        tail of its log, which says why."""
        for b in self.brokers.values():
            code = b.process.poll() if b.process is not None else None
            if code is not None:
                return StartupError(f"broker {b.broker_id} exited with {code} during start-up "
                                    f"(last lines of {b.log}):\n{log_tail(b.log)}")
        return None

    def _properties(self, b: BrokerProc) -> dict[str, str]:
        values = {"broker.id": str(b.broker_id), "listeners": f"PLAINTEXT://127.0.0.1:{b.port}",
                  "zookeeper.connect": self.zookeeper_connect,
                  "zookeeper.session.timeout.ms": str(self.session_timeout_ms),
                  "log.dirs": str(self.directory / f"kafka-logs-{b.broker_id}"),
                  "metrics.prometheus.port": str(b.metrics_port)}
        if b.broker_id in self.racks:
            values["broker.rack"] = self.racks[b.broker_id]
        return {**values, **self.extra}

    def start_broker(self, broker_id: int) -> None:
        b = self.brokers.get(broker_id)
        if b is None:  # a KeyError here ended the prompt
            raise ValueError(f"no broker {broker_id}: this prompt restarts only its brokers "
                             f"({', '.join(map(str, self.brokers))})")
        if b.process is not None and b.process.poll() is None:
            if b.stopping:
                raise ValueError(f"broker {broker_id} is still in its controlled shutdown (pid {b.process.pid}); "
                                 "start it again once it has exited (`status` shows when)")
            raise ValueError(f"broker {broker_id} is already running (pid {b.process.pid})")
        b.config.write_text(render(self._properties(b)))
        with b.log.open("ab") as log:
            command = [sys.executable, "-m", "zkcontroller.cli", "broker", "--config", str(b.config)]
            # Unbuffered: the log is read while the broker runs, and a kill -9 must not drop its last lines.
            # A session of its own: a terminal's Ctrl-C reaches this command alone, which stops the brokers
            # before ZooKeeper (sharing its process group, all got SIGINT at once and ZooKeeper was gone before
            # the brokers' controlled shutdowns could reach it).
            b.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True)
        b.paused = b.stopping = b.exit_expected = False

    def signal(self, broker_id: int, sig: signal.Signals) -> None:
        b = self.brokers.get(broker_id)
        if b is None:
            raise ValueError(f"no broker {broker_id}")
        if b.process is None or b.process.poll() is not None:
            raise ValueError(f"broker {broker_id} is not running ({b.state})")
        if sig is signal.SIGCONT and not b.paused:  # "resume N: done" said nothing true
            raise ValueError(f"broker {broker_id} is not paused ({b.state})")
        if sig is signal.SIGSTOP and b.paused:
            raise ValueError(f"broker {broker_id} is already paused")
        if b.paused and sig is signal.SIGTERM:
            b.process.send_signal(signal.SIGCONT)  # a stopped process cannot act on SIGTERM
        b.exit_expected = b.exit_expected or sig in (signal.SIGTERM, signal.SIGKILL)
        b.process.send_signal(sig)
        if sig is signal.SIGKILL:
            # Reaped here, so that "kill N: done" is true and a `start N` right after it starts the broker (it
            # saw the unreaped process as running). SIGKILL ends a process at once: the bound is never reached.
            b.process.wait(10)
        if sig is signal.SIGSTOP:
            b.paused = True
        elif sig in (signal.SIGCONT, signal.SIGTERM):
            b.paused = False
        b.stopping = b.stopping or sig is signal.SIGTERM

    def unexpected_exits(self) -> list[str]:
        """Brokers that exited without the prompt's stop or kill (a crash, an outside kill -9), each reported
        once with its log's tail: only `status` used to show them."""
        reports = []
        for b in self.brokers.values():
            code = b.process.poll() if b.process is not None else None
            if code is None or b.exit_expected or b.process is None:
                continue
            b.exit_expected = True
            reports.append(f"broker {b.broker_id} (pid {b.process.pid}) exited with {code}, not through this "
                           f"prompt (last lines of {b.log}):\n{log_tail(b.log)}")
        return reports

    def wait_exit(self, broker_id: int, timeout_s: float = 30.0) -> int:
        process = self.brokers[broker_id].process
        assert process is not None
        return process.wait(timeout_s)

    def stop(self, progress: Callable[[str], None] | None = None) -> None:
        """Stop every broker (`stop_brokers`), then our ZooKeeper."""
        self.stop_brokers(progress)
        if self._own_zk is not None:
            self._own_zk.cleanup()
            self._own_zk = None
        if self.ensemble is not None:
            self.ensemble.stop()
            self.ensemble = None

    def stop_brokers(self, progress: Callable[[str], None] | None = None) -> None:
        """Stop the brokers as an operator stops a cluster cleanly (Kafka's rolling-stop advice): one at a time,
        each waiting for that broker's controlled shutdown to end, the active controller last. SIGTERM to all at
        once made every broker shut down together: the controller excluded all of them as shutting down, so none
        could take another's leadership, their controlled shutdowns retried and ended uncleanly, and `zkcontroller
        analyze` reported that for a plain ``quit``. The signal is `TEARDOWN_SIGNAL`, SIGTERM's stop without the
        retries that cannot help once the partners of a broker's partitions have stopped (the in-process ``quit``
        skips them too); a broker still in a ``stop N``'s controlled shutdown gets it as well. Each broker gets
        at most `STOP_BOUND_S`, all together at most `STOP_ALL_BOUND_S`; one that overruns is SIGKILLed, and the
        rest are then stopped together, within one more `STOP_BOUND_S` (a stuck controlled shutdown means
        ZooKeeper or the controller does not answer, and the next one would wait as long). ``progress`` (the
        prompt's ``quit``) is told so, as it is told which broker is stopped and, once the brokers
        are down, ``all brokers stopped``, as the in-process cluster says. Paused brokers are resumed first: a
        paused controller would leave the others' controlled shutdowns unanswered."""
        say = progress or (lambda _line: None)
        deadline = time.monotonic() + STOP_ALL_BOUND_S
        for b in self.brokers.values():
            if b.paused and b.process is not None and b.process.poll() is None:
                b.process.send_signal(signal.SIGCONT)
                b.paused = False
        controllers = {b.broker_id for b in self.brokers.values() if self._is_controller(b)}
        order = self._stop_order(controllers)
        for n, b in enumerate(order):
            self._begin_stop(b, controllers, say)
            if self._end_stop(b, min(deadline, time.monotonic() + STOP_BOUND_S), deadline, say):
                continue
            rest = [r for r in order[n + 1:] if r.process is not None and r.process.poll() is None]
            if rest:  # ZooKeeper gone: each broker waited out its bound in turn, 60 s where it had been 20
                say("stopping the other brokers together: a controlled shutdown that does not end within its bound "
                    "means ZooKeeper or the controller does not answer, and theirs would wait as long")
            for r in rest:
                self._begin_stop(r, controllers, say, last="")
            together = min(deadline, time.monotonic() + STOP_BOUND_S)
            for r in rest:
                self._end_stop(r, together, deadline, say)
            break
        if any(b.process is not None for b in self.brokers.values()):  # none when start-up failed before them
            say("all brokers stopped")

    @staticmethod
    def _begin_stop(b: BrokerProc, controllers: set[int], say: Callable[[str], None], last: str = ", last") -> None:
        """Send broker ``b`` `TEARDOWN_SIGNAL` unless it has exited, saying so (and that it is the controller)."""
        assert b.process is not None
        if b.process.poll() is None:
            what = f", the controller{last}" if b.broker_id in controllers else ""
            say(f"stopping broker {b.broker_id} (pid {b.process.pid}){what}")
            b.exit_expected = b.stopping = True
            b.process.send_signal(TEARDOWN_SIGNAL)

    @staticmethod
    def _end_stop(b: BrokerProc, until: float, deadline: float, say: Callable[[str], None]) -> bool:
        """Wait until ``until`` (monotonic) for broker ``b`` to exit; SIGKILL it then, saying which bound it
        overran (``deadline``: the one for all brokers). Whether it stopped in time."""
        assert b.process is not None
        try:
            b.process.wait(max(0.0, until - time.monotonic()))
            return True
        except subprocess.TimeoutExpired:
            say(f"broker {b.broker_id} did not stop within {STOP_BOUND_S:g} s: killing it" if until < deadline
                else f"broker {b.broker_id} did not stop before the stop's bound of {STOP_ALL_BOUND_S:g} s for all "
                     "brokers ran out: killing it")
            b.process.kill()
            b.process.wait()
            return False

    def _stop_order(self, controllers: set[int]) -> list[BrokerProc]:
        """The started brokers in the order `stop_brokers` stops them: those already stopping first (a ``stop N``
        still in its controlled shutdown), then by id, ``controllers`` (the active one: two only in a split
        brain) last."""
        started = [b for b in self.brokers.values() if b.process is not None]
        return sorted(started, key=lambda b: (not b.stopping, b.broker_id in controllers, b.broker_id))

    def _is_controller(self, b: BrokerProc) -> bool:
        """Whether broker ``b`` is the active controller, read as an operator reads it: its ActiveControllerCount
        metric is 1. False when it is not running or its metrics do not answer within a second."""
        if b.process is None or b.process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{b.metrics_port}/metrics", timeout=1.0) as answer:
                text = answer.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return False
        return any(line.split()[-1:] == ["1.0"] for line in text.splitlines()
                   if line.startswith(f"{ACTIVE_CONTROLLER_COUNT} "))


class ProcessClusterShell:
    def __init__(self, cluster: ProcessCluster, admin: KafkaZkClient, out: Callable[[str], None] = print,
                 zk_timeout_s: float = 10.0,
                 reopen: Callable[[], Awaitable[CoordinationSession]] | None = None) -> None:
        """``reopen``: a new ZooKeeper session, for the next command after a write that gave up was dropped by
        closing the admin session (`_bounded`); without it such a write is left to the client, and may land."""
        self.cluster = cluster
        self.zk_timeout_s = zk_timeout_s
        self.admin = admin
        self.recorder = recorded(admin)  # which writes a command sent, for what it says if ZooKeeper goes
        self._reopen = reopen
        self.topics = TopicAdmin(admin, random.Random())
        self.out = out
        # through self.out, which the demo swaps to collect a step's lines
        self.verbs = TopicVerbs(admin, self.topics, lambda line: self.out(line), COMMANDS, admin.get_sorted_broker_list)

    async def _create(self, args: list[str]) -> None:
        await self.verbs.create(args)  # the brokers' controller gives the partitions leaders: `describe` shows them

    async def run_command(self, line: str) -> bool:
        """Run one command line; False when the user asked to quit. A verb's refusal, or a signal or ZooKeeper
        that fails it, is printed and the prompt goes on."""
        return await COMMANDS.run_line(line, self.handlers(), self.out, prompt_error_text, self.elsewhere())

    def elsewhere(self) -> dict[str, str]:
        """The in-process prompt's verbs this one lacks, each with how to do it against these brokers instead."""
        bootstrap = self.cluster.bootstrap
        return {
            "produce": f"the brokers are processes here: produce with a Kafka client against their listeners, "
                       f"e.g. kcat -P -b {bootstrap} -t TOPIC",
            "fail-log-dir": "a broker process's log dirs cannot be failed from outside it: use the in-process "
                            "prompt (zkcontroller cluster, without --processes)",
        }

    def handlers(self) -> dict[str, Callable[[list[str]], Awaitable[None]]]:
        """Each verb's handler, called with its arguments: the verbs of `COMMANDS` but ``quit``, which
        `run_command` answers itself (as ``exit``)."""
        handlers: dict[str, Callable[[list[str]], Awaitable[None]]] = {"help": self._help}
        for verb, command in (("status", self._status), ("create", self._create), ("describe", self.verbs.describe),
                              ("elect", self._elect), ("delete", self.verbs.delete)):
            handlers[verb] = functools.partial(self._bounded, verb, command)
        for verb in ("zk-status", "zk-kill", "zk-start"):
            handlers[verb] = functools.partial(self._zookeeper_command, verb)
        for verb in (*SIGNALS, "start"):
            handlers[verb] = functools.partial(self._broker_command, verb)
        return handlers

    async def _help(self, _args: list[str]) -> None:
        self.out(HELP)

    async def _broker_command(self, name: str, args: list[str]) -> None:
        if len(args) != 1 or not args[0].isdigit():
            raise ValueError(COMMANDS.usage(name))
        broker_id = int(args[0])
        if name == "start":
            self.cluster.start_broker(broker_id)
        else:
            self.cluster.signal(broker_id, SIGNALS[name])
        if name == "stop":  # SIGTERM only begins it: "done" here was not true yet
            self.out(f"stop {broker_id}: controlled shutdown under way (`status` shows it stopping until "
                     "the process exits)")
        else:
            self.out(f"{name} {broker_id}: done")

    async def _zookeeper_command(self, name: str, args: list[str]) -> None:
        ensemble = self.cluster.ensemble
        if ensemble is None:
            raise ValueError(f"{name} needs an ensemble started here (zkcontroller cluster --processes N "
                             "--zookeeper-ensemble M)")
        if name == "zk-status":
            for line in ensemble.status_lines():
                self.out(line)
            return
        if len(args) != 1 or not args[0].isdigit():
            raise ValueError(COMMANDS.usage(name))
        server = int(args[0])
        if name == "zk-kill":
            ensemble.kill(server)
        else:
            ensemble.start_server(server)
        self.out(f"{name} {server}: done")

    async def _bounded(self, verb: str, command: Callable[[list[str]], Coroutine[Any, Any, None]],
                       args: list[str]) -> None:
        """A command that reads ZooKeeper, bounded: with no server answering (every ensemble server killed)
        kazoo holds a request until one does, and the prompt hung, with no way to type zk-start.

        A ZooKeeper that is gone fails a command in one of two ways, by a race between kazoo's I/O thread seeing
        the socket close and the command's request: one queued before it saw fails at once (CONNECTION_LOSS), one
        queued after waits for a server, so the bound ends it. Under load either comes first, and the prompt
        showed two different errors for one cause; the user gets one message for both, saying whether the
        command took effect (`zk_outage.outcome_text`): a write cut off by CONNECTION_LOSS is read back if the
        connection returns within the bound. A write the bound ended may be held by kazoo, which sends it
        when a server answers, minutes later perhaps: the session is closed, which drops it, as Kafka's
        kafka-topics.sh, failing on a ZooKeeper it cannot reach, exits and so closes its session; the next
        command opens a new one (`_reopened`)."""
        recorder = self.recorder
        recorder.begin()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.zk_timeout_s
        try:
            async with asyncio.timeout(self.zk_timeout_s):
                await self._reopened()
                await command(args)
        except (TimeoutError, ZkError) as e:
            if isinstance(e, ZkError) and not connection_lost(e):
                raise
            held = isinstance(e, TimeoutError) and verb in ADMIN_WRITES and bool(recorder.unanswered)
            dropped = held and await self._drop_session()
            outcome = await outcome_text(verb, self.admin, recorder, max(0.0, deadline - loop.time()), held=held,
                                         dropped=dropped)
            raise TimeoutError(f"ZooKeeper ({self.cluster.zookeeper_connect}) is not answering: `{verb}` gave up "
                               f"(it waits at most {self.zk_timeout_s:g} s); {outcome}; the brokers keep running "
                               "(zk-status shows an ensemble's servers)") from None

    async def _drop_session(self) -> bool:
        """Close the admin session, so kazoo drops the requests it holds for a server (it fails them when its
        connection thread stops, within about a second while no server answers); False: no `reopen` to replace
        it, so it is kept."""
        if self._reopen is None:
            return False
        closing = asyncio.ensure_future(self.recorder.inner.close())  # its state is CLOSED from here on
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(closing), SESSION_CLOSE_WAIT_S)
        return True

    async def _reopened(self) -> None:
        """A new admin session in place of one `_drop_session` closed, or one ZooKeeper expired, whose every
        request would fail (the command's bound covers the wait)."""
        if self._reopen is not None and self.recorder.state in (SessionState.CLOSED, SessionState.EXPIRED):
            self.recorder.replace(await self._reopen())

    async def _elect(self, args: list[str]) -> None:
        """As the in-process prompt's ``elect``: kafka-preferred-replica-election's ZooKeeper path, then which
        partitions kept another leader, and why (live brokers: those registered). ``--unclean`` has no ZooKeeper
        path (Kafka's ElectLeaders API only): the error says which command sends it to these brokers."""
        if "--unclean" in args:
            raise ValueError("unclean election needs the controller's ElectLeaders API, which has no ZooKeeper "
                             "path; send it to a broker: zkcontroller leader-election --bootstrap-server "
                             f"{self.cluster.bootstrap} --election-type unclean --all-topic-partitions (or --topic "
                             "TOPIC --partition N)")
        partitions = await elect_targets(self.admin, args, COMMANDS.usage("elect"))
        await elect_preferred(self.admin, partitions, self.out, self.admin.get_sorted_broker_list,
                              timeout_s=min(ELECTION_WAIT_S, self.zk_timeout_s / 2))

    async def _status(self, _args: list[str]) -> None:
        self.out((await controller_status(self.admin)).render())
        for b in self.cluster.brokers.values():
            pid = b.process.pid if b.process is not None else "-"
            self.out(f"broker {b.broker_id}: pid {pid}, 127.0.0.1:{b.port}, {b.state}, "
                     f"metrics http://127.0.0.1:{b.metrics_port}/metrics, log {b.log}")


async def run_process_cluster(broker_ids: list[int], zookeeper: str | None, directory: Path | None,
                              session_timeout_ms: int, zookeeper_ensemble: int | None = None,
                              on_slow_connect: Callable[[], None] | None = None) -> None:
    """Start ZooKeeper (unless given), open the prompt's session, only then the brokers: a ZooKeeper that
    cannot be reached ends the command before any broker starts (they used to be left running). Whatever
    fails, the brokers and ZooKeeper started here are stopped."""
    cluster = ProcessCluster(broker_ids, directory, zookeeper, session_timeout_ms,
                             zookeeper_ensemble=zookeeper_ensemble)
    backend = None
    session = None
    watcher: asyncio.Task[None] | None = None
    try:
        try:
            await asyncio.to_thread(cluster.start_zookeeper)
        except (RuntimeError, TimeoutError) as e:  # not installed, port taken, exited or silent
            raise StartupError(str(e)) from None
        backend = make_backend(cluster.zookeeper_connect, wall_clock_ms, on_slow_connect=on_slow_connect)
        session = await backend.new_session()
        admin = KafkaZkClient(session, wall_clock_ms)
        shell = ProcessClusterShell(cluster, admin, reopen=backend.new_session)
        await asyncio.to_thread(cluster.start_brokers)
        await wait_registered(admin, broker_ids, cluster=cluster)
        print(f"cluster up: broker processes {', '.join(map(str, broker_ids))} on {cluster.bootstrap}; "
              f"ZooKeeper {cluster.zookeeper_connect}; files in {cluster.directory}")
        print(f"try: kcat -L -b {cluster.bootstrap.split(',')[0]}")
        print(HELP)
        watcher = asyncio.create_task(report_unexpected_exits(cluster))
        while True:
            print("> ", end="", flush=True)
            line = await read_line()
            if not line:
                if sys.stdin.isatty():  # Ctrl-D at a terminal: quit, as at any shell (it used to sit silent)
                    print("quit")
                    break
                # Not a terminal (< /dev/null, a closed pipe): keep serving, and say so and how to stop.
                print(f"\nstandard input ended: the cluster keeps running until Ctrl-C or SIGTERM (pid {os.getpid()})",
                      flush=True)
                await asyncio.Event().wait()
            if not await shell.run_command(line):
                break
    finally:
        if watcher is not None:
            watcher.cancel()
        if session is not None:
            with contextlib.suppress(Exception):
                await session.close()
        if backend is not None:
            with contextlib.suppress(Exception):
                await backend.close()
        await asyncio.to_thread(cluster.stop, functools.partial(print, flush=True))


async def report_unexpected_exits(cluster: ProcessCluster, interval_s: float = 0.5) -> None:
    """While the prompt waits for a line: a broker that dies on its own is said at once, then the prompt again."""
    while True:
        for report in cluster.unexpected_exits():
            print(f"\n{report}\n> ", end="", flush=True)
        await asyncio.sleep(interval_s)


async def wait_registered(admin: KafkaZkClient, broker_ids: list[int], timeout_s: float = 60.0,
                          cluster: ProcessCluster | None = None) -> None:
    """Bounded wait until every broker has registered and one is controller (the processes start in parallel).
    Given the cluster, a broker process that exits meanwhile ends the wait at once, with its log's tail."""
    registered: set[int] = set()

    async def up() -> bool:
        registered.clear()
        registered.update(await admin.get_sorted_broker_list())
        if registered >= set(broker_ids) and await admin.get_controller_id() is not None:
            return True
        exited = cluster.exited_broker() if cluster is not None else None
        if exited is not None:
            raise exited
        return False

    if not await poll_until(up, timeout_s, REGISTERED_POLL_S):
        missing = sorted(set(broker_ids) - registered)
        where = f"; see their logs in {cluster.directory}" if cluster is not None else ""
        raise StartupError(f"brokers {missing} did not register within {timeout_s}s{where}" if missing else
                           f"no controller was elected within {timeout_s}s{where}")
