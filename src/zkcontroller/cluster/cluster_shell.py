"""``zkcontroller cluster``: run a cluster in this process and drive it from a prompt.

The prompt reads standard input on a worker thread (this module is runtime: threads and wall time are
allowed here) and runs each command on the event loop, beside the brokers. End of input at a terminal (Ctrl-D)
quits; without a terminal (standard input closed) the cluster says so and runs until interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TextIO

from zkcontroller.admin.describe import controller_status
from zkcontroller.admin.leader_election import all_partitions
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.broker.config import MAX_RESERVED_BROKER_ID, ReplicationConfig, virtual_log_dirs
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import POLL_S, LocalCluster
from zkcontroller.cluster.logs import OWN_CONTROLLER_LOGGERS, OWN_SERVER_LOGGERS, SERVER_LOGGERS, LogFiles
from zkcontroller.cluster.partition_wait import wait_for_partitions
from zkcontroller.cluster.preferred_election import elect_preferred, elect_targets
from zkcontroller.cluster.produce import ProduceWorkload, produce_command
from zkcontroller.cluster.prompt_help import IN_PROCESS, prompt_error_text
from zkcontroller.cluster.prompt_input import read_line
from zkcontroller.cluster.prompt_verbs import TopicVerbs
from zkcontroller.cluster.zk_outage import OUTCOME_WAIT_S, connection_lost, outage_notice, outcome_text, recorded
from zkcontroller.controller.events import ApiError, ElectionType
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.coordination.errors import ZkError
from zkcontroller.model import (
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicId,
    TopicPartition,
    sorted_partitions,
)
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.runtime.log_lines import kafka_level_name
from zkcontroller.runtime.poll import poll_until
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

COMMANDS = IN_PROCESS
"""The prompt's verbs: ``help`` prints the table, an unknown verb's error lists them, each verb's usage error is
its row's (`ClusterShell.handlers` must serve exactly these)."""

HELP = COMMANDS.help()

Out = Callable[[str], None]


ZK_WAIT_NOTICE_S = 3.0
"""How long a prompt command runs before, if the ZooKeeper connection is lost, it says it is waiting for it."""

BROKERS_LEAD_TIMEOUT_S = 10.0
"""How long ``create`` waits for the brokers to take up the leadership the store shows (they normally do within
milliseconds; a broker that never does is reported by ``describe``, not by a hung prompt)."""

