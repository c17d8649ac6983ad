"""The answer and log line of a Produce request that fails as a whole (``ProduceRequest.getErrorResponse`` and
``toString``): partitions in the order of a ``java.util.HashMap<TopicPartition, Integer>``, checked against
OpenJDK 17's (``jshell``, TopicPartition's ``hashCode``), through a resize from 16 to 32 slots."""

from __future__ import annotations

from zkcontroller.broker.produce import ProducePartition, failed_request_answers, request_text

NAMES = ["orders-0", "orders-1", "nope-0", "orders-9", "zeta-3", "alpha-12", "orders-5", "b-0", "b-1", "b-2", "b-3",
         "b-4", "b-5", "b-6", "b-7", "b-8", "b-9", "c-100"]
JAVA_ORDER = ["b-3", "c-100", "b-2", "orders-9", "b-1", "b-0", "nope-0", "zeta-3", "orders-0", "orders-1", "alpha-12",
              "b-9", "b-8", "b-7", "b-6", "orders-5", "b-5", "b-4"]


def partition(name: str, records: bytes | None = b"xy") -> ProducePartition:
    topic, index = name.rsplit("-", 1)
    return ProducePartition(topic, int(index), records)


def test_the_request_text_lists_sizes_in_java_hash_map_order_summing_a_partition_named_twice() -> None:
    asked = [partition(n) for n in NAMES] + [partition("b-3", b"abc"), partition("c-100", None)]
    listed = ",".join(f"{n}={5 if n == 'b-3' else 2}" for n in JAVA_ORDER)
    assert request_text(-1, 30_000, asked) == f"{{acks=-1,timeout=30000,partitionSizes=[{listed}]}}"


def test_every_partition_answers_unknown_server_error_once_grouped_by_topic_in_hash_map_order() -> None:
    answers = failed_request_answers([partition(n) for n in NAMES] + [partition("orders-1")])
    topics = list(dict.fromkeys(n.rsplit("-", 1)[0] for n in JAVA_ORDER))  # b, c, orders, nope, zeta, alpha
    expected = [n for t in topics for n in JAVA_ORDER if n.rsplit("-", 1)[0] == t]
    assert [f"{a.topic}-{a.partition}" for a in answers] == expected
    assert {(a.error, a.base_offset, a.log_start_offset, a.log_append_time, a.error_message) for a in answers} == {
        (-1, -1, -1, -1, None)}


def test_nine_keys_in_one_bucket_of_a_small_table_resize_it_as_java_does() -> None:
    """Partitions 16 apart share a bucket of a 16-slot table: the ninth makes ``treeifyBin`` double the table (under
    64 slots it resizes instead of treeifying), which splits them; OpenJDK 17's order (jshell)."""
    names = [f"orders-{p}" for p in range(3, 148, 16)]
    java = ["orders-19", "orders-51", "orders-83", "orders-115", "orders-147", "orders-3", "orders-35", "orders-67",
            "orders-99", "orders-131"]
    assert [f"{a.topic}-{a.partition}" for a in failed_request_answers([partition(n) for n in names])] == java
