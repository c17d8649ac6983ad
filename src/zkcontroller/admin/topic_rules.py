"""Pure checks and parsers behind topic administration: Kafka's topic-name rules (``Topic.java``), the topic
config rules of 2.8 (``LogConfig``: names, types, defaults, validators), and ``kafka-topics``' argument formats.

Kept apart from `zkcontroller.admin.topics` so that validation is testable without a store.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from zkcontroller.admin.errors import InvalidConfigError, InvalidReplicaAssignmentError, InvalidTopicError
from zkcontroller.admin.java_numbers import java_split, parse_int_list
from zkcontroller.admin.repeats import repeated
from zkcontroller.controller.scala_render import scala_collection
from zkcontroller.java_hash import scala_hash_order
from zkcontroller.zk import log_config_def
from zkcontroller.zk.config_values import JAVA_TRIM
from zkcontroller.zk.log_config_def import (  # noqa: F401 (re-exported: the admin tools' names for them)
    TOPIC_CONFIG_RULES,
    ApiVersionRule,
    ListOf,
    OneOf,
    Range,
    ThrottledReplicas,
    TopicConfigError,
    TopicConfigRule,
    Validator,
    java_double,
    java_parse_double,
    parse_config_value,
)
from zkcontroller.zk.topic_names import topic_name_problem

COLLISION_WARNING = (
    "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. "
    "To avoid issues it is best to use either, but not both.")
MESSAGE_FORMAT_WARNING = (
    "WARNING: The configuration message.format.version={} is specified. This configuration will be ignored if "
    "the version is newer than the inter.broker.protocol.version specified in the broker.")
"""Printed by kafka-configs and kafka-topics whenever ``message.format.version`` is given."""

def validate_topic_name(topic: str) -> None:
    """Kafka's ``Topic.validate``, with its messages."""
    problem = topic_name_problem(topic)
    if problem is not None:
        raise InvalidTopicError(problem)


def has_collision_chars(topic: str) -> bool:
    """Metric names turn ``.`` into ``_``, so such topics may collide with another (``Topic.hasCollisionChars``)."""
    return "_" in topic or "." in topic


def collision_warning(topic: str) -> str | None:
    """TopicCommand's `COLLISION_WARNING`, printed before creating ``topic`` if it has a ``.`` or ``_`` (else
    None): by ``topics create`` and both cluster prompts' ``create`` (the prompts left it out)."""
    return COLLISION_WARNING if has_collision_chars(topic) else None


def has_collision(topic_a: str, topic_b: str) -> bool:
    return topic_a.replace(".", "_") == topic_b.replace(".", "_")


# ------------------------------------------------------------------ topic configs (LogConfig, 2.8: zk.log_config_def)


def validate_topic_config_names(names: Iterable[str]) -> None:
    """``LogConfig.validateNames``: the first name that is not a topic config is refused."""
    try:
        log_config_def.validate_topic_config_names(names)
    except TopicConfigError as e:
        raise InvalidConfigError(str(e)) from None


def validate_topic_configs(configs: Mapping[str, str]) -> None:
    """Kafka's ``LogConfig.validate`` (`log_config_def.validate_topic_configs`), raising `InvalidConfigError`."""
    try:
        log_config_def.validate_topic_configs(configs)
    except TopicConfigError as e:
        raise InvalidConfigError(str(e)) from None


def parse_topic_configs(pairs: Iterable[str]) -> dict[str, str]:
    """``--config k=v`` values (``TopicCommand.parseTopicConfigsToBeAdded``), then validated."""
    out: dict[str, str] = {}
    for pair in pairs:
        parts = re.split(r"\s*=\s*", pair, flags=re.ASCII)  # Java's \s is ASCII whitespace
        while parts and parts[-1] == "":  # Java's split drops trailing empty strings
            parts.pop()
        if len(parts) != 2:
            raise InvalidConfigError('Invalid topic config: all configs to be added must be in the format "key=val".')
        out[parts[0].strip(JAVA_TRIM)] = parts[1].strip(JAVA_TRIM)  # String.trim, not Unicode whitespace
    validate_topic_configs(out)
    return out


# ------------------------------------------------------------------ explicit replica assignments


def parse_replica_assignment(text: str) -> dict[int, list[int]]:
    """``--replica-assignment 1:2,2:3``: partition i gets the i-th comma-separated list of broker ids.

    As TopicCommand.parseReplicaAssignment: Java's ``split`` (trailing empty pieces dropped), each id trimmed
    then ``toInt`` (``+1``, ``01`` pass; ``1_0``, ids past 32 bits do not), Java's message for a bad one."""
    out: dict[int, list[int]] = {}
    for i, part in enumerate(java_split(text, ",")):
        try:
            brokers = parse_int_list(part, ":", trim=True)
        except ValueError as e:
            raise InvalidReplicaAssignmentError(str(e)) from None
        duplicates = sorted(repeated(brokers))
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
                f"Duplicate replica assignment found: {_scala_assignment_map(assignment)}")
    if sorted(assignment) != list(range(len(assignment))):
        raise InvalidReplicaAssignmentError("partitions should be a consecutive 0-based integer sequence")


def _scala_assignment_map(assignment: Mapping[int, Sequence[int]]) -> str:
    """The assignment as Kafka's message prints it: ZkAdminManager builds a ``mutable.HashMap[Int, Seq[Int]]``
    of ``ArrayBuffer``s (a Java list through ``asScala``, mapped), printed in its table's order (an ``Int`` hashes
    to itself)."""
    order = scala_hash_order(assignment, lambda partition: partition)
    return scala_collection("HashMap", (f"{p} -> {scala_collection('ArrayBuffer', assignment[p])}" for p in order))


def unavailable_brokers(assignment: Mapping[int, Sequence[int]], live: Iterable[int]) -> dict[int, list[int]]:
    """Partition → the brokers it names that are not registered."""
    live_set = set(live)
    missing = {p: sorted(set(r) - live_set) for p, r in assignment.items()}
    return {p: m for p, m in sorted(missing.items()) if m}
