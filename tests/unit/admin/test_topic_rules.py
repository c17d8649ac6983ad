"""Kafka's topic-name rules, topic config checks and ``kafka-topics`` argument parsing, with Kafka's messages."""

from __future__ import annotations

import re

import pytest

from zkcontroller.admin.errors import InvalidConfigError, InvalidReplicaAssignmentError, InvalidTopicError
from zkcontroller.admin.topic_rules import (
    has_collision,
    has_collision_chars,
    parse_replica_assignment,
    parse_topic_configs,
    validate_assignment_shape,
    validate_topic_configs,
    validate_topic_name,
)


@pytest.mark.parametrize("name", ["a", "A-b_c.9", "x" * 249, "__consumer_offsets", "..."])
def test_legal_names(name: str) -> None:
    validate_topic_name(name)


@pytest.mark.parametrize(("name", "message"), [
    ("", "Topic name is illegal, it can't be empty"),
    (".", 'Topic name cannot be "." or ".."'),
    ("..", 'Topic name cannot be "." or ".."'),
    ("x" * 250, "Topic name is illegal, it can't be longer than 249 characters"),
    ("a b", "Topic name \"a b\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'"),
    ("é", "is illegal, it contains a character other than"),
    ("a/b", "is illegal"),
])
def test_illegal_names(name: str, message: str) -> None:
    with pytest.raises(InvalidTopicError, match=re.escape(message)):
        validate_topic_name(name)


def test_collisions() -> None:
    assert has_collision_chars("a.b") and has_collision_chars("a_b") and not has_collision_chars("ab")
    assert has_collision("a.b", "a_b") and has_collision("a.b_c", "a_b.c") and not has_collision("a.b", "ab")


def test_parse_configs() -> None:
    assert parse_topic_configs(["retention.ms = 1000", "unclean.leader.election.enable=TRUE"]) == {
        "retention.ms": "1000", "unclean.leader.election.enable": "TRUE"}
    for bad in ("retention.ms", "retention.ms=", "a=b=c"):
        with pytest.raises(InvalidConfigError, match='format "key=val"'):
            parse_topic_configs([bad])


@pytest.mark.parametrize(("configs", "message"), [
    ({"nope": "1"}, "Unknown topic config name: nope"),
    ({"unclean.leader.election.enable": "yes"}, "Expected value to be either true or false"),
    ({"retention.ms": "soon"}, "Not a number of type LONG"),
    ({"segment.bytes": str(2**31)}, "Not a number of type INT"),
    ({"min.insync.replicas": "0"}, "Value must be at least 1"),
    ({"cleanup.policy": "delete,shred"}, "String must be one of: compact, delete"),
    ({"min.cleanable.dirty.ratio": "half"}, "Not a number of type DOUBLE"),
])
def test_bad_configs(configs: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidConfigError, match=re.escape(message)):
        validate_topic_configs(configs)


def test_good_configs() -> None:
    validate_topic_configs({"cleanup.policy": "compact,delete", "min.insync.replicas": "2",
                            "min.cleanable.dirty.ratio": "0.5", "compression.type": "zstd"})


def test_parse_replica_assignment() -> None:
    assert parse_replica_assignment("1:2, 2 :3,3:1") == {0: [1, 2], 1: [2, 3], 2: [3, 1]}
    with pytest.raises(InvalidReplicaAssignmentError, match="duplicate entries: 2"):
        parse_replica_assignment("1:2:2")
    with pytest.raises(InvalidReplicaAssignmentError, match="Partition 1 has different replication factor: 3"):
        parse_replica_assignment("1:2,3")
    with pytest.raises(InvalidReplicaAssignmentError) as refused:
        parse_replica_assignment("1:x")
    assert str(refused.value) == 'For input string: "x"'  # Java's NumberFormatException, as TopicCommand shows it


