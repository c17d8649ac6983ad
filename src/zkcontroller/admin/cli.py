"""``zkcontroller topics|brokers|controller``: admin commands as Kafka 2.8's ``kafka-topics`` works (same output
layout and messages), against a real ZooKeeper or through a broker's listener.

Every command takes exactly one of ``--zookeeper`` and ``--bootstrap-server`` (TopicCommand's rule,
`exactly_one_server`). With ``--zookeeper`` it opens one session, does its reads or writes through
`KafkaZkClient` and closes it; with ``--bootstrap-server`` it speaks the wire protocol through our admin client
(`bootstrap_topics` for ``topics``, `bootstrap_cluster` for ``brokers list`` and ``controller show``), the only way
another process reaches a cluster on the embedded store. A user error (a bad name, an existing topic, an
unreachable server) prints ``Error: <message>`` and exits 1, without a traceback.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import ClassVar, TypeVar

import click

from zkcontroller.admin import bootstrap_cluster, bootstrap_topics
from zkcontroller.admin.describe import (
    DescribeFilter,
    broker_line,
    controller_status,
    count_corrupt,
    describe_lines,
    describe_topics,
    list_topic_lines,
    registered_brokers,
    select_topics,
)
from zkcontroller.admin.errors import (
    AdminError,
    InvalidPartitionsError,
    TopicExistsError,
)
from zkcontroller.admin.replica_assignment import RackAwareMode
from zkcontroller.admin.topic_rules import (
    MESSAGE_FORMAT_WARNING,
    collision_warning,
    parse_replica_assignment,
    parse_topic_configs,
    validate_topic_config_names,
)
from zkcontroller.admin.topics import TopicAdmin, change_topic_config, deletion_lines
from zkcontroller.admin.usage import JAVA_INT, KafkaGroup, bad_connect_string, waiting_notice
from zkcontroller.coordination.connect import make_backend
from zkcontroller.coordination.errors import ConnectionLossError, ZkError
from zkcontroller.coordination.kazoo_backend import ChrootMissingError
from zkcontroller.model import is_internal
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.config_values import JAVA_TRIM
from zkcontroller.zk.errors import KafkaZkError, ZnodeDecodeError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.paths import ConfigType

T = TypeVar("T")

SERVER_HINT = (
    "`zkcontroller zookeeper` starts a ZooKeeper (or set ZKCONTROLLER_ZOOKEEPER); a cluster on the embedded "
    "store (`demo`, `cluster`) is reached through a broker's listener with --bootstrap-server HOST:PORT, "
    "whose addresses `cluster` prints at start-up and in `status`")
"""Said after Kafka's "Only one of --bootstrap-server or --zookeeper must be specified" when neither is given."""


def server_options(f: Callable[..., None]) -> Callable[..., None]:
    """``--zookeeper`` or ``--bootstrap-server`` (TopicCommand's: exactly one), and ``--command-config``."""
    f = click.option("--command-config", metavar="FILE",
                     help="Admin client properties (default.api.timeout.ms, request.timeout.ms, retry.backoff.ms, "
                          "client.id); with --bootstrap-server only.")(f)
    f = click.option("--bootstrap-server", metavar="HOST:PORT[,...]",
                     help="A broker's listener (or several, comma-separated): the admin client's way in, and the "
                          "only one to a cluster on the embedded store.")(f)
    return click.option("--zookeeper", envvar="ZKCONTROLLER_ZOOKEEPER", metavar="HOST[:PORT][,...][/CHROOT]",
                        help="ZooKeeper connect string (deprecated in Kafka; or set ZKCONTROLLER_ZOOKEEPER).")(f)


def exactly_one_server(zookeeper: str | None, bootstrap_server: str | None) -> str | None:
    """TopicCommand.checkArgs' "Only one of ..." (an IllegalArgumentException there, exit 1); the zookeeper
    from ZKCONTROLLER_ZOOKEEPER gives way to a --bootstrap-server on the command line. Returns the ZooKeeper
    connect string, or None for the bootstrap path."""
    ctx = click.get_current_context()
    if bootstrap_server is not None and ctx.get_parameter_source("zookeeper") == click.core.ParameterSource.ENVIRONMENT:
        zookeeper = None
    if (zookeeper is None) == (bootstrap_server is None):
        message = "Only one of --bootstrap-server or --zookeeper must be specified"
        raise click.UsageError(message if zookeeper is not None else f"{message}. {SERVER_HINT}", ctx)
    return zookeeper