class PromptOut:
    """The prompt's output. A line that arrives while ``> `` waits for input (a log record the brokers or the
    controller write meanwhile) goes on a line of its own, and the prompt is shown again below it: it was glued
    after the ``> ``, where the next command then seemed to be typed into it."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream
        self._waiting = False

    def _write(self, text: str) -> None:
        stream = self._stream or sys.stdout
        stream.write(text)
        stream.flush()

    def prompt(self) -> None:
        self._write("> ")
        self._waiting = True

    def answered(self) -> None:
        """The line typed at the prompt was read: output goes below it again."""
        self._waiting = False

    def __call__(self, line: str) -> None:
        self._write(f"\n{line}\n> " if self._waiting else f"{line}\n")


class PromptLogHandler(logging.Handler):
    """Puts what an operator must see at the prompt as it happens: controller errors (a failed failover, a
    corrupt znode skipped) and broker warnings (waiting for an old registration, a session re-initialising, a
    failed log dir). Levels read as in Kafka's log files (``WARN``, not Python's ``WARNING``).

    Each record is shown once: while attached, the watched loggers do not also pass their records on to the
    root handler (stderr, the same terminal), and a controller error's stack trace, which controller.log
    keeps, is cut to its last line."""

    WATCHED = (("kafka.controller", logging.ERROR), ("kafka", logging.WARNING), ("zkcontroller", logging.WARNING),
               ("org.apache.zookeeper", logging.WARNING))
    """Most specific first. Every Kafka logger, not just ``kafka.server``: a failed log dir's LogManager lines
    and a Partition's ISR retries reached the terminal through the root handler instead, time-stamped in
    another layout between the prompt's own lines (and ``zkcontroller.*``: the store client's errors;
    ``org.apache.zookeeper``: a session's lost connection, `kazoo_store`)."""
    QUIET = (("kafka.server.ReplicaFetcherThread", logging.ERROR),)
    """Shown from ERROR only: after a ``kill`` every follower of the dead broker warns "Error in response for fetch
    request ... Connection to 2 was disconnected" on each retry (a second apart per fetcher) until the controller
    moves the leadership, which flooded the prompt; Kafka logs them to server.log, which keeps them here too."""
    THRESHOLDS = QUIET + WATCHED
    """What `emit` shows, first match wins; `attached` hooks only ``WATCHED``'s loggers, so the quiet ones keep
    propagating to them (and to server.log's handler, on ``kafka``)."""
    TRACE_IN_FILE = (("kafka.controller", "controller.log"), (OWN_CONTROLLER_LOGGERS, "controller.log"),
                     *((name, "server.log") for name in (*SERVER_LOGGERS, OWN_SERVER_LOGGERS)))
    """Loggers whose records a run's log files keep in full, stack trace included, and the file
    (`cluster.logs.LogFiles`; most specific first): their exception is cut to its last line here. A broker's
    error (a bad /config/changes notification) printed a 12-line traceback per broker at the prompt."""

    def __init__(self, out: Out) -> None:
        super().__init__(logging.WARNING)
        self._out = out
        self.setFormatter(logging.Formatter("%(message)s"))  # its level goes before it, in Kafka's name (`format`)

    def emit(self, record: logging.LogRecord) -> None:
        threshold = next((level for name, level in self.THRESHOLDS if record.name.startswith(name)), None)
        if threshold is not None and record.levelno >= threshold:
            self._out(f"[{record.name}] {self.format(record)}")

    def format(self, record: logging.LogRecord) -> str:
        level = kafka_level_name(record.levelno)
        error = record.exc_info[1] if record.exc_info else None
        name = record.name
        file = next((file for prefix, file in self.TRACE_IN_FILE
                     if name == prefix or name.startswith(prefix + ".")), None)
        if error is None or file is None:  # a logger no file keeps: its trace is shown here, in full
            return f"{level} {super().format(record)}"
        return f"{level} {record.getMessage()}: {type(error).__name__}: {error} (stack trace in {file})"

    @contextlib.contextmanager
    def attached(self) -> Iterator[PromptLogHandler]:
        loggers = [logging.getLogger(name) for name, _ in self.WATCHED]
        saved = [(logger.propagate, logger.level) for logger in loggers]
        for logger in loggers:
            logger.addHandler(self)
            logger.propagate = False  # shown here; the root handler would print it a second time
            if logger.getEffectiveLevel() > logging.WARNING:
                logger.setLevel(logging.WARNING)
        try:
            yield self
        finally:
            for logger, (propagate, level) in zip(loggers, saved, strict=True):
                logger.removeHandler(self)
                logger.propagate = propagate
                logger.setLevel(level)  # lowered to WARNING while attached: put back


