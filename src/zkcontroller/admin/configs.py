"""``zkcontroller configs``: Kafka 2.8's ``kafka-configs.sh`` for topics, brokers and client quotas, both with
``--zookeeper`` (ConfigCommand's ZooKeeper path, this module) and with ``--bootstrap-server`` (its admin-client
path: `bootstrap_configs`, `bootstrap_quotas`).

``--alter`` merges ``--add-config`` into the topic's overrides and drops ``--delete-config`` keys, writes
``/config/topics/<t>``, then a ``/config/changes/config_change_<n>`` notification naming ``topics/<t>`` — the one
the controller reads to elect offline partitions once ``unclean.leader.election.enable`` is true.
``--describe`` prints the overrides as Kafka does (every topic's when no name is given). ``--topic T`` is
short for ``--entity-type topics --entity-name T``, as in Kafka 2.8.

``--entity-type brokers`` (``--entity-default`` or ``--entity-name ID``) writes ``/config/brokers/<default>`` or
``/config/brokers/<id>`` and a notification naming ``brokers/<entity>``; the controller re-reads its
``unclean.leader.election.enable`` from it. As Kafka 2.8, ZooKeeper may carry such a dynamic broker config only
while the broker (for ``--entity-name``) or every broker (for ``--entity-default``) is down — the replication
throttles excepted; a running cluster is changed through a broker: ``--bootstrap-server`` (`bootstrap_configs`),
or in-process `alter_broker_config` with ``via_broker=True``.

``--entity-type users|clients|ips`` (a user and its client id by giving ``users`` and ``clients`` together, each
with ``--entity-name`` or ``--entity-default``) alters or describes client quotas: `client_quotas`, or with
``--bootstrap-server`` `bootstrap_quotas` (DescribeClientQuotas, AlterClientQuotas).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import click

from zkcontroller.admin import bootstrap_configs, bootstrap_quotas
from zkcontroller.admin.bootstrap_topics import run_with_admin
from zkcontroller.admin.cli import SERVER_HINT, fail_if_corrupt, run_with_client
from zkcontroller.admin.client_quotas import (
    QUOTA_ENTITY_TYPES,
    alter_quota_config,
    describe_quota_configs,
    is_valid_ip_entity,
    parse_quota_entity,
)
from zkcontroller.admin.deprecation import ZOOKEEPER_DEPRECATED
from zkcontroller.admin.errors import AdminError, InvalidConfigError
from zkcontroller.admin.java_numbers import java_parse_int
from zkcontroller.admin.reassign import BROKER_THROTTLES
from zkcontroller.admin.topic_rules import MESSAGE_FORMAT_WARNING
from zkcontroller.admin.topics import change_topic_config
from zkcontroller.admin.usage import KafkaCommand
from zkcontroller.broker.dynamic_broker_config import (
    DynamicConfigError,
    is_password_config,
    validate_configs,
    validate_types,
)
from zkcontroller.scala_sets import immutable_set, java_string_hash
from zkcontroller.zk import paths
from zkcontroller.zk.config_values import JAVA_TRIM
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.java_properties import properties_order
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


class InvalidConfigsError(AdminError):
    pass


class BrokerRunningError(AdminError):
    """Kafka's ``require`` in ``alterConfigWithZk``: dynamic broker configs via ZooKeeper only before start-up."""

    hint = ("on a running cluster, send the change through a broker: the same command with --bootstrap-server "
            "HOST:PORT in place of --zookeeper; or stop the broker (for --entity-default, every broker) first")


BROKER_CONFIGS_UPDATABLE_WHILE_RUNNING = frozenset(BROKER_THROTTLES)
"""ConfigCommand's ``BrokerConfigsUpdatableUsingZooKeeperWhileBrokerRunning``."""

def _key_set(names: Iterable[str], keys: Iterable[str]) -> str:
    """ConfigCommand's ``configsToBeAdded.asScala.keySet.filter(..)`` (``names`` of the ``keys`` put into its
    ``Properties``): an immutable ``Set`` built in the Properties' order (`properties_order` of every key put,
    as removing keys does not shrink its table)."""
    wanted = set(names)
    return immutable_set([k for k in properties_order(keys) if k in wanted], java_string_hash)


