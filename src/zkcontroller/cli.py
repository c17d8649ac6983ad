"""The ``zkcontroller`` command line: one entry point with a subcommand per job."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from zkcontroller.admin.repeats import repeated
from zkcontroller.admin.usage import KafkaCommand, bad_connect_string, waiting_notice
from zkcontroller.broker.config import MAX_RESERVED_BROKER_ID
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.connect import make_backend
from zkcontroller.coordination.errors import ConnectionLossError
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.runtime.files import ensure_writable_dir
from zkcontroller.runtime.log_lines import KafkaLevelFormatter

if TYPE_CHECKING:
    from zkcontroller.cluster.listener import ListenerPorts

LAZY_COMMANDS = {
    "analyze": "zkcontroller.analytics.cli:analyze",
    "brokers": "zkcontroller.admin.cli:brokers",
    "configs": "zkcontroller.admin.configs:configs",
    "controller": "zkcontroller.admin.cli:controller",
    "leader-election": "zkcontroller.admin.leader_election:leader_election",
    "reassign": "zkcontroller.admin.reassign_cli:reassign",
    "sim": "zkcontroller.sim.cli:sim",
    "topics": "zkcontroller.admin.cli:topics",
}
"""Subcommands imported only when invoked: importing them all (the simulator, the wire protocol's kio, which
imports hypothesis) took about 1 s before any command ran."""


class LazyGroup(click.Group):
    """A click group whose ``LAZY_COMMANDS`` load on first use (click's documented lazy-loading pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            module, attr = LAZY_COMMANDS[cmd_name].split(":")
            command = getattr(importlib.import_module(module), attr)
            if command.name != cmd_name:
                raise RuntimeError(f"{LAZY_COMMANDS[cmd_name]} is named {command.name!r}, not {cmd_name!r}")
            self.add_command(command)
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup)
@click.version_option(package_name="zkcontroller")
def main() -> None:
    """Apache Kafka's ZooKeeper-mode controller, reimplemented in Python."""
    root = logging.getLogger()
    if not root.handlers:  # otherwise someone set logging up already (`main` run in-process): theirs to keep
        logging.basicConfig(level=logging.WARNING)
        for handler in root.handlers:
            # The console shows warnings and errors. Kafka's loggers log INFO into a run's server.log
            # (`cluster.logs`) and still propagate here. Every logger's lines, third-party ones' (asyncio's)
            # too, name their level as Kafka's log4j layout does: WARN, not WARNING.
            handler.setLevel(logging.WARNING)
            handler.setFormatter(KafkaLevelFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    # kazoo narrates every reconnect attempt at WARNING; session changes reach us through our own API.
    logging.getLogger("kazoo.client").setLevel(logging.ERROR)


def listener_options(command: Callable[..., None]) -> Callable[..., None]:
    """``--port-base``, ``--listen-host`` and ``--no-listeners``: where in-process brokers answer Kafka's wire
    protocol."""
    command = click.option("--no-listeners", is_flag=True,
                           help="In-process brokers open no port (they register localhost:9092+ID regardless)."
                           )(command)
    command = click.option("--listen-host", metavar="HOST",
                           help="In-process brokers listen on HOST and register it for clients; 0.0.0.0: every "
                                "interface, registering this machine's host name (as Kafka does for a listener "
                                "with no host). Default 127.0.0.1.")(command)
    return click.option("--port-base", type=click.IntRange(0, 65535), metavar="N",
                        help="In-process broker ID listens on port N+ID, or on a free port when that is taken; "
                             "0: free ports for all. Default 9092.")(command)


def _listener_ports(no_listeners: bool, port_base: int | None, listen_host: str | None) -> ListenerPorts | None:
    from zkcontroller.cluster.listener import DEFAULT_LISTEN_HOST, DEFAULT_PORT_BASE, ListenerPorts, check_listen_host

    if no_listeners:
        if port_base is not None or listen_host is not None:
            raise click.UsageError("--port-base and --listen-host have no effect with --no-listeners")
        return None
    host = DEFAULT_LISTEN_HOST if listen_host is None else listen_host.strip()
    try:
        check_listen_host(host)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--listen-host") from None
    base = DEFAULT_PORT_BASE if port_base is None else port_base
    return ListenerPorts(base=base or None, host=host)


def _check_ports_fit(listeners: ListenerPorts | None, ids: list[int]) -> None:
    """Each in-process broker listens on the port base + its id: one past 65535 was reported as "taken" and
    replaced by a free port, so ``--port-base`` near the top of the range gave every broker but the first a random
    port while the start-up lines blamed another process."""
    if listeners is None or listeners.base is None:
        return
    top = listeners.base + max(ids)
    if top > 65535:
        raise click.BadParameter(f"broker {max(ids)} would listen on {listeners.base}+{max(ids)} = {top}, past 65535: "
                                 f"give a base of at most {65535 - max(ids)}, or 0 for free ports",
                                 param_hint="--port-base")


@main.command(short_help="A narrated run: election, topics, failover.")
@click.option("--zookeeper", metavar="HOST:PORT[/CHROOT]", help="Use a real ZooKeeper instead of the embedded store.")
@click.option("--broker-ids", default="1,2,3", show_default=True, help="Comma-separated broker ids (0 to 1000).")
@click.option("--log-dir", type=click.Path(file_okay=False, path_type=Path), help="Where to write the logs.")
@listener_options
def demo(zookeeper: str | None, broker_ids: str, log_dir: Path | None, port_base: int | None,
         listen_host: str | None, no_listeners: bool) -> None:
    """A narrated cluster run: election, topics, controller failover, session expiry."""
    from zkcontroller.cluster.demo import DemoStepFailed, run_demo

    ids = parse_broker_ids(None, broker_ids)
    if len(ids) < 2:
        raise click.BadParameter("the failover demo needs at least two brokers")
    listeners = _listener_ports(no_listeners, port_base, listen_host)
    _check_ports_fit(listeners, ids)
    if log_dir is not None:
        _check_writable_dir("--log-dir", log_dir)
    backend = _backend(zookeeper)
    with _unreachable_zookeeper_is_one_line(zookeeper):
        try:
            asyncio.run(run_demo(backend, ids, log_dir, listeners))
        except DemoStepFailed as e:
            raise click.ClickException(_demo_failure(str(e), zookeeper)) from None


def _demo_failure(message: str, zookeeper: str | None) -> str:
    """A failed demo step's message, with the way out when it failed on a ZooKeeper that already holds the demo's
    topics (an earlier demo's, or the README's ``orders``): the real ZooKeeper keeps its data across runs, so a
    second ``demo --zookeeper`` stopped at its first step with only "Topic 'orders' already exists"."""
    if zookeeper is None or "already exists" not in message:
        return message
    hosts = zookeeper.split("/", 1)[0]
    return (f"{message} (ZooKeeper keeps its data between runs: give the demo a chroot no earlier run used, e.g. "
            f"--zookeeper {hosts}/demo-2)")


def _check_writable_dir(option: str, directory: Path) -> None:
    """Create ``directory`` now, or end the command with one ``Error:`` line naming the option: a directory that
    cannot be created or written was a mkdir traceback, after the brokers (or ZooKeeper) had been set up."""
    try:
        ensure_writable_dir(directory)
    except OSError as e:
        raise click.ClickException(f"{option} {directory}: directory is not writable ({e.strerror or e})") from None


def _backend(zookeeper: str | None) -> CoordinationBackend:
    """The store for ``--zookeeper``; a connect string ZooKeeper refuses is one ``Error:`` line naming it, as in
    the admin commands (`bad_connect_string`), not a traceback. A ZooKeeper slow to answer gets one ``Connecting to
    ZooKeeper`` line on stderr (`waiting_notice`), not 15 s of silence."""
    try:
        return make_backend(zookeeper, wall_clock_ms, on_slow_connect=waiting_notice(zookeeper))
    except ValueError as e:
        raise bad_connect_string(e) from None


@contextlib.contextmanager
def _unreachable_zookeeper_is_one_line(zookeeper: str | None) -> Iterator[None]:
    """A ZooKeeper that cannot be reached ends the command with one ``Error:`` line (exit 1), as the admin
    commands do, instead of kazoo's traceback."""
    try:
        yield
    except ConnectionLossError:
        raise click.ClickException(f"cannot connect to ZooKeeper at {zookeeper}" if zookeeper else  # it said "at None"
                                   "lost the connection to the ZooKeeper this command started") from None


def parse_broker_ids(brokers: int | None, broker_ids: str | None) -> list[int]:
    if broker_ids is not None:  # an empty --broker-ids '' meant the default brokers without a word
        try:
            given = [int(x) for x in broker_ids.split(",") if x.strip()]
        except ValueError as e:
            raise click.BadParameter(f"broker ids must be integers: {broker_ids!r}") from e
        repeats = sorted(repeated(given))
        if repeats:  # a second broker with the same id could never register (Kafka: NodeExists on /brokers/ids/N)
            raise click.BadParameter(f"broker ids must differ; given more than once: "
                                     f"{', '.join(map(str, repeats))}")
        ids = sorted(given)
    else:
        ids = list(range(1, (brokers or 3) + 1))
    if not ids or any(i < 0 for i in ids):
        raise click.BadParameter("give at least one non-negative broker id")
    # A broker refuses a broker.id past reserved.broker.max.id (`zkcontroller broker` too: `server_properties`);
    # one started here registered a port past 65535 (9092 + ID), which the controller skipped as unreadable.
    too_large = [i for i in ids if i > MAX_RESERVED_BROKER_ID]
    if too_large:
        raise click.BadParameter(f"broker ids must be at most {MAX_RESERVED_BROKER_ID} (Kafka's "
                                 f"reserved.broker.max.id, which bounds broker.id), got "
                                 f"{', '.join(map(str, too_large))}")
    return ids


@main.command(short_help="Brokers in this process (or --processes), with a prompt.")
@click.option("--brokers", type=click.IntRange(1, 100), help="Number of brokers (ids 1..N). Default 3.")
@click.option("--broker-ids", metavar="1,2,3", help="Explicit broker ids (0 to 1000) instead of --brokers.")
@click.option("--zookeeper", metavar="HOST:PORT[/CHROOT]", help="Use a real ZooKeeper instead of the embedded store.")
@click.option(
    "--log-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write state-change.log, controller.log, server.log and events.jsonl here. With --processes: each broker's "
         "server-N.properties and broker-N.log, and ZooKeeper's data (default: a new directory under /tmp).",
)
@click.option("--session-timeout-ms", type=click.IntRange(min=1), default=18000, show_default=True,
              help="Each broker's ZooKeeper session timeout (zookeeper.session.timeout.ms): how long a killed "
                   "broker stays registered.")
@click.option("--processes", type=click.IntRange(1, 100), metavar="N",
              help="Run N `zkcontroller broker` processes (ids 1..N unless --broker-ids) on Kafka's wire protocol "
                   "against a real ZooKeeper (started here unless --zookeeper is given).")
@click.option("--zookeeper-ensemble", type=click.IntRange(1, 9), metavar="M",
              help="With --processes: start an M-server ZooKeeper ensemble on loopback for them (the prompt gains "
                   "zk-status, zk-kill ID, zk-start ID).")
@click.option("--cluster-name", metavar="NAME",
              help="The cluster's name in events.jsonl, which `zkcontroller analyze` groups by (default: the cluster "
                   "id, /cluster/id, as Kafka's Metadata response and kcat -L show it: each run on the embedded "
                   "store is a cluster of its own).")
@listener_options
def cluster(
    brokers: int | None, broker_ids: str | None, zookeeper: str | None, log_dir: Path | None, session_timeout_ms: int,
    processes: int | None, zookeeper_ensemble: int | None, cluster_name: str | None, port_base: int | None,
    listen_host: str | None, no_listeners: bool,
) -> None:
    """Run brokers (each a controller candidate with its own session) in this process, with a prompt."""
    from zkcontroller.cluster.cluster_shell import run_cluster

    if processes and (port_base is not None or listen_host is not None or no_listeners):
        raise click.UsageError("--port-base, --listen-host and --no-listeners are for in-process brokers; broker "
                               "processes always listen, on free loopback ports")
    listeners = None if processes else _listener_ports(no_listeners, port_base, listen_host)
    if processes and cluster_name is not None:
        raise click.UsageError("--cluster-name names the in-process brokers' events.jsonl; broker processes write "
                               "no event log")
    if cluster_name is not None and not cluster_name.strip():
        raise click.BadParameter("give a non-empty name", param_hint="--cluster-name")
    if zookeeper_ensemble is not None and not processes:
        raise click.UsageError("--zookeeper-ensemble needs --processes N (in-process brokers use one store)")
    if zookeeper_ensemble is not None and zookeeper is not None:
        raise click.UsageError("--zookeeper-ensemble starts its own ZooKeeper: do not also give --zookeeper")
    if processes and brokers is not None:  # one of the two counts used to win without a word
        raise click.UsageError("--brokers and --processes both give the number of brokers: give one")
    if brokers is not None and broker_ids:  # --broker-ids won without a word
        raise click.UsageError("give --brokers N or --broker-ids 1,2,3, not both")
    ids = parse_broker_ids(processes or brokers, broker_ids)
    _check_ports_fit(listeners, ids)
    if processes and broker_ids and len(ids) != processes:
        raise click.UsageError(f"--broker-ids {broker_ids} names {len(ids)} brokers, --processes {processes}")
    backend = _backend(zookeeper)  # checks the connect string for --processes too
    if log_dir is not None:  # a bad one was a mkdir traceback, with --processes or without
        _check_writable_dir("--log-dir", log_dir)
    if processes:
        from zkcontroller.cluster.process_cluster import StartupError, run_process_cluster

        # The brokers and ZooKeeper run in sessions of their own, so a closed terminal's SIGHUP reaches only this
        # command: it stops them as Ctrl-C does, instead of dying and leaving them running. The first of these
        # signals stops the cluster; later ones are ignored (see `_interrupt_once`).
        with _signals_handled(_STOP_SIGNALS, _interrupt_once):
            try:
                with _unreachable_zookeeper_is_one_line(zookeeper):
                    asyncio.run(run_process_cluster(ids, zookeeper, log_dir, session_timeout_ms, zookeeper_ensemble,
                                                    on_slow_connect=waiting_notice(zookeeper) if zookeeper else None))
            except KeyboardInterrupt:
                click.echo("stopped")
            except StartupError as e:
                raise click.ClickException(str(e)) from None
        return
    from zkcontroller.cluster.local_cluster import ClusterStartError

    with _signals_handled((signal.SIGTERM,), _raise_keyboard_interrupt):
        try:
            with _unreachable_zookeeper_is_one_line(zookeeper):
                asyncio.run(run_cluster(backend, ids, log_dir, session_timeout_ms, listeners=listeners,
                                        cluster_name=cluster_name))
        except KeyboardInterrupt:
            click.echo("stopped")
        except ClusterStartError as e:  # the brokers started before it are stopped by then ("all brokers stopped")
            raise click.ClickException(str(e)) from None


@main.command(cls=KafkaCommand, short_help="One broker process, as kafka-server-start.sh.")
@click.argument("server_properties", required=False, type=click.Path(path_type=Path))  # load() says why it cannot
@click.option("--config", "config_path", type=click.Path(path_type=Path),
              help="Kafka's server.properties (or give it first, as to kafka-server-start.sh).")
@click.option("--override", "overrides", multiple=True, metavar="KEY=VALUE", help="Override one property.")
def broker(server_properties: Path | None, config_path: Path | None, overrides: tuple[str, ...]) -> None:
    """One broker (and controller candidate) per process, on Kafka's wire protocol, as kafka-server-start.sh:
    zkcontroller broker server.properties [--override KEY=VALUE]... Usage errors exit 1, as Kafka's
    printUsageAndDie."""
    from zkcontroller.cluster.broker_process import FatalStartupError, configure_logging, run_broker
    from zkcontroller.cluster.server_properties import ConfigError, load

    if (server_properties is None) == (config_path is None):
        raise click.UsageError("give server.properties (first, as kafka-server-start.sh takes it) or --config FILE, "
                               "not both" if server_properties is not None else
                               "give server.properties (first, as kafka-server-start.sh takes it) or --config FILE")
    config_path = server_properties or config_path
    assert config_path is not None
    configure_logging()
    try:
        props = load(config_path, overrides)
    except ConfigError as e:
        raise click.ClickException(str(e)) from None
    try:
        with _unreachable_zookeeper_is_one_line(props.zookeeper_connect):
            asyncio.run(run_broker(props))
    except FatalStartupError as e:  # a taken port: Kafka's fatal line is logged, this one ends the command
        raise click.ClickException(str(e)) from None


@main.command(short_help="A local ZooKeeper server (Debian's package).")
@click.option("--port", type=int, default=2181, show_default=True, help="Client port, on loopback.")
@click.option("--data-dir", type=click.Path(file_okay=False),
              help="Keep data here (default: $XDG_STATE_HOME/zkcontroller/zookeeper-PORT, kept across restarts).")
def zookeeper(port: int, data_dir: str | None) -> None:
    """Run a local ZooKeeper server (Debian's package) on 127.0.0.1 until interrupted; its data persists."""
    from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess, default_data_dir

    if not 0 < port < 65536:
        raise click.BadParameter(f"{port} is not a TCP port (1-65535)", param_hint="--port")
    directory = Path(data_dir) if data_dir else default_data_dir(port)
    _check_writable_dir("--data-dir" if data_dir else "the data directory", directory)
    # Given a directory, the server never deletes it on exit: the data outlives this process.
    server = ZooKeeperServerProcess(directory, port)
    click.echo(f"ZooKeeper data in {directory}")
    code = 0
    with _signals_handled((signal.SIGTERM,), _raise_keyboard_interrupt):  # stop the child server on `kill` too
        try:
            server.start()
        except (RuntimeError, TimeoutError) as e:  # port taken, not installed, exited or silent: one line
            raise click.ClickException(str(e)) from None
        click.echo(f"ZooKeeper listening on {server.connect_string} (Ctrl-C to stop)")
        try:
            code = server.wait()
        except KeyboardInterrupt:
            pass
        finally:
            server.cleanup()
    if code != 0:
        raise click.ClickException(f"ZooKeeper exited with {code}; see {directory / 'zookeeper.out'}")


def _raise_keyboard_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _signals_handled(signals: tuple[signal.Signals, ...],
                     handler: Callable[[int, object], None]) -> Iterator[None]:
    """``handler`` for ``signals`` while the command runs, the process's own handlers back after it. ``main`` also
    runs inside other programs (the tests, in-process): a handler left behind turned their later SIGTERM into a
    KeyboardInterrupt that the next in-process command caught and printed ``stopped`` for, so a test run killed by
    ``timeout`` carried on. A signal that came meanwhile is delivered again, after the command's own ``stopped``,
    to the process's own handler when it has one in Python (a test run's: tests/conftest.py), never to the
    default action or Python's Ctrl-C handler: a ``kill`` of the command itself still ends in ``stopped``, exit 0."""
    received: list[int] = []

    def noted(signum: int, frame: object) -> None:
        received.append(signum)
        handler(signum, frame)

    previous = {sig: signal.signal(sig, noted) for sig in signals}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, signal.SIG_DFL if old is None else old)  # None: set outside Python; the default
        for signum in dict.fromkeys(received):
            own = previous[signal.Signals(signum)]
            if callable(own) and own is not signal.default_int_handler:
                signal.raise_signal(signum)


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _interrupt_once(signum: int, frame: object) -> None:
    """Stop `cluster --processes` on the first signal and ignore the rest: a second one (`uv run` forwards a
    closed terminal's SIGHUP, which the command gets too; an impatient Ctrl-C) raised KeyboardInterrupt inside
    the clean-up and left the brokers and ZooKeeper running. SIGKILL still ends it."""
    for sig in _STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    raise KeyboardInterrupt


if __name__ == "__main__":  # pragma: no cover
    main()
