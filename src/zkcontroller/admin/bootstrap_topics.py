"""``zkcontroller topics ... --bootstrap-server``: Kafka 2.8.2's ``TopicCommand.AdminClientTopicService`` over our
wire-protocol admin client (`admin.admin_client`), so a cluster on the embedded store can be administered
from another process through its brokers' listeners.

What differs from the ZooKeeper path is what Kafka's differs in: create without ``--partitions`` or
``--replication-factor`` takes the broker's defaults; ``--alter`` changes partition counts only (configs through
``configs``); ``list`` and ``describe`` cannot see a topic's deletion mark; describe shows the configs the broker
reports as not defaults (a broker's static setting counts), orders topics as the Java client's ``HashMap`` does,
and offers the min-ISR reports. ``--command-config`` reads the client settings this client has
(`COMMAND_CONFIG_KEYS`); security settings are refused, since the listeners speak PLAINTEXT only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import click

from zkcontroller.admin.admin_client import (
    AdminClient,
    AdminClientError,
    PartitionInfo,
    Reassignment,
    TopicInfo,
)
from zkcontroller.admin.describe import include_list_regex
from zkcontroller.admin.errors import AdminError
from zkcontroller.admin.java_hash_map import hash_map_order
from zkcontroller.admin.user_files import read_user_file
from zkcontroller.model import is_internal

T = TypeVar("T")

TOPIC = 2
DEFAULT_CONFIG = 5
"""DescribeConfigs' ConfigSource.DEFAULT_CONFIG: what Kafka's ``ConfigEntry.isDefault`` tests."""

COMMAND_CONFIG_KEYS = ("bootstrap.servers", "client.id", "default.api.timeout.ms", "request.timeout.ms",
                       "retry.backoff.ms", "security.protocol")


class CommandConfigError(AdminError):
    """A ``--command-config`` file this client cannot honour."""


def parse_command_config(text: str, path: str) -> dict[str, str]:
    """``key=value`` (or ``key: value``) lines of a Java properties file, comments (``#``, ``!``) skipped."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        cut = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        key, value = (line, "") if cut < 0 else (line[:cut].strip(), line[cut + 1:].strip())
        out[key] = value
    protocol = out.get("security.protocol", "PLAINTEXT")
    if protocol.upper() != "PLAINTEXT":
        raise CommandConfigError(f"{path}: security.protocol={protocol}: this client speaks PLAINTEXT only")
    for key in ("default.api.timeout.ms", "request.timeout.ms", "retry.backoff.ms"):
        if key in out and not (out[key].isdigit() and int(out[key]) > 0):
            raise CommandConfigError(f"{path}: {key}={out[key]}: expected a positive number of milliseconds")
    return out


def admin_client(bootstrap_server: str, command_config: str | None) -> AdminClient:
    settings = {} if command_config is None else parse_command_config(
        read_user_file(command_config, "--command-config"), command_config)
    return AdminClient(bootstrap_server,
                       default_api_timeout_ms=int(settings.get("default.api.timeout.ms", 60_000)),
                       request_timeout_ms=int(settings.get("request.timeout.ms", 30_000)),
                       retry_backoff_ms=int(settings.get("retry.backoff.ms", 100)),
                       client_id=settings.get("client.id", "zkcontroller-admin"))


def run_with_admin(bootstrap_server: str, command_config: str | None,
                   action: Callable[[AdminClient], Awaitable[T]]) -> T:
    """Run ``action`` on a fresh client; every failure is one ``Error:`` line, exit 1 (Kafka's tool prints
    ``Error while executing topic command : <message>`` for the same messages)."""
    async def main() -> T:
        async with admin_client(bootstrap_server, command_config) as admin:
            return await action(admin)

    try:
        return asyncio.run(main())
    except (AdminClientError, AdminError) as e:
        raise click.ClickException(str(e)) from None
    except ValueError as e:  # a bootstrap list Kafka's ClientUtils refuses
        raise click.ClickException(str(e)) from None


async def get_topics(admin: AdminClient, include: str | None, exclude_internal: bool) -> list[str]:
    """TopicCommand.getTopics: sorted names, filtered by the include list (a regex, commas meaning "or")."""
    names = await admin.list_topics(include_internal=not exclude_internal)
    if include is None:
        return [t for t in names if not (exclude_internal and is_internal(t))]
    pattern = include_list_regex(include)
    return [t for t in names if pattern.fullmatch(t) and not (exclude_internal and is_internal(t))]


def ensure_topic_exists(found: Sequence[str], requested: str | None, must_exist: bool) -> None:
    if requested is not None and must_exist and not found:
        raise AdminClientError(f"Topic '{requested}' does not exist as expected")


async def create_topic(admin: AdminClient, name: str, partitions: int | None, replication_factor: int | None,
                       assignment: dict[int, list[int]] | None, configs: dict[str, str],
                       if_not_exists: bool) -> bool:
    """AdminClientTopicService.createTopic; False when the topic existed and ``if_not_exists``."""
    if replication_factor is not None and not 1 <= replication_factor <= 32767:
        raise AdminClientError("The replication factor must be between 1 and 32767 inclusive")
    if partitions is not None and partitions < 1:
        raise AdminClientError("The partitions must be greater than 0")
    try:
        await admin.create_topic(name, partitions, replication_factor, assignment, configs)
    except AdminClientError as e:
        if if_not_exists and getattr(e, "code", None) == 36:  # TOPIC_ALREADY_EXISTS
            return False
        raise
    return True


async def alter_topic(admin: AdminClient, include: str, partitions: int,
                      assignment: dict[int, list[int]] | None, if_exists: bool, exclude_internal: bool) -> None:
    """AdminClientTopicService.alterTopic: every matching topic to ``partitions``, in one CreatePartitions."""
    topics = await get_topics(admin, include, exclude_internal)
    ensure_topic_exists(topics, include, not if_exists)
    if not topics:
        return
    counts: dict[str, tuple[int, Sequence[Sequence[int]] | None]] = {}
    if assignment is not None:
        current = {t.name: len(t.partitions) for t in await admin.describe_topics(topics)}
        for topic in topics:
            counts[topic] = (partitions, [r for p, r in sorted(assignment.items()) if p >= current[topic]])
    else:
        counts = {topic: (partitions, None) for topic in topics}
    await admin.create_partitions(counts)


async def delete_topics(admin: AdminClient, include: str, if_exists: bool, exclude_internal: bool) -> None:
    topics = await get_topics(admin, include, exclude_internal)
    ensure_topic_exists(topics, include, not if_exists)
    if topics:
        await admin.delete_topics(topics)


@dataclass(frozen=True, slots=True)
class DescribeOptions:
    """TopicCommand's DescribeOptions: which report flags were given."""

    under_replicated: bool = False
    unavailable: bool = False
    under_min_isr: bool = False
    at_min_isr: bool = False
    topics_with_overrides: bool = False

    @property
    def describe_configs(self) -> bool:
        return not (self.unavailable or self.under_replicated or self.under_min_isr or self.at_min_isr)

    @property
    def describe_partitions(self) -> bool:
        return not self.topics_with_overrides


def _replication_factor(p: PartitionInfo, reassignment: Reassignment | None) -> int:
    """TopicCommand.getReplicationFactor: during a reassignment, the target set's size less the replicas being
    added (unless the reassignment completed between the two reads)."""
    if reassignment is not None and set(p.replicas) & (set(reassignment.adding) | set(reassignment.removing)):
        return len([r for r in reassignment.replicas if r not in reassignment.adding])
    return len(p.replicas)


def _ids(ids: Sequence[int]) -> str:
    return ",".join(map(str, ids))


def _partition_line(topic: str, p: PartitionInfo, reassignment: Reassignment | None) -> str:
    line = (f"\tTopic: {topic}\tPartition: {p.partition}\tLeader: {p.leader if p.leader >= 0 else 'none'}"
            f"\tReplicas: {_ids(p.replicas)}\tIsr: {_ids(p.isr)}")
    if reassignment is not None:
        line += f"\tAdding Replicas: {_ids(reassignment.adding)}\tRemoving Replicas: {_ids(reassignment.removing)}"
    return line


def _shows(p: PartitionInfo, opts: DescribeOptions, live: set[int], reassignment: Reassignment | None,
           min_isr: int | None) -> bool:
    has_leader = p.leader >= 0
    return (opts.describe_configs
            or (opts.under_replicated and _replication_factor(p, reassignment) - len(p.isr) > 0)
            or (opts.unavailable and (not has_leader or p.leader not in live))
            or (opts.under_min_isr and (not has_leader or (min_isr is not None and len(p.isr) < min_isr)))
            or (opts.at_min_isr and min_isr is not None and len(p.isr) == min_isr))


async def describe_lines(admin: AdminClient, include: str | None, opts: DescribeOptions, if_exists: bool,
                         exclude_internal: bool) -> list[str]:
    """AdminClientTopicService.describeTopic's lines."""
    topics = await get_topics(admin, include, exclude_internal)
    ensure_topic_exists(topics, include, not if_exists)
    if not topics:
        return []
    configs = await admin.describe_configs([(TOPIC, t) for t in topics])
    live = {b.id for b in await admin.live_brokers()}
    infos: dict[str, TopicInfo] = {t.name: t for t in await admin.describe_topics(topics)}
    wanted = [(t.name, p.partition) for t in infos.values() for p in t.partitions]
    try:
        reassignments = await admin.list_reassignments(wanted)
    except AdminClientError as e:  # Kafka: UnsupportedVersion / ClusterAuthorization mean "none known"
        if getattr(e, "code", None) not in (35, 31):
            raise
        reassignments = {}
    lines: list[str] = []
    for name in hash_map_order(topics, len(topics)):  # describeTopics(...).all(): a HashMap sized by its count
        info = infos[name]
        entries = {c.name: c for c in configs.get((TOPIC, name), [])}
        overrides = [f"{k}={entries[k].value}" for k in hash_map_order(entries)  # Config: a HashMap by name
                     if entries[k].source != DEFAULT_CONFIG]
        min_isr_entry = entries.get("min.insync.replicas")
        min_isr = int(min_isr_entry.value) if min_isr_entry is not None and min_isr_entry.value else None
        partitions = sorted(info.partitions, key=lambda p: p.partition)
        if opts.describe_configs and (not opts.topics_with_overrides or overrides) and partitions:
            first = info.partitions[0]
            line = f"Topic: {name}"
            if info.topic_id is not None:
                line += f"\tTopicId: {info.topic_id}"
            line += (f"\tPartitionCount: {len(partitions)}"
                     f"\tReplicationFactor: {_replication_factor(first, reassignments.get((name, first.partition)))}"
                     f"\tConfigs: {','.join(overrides)}")
            lines.append(line)
        if opts.describe_partitions:
            for p in partitions:
                reassignment = reassignments.get((name, p.partition))
                if _shows(p, opts, live, reassignment, min_isr):
                    lines.append(_partition_line(name, p, reassignment))
    return lines