class ClusterShell:
    def __init__(
        self, cluster: LocalCluster, admin: KafkaZkClient, out: Out = print, rng: random.Random | None = None
    ) -> None:
        self.cluster = cluster
        self.admin = admin
        self.recorder = recorded(admin)  # which writes a command sent, for what it says if ZooKeeper goes
        self.topics = TopicAdmin(admin, rng or random.Random())
        self.out = out
        self.workload = ProduceWorkload(cluster)
        # through self.out, which the demo swaps to collect a step's lines
        self.verbs = TopicVerbs(admin, self.topics, lambda line: self.out(line), COMMANDS, self._running_ids)

    async def run_command(self, line: str) -> bool:
        """Run one command line; False when the user asked to quit. Errors are printed, never raised. A command
        held up by a lost ZooKeeper connection says so once (`ZK_WAIT_NOTICE_S`): it printed nothing until the
        connection came back or the session expired. A command whose request the lost connection failed says
        so, and whether it took effect (`outage_error`)."""
        self.recorder.begin()
        command = asyncio.ensure_future(COMMANDS.run_line(line, self.handlers(), self.out, prompt_error_text))
        try:
            while True:
                done, _ = await asyncio.wait({command}, timeout=ZK_WAIT_NOTICE_S)
                if done:
                    return command.result()
                lost_s = getattr(self.admin.session, "disconnected_for_s", None)
                if lost_s is not None:
                    hosts = getattr(self.admin.session, "hosts", "ZooKeeper")
                    self.out(f"waiting for ZooKeeper at {hosts} (connection lost {lost_s:.0f} s ago)")
                    return await command
        finally:
            if not command.done():  # this task was cancelled (Ctrl-C, SIGTERM): so is the command
                command.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await command

    def handlers(self) -> dict[str, Callable[[list[str]], Awaitable[None]]]:
        """Each verb's handler, called with its arguments: the verbs of `COMMANDS` but ``quit``, which
        `run_command` answers itself (as ``exit``)."""
        commands: dict[str, Callable[[list[str]], Awaitable[None]]] = {
            "help": self._help,
            "status": self._status,
            "create": self._create,
            "describe": self._describe,
            "produce": self._produce,
            "elect": self._elect,
            "delete": self.verbs.delete,
            "fail-log-dir": self._fail_log_dir,
        }
        for name in ("stop", "start", "kill", "expire"):
            commands[name] = functools.partial(self._broker_action, name)
        return {verb: functools.partial(self._outage_said, verb, handler) for verb, handler in commands.items()}

    async def _outage_said(self, verb: str, handler: Callable[[list[str]], Awaitable[None]],
                           args: list[str]) -> None:
        """Run a verb; a CONNECTION_LOSS it meets becomes `outage_error`'s line (it was ZooKeeper's raw
        "CONNECTION_LOSS at PATH ... (nothing else was done)", untrue of a write already sent)."""
        try:
            await handler(args)
        except ZkError as e:
            if not connection_lost(e):
                raise
            raise await self.outage_error(verb, e) from None

    async def outage_error(self, verb: str, error: ZkError) -> ConnectionError:
        """The verb, the znode where the connection was lost, that ZooKeeper is not answering, and whether the
        command took effect: known from the writes it sent and, for one unanswered, read back if the connection
        returns within `OUTCOME_WAIT_S` (nothing is left queued: kazoo fails every request in flight at the
        loss, and the command stopped there). The brokers reconnect by themselves, and later commands wait for
        ZooKeeper."""
        hosts = getattr(self.admin.session, "hosts", None)
        outcome = await outcome_text(verb, self.admin, self.recorder, OUTCOME_WAIT_S)
        return ConnectionError(f"{outage_notice(hosts, verb, error)}; {outcome}; the brokers keep running "
                               "and reconnect by themselves")

    async def _produce(self, args: list[str]) -> None:
        """A topic that does not exist is refused: ``--rate`` started a producer that failed every tick unseen
        ("producing 10 records/s to nosuch"), and a count said no running broker led the topic."""
        if args and not args[0].startswith("-") and not await self.admin.path_exists(paths.topic_path(args[0])):
            raise ValueError(f"topic {args[0]} does not exist (create it first: create {args[0]})")
        for line in produce_command(self.cluster, self.workload, args):
            self.out(line)

    async def _elect(self, args: list[str]) -> None:
        """As ``kafka-preferred-replica-election.sh`` does: write the election znode; the controller acts on it,
        and the prompt then says which partitions kept another leader, and why (`elect_preferred`). With
        ``--unclean``, as ``kafka-leader-election.sh --election-type unclean``: the ElectLeaders API, which
        has no ZooKeeper path, so it is asked of the active controller in this process."""
        unclean = "--unclean" in args
        args = [a for a in args if a != "--unclean"]
        partitions = await elect_targets(self.admin, args, COMMANDS.usage("elect"))
        if unclean:
            await self._elect_unclean(partitions if partitions is not None else await all_partitions(self.admin))
            return
        await elect_preferred(self.admin, partitions, self.out, self._running_ids, self._offline_replica)

    async def _running_ids(self) -> list[int]:
        return [s.broker_id for s in self.cluster.running_brokers()]

    def _offline_replica(self, broker_id: int, tp: TopicPartition) -> bool:
        server = self.cluster.brokers.get(broker_id)
        plane = server.control_plane if server is not None and server.running else None
        return plane is not None and tp in plane.offline_partitions

    async def _elect_unclean(self, partitions: list[TopicPartition]) -> None:
        """Kafka's ``LeaderElectionCommand`` lines: elected, already had a leader, failed (with the reason)."""
        controller = self.cluster.active_controller()
        if controller is None:
            raise ValueError("no active controller right now; try again once `status` shows one")
        results = await controller.elections.elect_leaders(partitions, ElectionType.UNCLEAN)
        elected = [tp for tp, r in results.items() if not isinstance(r, ApiError)]
        noop = [tp for tp, r in results.items() if isinstance(r, ApiError) and r.error is Errors.ELECTION_NOT_NEEDED]
        failed = {tp: r for tp, r in results.items()
                  if isinstance(r, ApiError) and r.error is not Errors.ELECTION_NOT_NEEDED}
        if elected:
            self.out("Successfully completed leader election (UNCLEAN) for partitions "
                     f"{', '.join(map(str, sorted_partitions(elected)))}")
        if noop:
            self.out(f"Valid replica already elected for partitions {', '.join(map(str, sorted_partitions(noop)))}")
        for tp in sorted_partitions(failed):
            error = failed[tp]
            self.out(f"Error completing leader election (UNCLEAN) for partition: {tp}: {error.error.name}"
                     + (f": {error.message}" if error.message else ""))

    async def _fail_log_dir(self, args: list[str]) -> None:
        """A disk failure: the broker takes the replicas in DIR offline and tells the controller, which moves
        their leadership (the last online dir halts the broker, as Kafka does)."""
        if len(args) != 2 or not args[0].isdigit():
            raise ValueError(COMMANDS.usage("fail-log-dir"))
        broker_id, log_dir = int(args[0]), args[1]
        server = self.cluster.brokers.get(broker_id)
        plane = server.control_plane if server is not None and server.running else None
        if plane is not None and log_dir in plane.offline_log_dirs:  # it said "failed; replicas offline: none"
            raise ValueError(f"log dir {log_dir} of broker {broker_id} has already failed (`describe` shows its "
                             "offline replicas)")
        failed = await self.cluster.fail_log_dir(broker_id, log_dir)
        names = ", ".join(str(tp) for tp in failed) or "none"
        if not self.cluster.brokers[broker_id].running:
            self.out(f"broker {broker_id} halted: all its log dirs have failed (replicas lost in {log_dir}: {names})")
            return
        self.out(f"log dir {log_dir} of broker {broker_id} failed; replicas offline: {names}")
        if not failed:
            return
        if await self._moved_off(broker_id, failed):
            self.out(f"the controller moved leadership and ISR membership of them off broker {broker_id}")
        else:
            self.out(f"the controller has not yet moved all of them off broker {broker_id}: still in progress "
                     "(`describe` shows where they are)")

    async def _moved_off(self, broker_id: int, partitions: list[TopicPartition], timeout_s: float = 10.0) -> bool:
        """Wait (bounded) until ZooKeeper, which `describe` reads, shows the controller has acted on the failed
        replicas: ``broker_id`` leads none and is out of their ISR (or is its last member, which Kafka keeps,
        leaderless). The verb returned before the controller acted, and the next describe showed the old leader."""
        def moved(_assignment: ReplicaAssignment, state: LeaderIsrAndControllerEpoch) -> bool:
            isr = state.leader_and_isr.isr
            return state.leader_and_isr.leader != broker_id and (broker_id not in isr or len(isr) == 1)

        return (await wait_for_partitions(self.admin, moved, timeout_s, partitions)).met

    def offline_replica_lines(self, topics: list[str]) -> list[str]:
        """Replicas on failed log dirs, as the brokers hosting them know them (ZooKeeper does not record them;
        Kafka reports them as a partition's offline replicas in metadata)."""
        lines = []
        for server in self.cluster.running_brokers():
            plane = server.control_plane
            if plane is None or not plane.offline_partitions:
                continue
            mine = [str(tp) for tp in sorted_partitions(plane.offline_partitions) if tp.topic in topics]
            if mine:
                # A LeaderAndIsr that left a partition without a local log also makes it offline, with no dir failed.
                why = (f"failed log dirs {', '.join(sorted(plane.offline_log_dirs))}" if plane.offline_log_dirs
                       else "no local log")
                lines.append(f"Offline replicas on broker {server.broker_id} ({why}): {', '.join(mine)}")
        return lines

    async def _help(self, _args: list[str]) -> None:
        self.out(HELP)

    async def _status(self, _args: list[str]) -> None:
        status = await controller_status(self.admin)
        self.out(status.render())
        running = [s.broker_id for s in self.cluster.running_brokers()]
        self.out(f"running brokers: {', '.join(map(str, running)) or 'none'}")
        for line in listener_lines(self.cluster):
            self.out(line)

    async def _create(self, args: list[str]) -> None:
        topic, assignment = await self.verbs.create(args)
        if self.cluster.active_controller() is None:  # it sat silent for 30 s, then said "0 of N have a leader"
            self.out("no controller right now (`status` shows when one is elected): it gives the partitions "
                     "leaders then")
            return
        online = await self._wait_online([TopicPartition(topic, p) for p in assignment])
        self.out(f"{online} of {len(assignment)} partitions have a leader.")

    async def _wait_online(self, partitions: list[TopicPartition], timeout_s: float = 30.0) -> int:
        """Wait (bounded) until the controller has given every partition a leader; returns how many have one."""
        waited = await wait_for_partitions(self.admin, lambda _a, state: state.leader_and_isr.leader >= 0,
                                           timeout_s, partitions)
        led = {tp: waited.states[tp].leader_and_isr.leader for tp in partitions
               if tp in waited.states and waited.states[tp].leader_and_isr.leader >= 0}
        await self._wait_brokers_lead(led, BROKERS_LEAD_TIMEOUT_S)
        return len(led)

    async def _wait_brokers_lead(self, led: dict[TopicPartition, int], timeout_s: float) -> None:
        """Wait (bounded) until each running broker the store names as a leader leads as the store says: the store
        has the leader before the controller's LeaderAndIsr reaches the broker, and a ``produce`` right after
        ``create`` found no running broker leading (on a loaded host, the demo's next step)."""
        async def leading() -> bool:
            running = {s.broker_id for s in self.cluster.running_brokers()}
            leaders: dict[TopicPartition, int] = {}
            for topic in {tp.topic for tp in led}:
                leaders.update((tp, server.broker_id) for tp, server in self.cluster.leaders(topic).items())
            return all(leaders.get(tp) == broker for tp, broker in led.items() if broker in running)

        await poll_until(leading, timeout_s, POLL_S)  # one that does not is `describe`'s to report

    async def _describe(self, args: list[str]) -> None:
        await self.verbs.describe(args, self.offline_replica_lines)

    async def _broker_action(self, name: str, args: list[str]) -> None:
        if len(args) != 1 or not args[0].isdigit():
            raise ValueError(COMMANDS.usage(name))
        broker_id = int(args[0])
        if broker_id > MAX_RESERVED_BROKER_ID:  # `start 99999` started a broker that registered a port past 65535
            raise ValueError(f"ID must be at most {MAX_RESERVED_BROKER_ID} (Kafka's reserved.broker.max.id, "
                             f"as for --broker-ids), got {broker_id}; {COMMANDS.usage(name)}")
        await self.broker_command(name, broker_id)

    async def broker_command(self, name: str, broker_id: int) -> None:
        active = self.cluster.active_controller()
        was_controller = active is not None and active.controller_id == broker_id
        epoch = active.context.epoch if active is not None else 0
        if name == "stop":
            self._say_controlled_shutdown(broker_id)
            await self.cluster.stop_broker(broker_id)
        elif name == "start":
            await self.cluster.start_broker(broker_id)
        elif name == "kill":
            await self.cluster.crash_broker(broker_id)
        else:
            await self.cluster.expire_broker_session(broker_id)
        self.out(f"{name} {broker_id}: done")
        if name == "kill":
            self.out(self._after_kill(was_controller))
            return
        if not self.cluster.running_brokers():  # it waited 30 s for a controller no broker could become
            self.out("no broker is running: there is no controller until one starts")
            return
        exclude = broker_id if was_controller and name == "stop" else None
        min_epoch = epoch + 1 if was_controller else 1
        timeout_s = 30.0
        killed = await self._killed_controller()
        if killed is not None:  # the prompt sat silent until that session expired (18 s by default)
            session_s = self.cluster.session_timeout_ms / 1000
            self.out(f"broker {killed}, killed, holds /controller until its session expires (up to {session_s:.0f} "
                     "s); waiting for the next controller")
            timeout_s = max(timeout_s, session_s + 10)
        controller = await self.cluster.wait_for_controller(timeout_s, exclude=exclude, min_epoch=min_epoch)
        self.out(f"controller: broker {controller.controller_id}, epoch {controller.context.epoch}")

    async def _killed_controller(self) -> int | None:
        """The broker ``/controller`` names if it is one of this cluster's and not running (killed: its session
        outlives it), else None."""
        controller_id = await self.admin.get_controller_id()
        holder = self.cluster.brokers.get(controller_id) if controller_id is not None else None
        return controller_id if holder is not None and not holder.running else None


    def _after_kill(self, was_controller: bool) -> str:
        """What happens next. It said a new controller would take over after killing any broker, and that the
        session stays until it times out, which on a real ZooKeeper it does not (`LocalCluster.crash_broker`)."""
        then = ("another broker becomes controller (`status` shows when)" if was_controller
                else "the controller moves its leadership (`describe` shows when)")
        if isinstance(self.cluster.backend, EmbeddedBackend):
            return f"its session stays until it times out ({self.cluster.session_timeout_ms} ms); then {then}"
        return (f"its ZooKeeper session was expired (a real ZooKeeper client cannot be silenced without closing "
                f"it), so {then} now")

    def _say_controlled_shutdown(self, broker_id: int) -> None:
        """Before a stop that may take seconds: Kafka's controlled shutdown retries, backing off, while the broker
        still leads partitions no other broker can take (`stop` of the last broker with a replicated topic sat
        silent for 5 s before the first retry's warning)."""
        server = self.cluster.brokers.get(broker_id)
        if server is None or not server.running:
            return  # stop_broker says it is not running
        config = server.config.controller_config
        if config.controlled_shutdown_enable:
            self.out(f"stop {broker_id}: controlled shutdown, handing its leadership to other brokers (up to "
                     f"{config.controlled_shutdown_max_retries} attempts, "
                     f"{config.controlled_shutdown_retry_backoff_ms} ms apart, while some cannot move)")