def run_with_client(zookeeper: str, action: Callable[[KafkaZkClient], Awaitable[T]]) -> T:
    """Run ``action`` on a client over a fresh session; user-facing failures become `click.ClickException`.

    A znode the action could not use (`ZnodeDecodeError`) is one line naming its path and what is wrong with it,
    where Kafka's tools end with the Jackson or Kafka exception (and often its stack trace).

    The chroot must exist (an admin command never creates one: a typo would read as an empty cluster), and if
    the connection takes more than a moment the user is told it is being attempted (`waiting_notice`)."""
    async def main() -> T:
        try:
            backend = make_backend(zookeeper, wall_clock_ms, create_chroot=False,
                                   on_slow_connect=waiting_notice(zookeeper))
        except ValueError as e:  # Kafka's tools: ZooKeeper's exception, exit 1, no usage (see bad_connect_string)
            raise bad_connect_string(e) from None
        try:
            session = await backend.new_session()
            try:
                return await action(KafkaZkClient(session, wall_clock_ms))
            finally:
                await session.close()
        finally:
            await backend.close()

    # kazoo narrates every failed connection attempt; the outcome reaches the user as one error line.
    logging.getLogger("kazoo.client").setLevel(logging.CRITICAL)
    try:
        return asyncio.run(main())
    except AdminError as e:
        # Kafka's line, then (for some errors) what to do here instead: e.g. Kafka names an option we lack
        hint = getattr(e, "hint", "")
        raise click.ClickException(f"{e}\n{hint}" if hint else str(e)) from None
    except ConnectionLossError:
        raise click.ClickException(f"cannot connect to ZooKeeper at {zookeeper}") from None
    except ChrootMissingError as e:
        raise click.ClickException(str(e)) from None
    except ZnodeDecodeError as e:  # the data, not the server: "Malformed znode <path>: <reason>"
        raise click.ClickException(str(e)) from None
    except (ZkError, KafkaZkError) as e:
        raise click.ClickException(f"ZooKeeper at {zookeeper}: {e}") from None


def _rng(seed: int | None) -> random.Random:
    """Placement randomness: seeded for reproducible runs, else from the OS (this is the process edge)."""
    return random.Random(seed)


# ------------------------------------------------------------------ topics


