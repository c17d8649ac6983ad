"""``zkcontroller reassign``: the click front of `admin.reassign` in ``kafka-reassign-partitions.sh``'s layout.

Exactly one action: ``--generate``, ``--execute``, ``--verify``, ``--cancel`` or ``--list``. ``--execute`` and
``--verify`` show a progress bar of the target replicas already in the ISR; ``--execute --wait-ms`` keeps it
running until the reassignment completes (or the wait ends). ``--verify`` reads ZooKeeper, as Kafka's does;
``--verify --check-brokers`` also asks every broker for its metadata (bounded), naming any it could not ask.
With ``--bootstrap-server`` every action goes through a broker instead (`bootstrap_reassign`).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from zkcontroller.admin import bootstrap_reassign
from zkcontroller.admin.admin_client import AdminClient
from zkcontroller.admin.bootstrap_topics import run_with_admin
from zkcontroller.admin.cli import SERVER_HINT, fail_if_corrupt, run_with_client
from zkcontroller.admin.deprecation import REASSIGN_VERIFY_INCOMPLETE, REASSIGN_ZOOKEEPER_DEPRECATED
from zkcontroller.admin.reassign import (
    LOG_DIRS_NEED_BOOTSTRAP,
    ROLLBACK_NOTE,
    VERIFY_PERIODICALLY,
    PartitionStatus,
    ReassignCommand,
    ReassignmentInputError,
    list_output,
    parse_broker_list,
    parse_reassignment_file,
    parse_topics_to_move_json,
    throttle_set_line,
    unreachable_brokers_line,
)
from zkcontroller.admin.usage import JAVA_LONG, KafkaCommand
from zkcontroller.admin.user_files import UnreadableFileError, read_user_file
from zkcontroller.model import TopicPartition
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


def _require(path: str | None, option: str) -> None:
    if path is None:
        raise click.UsageError(f"{option} is required for this action")


def _read(path: str | None, option: str) -> tuple[str, str]:
    _require(path, option)
    assert path is not None
    try:
        return read_user_file(path, option), path
    except UnreadableFileError as e:
        raise click.ClickException(str(e)) from None


def _counts(statuses: list[PartitionStatus]) -> tuple[int, int]:
    """(target replicas in the ISR or done, all target replicas): the progress bar's numbers."""
    return (sum(len(s.target) if s.complete else s.in_isr for s in statuses), sum(len(s.target) for s in statuses))


def _progress_bar() -> Progress:
    """One bar on stderr, so stdout stays Kafka's."""
    return Progress(TextColumn("[bold]target replicas in ISR"), BarColumn(), MofNCompleteColumn(),
                    console=Console(stderr=True), transient=False)


def _show_progress(statuses: list[PartitionStatus]) -> None:
    done, total = _counts(statuses)
    with _progress_bar() as progress:
        progress.add_task("isr", total=total, completed=done)


@click.command("reassign", cls=KafkaCommand, short_help="Move replicas, as kafka-reassign-partitions.")
@click.option("--bootstrap-server", metavar="HOST:PORT[,...]",
              help="A broker's listener: reassign through the controller's AlterPartitionReassignments API.")
@click.option("--command-config", metavar="FILE",
              help="Admin client properties (default.api.timeout.ms, ...); with --bootstrap-server only.")
@click.option("--zookeeper", envvar="ZKCONTROLLER_ZOOKEEPER", metavar="HOST[:PORT][,...][/CHROOT]",
              help="ZooKeeper connect string (deprecated in Kafka; or set ZKCONTROLLER_ZOOKEEPER).")
@click.option("--generate", is_flag=True, help="Propose an assignment of the topics' partitions.")
@click.option("--execute", is_flag=True, help="Start the reassignment in the JSON file.")
@click.option("--verify", is_flag=True, help="Report whether the reassignment completed.")
@click.option("--cancel", is_flag=True, help="Cancel the reassignment in the JSON file.")
@click.option("--list", "list_", is_flag=True, help="List the partitions being reassigned.")
@click.option("--topics-to-move-json-file", type=click.Path(),
              help='--generate: the topics to move, as {"topics": [{"topic": "t"}], "version": 1}.')
@click.option("--broker-list", help="Comma-separated broker ids to move the topics to (--generate).")
@click.option("--disable-rack-aware", is_flag=True, help="--generate: place replicas without rack information.")
@click.option("--reassignment-json-file", type=click.Path(),
              help='--execute, --verify, --cancel: the reassignment, as {"version": 1, "partitions": [{"topic": '
                   '"t", "partition": 0, "replicas": [1, 2]}]} (--generate prints one).')
