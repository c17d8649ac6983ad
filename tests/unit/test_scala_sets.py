"""`zkcontroller.scala_sets`: each renderer prints what Scala 2.13 prints for the set Kafka's line builds. Every
expected string below was printed by scala-library 2.13.18 (PySpark's jar, compiled with its scala-compiler; the
collections' layout is 2.13.5's, Kafka 2.8.2's) for the Scala expression in the comment, with a Java class
carrying Kafka's ``TopicPartition.hashCode`` for the partitions."""

from __future__ import annotations

from zkcontroller.java_hash import scala_hash_order, scala_immutable_hash_set_order
from zkcontroller.model import TopicPartition
from zkcontroller.scala_sets import (
    immutable_set,
    int_hash,
    java_string_hash,
    map_key_set,
    mutable_hash_set,
    topic_partition_key_hash,
)

TOPICS = ["orders", "payments", "clicks", "logs", "users", "audit"]


def test_an_immutable_set_keeps_insertion_order_up_to_four_then_is_a_hash_trie() -> None:
    assert immutable_set([], int_hash) == "Set()"
    assert immutable_set([9, 2, 7, 1], int_hash) == "Set(9, 2, 7, 1)"  # Seq(9, 2, 7, 1).toSet
    assert immutable_set([9, 2, 7, 1, 30], int_hash) == "HashSet(1, 9, 2, 7, 30)"  # Seq(9, 2, 7, 1, 30).toSet
    assert immutable_set(TOPICS, java_string_hash) == "HashSet(payments, users, clicks, orders, audit, logs)"
    tps = [TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0), TopicPartition("u", 1),
           TopicPartition("v", 3)]
    assert immutable_set(tps, topic_partition_key_hash) == "HashSet(u-0, u-1, t-1, t-0, v-3)"


def test_a_part_of_a_hash_set_is_a_hash_set_however_small() -> None:
    assert immutable_set([9, 2, 7, 1], int_hash, built_from=5) == "HashSet(1, 9, 2, 7)"  # (... 30).toSet - 30
    # Seq(<TOPICS>).toSet -- Seq("orders", "payments", "clicks", "logs")
    assert immutable_set(["users", "audit"], java_string_hash, built_from=6) == "HashSet(users, audit)"
    assert immutable_set([], java_string_hash, built_from=6) == "HashSet()"


def test_an_unknown_hash_keeps_the_order_given() -> None:
    assert immutable_set(["b", "a", "c", "e", "d"], None) == "HashSet(b, a, c, e, d)"


def test_a_maps_keys_print_set_in_the_maps_order() -> None:
    # Map("consumer_byte_rate" -> .., "producer_byte_rate" -> .., "zz" -> .., "SCRAM-SHA-256" -> .., "aa" -> ..)
    #   .keys.filterNot(k => k.endsWith("_rate") || k.startsWith("SCRAM"))
    assert map_key_set(["zz", "aa"], java_string_hash, map_size=5) == "Set(zz, aa)"
    keys = ["a1", "a2", "a3", "a4"]  # of a 7-key HashMap
    assert map_key_set(keys, java_string_hash, map_size=7) == "Set(a4, a3, a1, a2)"
    assert map_key_set(["zz", "aa", "SCRAM-SHA-256"], java_string_hash, map_size=3) == "Set(zz, aa, SCRAM-SHA-256)"
    # ... ++ big.filter(_._1.startsWith("SCRAM")).keys: an Iterable's ++, through the immutable Set builder
    both = [*scala_immutable_hash_set_order(keys, java_string_hash), "SCRAM-SHA-256", "SCRAM-SHA-512"]
    assert immutable_set(both, java_string_hash) == "HashSet(a4, SCRAM-SHA-512, SCRAM-SHA-256, a3, a1, a2)"


def test_a_mutable_hash_set_prints_hash_set_in_its_tables_order() -> None:
    assert mutable_hash_set([], int_hash) == "HashSet()"
    assert mutable_hash_set([9, 2], int_hash) == "HashSet(2, 9)"  # mutable.Set.empty ++= Seq(9, 2), and its map
    # (1 to 20).map(_ * 7): the table grew to 32
    assert mutable_hash_set([i * 7 for i in range(1, 21)], int_hash) == (
        "HashSet(98, 35, 133, 70, 7, 105, 42, 140, 77, 14, 112, 49, 84, 21, 119, 56, 91, 28, 126, 63)")
    # topics.filter(_.length > 4) | reassigning.map(_.topic), with reassigning = Set(zeta-0)
    assert mutable_hash_set(["orders", "payments", "clicks", "users", "audit", "zeta"], java_string_hash) == (
        "HashSet(zeta, audit, payments, clicks, orders, users)")
    assert mutable_hash_set(["orders", "payments", "clicks", "users", "audit"], java_string_hash) == (
        "HashSet(audit, payments, clicks, orders, users)")  # topics.diff(Set("logs"))
    tps = [TopicPartition("t", p) for p in (2, 9, 17)]  # partitionsToMakeFollower.map(_.topicPartition)
    assert mutable_hash_set(tps, topic_partition_key_hash) == "HashSet(t-2, t-17, t-9)"


def test_a_mutable_maps_key_set_diff_is_an_immutable_set_in_the_maps_order() -> None:
    """``liveBrokerEpochs.keySet.diff(shuttingDownBrokerIds)``: Set(2, 9); six: HashSet(5, 9, 2, 17, 3, 40)."""
    assert immutable_set(scala_hash_order([9, 2], int_hash), int_hash) == "Set(2, 9)"
    live = scala_hash_order([17, 3, 9, 2, 40, 5], int_hash)
    assert immutable_set(live, int_hash) == "HashSet(5, 9, 2, 17, 3, 40)"