def validate_broker_configs(configs: dict[str, str]) -> None:
    """``AdminZkClient.validateBrokerConfig`` (``DynamicConfig.Broker.validate``) on an entity's whole new configs:
    each dynamic property's and replication throttle's value parsed as its type and checked (Kafka's
    ConfigException message); other keys are stored as given, as Kafka allows custom broker configs."""
    try:
        validate_types(configs)
    except DynamicConfigError as e:
        raise InvalidConfigError(str(e)) from None


def preprocess_broker_configs(add: dict[str, str], *, per_broker: bool) -> dict[str, str]:
    """ConfigCommand's ``preProcessBrokerConfigs`` for configs other than the throttles: the ``password.encoder.*``
    ones taken out (never stored), then ``DynamicBrokerConfig.validateConfigs`` (a static property, an SSL config
    without its listener prefix, each value, a per-broker config at the default level). A password config needs
    ``password.encoder.secret`` (Kafka's message); encrypting is not implemented here, so it is refused even then
    rather than stored in clear. Returns the configs to store."""
    kept = {k: v for k, v in add.items() if not k.startswith("password.encoder.")}
    try:
        validate_configs(kept, per_broker=per_broker)
    except DynamicConfigError as e:
        raise InvalidConfigError(str(e)) from None
    passwords = [k for k in kept if is_password_config(k)]
    if passwords and "password.encoder.secret" not in add:
        raise InvalidConfigError(
            f"password.encoder.secret must be specified to update {_key_set(passwords, add)}. Other password encoder "
            "configs like cipher algorithm and iterations may also be specified to override the default encoding "
            "parameters. Password encoder configs will not be persisted in ZooKeeper.")
    if passwords:
        raise InvalidConfigError(f"zkcontroller does not encrypt dynamic password configs: {_key_set(passwords, add)} "
                                 "not stored")
    return kept


def broker_entity_label(entity_name: str) -> str:
    """ConfigCommand's ``Entity.toString`` for brokers."""
    return "default brokers" if entity_name == paths.DEFAULT_ENTITY else f"brokers '{entity_name}'"


async def alter_broker_config(zk: KafkaZkClient, entity_name: str, add: dict[str, str], delete: list[str], *,
                              via_broker: bool = False) -> dict[str, str]:
    """ConfigCommand's ``alterConfigWithZk`` for ``brokers``: returns the new dynamic configs of the entity.

    ``entity_name`` is a broker id as typed (Java's ``toInt`` reads it: ``+1``, ``01`` or ``\u0661`` is broker 1)
    or ``<default>``. Unless ``via_broker``, a config other than the replication throttles is refused while the
    broker (or, for the default, any broker) is registered, with Kafka's message; ``via_broker`` is what a running
    broker does for an AlterConfigs request (validate, then the same writes).

    The result is written to the broker's own node (``/config/brokers/1`` for ``01``), as Kafka 2.8's
    ``changeConfigs`` does, and the current configs are read from that node too. Kafka reads them from the node
    named as typed (``fetchEntityConfig`` takes the name), so its ``--entity-name 01 --alter`` replaces broker 1's
    other dynamic configs with what ``/config/brokers/01`` (usually nothing) holds; we do not copy that loss."""
    per_broker = entity_name != paths.DEFAULT_ENTITY
    broker_id = parse_broker(entity_name) if per_broker else None
    dynamic = [k for k in add if k not in BROKER_CONFIGS_UPDATABLE_WHILE_RUNNING]
    if dynamic and not via_broker:
        error = f"--bootstrap-server option must be specified to update broker configs {_key_set(dynamic, add)}."
        info = ("Broker configuration updates using ZooKeeper are supported for bootstrapping before brokers are "
                "started to enable encrypted password configs to be stored in ZooKeeper.")
        running = await _registered_brokers(zk)
        if broker_id is not None and broker_id in running:
            raise BrokerRunningError(f"{error} when broker {entity_name} is running. {info}")
        if not per_broker and running:
            raise BrokerRunningError(f"{error} for default cluster if any broker is running. {info}")
    if dynamic:
        add = preprocess_broker_configs(add, per_broker=per_broker)
    node = paths.DEFAULT_ENTITY if broker_id is None else str(broker_id)
    current = await zk.get_broker_configs(node)
    missing = [k for k in delete if k not in current]
    if missing:
        raise InvalidConfigsError(f"Invalid config(s): {','.join(missing)}")
    updated = {**current, **add}
    for key in delete:
        updated.pop(key, None)
    validate_broker_configs(updated)  # changeBrokerConfig's, on the whole node
    await change_broker_config(zk, node, updated)
    return updated


