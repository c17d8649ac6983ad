"""``zkcontroller configs``: Kafka 2.8's ``kafka-configs.sh --zookeeper`` for topics (ConfigCommand's ZooKeeper path).

``--alter`` merges ``--add-config`` into the topic's overrides and drops ``--delete-config`` keys, writes
``/config/topics/<t>``, then a ``/config/changes/config_change_<n>`` notification naming ``topics/<t>`` — the one
the controller reads to elect offline partitions once ``unclean.leader.election.enable`` is true.
``--describe`` prints the overrides as Kafka does (every topic's when no name is given). ``--topic T`` is
short for ``--entity-type topics --entity-name T``, as in Kafka 2.8.
"""

from __future__ import annotations

import re

import click

from zkcontroller.admin.cli import run_with_client
from zkcontroller.admin.errors import AdminError
from zkcontroller.admin.topic_rules import JAVA_TRIM, MESSAGE_FORMAT_WARNING
from zkcontroller.admin.topics import change_topic_config
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


class InvalidConfigsError(AdminError):
    pass


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
        pair = re.split(r"\s*=\s*" + _OUTSIDE_BRACKETS, piece)
        if len(pair) != 2:
            raise InvalidConfigsError(
                'Invalid entity config: all configs to be added must be in the format "key=val".')
        out[pair[0].strip(JAVA_TRIM)] = pair[1].replace("[", "").replace("]", "").strip(JAVA_TRIM)
    return out


async def alter_topic_config(zk: KafkaZkClient, topic: str, add: dict[str, str], delete: list[str]
                             ) -> dict[str, str]:
    """ConfigCommand's ZooKeeper alteration (``alterConfigWithZk``), in its order; returns the new overrides.

    The deleted keys are checked against the stored overrides first, so for a topic that does not exist (no
    overrides) a deletion fails with "Invalid config(s)"; only then does `change_topic_config` check the name,
    the topic's existence and the values."""
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


def _entity_name(entity_type: str | None, entity_name: str | None, topic: str | None, alter: bool) -> str | None:
    """ConfigCommand.checkArgs for topics: ``--topic T`` or ``--entity-type topics [--entity-name T]``, not both;
    a name is needed to alter, not to describe (then every topic with a config node is described)."""
    if topic is not None and (entity_type is not None or entity_name is not None):
        raise click.UsageError("--entity-{type,name,default} should not be used in conjunction with specific "
                               "entity flags")
    if topic is None and entity_type is None:
        raise click.UsageError("At least one entity type must be specified")
    name = topic if topic is not None else entity_name
    if alter and name is None:
        raise click.UsageError("an entity name must be specified with --alter of topics")
    return name


async def _describe(zk: KafkaZkClient, name: str | None) -> list[tuple[str, dict[str, str]]]:
    names = [name] if name is not None else await zk.get_children(
        paths.config_entity_type_path(paths.ConfigType.TOPIC))
    return [(n, await describe_topic_config(zk, n)) for n in names]


@click.command("configs")
@click.option("--zookeeper", required=True, envvar="ZKCONTROLLER_ZOOKEEPER", metavar="HOST:PORT[/CHROOT]",
              help="ZooKeeper connection string (or set ZKCONTROLLER_ZOOKEEPER).")
@click.option("--entity-type", type=click.Choice(["topics"]), help="Only topics are supported.")
@click.option("--entity-name", help="The topic (--describe without it: every topic with overrides stored).")
@click.option("--topic", help="The topic: short for --entity-type topics --entity-name TOPIC.")
@click.option("--alter", is_flag=True, help="Alter the topic's config overrides.")
@click.option("--describe", is_flag=True, help="List the topic's config overrides.")
@click.option("--add-config", metavar="K=V,K=[V,V]", help="Overrides to add or change ([...] groups commas).")
@click.option("--delete-config", metavar="K,K", help="Overrides to remove.")
def configs(zookeeper: str, entity_type: str | None, entity_name: str | None, topic: str | None, alter: bool,
            describe: bool, add_config: str | None, delete_config: str | None) -> None:
    """Alter or describe a topic's config overrides (as kafka-configs --zookeeper)."""
    if alter == describe:
        raise click.UsageError("Command must include exactly one action: --describe, --alter")
    if describe and (add_config is not None or delete_config is not None):  # joptsimple names options "[name]"
        used = "add-config" if add_config is not None else "delete-config"
        raise click.UsageError(f'Option "[describe]" can\'t be used with option "[{used}]"')
    name = _entity_name(entity_type, entity_name, topic, alter)
    if describe:
        for described, found in run_with_client(zookeeper, lambda zk: _describe(zk, name)):
            rendered = ",".join(f"{k}={v}" for k, v in sorted(found.items()))
            click.echo(f"Configs for topic '{described}' are {rendered}")
        return
    assert name is not None
    if add_config is None and delete_config is None:
        raise click.UsageError("At least one of --add-config or --delete-config must be specified with --alter")
    try:
        add = parse_add_config(add_config) if add_config is not None else {}
    except AdminError as e:
        raise click.ClickException(str(e)) from None
    if "message.format.version" in add:
        click.echo(MESSAGE_FORMAT_WARNING.format(add["message.format.version"]))
    delete = [k.strip() for k in (delete_config or "").split(",") if k.strip()]
    run_with_client(zookeeper, lambda zk: alter_topic_config(zk, name, add, delete))
    click.echo(f"Completed updating config for entity: topic '{name}'.")