@click.option("--wait-ms", type=click.IntRange(min=0), default=0, help="--execute: wait this long for completion.")
@click.option("--preserve-throttles", is_flag=True,
              help="--verify (and --cancel with --bootstrap-server): leave the reassignment throttle configs in "
                   "place.")
@click.option("--check-brokers", is_flag=True,
              help="--verify: also ask every broker (Metadata over Kafka's protocol, 5 s each) that it lists the "
                   "target replicas.")
@click.option("--throttle", type=JAVA_LONG, default=-1, show_default=False, metavar="BYTES_PER_S",
              help="--execute: set the brokers' replication throttle rates and the moving replicas' topic "
                   "throttles first (cleared by --verify once done).")
@click.option("--replica-alter-log-dirs-throttle", type=JAVA_LONG, default=-1, show_default=False,
              metavar="BYTES_PER_S", help="Refused: our brokers do not move replicas between log directories.")
@click.option("--additional", is_flag=True,
              help="--execute with --bootstrap-server: start this reassignment beside the ongoing ones (or "
                   "resubmit one to change its throttle).")
def reassign(bootstrap_server: str | None, command_config: str | None, zookeeper: str | None, generate: bool,
             execute: bool, verify: bool, cancel: bool, list_: bool,
             topics_to_move_json_file: str | None, broker_list: str | None, disable_rack_aware: bool,
             reassignment_json_file: str | None, wait_ms: int, preserve_throttles: bool, check_brokers: bool,
             throttle: int, replica_alter_log_dirs_throttle: int, additional: bool) -> None:
    """Move partition replicas between brokers (kafka-reassign-partitions.sh --zookeeper)."""
    # Separate flags, not one shared destination: with that, `--verify --execute` silently ran the last one.
    chosen = [name for name, given in (("generate", generate), ("execute", execute), ("verify", verify),
                                       ("cancel", cancel), ("list", list_)) if given]
    if len(chosen) != 1:
        raise click.UsageError("Command must include exactly one action: --generate, --execute, --verify, "
                               "--cancel, or --list")
    action = chosen[0]
    # validateAndParseArgs' checkRequiredArgs, in its order; then the notice, before any file is read
    if action == "generate":
        _require(topics_to_move_json_file, "--topics-to-move-json-file")
        if broker_list is None:
            raise click.UsageError("--broker-list is required with --generate")
    elif action != "list":
        _require(reassignment_json_file, "--reassignment-json-file")
    if bootstrap_server is None and zookeeper is None:  # validateAndParseArgs' words, then where to get either
        raise click.UsageError(f"Please specify --bootstrap-server. {SERVER_HINT}")
    _check_execute_options(action, bootstrap_server is not None, replica_alter_log_dirs_throttle)
    if bootstrap_server is not None:
        zk_from = click.get_current_context().get_parameter_source("zookeeper")
        if zookeeper is not None and zk_from != click.core.ParameterSource.ENVIRONMENT:
            click.echo("Warning: ignoring deprecated --zookeeper option because --bootstrap-server was specified.  "
                       "The --zookeeper option will be removed in a future version of Kafka.")
        _reassign_through_broker(bootstrap_server, command_config, action, topics_to_move_json_file, broker_list,
                                 disable_rack_aware, reassignment_json_file, wait_ms, preserve_throttles,
                                 check_brokers, throttle, additional)
        return
    assert zookeeper is not None
    click.echo(REASSIGN_ZOOKEEPER_DEPRECATED)
    try:
        if action == "generate":
            text, source = _read(topics_to_move_json_file, "--topics-to-move-json-file")
            assert broker_list is not None
            brokers = parse_broker_list(broker_list)  # parseGenerateAssignmentArgs: the brokers, then the topics
            topics = parse_topics_to_move_json(text, source)
            current, proposed = run_with_client(zookeeper, lambda zk: ReassignCommand(zk).generate(
                topics, brokers, rack_aware=not disable_rack_aware))
            click.echo(f"Current partition replica assignment\n{current}\n")
            click.echo(f"Proposed partition reassignment configuration\n{proposed}")
            return
        if action == "list":
            async def both(zk: KafkaZkClient) -> tuple[list[str], int]:
                command = ReassignCommand(zk)
                found, corrupt = await command.list_readable()
                pending, submission = await command.not_yet_started_or_error(found)
                lines = list_output(found, pending, corrupt, submission)
                return lines, len(corrupt) + (submission is not None)

            lines, corrupt = run_with_client(zookeeper, both)
            for line in lines:
                click.echo(line)
            fail_if_corrupt(corrupt)
            return
        text, source = _read(reassignment_json_file, "--reassignment-json-file")
        targets, log_dirs = parse_reassignment_file(text, source)
    except ReassignmentInputError as e:
        raise click.ClickException(str(e)) from None
    if log_dirs:  # executeAssignment/verifyAssignment with a ZooKeeper client, before anything is read or written
        raise click.ClickException(LOG_DIRS_NEED_BOOTSTRAP)
    if action == "execute":
        rollback = run_with_client(zookeeper, lambda zk: ReassignCommand(zk).execute(targets, throttle))
        click.echo(f"Current partition replica assignment\n\n{rollback}\n\n{ROLLBACK_NOTE}")
        if throttle >= 0:
            click.echo(VERIFY_PERIODICALLY)
            click.echo(throttle_set_line(throttle))
        plural = "" if len(targets) == 1 else "s"
        click.echo(f"Successfully started partition reassignment{plural} for "
                   f"{','.join(str(tp) for tp in sorted(targets))}")
        deadline = time.monotonic() + wait_ms / 1000
        with _progress_bar() as progress:  # redrawn on every poll while --wait-ms lasts
            bar = progress.add_task("isr", total=sum(len(r) for r in targets.values()))
            while True:
                statuses = run_with_client(zookeeper, lambda zk: ReassignCommand(zk).verify(targets))
                done, total = _counts(statuses)
                progress.update(bar, completed=done, total=total)
                if all(s.complete for s in statuses) or time.monotonic() >= deadline:
                    break
                time.sleep(0.2)  # the process edge: a CLI polling ZooKeeper
    elif action == "verify":
        click.echo(REASSIGN_VERIFY_INCOMPLETE)  # verifyAssignment's, once the JSON is read

        async def verify_all(zk: KafkaZkClient) -> tuple[list[PartitionStatus], str | None, bool]:
            command = ReassignCommand(zk)
            if not check_brokers:  # Kafka's: ZooKeeper alone (brokers need not be reachable from here)
                statuses, unreachable = await command.verify(targets), None
            else:
                views = await command.broker_views({tp.topic for tp in targets})
                statuses, unreachable = await command.verify(targets, views), unreachable_brokers_line(views)
            return statuses, unreachable, await zk.reassign_partitions_in_progress()

        statuses, unreachable, pending = run_with_client(zookeeper, verify_all)
        click.echo("Status of partition reassignment:")
        for s in statuses:
            click.echo(s.message)
        if unreachable:
            click.echo(unreachable)
        unreadable: list[ZnodeDecodeError] = []
        if not pending and not preserve_throttles:  # Kafka: once no reassignment at all is pending
            brokers, topics, unreadable = run_with_client(
                zookeeper, lambda zk: ReassignCommand(zk).clear_throttles(targets))
            click.echo(f"Clearing broker-level throttles on broker{'' if len(brokers) == 1 else 's'} "
                       f"{','.join(map(str, brokers))}")
            click.echo(f"Clearing topic-level throttles on topic{'' if len(topics) == 1 else 's'} {','.join(topics)}")
            for error in unreadable:
                click.echo(f"Not cleared, its config cannot be read\tCorrupt: {error.path}: {error.reason}")
        _show_progress(statuses)
        fail_if_corrupt(len(unreadable))
    else:  # cancel
        async def cancel_all(zk: KafkaZkClient) -> list[TopicPartition]:
            return await ReassignCommand(zk).cancel(targets)

        cancelled = run_with_client(zookeeper, cancel_all)
        if cancelled:
            click.echo(f"Successfully cancelled partition reassignment{'' if len(cancelled) == 1 else 's'} for: "
                       f"{','.join(str(tp) for tp in cancelled)}")
        else:
            click.echo("None of the specified partition reassignments are active.")