@pytest.mark.parametrize(("text", "parsed"), [
    ("+1:02", {0: [1, 2]}), ("-1:\u0662", {0: [-1, 2]}),  # Integer.parseInt: a sign, any BMP Nd digit
    ("\t1 : 2\n", {0: [1, 2]}),  # each id trimmed (String.trim: every char up to U+0020)
    ("1:2,3:4,", {0: [1, 2], 1: [3, 4]}), ("1:2:", {0: [1, 2]}),  # Java's split drops trailing empty pieces
    ("2147483647", {0: [2**31 - 1]}),
])
def test_replica_assignment_ids_are_javas_to_int(text: str, parsed: dict[int, list[int]]) -> None:
    assert parse_replica_assignment(text) == parsed


@pytest.mark.parametrize(("text", "bad"), [
    ("1_0", "1_0"), ("2147483648", "2147483648"), ("1:\U0001d7d0", "\U0001d7d0"), ("1,,2", ""), (",1", ""),
    ("1:\u00a02", "\u00a02"), ("0x1", "0x1"), ("1:+", "+"),
])
def test_replica_assignment_ids_java_refuses(text: str, bad: str) -> None:
    with pytest.raises(InvalidReplicaAssignmentError) as refused:
        parse_replica_assignment(text)
    assert str(refused.value) == f'For input string: "{bad}"'


@pytest.mark.parametrize(("assignment", "message"), [
    ({}, "at least one partition"),
    ({0: [1, 2], 1: [1]}, "same number of replicas"),
    ({0: []}, "replication factor of 0"),
    ({0: [1, 1]}, "Duplicate replica assignment"),
    ({1: [1]}, "consecutive 0-based"),
])
def test_assignment_shape(assignment: dict[int, list[int]], message: str) -> None:
    with pytest.raises(InvalidReplicaAssignmentError, match=message):
        validate_assignment_shape(assignment)


# Kafka prints the whole assignment, a Scala 2.13 ``mutable.HashMap[Int, ArrayBuffer[Int]]``, in its table's order.
# Each expected string is what scala-library 2.13.18 (PySpark's jar) printed for a HashMap filled in this order.
@pytest.mark.parametrize(("assignment", "printed"), [
    ({0: [1, 1], 1: [2, 3]}, "HashMap(0 -> ArrayBuffer(1, 1), 1 -> ArrayBuffer(2, 3))"),
    ({3: [1, 1], 17: [2, 2]}, "HashMap(17 -> ArrayBuffer(2, 2), 3 -> ArrayBuffer(1, 1))"),  # 17 & 15 == 1
    ({-1: [4, 4], 5: [4, 4], 70000: [4, 4], 65536: [4, 4], 1: [4, 4]},
     "HashMap(-1 -> ArrayBuffer(4, 4), 1 -> ArrayBuffer(4, 4), 65536 -> ArrayBuffer(4, 4), "
     "70000 -> ArrayBuffer(4, 4), 5 -> ArrayBuffer(4, 4))"),
    ({(i * 37) % 101: [1, 1] for i in range(40)},  # grown to 64 buckets
     "HashMap(" + ", ".join(f"{k} -> ArrayBuffer(1, 1)" for k in (
         0, 3, 67, 6, 70, 9, 73, 10, 74, 13, 77, 16, 80, 19, 83, 20, 84, 23, 87, 26, 90, 29, 93, 30, 94, 33, 97, 36,
         100, 37, 40, 43, 46, 47, 50, 53, 56, 57, 60, 63)) + ")"),
])
def test_duplicate_replicas_print_the_assignment_as_kafka(assignment: dict[int, list[int]], printed: str) -> None:
    with pytest.raises(InvalidReplicaAssignmentError) as refused:
        validate_assignment_shape(assignment)
    assert str(refused.value) == f"Duplicate replica assignment found: {printed}"


def test_topic_config_pairs_trimmed_as_java() -> None:
    """TopicCommand.parseTopicConfigsToBeAdded: ``split("\\s*=\\s*")`` (ASCII \\s), then ``String.trim``."""
    assert parse_topic_configs(["\x00retention.ms\t=\x01 1 \x1f"]) == {"retention.ms": "1"}
    with pytest.raises(InvalidConfigError) as refused:
        parse_topic_configs(["retention.ms\u00a0=1"])
    assert str(refused.value) == "Unknown topic config name: retention.ms\u00a0"