def parse_broker(entity_name: str) -> int:
    """``AdminZkClient.parseBroker`` for a broker entity (not ``<default>``): Java's ``toInt``, or its error."""
    broker_id = java_parse_int(entity_name)
    if broker_id is None:
        raise AdminError(f"Error parsing broker {entity_name}. The broker's Entity Name must be a single integer "
                         "value")
    return broker_id


async def change_broker_config(zk: KafkaZkClient, entity_name: str, configs: dict[str, str]) -> None:
    """``AdminZkClient.changeBrokerConfig``: the entity's node, replaced whole, then the notification brokers
    (and here the controller) react to. The caller has validated ``configs`` (`validate_broker_configs`)."""
    await zk.set_or_create_entity_configs(paths.ConfigType.BROKER, entity_name, configs)
    await zk.create_config_change_notification(f"{paths.ConfigType.BROKER}/{entity_name}")


async def _registered_brokers(zk: KafkaZkClient) -> set[int]:
    return {int(c) for c in await zk.get_children(paths.BROKER_IDS) if c.isdigit()}


_OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"
"""ConfigCommand's lookahead: what follows has no ``]`` before the next ``[`` or the end, so the match is not
inside ``[...]``."""


def parse_add_config(text: str) -> dict[str, str]:
    """``k1=v1,k2=[a,b]`` as ConfigCommand.parseConfigsToBeAdded reads it: split on commas outside square
    brackets (Java's ``split``: trailing empty pieces dropped), each piece on one ``=`` outside brackets (Kafka
    keeps the empty value of ``k=``; ``k=v=w`` or an empty piece is refused), every bracket removed from the value,
    key and value trimmed."""
    pieces = re.split("," + _OUTSIDE_BRACKETS, text)
    if len(pieces) > 1:  # Java returns the whole input when nothing matched, else drops trailing empties
        while pieces and pieces[-1] == "":
            pieces.pop()
    out: dict[str, str] = {}
    for piece in pieces:
        pair = re.split(r"\s*=\s*" + _OUTSIDE_BRACKETS, piece, flags=re.ASCII)  # Java's \s: ASCII only
        if len(pair) != 2:
            raise InvalidConfigsError(
                'Invalid entity config: all configs to be added must be in the format "key=val".')
        out[pair[0].strip(JAVA_TRIM)] = pair[1].replace("[", "").replace("]", "").strip(JAVA_TRIM)
    return out


def parse_delete_config(text: str | None) -> list[str]:
    """``--delete-config k1,k2``: joptsimple's ``withValuesSeparatedBy(',')`` (a StringTokenizer: empty pieces
    skipped), then each key ``trim``-med (chars up to U+0020 only) as parseConfigsToBeDeleted does. A blank
    piece stays as the key ``""`` (so it is then refused as "Invalid config(s): ")."""
    return [k.strip(JAVA_TRIM) for k in (text or "").split(",") if k]


