"""`scala_immutable_hash_set_order`: a Scala 2.13 immutable ``HashSet``'s iteration order (its CHAMP trie), for
Kafka lines that print one. The expected orders were printed by scala-library 2.13.18 for sets of a Java class
with Kafka's ``TopicPartition.hashCode`` (the trie's hash, slots and iterator are those of 2.13.5, Kafka 2.8.2's)."""

from __future__ import annotations

from zkcontroller.java_hash import scala_immutable_hash_set_order, topic_partition_hash


def _order(*names: str) -> list[str]:
    def hash_of(name: str) -> int:
        topic, _, partition = name.rpartition("-")
        return topic_partition_hash(topic, int(partition))
    return scala_immutable_hash_set_order(names, hash_of)


def test_the_order_is_the_tries_not_the_insertion_order() -> None:
    assert _order("t-0", "t-1", "t-2", "t-3", "t-4", "t-5", "t-6") == ["t-5", "t-4", "t-6", "t-3", "t-2", "t-1", "t-0"]
    assert _order("t-6", "t-0", "t-4", "t-2") == ["t-4", "t-6", "t-2", "t-0"]  # a filtered HashSet's part
    assert _order("orders-0", "orders-1", "orders-2", "payments-0", "payments-1", "x-7", "y-8", "zeta-12",
                  "zeta-3") == ["zeta-12", "orders-0", "orders-1", "zeta-3", "payments-1", "orders-2", "payments-0",
                                "x-7", "y-8"]


def test_kafkas_topic_partition_hash() -> None:
    """``31 * (31 + partition) + topic.hashCode()`` in Java ``int`` arithmetic: "t".hashCode() is 116."""
    assert topic_partition_hash("t", 0) == 31 * 31 + 116
    assert topic_partition_hash("t", -1) == 31 * 30 + 116
    assert topic_partition_hash("t", 2**31 - 1) == (31 * (31 + 2**31 - 1) + 116) & 0xFFFFFFFF
