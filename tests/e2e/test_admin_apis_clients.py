"""CreatePartitions, AlterPartitionReassignments, ListPartitionReassignments and ElectLeaders from kafka-python's
``KafkaAdminClient`` against ``zkcontroller cluster --zookeeper ... --port-base 0`` as a user runs it. The client
finds the controller through Metadata and sends each request there, whichever broker it boots from. Every wait is
on a condition with a bound."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.e2e.cluster_prompt import running_cluster
from tests.e2e.test_cluster_command_listeners import wait_for

from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(240)]

TOPIC = "administered"


@pytest.fixture(scope="module")
def address(zookeeper_server: ZooKeeperServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Three in-process brokers with ``administered`` (2 partitions, replication factor 2): a bootstrap address."""
    with running_cluster(zookeeper_server, tmp_path_factory, "admin-apis") as (prompt, found):
        prompt.send(f"create {TOPIC} 2 2")
        prompt.expect(r"^2 of 2 partitions have a leader\.", 60)
        yield found


def partitions(admin: Any) -> dict[int, dict[str, Any]]:
    """``TOPIC``'s partitions by index, as Metadata describes them (leader, replicas, isr)."""
    (topic,) = admin.describe_topics([TOPIC])
    return {p["partition_index"]: p for p in topic["partitions"]}


def test_create_partitions_validates_then_adds(admin: Any) -> None:
    response = admin.create_partitions({TOPIC: 4}, timeout_ms=30000, validate_only=True)
    assert [r.error_code for r in response.results] == [0]
    assert sorted(partitions(admin)) == [0, 1]
    response = admin.create_partitions({TOPIC: 4}, timeout_ms=30000)
    assert [r.error_code for r in response.results] == [0]
    grown = partitions(admin)  # answered once each partition has a leader
    assert sorted(grown) == [0, 1, 2, 3] and all(p["leader_id"] >= 0 for p in grown.values())


def test_a_reassignment_is_listed_until_it_completes_then_a_preferred_election_moves_the_leader(admin: Any) -> None:
    from kafka import TopicPartition

    tp = TopicPartition(TOPIC, 0)
    assert admin.alter_partition_reassignments({tp: [3, 2, 1]}, timeout_ms=30000) == {tp: None}
    wait_for(lambda: admin.list_partition_reassignments(timeout_ms=30000) == {}, "the reassignment completed")
    wait_for(lambda: partitions(admin)[0]["replica_nodes"] == [3, 2, 1], "replicas [3, 2, 1] in Metadata")
    wait_for(lambda: 3 in partitions(admin)[0]["isr_nodes"], "broker 3 in the ISR")
    response = admin.elect_leaders(0, {TOPIC: [0]}, timeout_ms=30000)  # ELECTION_NOT_NEEDED is not raised
    codes = [p.error_code for r in response.replica_election_results for p in r.partition_result]
    assert codes in ([0], [84])
    assert partitions(admin)[0]["leader_id"] == 3  # answered after the broker's cache showed the preferred leader


def test_cancelling_what_is_not_being_reassigned(admin: Any) -> None:
    from kafka import TopicPartition
    from kafka.errors import NoReassignmentInProgressError

    tp = TopicPartition(TOPIC, 1)
    assert admin.alter_partition_reassignments({tp: None}, timeout_ms=30000) == {tp: NoReassignmentInProgressError}
    assert admin.list_partition_reassignments({TOPIC: [0, 1]}, timeout_ms=30000) == {}


def test_confluent_kafka_creates_partitions_and_elects_leaders(address: str, admin: Any) -> None:
    """librdkafka's CreatePartitions and ElectLeaders (v1+: it sends the election type): the topic grows to 6, and
    a preferred election over its partitions succeeds or finds none needed."""
    from confluent_kafka import ElectionType, TopicPartition
    from confluent_kafka.admin import AdminClient, NewPartitions

    client = AdminClient({"bootstrap.servers": address})
    futures = client.create_partitions([NewPartitions(TOPIC, 6)], operation_timeout=30, request_timeout=30)
    futures[TOPIC].result(timeout=60)
    assert sorted(partitions(admin)) == [0, 1, 2, 3, 4, 5]
    elected = client.elect_leaders(ElectionType.PREFERRED, [TopicPartition(TOPIC, p) for p in range(6)],
                                   ).result(timeout=60)  # its kwargs: SystemError in confluent-kafka 2.16
    errors = {tp.partition: error for tp, error in elected.items()}
    assert sorted(errors) == list(range(6))
    assert all(e is None or e.code() == 84 for e in errors.values()), errors  # 84: ELECTION_NOT_NEEDED