async def alter_topic_config(zk: KafkaZkClient, topic: str, add: dict[str, str], delete: list[str]
                             ) -> dict[str, str]:
    """ConfigCommand's ZooKeeper alteration (``alterConfigWithZk``), in its order; returns the new overrides.

    The deleted keys are checked against the stored overrides first, so for a topic that does not exist (no
    overrides) a deletion fails with "Invalid config(s)"; only then does `change_topic_config` check the name,
    the topic's existence and the values.

    A config node that cannot be read raises its `ZnodeDecodeError` and nothing is written. Kafka's
    ``fetchEntityConfig`` reads one that is not JSON or not an object as no overrides and writes the new set over
    it (it throws only for a value that is not a string); overwriting would lose what the node held."""
    current = await zk.get_entity_configs(paths.ConfigType.TOPIC, topic)
    missing = [k for k in delete if k not in current]  # Kafka's filterNot keeps the order given
    if missing:
        raise InvalidConfigsError(f"Invalid config(s): {','.join(missing)}")
    # ConfigCommand's order: `configs ++= configsToBeAdded` then `configsToBeDeleted.foreach(configs.remove)`,
    # so a key both added and deleted in one command ends up deleted.
    updated = {**current, **add}
    for key in delete:
        updated.pop(key, None)
    await change_topic_config(zk, topic, updated)
    return updated


async def describe_topic_config(zk: KafkaZkClient, topic: str) -> dict[str, str]:
    return await zk.get_entity_configs(paths.ConfigType.TOPIC, topic)


def _entity(entity_types: tuple[str, ...], entity_names: list[str], topic: str | None, alter: bool,
            broker_ids: tuple[str, ...]) -> tuple[str, str | None]:
    """ConfigCommand.checkArgs/parseEntity for topics and brokers: ``--topic T`` or ``--entity-type topics
    [--entity-name T]``; ``--entity-type brokers`` with ``--entity-name ID`` or ``--entity-default``. A name (or
    the default, for brokers) is needed to alter, not to describe (then every entity with a config node).

    ``entity_names`` is ConfigCommandOptions' ``entityNames``: ``--entity-name`` values and ``--entity-default``
    (as ``""``) in command-line order. With ``--zookeeper`` both may be given: the first one is the entity
    (``entityNames.headOption``), yet the name is checked as a broker id whichever comes first. An empty name is
    the default entity, as ``--entity-default`` is (parseEntity's ``case Some("")``): brokers alter or describe
    ``<default>``; topics may only describe it (checkArgs wants a real name to alter them).

    ``entity_types`` and ``broker_ids`` are every ``--entity-type`` and ``--entity-name`` given: as checkArgs,
    ``--topic`` counts as a type too (so ``--entity-type topics --topic t`` is a duplicate type), and a broker
    name given twice is joptsimple's "multiple arguments" error."""
    types = [*entity_types, *([paths.ConfigType.TOPIC] if topic is not None else [])]
    extra = list(types)  # Scala's `diff(distinct)`: the repeats, in order
    for each in dict.fromkeys(types):
        extra.remove(each)
    if extra:
        raise click.UsageError(f"Duplicate entity type(s) specified: {','.join(extra)}")
    if not types:
        raise click.UsageError("At least one entity type must be specified")
    if len(types) > 1 and set(types) != {paths.ConfigType.USER, paths.ConfigType.CLIENT}:
        raise click.UsageError("Only 'users' and 'clients' entity types may be specified together")
    if topic is not None and (entity_types or entity_names):
        raise click.UsageError("--entity-{type,name,default} should not be used in conjunction with specific "
                               "entity flags")
    kind = types[0]
    names = [*entity_names, *([topic] if topic is not None else [])]
    has_name = any(n != "" for n in names)  # checkArgs' hasEntityName: a non-empty name
    has_default = "" in names
    if has_name and kind == paths.ConfigType.BROKER:
        if len(broker_ids) > 1:  # `options.valueOf(entityName)`
            raise click.UsageError("Found multiple arguments for option entity-name, but you asked for only one")
        if java_parse_int(broker_ids[0]) is None:  # `brokerId.toInt`
            raise click.UsageError(f"The entity name for {kind} must be a valid integer broker id, but it is: "
                                   f"{broker_ids[0]}")
    if has_name and kind == paths.ConfigType.IP:
        if len(broker_ids) > 1:
            raise click.UsageError("Found multiple arguments for option entity-name, but you asked for only one")
        if broker_ids and not is_valid_ip_entity(broker_ids[0]):
            raise click.UsageError(f"The entity name for {kind} must be a valid IP or resolvable host, but it is: "
                                   f"{broker_ids[0]}")
    if alter and kind == paths.ConfigType.TOPIC and not has_name:
        raise click.UsageError("an entity name must be specified with --alter of topics")
    if alter and not has_name and not has_default:
        raise click.UsageError("an entity-name or default entity must be specified with --alter of users, "
                               "clients, brokers or ips")
    if not names:
        return kind, None
    return kind, names[0] or paths.DEFAULT_ENTITY