def listener_lines(cluster: LocalCluster) -> list[str]:
    """Where each running broker answers Kafka's wire protocol (none without listeners), saying when its port
    was not the one asked for, so a user knows what to give kcat."""
    lines = []
    for server in cluster.running_brokers():
        listener = cluster.listeners.get(server.broker_id)
        if listener is None or listener.address is None:
            continue
        note = listener.fallback_note
        taken = f" ({note})" if note is not None else ""
        advertised = f", advertised as {listener.address}" if listener.bind_address != listener.address else ""
        lines.append(f"broker {server.broker_id} listens on {listener.bind_address}{taken}{advertised}")
    return lines


def admin_hint_line(cluster: LocalCluster) -> str | None:
    """How to administer this cluster from another shell with zkcontroller's own commands (the embedded store is
    reachable only through a listener): one line naming a running broker's advertised address, None without
    listeners."""
    for server in cluster.running_brokers():
        listener = cluster.listeners.get(server.broker_id)
        if listener is not None and listener.address is not None:
            return (f"from another shell: zkcontroller topics describe --bootstrap-server {listener.address} "
                    "(topics, leader-election, reassign and configs take --bootstrap-server)")
    return None


async def run_cluster(
    backend: CoordinationBackend, broker_ids: list[int], log_dir: Path | None, session_timeout_ms: int,
    log_dirs_per_broker: int = 2, listeners: ListenerPorts | None = None, cluster_name: str | None = None,
) -> None:
    """Start the brokers, then serve the prompt until ``quit`` (or forever without a terminal). Each broker gets
    ``log_dirs_per_broker`` virtual log dirs, so ``fail-log-dir`` can fail one and leave the others serving.
    With ``listeners`` each broker answers Kafka's wire protocol on ``listeners.host`` (`cluster.listener`).
    ``cluster_name`` names the cluster in ``events.jsonl``; None: its cluster id (`event_log_cluster`)."""
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="zkcontroller-logs-"))
    async with contextlib.AsyncExitStack() as resources:  # closed in reverse order, whatever fails
        logs = LogFiles(log_dir)
        resources.callback(logs.close)  # it sets the loggers' levels and handlers process-wide
        resources.push_async_callback(backend.close)
        admin_session = await backend.new_session()  # raises when ZooKeeper cannot be reached
        resources.push_async_callback(admin_session.close)
        admin = KafkaZkClient(admin_session, wall_clock_ms)
        event_log = logs.event_log(cluster_name or await event_log_cluster(admin), wall_clock_ms)
        cluster = LocalCluster(
            backend, broker_ids, wall_clock_ms, event_log=event_log, session_timeout_ms=session_timeout_ms,
            replication=ReplicationConfig(log_dirs=virtual_log_dirs(log_dirs_per_broker)), listeners=listeners,
        )
        shell = ClusterShell(cluster, admin)
        terminated = _cancel_on_sigterm()
        try:
            out = PromptOut()
            with PromptLogHandler(out).attached():
                await _serve(cluster, shell, broker_ids, log_dir, out)
        except asyncio.CancelledError:
            if not terminated.is_set():
                raise
            raise KeyboardInterrupt from None  # the brokers are down (see `_serve`): the command says "stopped"