class KafkaTopicsLayout(KafkaGroup):
    """Accepts ``kafka-topics.sh``'s layout as well as subcommands: ``topics --create --topic T --partitions 3
    ...`` is ``topics create T --partitions 3 ...`` (likewise ``--alter``, ``--delete``, ``--describe``,
    ``--list``), so a Kafka user's commands and scripts work as typed."""

    ACTIONS: ClassVar[dict[str, str]] = {
        "--create": "create", "--alter": "alter", "--delete": "delete", "--describe": "describe", "--list": "list"}
    NAMED = ("create", "alter", "delete")
    """Actions whose topic is our positional NAME rather than a ``--topic`` option."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        actions = [a for a in args if a in self.ACTIONS]
        # Kafka's layout with its action left out (``topics --zookeeper ZK --topic t``) was "No such option
        # '--zookeeper'", an option every action takes: it is kafka-topics' missing-action error instead.
        no_action = not actions and bool(args) and args[0].startswith("-") and args[0] not in ctx.help_option_names
        if len(actions) > 1 or no_action:
            raise click.UsageError("Command must include exactly one action: --list, --describe, --create, "
                                   "--alter or --delete", ctx)
        if not actions:
            return super().parse_args(ctx, args)
        command = self.ACTIONS[actions[0]]
        rest = [a for a in args if a not in self.ACTIONS]
        if command in self.NAMED:
            rest = self._topic_as_argument(ctx, rest)
        return super().parse_args(ctx, [command, *rest])

    @staticmethod
    def _topic_as_argument(ctx: click.Context, args: list[str]) -> list[str]:
        for i, arg in enumerate(args):
            if arg == "--topic" and i + 1 < len(args):
                return [*args[:i], *args[i + 2:], args[i + 1]]
            if arg.startswith("--topic="):
                return [*args[:i], *args[i + 1:], arg.removeprefix("--topic=")]
        raise click.UsageError('Missing required argument "[topic]"', ctx)


@click.group(cls=KafkaTopicsLayout, short_help="Create, alter, describe, list and delete topics.")
def topics() -> None:
    """Create, alter, describe, list and delete topics (as kafka-topics, with --zookeeper or --bootstrap-server;
    its layout, --create, --describe, --list, --alter or --delete with --topic, works too)."""


@topics.command("create")
@server_options
@click.argument("name")
@click.option("--partitions", type=JAVA_INT, help="Number of partitions.")
@click.option("--replication-factor", type=JAVA_INT, help="Replicas per partition.")
@click.option("--replica-assignment", metavar="B:B,B:B,...",
              help="Explicit placement: partition i gets the i-th ':'-separated broker list.")
@click.option("--config", "configs", multiple=True, metavar="KEY=VALUE", help="A topic config override.")
@click.option("--disable-rack-aware", is_flag=True, help="Place replicas without rack information.")
@click.option("--if-not-exists", is_flag=True, help="Succeed quietly if the topic exists.")
@click.option("--seed", type=int, help="Seed the replica placement's random start (reproducible runs).")
def create_topic(zookeeper: str | None, bootstrap_server: str | None, command_config: str | None, name: str,
                 partitions: int | None, replication_factor: int | None, replica_assignment: str | None,
                 configs: tuple[str, ...], disable_rack_aware: bool, if_not_exists: bool, seed: int | None) -> None:
    """Create topic NAME (with --bootstrap-server, a missing --partitions or --replication-factor is the
    broker's default)."""
    zookeeper = exactly_one_server(zookeeper, bootstrap_server)
    # TopicCommand.checkArgs' wording (joptsimple names an option "[name]")
    if replica_assignment is not None and (partitions is not None or replication_factor is not None):
        clash = "partitions" if partitions is not None else "replication-factor"
        raise click.UsageError(f'Option "[replica-assignment]" can\'t be used with option "[{clash}]"')
    if zookeeper is not None and replica_assignment is None and (partitions is None or replication_factor is None):
        missing = "partitions" if partitions is None else "replication-factor"
        raise click.UsageError(f'Missing required argument "[{missing}]"')
    try:
        overrides = parse_topic_configs(configs)
        explicit = parse_replica_assignment(replica_assignment) if replica_assignment is not None else None
    except AdminError as e:
        raise click.ClickException(str(e)) from None
    if "message.format.version" in overrides:  # TopicCommand: once the configs are valid, before anything else
        click.echo(MESSAGE_FORMAT_WARNING.format(overrides["message.format.version"]))
    warning = collision_warning(name)
    if warning is not None:
        click.echo(warning)
    mode = RackAwareMode.DISABLED if disable_rack_aware else RackAwareMode.ENFORCED
    if zookeeper is None:
        assert bootstrap_server is not None
        if bootstrap_topics.run_with_admin(bootstrap_server, command_config, lambda admin: (
                bootstrap_topics.create_topic(admin, name, partitions, replication_factor, explicit, overrides,
                                              if_not_exists))):
            click.echo(f"Created topic {name}.")
        return

    async def action(zk: KafkaZkClient) -> bool:
        admin = TopicAdmin(zk, _rng(seed), strict_brokers=True)
        try:
            if explicit is not None:
                await admin.create_topic_with_assignment(name, explicit, overrides)
            else:
                assert partitions is not None and replication_factor is not None
                await admin.create_topic(name, partitions, replication_factor, overrides, rack_aware_mode=mode)
        except TopicExistsError:
            if not if_not_exists:
                raise
            return False
        return True

    if run_with_client(zookeeper, action):
        click.echo(f"Created topic {name}.")


BOOTSTRAP_CONFIGS_HINT = "the zkcontroller configs CLI supports altering topic configs with a --bootstrap-server option"
"""TopicCommand's pointer to kafka-configs, naming our configs command (which takes --bootstrap-server too)."""

CONFIG_ALTERATION_WARNING = (
    "WARNING: Altering topic configuration from this script has been deprecated and may be removed in future "
    "releases.\n         Going forward, please use zkcontroller configs for this functionality")
"""TopicCommand's notice, naming our configs command where Kafka names kafka-configs.sh."""


@topics.command("alter")
@server_options
@click.argument("name")
@click.option("--partitions", type=JAVA_INT, help="The new (larger) number of partitions.")
@click.option("--replica-assignment", metavar="B:B,B:B,...",
              help="Placement of all partitions; the lists past the current count place the new ones.")
@click.option("--config", "configs", multiple=True, metavar="KEY=VALUE",
              help="A config override to add or change (deprecated in Kafka: prefer `zkcontroller configs`).")
@click.option("--delete-config", "deleted", multiple=True, metavar="KEY", help="A config override to remove.")
@click.option("--if-exists", is_flag=True, help="No error if NAME matches no topic.")
@click.option("--disable-rack-aware", is_flag=True, help="Place the new partitions' replicas without rack information.")
@click.option("--seed", type=int, help="Seed the replica placement.")
def alter_topic(zookeeper: str | None, bootstrap_server: str | None, command_config: str | None, name: str,
                partitions: int | None, replica_assignment: str | None, configs: tuple[str, ...],
                deleted: tuple[str, ...], if_exists: bool, disable_rack_aware: bool, seed: int | None) -> None:
    """Add partitions to, or change the configs of, the topics NAME matches (a regular expression, commas
    meaning "or", as kafka-topics' --alter --topic takes it). With --bootstrap-server, partitions only."""
    zookeeper = exactly_one_server(zookeeper, bootstrap_server)
    if zookeeper is None:  # TopicCommand.checkArgs, in its order
        if configs:
            raise click.UsageError(f'Option combination "[bootstrap-server],[config]" can\'t be used with option '
                                   f'"[alter]" ({BOOTSTRAP_CONFIGS_HINT})')
        if partitions is None:
            raise click.UsageError('Missing required argument "[partitions]"')
        if deleted:
            raise click.UsageError('Option "[delete-config]" can\'t be used with option "[bootstrap-server]"')
    if partitions is None and not configs and not deleted:
        raise click.UsageError("--alter needs --partitions, --config or --delete-config")
    if replica_assignment is not None and partitions is None:
        raise click.UsageError("--replica-assignment needs --partitions")
    try:
        explicit = parse_replica_assignment(replica_assignment) if replica_assignment else None
        overrides = parse_topic_configs(configs)
        to_delete = [key.strip(JAVA_TRIM) for key in deleted]  # parseTopicConfigsToBeDeleted: String.trim
        validate_topic_config_names(to_delete)
    except AdminError as e:
        raise click.ClickException(str(e)) from None
    if "message.format.version" in overrides:
        click.echo(MESSAGE_FORMAT_WARNING.format(overrides["message.format.version"]))
    mode = RackAwareMode.DISABLED if disable_rack_aware else RackAwareMode.ENFORCED
    if zookeeper is None:
        assert bootstrap_server is not None and partitions is not None
        new_count = partitions
        bootstrap_topics.run_with_admin(bootstrap_server, command_config, lambda admin: bootstrap_topics.alter_topic(
            admin, name, new_count, explicit, if_exists, exclude_internal=False))
        return

    async def action(zk: KafkaZkClient) -> None:
        # TopicCommand's ZooKeeper alterTopic: each matching topic in turn, configs first, then partitions.
        for topic in await select_topics(zk, name, must_exist=not if_exists):
            if configs or deleted:
                click.echo(CONFIG_ALTERATION_WARNING)
                updated = {**await zk.get_entity_configs(ConfigType.TOPIC, topic), **overrides}
                for key in to_delete:  # unlike configs --alter, an absent key is no error here
                    updated.pop(key, None)
                await change_topic_config(zk, topic, updated)
                click.echo(f"Updated config for topic {topic}.")
            if partitions is None:
                continue
            if is_internal(topic):  # before the warning, as Kafka
                raise InvalidPartitionsError(
                    f"The number of partitions for the internal topic {topic} cannot be changed.")
            click.echo("WARNING: If partitions are increased for a topic that has a key, the partition logic or "
                       "ordering of the messages will be affected")
            existing = (await zk.get_partitions_for_topics([topic])).values.get(topic) or []
            new = None if explicit is None else [explicit[p] for p in sorted(explicit) if p >= len(existing)]
            admin = TopicAdmin(zk, _rng(seed), strict_brokers=True)
            await admin.add_partitions(topic, partitions, new or None, rack_aware_mode=mode)
            click.echo("Adding partitions succeeded!")

    run_with_client(zookeeper, action)


@topics.command("describe")
@server_options
@click.option("--topic", help="Topic name or regular expression (commas mean 'or').")
@click.option("--under-replicated-partitions", is_flag=True, help="Only partitions with ISR smaller than replicas.")
@click.option("--unavailable-partitions", is_flag=True, help="Only partitions without a live leader.")
@click.option("--topics-with-overrides", is_flag=True, help="Only topics with config overrides.")
@click.option("--under-min-isr-partitions", is_flag=True,
              help="Only partitions whose ISR is below min.insync.replicas (with --bootstrap-server only).")
@click.option("--at-min-isr-partitions", is_flag=True,
              help="Only partitions whose ISR is exactly min.insync.replicas (with --bootstrap-server only).")
@click.option("--exclude-internal", is_flag=True, help="Leave out internal topics.")
@click.option("--if-exists", is_flag=True, help="No error if --topic matches nothing.")
def describe_topic(zookeeper: str | None, bootstrap_server: str | None, command_config: str | None,
                   topic: str | None, under_replicated_partitions: bool, unavailable_partitions: bool,
                   topics_with_overrides: bool, under_min_isr_partitions: bool, at_min_isr_partitions: bool,
                   exclude_internal: bool, if_exists: bool) -> None:
    """Describe topics: one line per topic, one per partition."""
    zookeeper = exactly_one_server(zookeeper, bootstrap_server)
    # TopicCommand.checkArgs: --if-exists needs --topic, and the report filters exclude each other.
    if if_exists and topic is None:
        raise click.UsageError('Missing required argument "[topic]"')
    if zookeeper is not None:  # the min-ISR reports need the AdminClient: joptsimple's words, exit 1
        for report, on in (("under-min-isr-partitions", under_min_isr_partitions),
                           ("at-min-isr-partitions", at_min_isr_partitions)):
            if on:
                raise click.UsageError(f'Option "[{report}]" can\'t be used with option "[zookeeper]"')
    given = [name for name, on in (("under-replicated-partitions", under_replicated_partitions),
                                   ("unavailable-partitions", unavailable_partitions),
                                   ("under-min-isr-partitions", under_min_isr_partitions),
                                   ("at-min-isr-partitions", at_min_isr_partitions),
                                   ("topics-with-overrides", topics_with_overrides)) if on]
    if len(given) > 1:
        raise click.UsageError(f'Option "[{given[0]}]" can\'t be used with option "[{given[1]}]"')
    if zookeeper is None:
        assert bootstrap_server is not None
        opts = bootstrap_topics.DescribeOptions(under_replicated_partitions, unavailable_partitions,
                                                under_min_isr_partitions, at_min_isr_partitions,
                                                topics_with_overrides)
        for line in bootstrap_topics.run_with_admin(
                bootstrap_server, command_config,
                lambda admin: bootstrap_topics.describe_lines(admin, topic, opts, if_exists, exclude_internal)):
            click.echo(line)
        return
    filt = DescribeFilter(under_replicated_partitions, unavailable_partitions, topics_with_overrides)

    async def action(zk: KafkaZkClient) -> tuple[list[str], int]:
        # Kafka reads the brokers first and throws on a registration it cannot parse; here it is shown first
        # (a partition it leads counts as unavailable) and the topics are still described.
        names = await select_topics(zk, topic, exclude_internal=exclude_internal, must_exist=not if_exists)
        registered, corrupt_brokers = await registered_brokers(zk)
        live = [b.broker.id for b in registered]
        descriptions = await describe_topics(zk, names)
        lines = [*corrupt_brokers.values(), *describe_lines(descriptions, live, filt)]
        return lines, len(corrupt_brokers) + count_corrupt(descriptions)

    lines, corrupt = run_with_client(zookeeper, action)
    for line in lines:
        click.echo(line)
    fail_if_corrupt(corrupt)


def fail_if_corrupt(count: int) -> None:
    """Corrupt znodes were shown above; the command still fails, so scripts notice."""
    if count:
        raise click.ClickException(f"{count} corrupt znode{'s' if count > 1 else ''} (see the lines above)")


@topics.command("list")
@server_options
@click.option("--topic", help="Topic name or regular expression.")
@click.option("--exclude-internal", is_flag=True, help="Leave out internal topics.")
def list_topics(zookeeper: str | None, bootstrap_server: str | None, command_config: str | None,
                topic: str | None, exclude_internal: bool) -> None:
    """List topic names, marking those queued for deletion (with --zookeeper: a broker's metadata cannot say)."""
    zookeeper = exactly_one_server(zookeeper, bootstrap_server)
    if zookeeper is None:
        assert bootstrap_server is not None
        names = bootstrap_topics.run_with_admin(
            bootstrap_server, command_config, lambda admin: bootstrap_topics.get_topics(admin, topic, exclude_internal))
        click.echo("\n".join(names))  # Kafka's println(mkString("\n")): an empty line for no topics
        return
    lines = run_with_client(zookeeper, lambda zk: list_topic_lines(zk, topic, exclude_internal=exclude_internal))
    for line in lines:
        click.echo(line)


@topics.command("delete")
@server_options
@click.argument("name")
@click.option("--exclude-internal", is_flag=True, help="Leave out internal topics matched by NAME.")
@click.option("--if-exists", is_flag=True, help="No error if NAME matches no topic.")
def delete_topic(zookeeper: str | None, bootstrap_server: str | None, command_config: str | None, name: str,
                 exclude_internal: bool, if_exists: bool) -> None:
    """Mark the topics NAME matches for deletion (the controller deletes them if delete.topic.enable).

    NAME is what kafka-topics' --delete --topic takes: a regular expression, commas meaning "or". With
    --bootstrap-server it goes through DeleteTopics and, as Kafka's tool, prints nothing on success."""
    zookeeper = exactly_one_server(zookeeper, bootstrap_server)
    if zookeeper is None:
        assert bootstrap_server is not None
        bootstrap_topics.run_with_admin(bootstrap_server, command_config, lambda admin: bootstrap_topics.delete_topics(
            admin, name, if_exists, exclude_internal))
        return

    async def action(zk: KafkaZkClient) -> None:
        admin = TopicAdmin(zk, _rng(None))
        async for topic, marked_now in admin.delete_topics_matching(name, exclude_internal=exclude_internal,
                                                                    if_exists=if_exists):
            for line in deletion_lines(topic, marked_now):
                click.echo(line)

    run_with_client(zookeeper, action)


# ------------------------------------------------------------------ brokers, controller


@click.group()
def brokers() -> None:
    """Registered brokers."""


@brokers.command("list")
@server_options
def list_brokers(zookeeper: str | None, bootstrap_server: str | None, command_config: str | None) -> None:
    """One line per registered broker: id, epoch (registration czxid), rack, endpoints. A registration that
    cannot be read is a "Broker: <id>  Corrupt: <path>: <reason>" line in its place, and the command then
    exits non-zero (Kafka has no such command; its tools throw on such a registration).

    With --bootstrap-server, the live brokers a broker knows (DescribeCluster): id, rack and the endpoint of the
    listener asked ("Broker: 1  Rack: none  Endpoint: 127.0.0.1:9092"); the epoch and the other listeners
    need --zookeeper."""
    zookeeper = exactly_one_server(zookeeper, bootstrap_server)
    if zookeeper is None:
        assert bootstrap_server is not None
        for line in bootstrap_topics.run_with_admin(bootstrap_server, command_config, bootstrap_cluster.broker_lines):
            click.echo(line)
        return
    registered, corrupt = run_with_client(zookeeper, registered_brokers)
    lines = {**{b.broker.id: broker_line(b) for b in registered}, **corrupt}
    for broker_id in sorted(lines):
        click.echo(lines[broker_id])
    fail_if_corrupt(len(corrupt))


@click.group()
def controller() -> None:
    """The active controller."""


@controller.command("show")
@server_options
def show_controller(zookeeper: str | None, bootstrap_server: str | None, command_config: str | None) -> None:
    """The active controller's broker id, the controller epoch and its znode version.

    With --bootstrap-server, the controller id and cluster id a broker knows (DescribeCluster:
    "ActiveController: 2  ClusterId: ..."); the controller epoch and its znode version need --zookeeper."""
    zookeeper = exactly_one_server(zookeeper, bootstrap_server)
    if zookeeper is None:
        assert bootstrap_server is not None
        click.echo(bootstrap_topics.run_with_admin(bootstrap_server, command_config, bootstrap_cluster.controller_line))
        return
    click.echo(run_with_client(zookeeper, controller_status).render())