_ENTITY_ORDER = "configs.entity_order"
"""``ctx.meta`` key: the ``--entity-name``/``--entity-default`` values in command-line order."""


def _record_entity_order(ctx: click.Context, param: click.Parameter, value: object) -> object:
    """Click processes options in the order they were typed; ConfigCommand's ``entityNames`` keeps that order,
    and its first entry is the entity."""
    if param.name == "entity_names_given" and isinstance(value, tuple):
        ctx.meta.setdefault(_ENTITY_ORDER, []).extend(value)
    elif param.name == "entity_default" and value:
        ctx.meta.setdefault(_ENTITY_ORDER, []).append("")
    return value


async def _describe(zk: KafkaZkClient, kind: str, name: str | None
                    ) -> list[tuple[str, dict[str, str] | ZnodeDecodeError]]:
    """Each entity's overrides, or why its config znode cannot be read.

    Kafka 2.8.2's ``describeConfigWithZk`` reads each node with ``fetchEntityConfig``: data that is not JSON, or
    not an object with a ``config`` object, shows as no overrides without a word, and a value that is not a string
    throws, ending the command at that entity. Every entity is described here and the unreadable ones say so."""
    names = [name] if name is not None else await zk.get_children(paths.config_entity_type_path(kind))
    out: list[tuple[str, dict[str, str] | ZnodeDecodeError]] = []
    for n in names:
        try:
            out.append((n, await zk.get_entity_configs(kind, n)))
        except ZnodeDecodeError as e:
            out.append((n, e))
    return out


def _label(kind: str, name: str) -> str:
    """ConfigCommand's ``Entity.toString`` for topics and brokers."""
    if kind == paths.ConfigType.TOPIC:
        return "default topic" if name == paths.DEFAULT_ENTITY else f"topic '{name}'"
    return broker_entity_label(name)


@click.command("configs", cls=KafkaCommand, short_help="Topic, dynamic broker and client quota configs.")
@click.option("--bootstrap-server", metavar="HOST:PORT[,...]",
              help="A broker's listener: topic and broker configs through DescribeConfigs and (Incremental)"
                   "AlterConfigs, a running broker's included; client quotas through DescribeClientQuotas and "
                   "AlterClientQuotas.")
@click.option("--command-config", metavar="FILE",
              help="Admin client properties (default.api.timeout.ms, ...); with --bootstrap-server only.")
@click.option("--zookeeper", envvar="ZKCONTROLLER_ZOOKEEPER", metavar="HOST[:PORT][,...][/CHROOT]",
              help="ZooKeeper connect string (deprecated in Kafka; or set ZKCONTROLLER_ZOOKEEPER).")
@click.option("--all", "describe_all", is_flag=True,
              help="--describe with --bootstrap-server: every config, not only the dynamic ones.")
@click.option("--entity-type", "entity_types", multiple=True,
              type=click.Choice(list(paths.ConfigType.ALL)),
              help="topics, brokers, users, clients or ips (users and clients together: a user's client id).")
@click.option("--entity-name", "entity_names_given", multiple=True, callback=_record_entity_order,
              help="The topic, broker id, user principal, client id or IP (--describe without it: every entity "
              "with configs stored; '' is the default entity, as --entity-default).")
