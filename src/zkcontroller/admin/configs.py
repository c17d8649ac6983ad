"""``zkcontroller configs``: Kafka 2.8's ``kafka-configs.sh --zookeeper`` for topics (ConfigCommand's ZooKeeper path).

``--alter`` merges ``--add-config`` into the topic's overrides and drops ``--delete-config`` keys, writes
``/config/topics/<t>``, then a ``/config/changes/config_change_<n>`` notification naming ``topics/<t>`` — the one
the controller reads to elect offline partitions once ``unclean.leader.election.enable`` is true.
``--describe`` prints the overrides as Kafka does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import click

from zkcontroller.admin.cli import run_with_client
from zkcontroller.admin.errors import AdminError, UnknownTopicError
from zkcontroller.admin.topic_rules import validate_topic_configs, validate_topic_name
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import TopicZNode


class InvalidConfigsError(AdminError):
    pass


def parse_add_config(text: str) -> dict[str, str]:
    """``k1=v1,k2=v2`` (ConfigCommand splits on commas outside square brackets; values may be ``[a,b]``)."""
    out: dict[str, str] = {}
    for pair in re.split(r",(?![^\[]*\])", text):
        if not pair.strip():
            continue
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidConfigsError(f"Invalid entity config: all configs to be added must be in the format "
                                      f'"key=val", got {pair!r}')
        out[key.strip()] = value.strip().removeprefix("[").removesuffix("]")
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


async def change_topic_config(zk: KafkaZkClient, topic: str, configs: Mapping[str, str]) -> None:
    """``AdminZkClient.changeTopicConfig``: the one place a topic's overrides are replaced.

    Validates as ``validateTopicConfig`` does (name, existence, then the whole set, not just the additions: a
    cross-config rule such as min.compaction.lag.ms <= max.compaction.lag.ms can be broken by either side),
    writes ``/config/topics/<t>`` and the change notification brokers and the controller react to."""
    validate_topic_name(topic)
    if not await zk.path_exists(TopicZNode.path(topic)):
        raise UnknownTopicError(f"Topic '{topic}' does not exist.")
    validate_topic_configs(configs)
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, topic, dict(configs))
    await zk.create_config_change_notification(f"{paths.ConfigType.TOPIC}/{topic}")


async def describe_topic_config(zk: KafkaZkClient, topic: str) -> dict[str, str]:
    return await zk.get_entity_configs(paths.ConfigType.TOPIC, topic)


@click.command("configs")
@click.option("--zookeeper", required=True, envvar="ZKCONTROLLER_ZOOKEEPER", metavar="HOST:PORT[/CHROOT]",
              help="ZooKeeper connection string (or set ZKCONTROLLER_ZOOKEEPER).")
@click.option("--entity-type", required=True, type=click.Choice(["topics"]), help="Only topics are supported.")
@click.option("--entity-name", required=True, help="The topic.")
@click.option("--alter", is_flag=True, help="Alter the topic's config overrides.")
@click.option("--describe", is_flag=True, help="List the topic's config overrides.")
@click.option("--add-config", default="", metavar="K=V,K=V", help="Overrides to add or change.")
@click.option("--delete-config", default="", metavar="K,K", help="Overrides to remove.")
def configs(zookeeper: str, entity_type: str, entity_name: str, alter: bool, describe: bool, add_config: str,
            delete_config: str) -> None:
    """Alter or describe a topic's config overrides (as kafka-configs --zookeeper)."""
    if alter == describe:
        raise click.UsageError("Command must include exactly one action: --describe, --alter")
    if describe:
        found = run_with_client(zookeeper, lambda zk: describe_topic_config(zk, entity_name))
        rendered = ",".join(f"{k}={v}" for k, v in sorted(found.items()))
        click.echo(f"Configs for topic '{entity_name}' are {rendered}")
        return
    try:
        add = parse_add_config(add_config)
    except AdminError as e:
        raise click.ClickException(str(e)) from None
    delete = [k.strip() for k in delete_config.split(",") if k.strip()]
    if not add and not delete:
        raise click.UsageError("At least one of --add-config or --delete-config must be specified with --alter")
    run_with_client(zookeeper, lambda zk: alter_topic_config(zk, entity_name, add, delete))
    click.echo(f"Completed updating config for topic {entity_name}.")