async def event_log_cluster(zk: KafkaZkClient) -> str:
    """The cluster's id, as the event log's cluster name: ``/cluster/id``, created here with a new id as the first
    broker would create it (Kafka's ``KafkaServer.getOrGenerateClusterId``) unless ZooKeeper already holds one,
    which the brokers then read. It is what Kafka's Metadata response (kcat ``-L``) shows, and it differs between
    runs on the embedded store: a fixed name ("local", once) made the analytics job read two runs' logs as one
    cluster whose controller epoch went back to 1. A real ZooKeeper keeps its id, and its runs are one cluster."""
    return await zk.create_or_get_cluster_id(str(TopicId.generate(random.Random())))


def _cancel_on_sigterm() -> asyncio.Event:
    """SIGTERM cancels this task, so `_serve` shuts the brokers down while their tasks still run. A handler
    raising KeyboardInterrupt out of the event loop instead made `asyncio.run` cancel every task at once, and
    the brokers' shutdown then waited for tasks already cancelled: `kill <pid>` never ended the command.
    (SIGINT is asyncio.run's own, which does the same.) The event says that SIGTERM came. A second SIGTERM is
    ignored, as `cluster --processes` ignores a second signal: sent to the process group under `uv run`
    (`timeout`, systemd) SIGTERM arrives twice, and the second cancelled the shutdown the first had begun."""
    terminated = asyncio.Event()
    task = asyncio.current_task()

    def on_sigterm() -> None:
        if terminated.is_set():
            return
        terminated.set()
        if task is not None:
            task.cancel()

    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread: no signals
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, on_sigterm)
    return terminated


