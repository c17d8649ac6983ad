"""The controller's TopicChange line reads as Kafka's: it printed ``New topics: [t1], ...
new partition replica assignment [3 partitions]``, which neither Kafka's operators nor a parser of Kafka's
logs would recognise."""

from __future__ import annotations

from zkcontroller.controller.topics import topic_change_line
from zkcontroller.model import ReplicaAssignment, TopicId, TopicIdReplicaAssignment, TopicPartition


def test_one_new_topic_prints_as_kafka_did() -> None:
    # The form of Kafka 3.0's controller.log line for one new topic (sample 39 in ../shared/kafka-logs, where
    # processTopicChange is 2.8's), with our own topic name and id.
    expected = ("New topics: [Set(orders)], deleted topics: [HashSet()], new partition replica assignment "
                "[Set(TopicIdReplicaAssignment(orders,Some(AAECAwQFBgcICQoLDA0ODw),Map(orders-0 -> "
                "ReplicaAssignment(replicas=0, addingReplicas=, removingReplicas=))))]")
    read = [TopicIdReplicaAssignment("orders", TopicId.from_string("AAECAwQFBgcICQoLDA0ODw"),
                                     {TopicPartition("orders", 0): ReplicaAssignment((0,))})]
    assert topic_change_line({"orders"}, set(), read) == expected


def test_a_topic_without_an_id_and_a_large_one() -> None:
    big = {TopicPartition("big", p): ReplicaAssignment((p % 3, (p + 1) % 3)) for p in (10, 2, 0, 1, 3)}
    read = [TopicIdReplicaAssignment("big", None, big),
            TopicIdReplicaAssignment("small", None, {TopicPartition("small", 0): ReplicaAssignment((1, 2), (2,))})]
    line = topic_change_line({"big", "small"}, {"gone"}, read)
    assert line.startswith("New topics: [Set(big, small)], deleted topics: [HashSet(gone)], ")
    # five partitions: a HashMap (printed in partition order here; Scala's hash order is not reproduced)
    assert ("TopicIdReplicaAssignment(big,None,HashMap(big-0 -> ReplicaAssignment(replicas=0,1, addingReplicas=, "
            "removingReplicas=), big-1 -> ") in line
    assert "big-3 -> ReplicaAssignment(replicas=0,1, addingReplicas=, removingReplicas=), big-10 -> " in line
    assert ("TopicIdReplicaAssignment(small,None,Map(small-0 -> ReplicaAssignment(replicas=1,2, addingReplicas=2, "
            "removingReplicas=)))") in line


def test_five_new_topics_are_a_hash_set() -> None:
    """In the trie's order: scala-library 2.13.18 prints ``Seq("t0", .., "t4").toSet`` so."""
    names = {f"t{i}" for i in range(5)}
    assert topic_change_line(names, set(), []).startswith("New topics: [HashSet(t4, t0, t3, t2, t1)]")


def test_a_new_topic_among_five_is_a_hash_set_and_the_deleted_ones_a_mutable_one() -> None:
    """``topics -- allTopics`` keeps the kind of the five topics ZooKeeper listed; ``allTopics.diff(topics)`` is a
    ``mutable.HashSet`` in its table's order (scala-library 2.13.18: ``HashSet(audit, payments, clicks, orders,
    users)`` for those five)."""
    deleted = {"orders", "payments", "clicks", "users", "audit"}
    line = topic_change_line({"t0"}, deleted, [], topics_read=5)
    assert line.startswith("New topics: [HashSet(t0)], deleted topics: [HashSet(audit, payments, clicks, orders, "
                           "users)]")