@click.option("--entity-default", is_flag=True, callback=_record_entity_order,
              help="The default entity of --entity-type brokers, users, clients or ips (brokers and ips, with "
              "--entity-name too: the first given is the entity).")
@click.option("--topic", help="The topic: short for --entity-type topics --entity-name TOPIC.")
@click.option("--alter", is_flag=True, help="Alter the entity's configs.")
@click.option("--describe", is_flag=True, help="List the entity's configs.")
@click.option("--add-config", metavar="K=V,K=[V,V]", help="Configs to add or change ([...] groups commas).")
@click.option("--delete-config", metavar="K,K", help="Configs to remove.")
def configs(bootstrap_server: str | None, command_config: str | None, zookeeper: str | None, describe_all: bool,
            entity_types: tuple[str, ...], entity_names_given: tuple[str, ...], entity_default: bool,
            topic: str | None, alter: bool, describe: bool, add_config: str | None, delete_config: str | None
            ) -> None:
    """Alter or describe a topic's config overrides, the dynamic broker configs or client quotas (as
    kafka-configs --bootstrap-server, through a broker, or --zookeeper, in ZooKeeper itself). With --zookeeper,
    broker configs other than the replication throttles can only be set while the broker (or, for
    --entity-default, every broker) is down, as in Kafka 2.8; --bootstrap-server changes running brokers."""
    if alter == describe:
        raise click.UsageError("Command must include exactly one action: --describe, --alter")
    if describe and (add_config is not None or delete_config is not None):  # joptsimple names options "[name]"
        used = "add-config" if add_config is not None else "delete-config"
        raise click.UsageError(f'Option "[describe]" can\'t be used with option "[{used}]"')
    del entity_default  # read in command-line order with --entity-name, by _record_entity_order
    entity_names: list[str] = click.get_current_context().meta.get(_ENTITY_ORDER, [])
    kind, name = _entity(entity_types, entity_names, topic, alter, entity_names_given)
    if alter and add_config is None and delete_config is None:  # checkArgs, so before the notice
        raise click.UsageError("At least one of --add-config or --delete-config must be specified with --alter")
    ctx = click.get_current_context()
    if bootstrap_server is not None and ctx.get_parameter_source("zookeeper") == click.core.ParameterSource.ENVIRONMENT:
        zookeeper = None  # ZKCONTROLLER_ZOOKEEPER gives way to a --bootstrap-server on the line
    if bootstrap_server is None and zookeeper is None:
        raise click.UsageError("One of the required --bootstrap-server or --zookeeper arguments must be specified. "
                               f"{SERVER_HINT}")
    if bootstrap_server is not None and zookeeper is not None:
        raise click.UsageError("Only one of --bootstrap-server or --zookeeper must be specified")
    if describe_all and bootstrap_server is None:
        raise click.UsageError("--bootstrap-server must be specified for --all")
    if bootstrap_server is not None and kind in QUOTA_ENTITY_TYPES:
        _quotas_through_broker(bootstrap_server, command_config, list(entity_types), entity_names, alter, add_config,
                               delete_config)
        return
    if bootstrap_server is not None:
        _configs_through_broker(bootstrap_server, command_config, kind, name, alter, describe_all, add_config,
                                delete_config)
        return
    assert zookeeper is not None
    click.echo(ZOOKEEPER_DEPRECATED)
    if kind in QUOTA_ENTITY_TYPES:
        _quota_command(zookeeper, list(entity_types), entity_names, alter, add_config, delete_config)
        return
    if describe:
        corrupt = 0
        for described, found in run_with_client(zookeeper, lambda zk: _describe(zk, kind, name)):
            if isinstance(found, ZnodeDecodeError):
                corrupt += 1
                click.echo(f"Configs for {_label(kind, described)} are unknown\tCorrupt: {found.path}: {found.reason}")
                continue
            rendered = ",".join(f"{k}={found[k]}" for k in properties_order(found))  # Kafka's Properties order
            click.echo(f"Configs for {_label(kind, described)} are {rendered}")
        fail_if_corrupt(corrupt)
        return
    assert name is not None
    add, delete = _changes(add_config, delete_config)
    if kind == paths.ConfigType.TOPIC:
        run_with_client(zookeeper, lambda zk: alter_topic_config(zk, name, add, delete))
    else:
        run_with_client(zookeeper, lambda zk: alter_broker_config(zk, name, add, delete))
    click.echo(f"Completed updating config for entity: {_label(kind, name)}.")