def _at_terminal() -> bool:
    """Whether the prompt reads a terminal, where end of input (Ctrl-D) means the user is done."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except ValueError:  # closed
        return False


async def _serve(cluster: LocalCluster, shell: ClusterShell, broker_ids: list[int], log_dir: Path,
                 out: PromptOut) -> None:
    try:
        await cluster.start()
        controller = await cluster.wait_for_controller()
        print(
            f"cluster up: brokers {', '.join(map(str, broker_ids))}; controller {controller.controller_id} "
            f"with epoch {controller.context.epoch}" + (f"; logs in {log_dir}" if log_dir else "")
        )
        for line in listener_lines(cluster):
            print(line)
        hint = admin_hint_line(cluster)
        if hint is not None:
            print(hint)
        print(HELP)
        while True:
            out.prompt()
            line = await read_line()
            out.answered()
            if not line:
                if _at_terminal():  # Ctrl-D at a terminal: the prompt sat there and ignored every key after it
                    print()
                    break
                # standard input closed (run in the background, or a script without `quit`): keep serving
                print("standard input is closed: the cluster keeps running until interrupted (Ctrl-C or SIGTERM)",
                      flush=True)
                await asyncio.Event().wait()
            if not await shell.run_command(line):
                break
    finally:
        await shell.workload.close()
        await cluster.shutdown(progress=print)
        print("all brokers stopped")
