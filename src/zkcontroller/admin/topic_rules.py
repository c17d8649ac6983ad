"""Pure checks and parsers behind topic administration: Kafka's topic-name rules (``Topic.java``), the topic
config names and value types of 2.8 (``LogConfig``), and ``kafka-topics``' argument formats.

Kept apart from `zkcontroller.admin.topics` so that validation is testable without a store.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from zkcontroller.admin.errors import InvalidConfigError, InvalidReplicaAssignmentError, InvalidTopicError

MAX_NAME_LENGTH = 249
COLLISION_WARNING = (
    "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. "
    "To avoid issues it is best to use either, but not both.")

_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def validate_topic_name(topic: str) -> None:
    """Kafka's ``Topic.validate``, with its messages."""
    if not topic:
        raise InvalidTopicError("Topic name is illegal, it can't be empty")
    if topic in (".", ".."):
        raise InvalidTopicError('Topic name cannot be "." or ".."')
    if len(topic) > MAX_NAME_LENGTH:
        raise InvalidTopicError(f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, "
                                f"Topic name: {topic}")
    if not _LEGAL.fullmatch(topic):
        raise InvalidTopicError(f'Topic name "{topic}" is illegal, it contains a character other than ASCII '
                                "alphanumerics, '.', '_' and '-'")



def has_collision_chars(topic: str) -> bool:
    """Metric names turn ``.`` into ``_``, so such topics may collide with another (``Topic.hasCollisionChars``)."""
    return "_" in topic or "." in topic


def has_collision(topic_a: str, topic_b: str) -> bool:
    return topic_a.replace(".", "_") == topic_b.replace(".", "_")


# ------------------------------------------------------------------ topic configs (LogConfig, 2.8)

_BOOLEAN, _INT, _LONG, _DOUBLE, _STRING, _LIST = "BOOLEAN", "INT", "LONG", "DOUBLE", "STRING", "LIST"

TOPIC_CONFIG_TYPES: Mapping[str, str] = {
    "cleanup.policy": _LIST,
    "compression.type": _STRING,
    "delete.retention.ms": _LONG,
    "file.delete.delay.ms": _LONG,
    "flush.messages": _LONG,
    "flush.ms": _LONG,
    "follower.replication.throttled.replicas": _LIST,
    "index.interval.bytes": _INT,
    "leader.replication.throttled.replicas": _LIST,
    "max.compaction.lag.ms": _LONG,
    "max.message.bytes": _INT,
    "message.downconversion.enable": _BOOLEAN,
    "message.format.version": _STRING,
    "message.timestamp.difference.max.ms": _LONG,
    "message.timestamp.type": _STRING,
    "min.cleanable.dirty.ratio": _DOUBLE,
    "min.compaction.lag.ms": _LONG,
    "min.insync.replicas": _INT,
    "preallocate": _BOOLEAN,
    "retention.bytes": _LONG,
    "retention.ms": _LONG,
    "segment.bytes": _INT,
    "segment.index.bytes": _INT,
    "segment.jitter.ms": _LONG,
    "segment.ms": _LONG,
    "unclean.leader.election.enable": _BOOLEAN,
}
"""Kafka 2.8's topic-level config names (``LogConfig.configNames``) and their ``ConfigDef`` types."""