def _changes(add_config: str | None, delete_config: str | None) -> tuple[dict[str, str], list[str]]:
    """``--add-config`` and ``--delete-config`` parsed, as both paths take them: a bad one ends the command with
    its error; a ``message.format.version`` gets ConfigCommand's warning first."""
    try:
        add = parse_add_config(add_config) if add_config is not None else {}
    except AdminError as e:
        raise click.ClickException(str(e)) from None
    if "message.format.version" in add:
        click.echo(MESSAGE_FORMAT_WARNING.format(add["message.format.version"]))
    return add, parse_delete_config(delete_config)


def _configs_through_broker(bootstrap_server: str, command_config: str | None, kind: str, name: str | None,
                            alter: bool, describe_all: bool, add_config: str | None, delete_config: str | None
                            ) -> None:
    """ConfigCommand's AdminClient path for topics and brokers (`bootstrap_configs`)."""
    if kind == paths.ConfigType.BROKER and name == paths.DEFAULT_ENTITY:
        name = ""  # the broker default is the resource named "" over the wire (BrokerDefaultEntityName)
    if not alter:
        for line in run_with_admin(bootstrap_server, command_config, lambda admin: (
                bootstrap_configs.describe_lines(admin, kind, name, describe_all))):
            click.echo(line)
        return
    assert name is not None
    add, delete = _changes(add_config, delete_config)
    click.echo(run_with_admin(bootstrap_server, command_config, lambda admin: bootstrap_configs.alter(
        admin, kind, name, add, delete)))


def _quotas_through_broker(bootstrap_server: str, command_config: str | None, types: list[str], names: list[str],
                           alter: bool, add_config: str | None, delete_config: str | None) -> None:
    """ConfigCommand's AdminClient path for users, clients (or a user's client) and ips (`bootstrap_quotas`)."""
    if not alter:
        for line in run_with_admin(bootstrap_server, command_config, lambda admin: (
                bootstrap_quotas.describe_lines(admin, types, names))):
            click.echo(line)
        return
    add, delete = _changes(add_config, delete_config)
    click.echo(run_with_admin(bootstrap_server, command_config, lambda admin: bootstrap_quotas.alter(
        admin, types, names, add, delete)))


def _quota_command(zookeeper: str, types: list[str], names: list[str], alter: bool, add_config: str | None,
                   delete_config: str | None) -> None:
    """Users, clients (or a user's clients) and ips: `client_quotas`."""
    try:
        add = parse_add_config(add_config) if add_config is not None else {}
        if "message.format.version" in add:  # parseConfigsToBeAdded warns before the entity is parsed
            click.echo(MESSAGE_FORMAT_WARNING.format(add["message.format.version"]))
        entity = parse_quota_entity(types, names, alter)
    except AdminError as e:
        raise click.ClickException(str(e)) from None
    if not alter:
        corrupt = 0
        for described, found in run_with_client(zookeeper, lambda zk: describe_quota_configs(zk, entity)):
            if isinstance(found, ZnodeDecodeError):
                corrupt += 1
                click.echo(f"Configs for {described} are unknown\tCorrupt: {found.path}: {found.reason}")
                continue
            click.echo(f"Configs for {described} are {','.join(f'{k}={found[k]}' for k in properties_order(found))}")
        fail_if_corrupt(corrupt)
        return
    delete = parse_delete_config(delete_config)
    run_with_client(zookeeper, lambda zk: alter_quota_config(zk, entity, add, delete))
    click.echo(f"Completed updating config for entity: {entity}.")