_EXECUTE_ONLY = ("throttle", "replica_alter_log_dirs_throttle", "additional")
"""The options validateAndParseArgs permits with ``--execute`` alone."""
LOG_DIRS_THROTTLE_REFUSED = (
    "--replica-alter-log-dirs-throttle: these brokers do not move replicas between log directories (they serve no "
    "AlterReplicaLogDirs, and a reassignment naming a log dir is refused), so there is nothing for it to throttle")


def log_dirs_refused(source: str, tp: TopicPartition, replica: int, log_dir: str) -> str:
    """Why a file naming a log dir other than "any" is refused with ``--bootstrap-server``: Kafka would start the
    reassignment, then fail on AlterReplicaLogDirs, which these brokers do not serve; refused before anything
    is written instead."""
    return (f'{source}: partition {tp} puts replica {replica} in log dir {log_dir}: these brokers do not move '
            'replicas between log directories (they serve no AlterReplicaLogDirs); use "any" or leave out log_dirs')


def _check_execute_options(action: str, bootstrap: bool, log_dirs_throttle: int) -> None:
    """validateAndParseArgs for the execute-only options, the first typed named: joptsimple's ``Option
    "[throttle]" can't be used with action "[verify]"``, then ``You must specify --bootstrap-server when using
    "[additional]"`` (``--throttle`` works with both); a log-dir throttle is refused (`LOG_DIRS_THROTTLE_REFUSED`)."""
    ctx = click.get_current_context()
    given = [name for name in ctx.params  # click fills it in the order the options were typed
             if name in _EXECUTE_ONLY and ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE]
    for name in given:
        option = name.replace("_", "-")
        if action != "execute":
            raise click.UsageError(f'Option "[{option}]" can\'t be used with action "[{action}]"')
        if not bootstrap and name != "throttle":
            raise click.ClickException(f'You must specify --bootstrap-server when using "[{option}]"')
    if log_dirs_throttle >= 0:
        raise click.ClickException(LOG_DIRS_THROTTLE_REFUSED)