_CHOICES: Mapping[str, frozenset[str]] = {
    "cleanup.policy": frozenset({"delete", "compact"}),
    "compression.type": frozenset({"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}),
    "message.timestamp.type": frozenset({"CreateTime", "LogAppendTime"}),
}
_INT_RANGE = (-(2**31), 2**31 - 1)
_LONG_RANGE = (-(2**63), 2**63 - 1)


def validate_topic_configs(configs: Mapping[str, str]) -> None:
    """Kafka's ``LogConfig.validate`` in the parts that matter here: known names, values of the right type."""
    for name in sorted(configs):
        kind = TOPIC_CONFIG_TYPES.get(name)
        if kind is None:
            raise InvalidConfigError(f"Unknown topic config name: {name}")
        problem = _value_problem(name, kind, configs[name].strip())
        if problem:
            raise InvalidConfigError(f"Invalid value {configs[name]} for configuration {name}: {problem}")


def _value_problem(name: str, kind: str, value: str) -> str | None:
    if kind == _BOOLEAN:
        return None if value.lower() in ("true", "false") else "Expected value to be either true or false"
    if kind in (_INT, _LONG):
        low, high = _INT_RANGE if kind == _INT else _LONG_RANGE
        if not re.fullmatch(r"[+-]?\d+", value) or not low <= int(value) <= high:
            return f"Not a number of type {kind}"
        if name == "min.insync.replicas" and int(value) < 1:
            return "Value must be at least 1"
        return None
    if kind == _DOUBLE:
        try:
            float(value)
        except ValueError:
            return f"Not a number of type {kind}"
        return None
    choices = _CHOICES.get(name)
    items = [v.strip() for v in value.split(",")] if kind == _LIST else [value]
    bad = [v for v in items if choices is not None and v not in choices]
    return f"String must be one of: {', '.join(sorted(choices or ()))}" if bad else None


def parse_topic_configs(pairs: Iterable[str]) -> dict[str, str]:
    """``--config k=v`` values (``TopicCommand.parseTopicConfigsToBeAdded``), then validated."""
    out: dict[str, str] = {}
    for pair in pairs:
        parts = re.split(r"\s*=\s*", pair)
        while parts and parts[-1] == "":  # Java's split drops trailing empty strings
            parts.pop()
        if len(parts) != 2:
            raise InvalidConfigError('Invalid topic config: all configs to be added must be in the format "key=val".')
        out[parts[0].strip()] = parts[1].strip()
    validate_topic_configs(out)
    return out


# ------------------------------------------------------------------ explicit replica assignments


def parse_replica_assignment(text: str) -> dict[int, list[int]]:
    """``--replica-assignment 1:2,2:3``: partition i gets the i-th comma-separated list of broker ids."""
    out: dict[int, list[int]] = {}
    for i, part in enumerate(text.split(",")):
        try:
            brokers = [int(s.strip()) for s in part.split(":")]
        except ValueError:
            raise InvalidReplicaAssignmentError(
                f"Invalid replica assignment {text!r}: {part!r} is not a list of broker ids separated by ':'"
            ) from None
        duplicates = sorted({b for b in brokers if brokers.count(b) > 1})
        if duplicates:
            raise InvalidReplicaAssignmentError(
                f"Partition replica lists may not contain duplicate entries: {','.join(map(str, duplicates))}")
        out[i] = brokers
        if len(brokers) != len(out[0]):
            raise InvalidReplicaAssignmentError(
                f"Partition {i} has different replication factor: {','.join(map(str, brokers))}")
    return out


def validate_assignment_shape(assignment: Mapping[int, Sequence[int]]) -> None:
    """``AdminZkClient.validateTopicCreate``'s assignment checks: same size, no duplicates, ids 0..n-1."""
    if not assignment:
        raise InvalidReplicaAssignmentError("The replica assignment must name at least one partition")
    if len({len(r) for r in assignment.values()}) != 1:
        raise InvalidReplicaAssignmentError("All partitions should have the same number of replicas")
    for partition, replicas in sorted(assignment.items()):
        if not replicas:
            raise InvalidReplicaAssignmentError(
                f"Cannot have replication factor of 0 for partition id {partition}.")
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(
                f"Duplicate replica assignment found: partition {partition} has replicas "
                f"{','.join(map(str, replicas))}")
    if sorted(assignment) != list(range(len(assignment))):
        raise InvalidReplicaAssignmentError("partitions should be a consecutive 0-based integer sequence")


def unavailable_brokers(assignment: Mapping[int, Sequence[int]], live: Iterable[int]) -> dict[int, list[int]]:
    """Partition → the brokers it names that are not registered."""
    live_set = set(live)
    missing = {p: sorted(set(r) - live_set) for p, r in assignment.items()}
    return {p: m for p, m in sorted(missing.items()) if m}
