"""CreatePartitions, AlterPartitionReassignments, ListPartitionReassignments and ElectLeaders from kafka-python's
``KafkaAdminClient`` against ``zkcontroller cluster --zookeeper ... --port-base 0`` as a user runs it. The client
finds the controller through Metadata and sends each request there, whichever broker it boots from. Every wait is
on a condition with a bound."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from tests.e2e.cluster_prompt import running_cluster
from tests.e2e.test_cluster_command_listeners import Prompt, wait_for

from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(240)]

_topics = itertools.count(1)


@pytest.fixture(scope="module")
def cluster(zookeeper_server: ZooKeeperServerProcess,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Prompt, str]]:
    """Three in-process brokers: their prompt and a bootstrap address."""
    with running_cluster(zookeeper_server, tmp_path_factory, "admin-apis") as found:
        yield found


@pytest.fixture(scope="module")
def address(cluster: tuple[Prompt, str]) -> str:
    return cluster[1]


@pytest.fixture
def topic(cluster: tuple[Prompt, str]) -> str:
    """A topic of the test's own (2 partitions, replication factor 2), led: each test grows, moves or elects
    its partitions, and a topic shared by the module made a test depend on the ones before it (run alone or in
    another order, a growth to 4 partitions found 6)."""
    prompt, _ = cluster
    name = f"administered-{next(_topics)}"
    prompt.send(f"create {name} 2 2")
    prompt.expect(r"^2 of 2 partitions have a leader\.", 60)
    return name


def partitions(admin: Any, topic: str) -> dict[int, dict[str, Any]]:
    """``topic``'s partitions by index, as Metadata describes them (leader, replicas, isr)."""
    (described,) = admin.describe_topics([topic])
    return {p["partition_index"]: p for p in described["partitions"]}


def test_create_partitions_validates_then_adds(admin: Any, topic: str) -> None:
    response = admin.create_partitions({topic: 4}, timeout_ms=30000, validate_only=True)
    assert [r.error_code for r in response.results] == [0]
    assert sorted(partitions(admin, topic)) == [0, 1]
    response = admin.create_partitions({topic: 4}, timeout_ms=30000)
    assert [r.error_code for r in response.results] == [0]
    grown = partitions(admin, topic)  # answered once each partition has a leader
    assert sorted(grown) == [0, 1, 2, 3] and all(p["leader_id"] >= 0 for p in grown.values())


def test_a_reassignment_is_listed_until_it_completes_then_a_preferred_election_moves_the_leader(admin: Any,
                                                                                             topic: str) -> None:
    from kafka import TopicPartition

    tp = TopicPartition(topic, 0)
    assert admin.alter_partition_reassignments({tp: [3, 2, 1]}, timeout_ms=30000) == {tp: None}
    wait_for(lambda: admin.list_partition_reassignments(timeout_ms=30000) == {}, "the reassignment completed")
    wait_for(lambda: partitions(admin, topic)[0]["replica_nodes"] == [3, 2, 1], "replicas [3, 2, 1] in Metadata")
    wait_for(lambda: 3 in partitions(admin, topic)[0]["isr_nodes"], "broker 3 in the ISR")
    response = admin.elect_leaders(0, {topic: [0]}, timeout_ms=30000)  # ELECTION_NOT_NEEDED is not raised
    codes = [p.error_code for r in response.replica_election_results for p in r.partition_result]
    assert codes in ([0], [84])
    assert partitions(admin, topic)[0]["leader_id"] == 3  # answered once the broker's cache shows the preferred one


def test_cancelling_what_is_not_being_reassigned(admin: Any, topic: str) -> None:
    from kafka import TopicPartition
    from kafka.errors import NoReassignmentInProgressError

    tp = TopicPartition(topic, 1)
    assert admin.alter_partition_reassignments({tp: None}, timeout_ms=30000) == {tp: NoReassignmentInProgressError}
    assert admin.list_partition_reassignments({topic: [0, 1]}, timeout_ms=30000) == {}


def test_confluent_kafka_creates_partitions_and_elects_leaders(address: str, admin: Any, topic: str) -> None:
    """librdkafka's CreatePartitions and ElectLeaders (v1+: it sends the election type): the topic grows to 6, and
    a preferred election over its partitions succeeds or finds none needed."""
    from confluent_kafka import ElectionType, TopicPartition
    from confluent_kafka.admin import AdminClient, NewPartitions

    client = AdminClient({"bootstrap.servers": address})
    futures = client.create_partitions([NewPartitions(topic, 6)], operation_timeout=30, request_timeout=30)
    futures[topic].result(timeout=60)
    assert sorted(partitions(admin, topic)) == [0, 1, 2, 3, 4, 5]
    elected = client.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, p) for p in range(6)],
                                   ).result(timeout=60)  # its kwargs: SystemError in confluent-kafka 2.16
    errors = {tp.partition: error for tp, error in elected.items()}
    assert sorted(errors) == list(range(6))
    assert all(e is None or e.code() == 84 for e in errors.values()), errors  # 84: ELECTION_NOT_NEEDED