def _reassign_through_broker(bootstrap_server: str, command_config: str | None, action: str,
                             topics_to_move_json_file: str | None, broker_list: str | None,
                             disable_rack_aware: bool, reassignment_json_file: str | None, wait_ms: int,
                             preserve_throttles: bool, check_brokers: bool, throttle: int = -1,
                             additional: bool = False) -> None:
    """ReassignPartitionsCommand's AdminClient path (`bootstrap_reassign`); ``--wait-ms`` polls
    ListPartitionReassignments until the targets are done (no progress bar: a broker reports no ISR counts
    of another's target replicas); ``--check-brokers`` is for ``--zookeeper`` (these states come from the
    brokers already)."""
    if check_brokers:
        raise click.UsageError("--check-brokers is for --zookeeper: with --bootstrap-server the states already "
                               "come from the brokers")
    try:
        if action == "generate":
            text, source = _read(topics_to_move_json_file, "--topics-to-move-json-file")
            assert broker_list is not None
            brokers = parse_broker_list(broker_list)
            topics = parse_topics_to_move_json(text, source)
            current, proposed = run_with_admin(bootstrap_server, command_config, lambda admin: (
                bootstrap_reassign.generate(admin, topics, brokers, not disable_rack_aware, random.Random())))
            click.echo(f"Current partition replica assignment\n{current}\n")
            click.echo(f"Proposed partition reassignment configuration\n{proposed}")
            return
        if action == "list":
            for line in run_with_admin(bootstrap_server, command_config, bootstrap_reassign.list_lines):
                click.echo(line)
            return
        text, source = _read(reassignment_json_file, "--reassignment-json-file")
        targets, log_dirs = parse_reassignment_file(text, source)
    except ReassignmentInputError as e:
        raise click.ClickException(str(e)) from None
    if log_dirs:
        (tp, replica), log_dir = next(iter(log_dirs.items()))
        raise click.ClickException(log_dirs_refused(source, tp, replica, log_dir))
    if action == "execute":
        async def execute(admin: AdminClient) -> list[str]:
            lines = await bootstrap_reassign.execute(admin, targets, additional=additional, throttle=throttle)
            if wait_ms:
                deadline = time.monotonic() + wait_ms / 1000
                wanted = [(tp.topic, tp.partition) for tp in targets]
                while time.monotonic() < deadline:
                    if not await admin.list_reassignments(wanted):
                        break
                    await asyncio.sleep(0.2)  # the process edge: a CLI polling the controller
            return lines

        _print_then_fail(bootstrap_server, command_config, execute)
    elif action == "verify":
        async def verify(admin: AdminClient) -> list[str]:
            return (await bootstrap_reassign.verify(admin, targets, preserve_throttles))[0]

        _print_then_fail(bootstrap_server, command_config, verify)
    else:
        _print_then_fail(bootstrap_server, command_config,
                         lambda admin: bootstrap_reassign.cancel(admin, targets, preserve_throttles))


def _print_then_fail(bootstrap_server: str, command_config: str | None,
                     action: Callable[[AdminClient], Awaitable[list[str]]]) -> None:
    """Print the action's lines; when it fails part-way, the lines Kafka's tool has printed by then, then the
    error (`bootstrap_reassign.PrintedThenFailed`)."""
    async def run(admin: AdminClient) -> tuple[list[str], str | None]:
        try:
            return await action(admin), None
        except bootstrap_reassign.PrintedThenFailed as e:
            return e.lines, str(e)

    lines, failure = run_with_admin(bootstrap_server, command_config, run)
    for line in lines:
        click.echo(line)
    if failure is not None:
        raise click.ClickException(failure)
