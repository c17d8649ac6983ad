"""CreateTopics from confluent-kafka's and kafka-python's admin clients against ``zkcontroller cluster --zookeeper ...
--port-base 0``, answered as Kafka 2.8.2's ``ZkAdminManager.createTopics``: ``validate_only`` runs every check, a
count of 0 is refused rather than defaulted, counts beside an assignment and null config values are invalid
requests, an assignment may name an unregistered broker, and v7 answers carry the topic id and v5+ the configs.
Every wait is on a condition with a bound."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.e2e.cluster_prompt import running_cluster
from tests.e2e.test_cluster_command_listeners import wait_for

from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def address(zookeeper_server: ZooKeeperServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_cluster(zookeeper_server, tmp_path_factory, "create-topics") as (_prompt, found):
        yield found


def test_confluent_kafka_validate_only_is_checked_and_writes_nothing(address: str) -> None:
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    client = AdminClient({"bootstrap.servers": address})
    futures = client.create_topics([NewTopic("too-wide", 2, 4)], validate_only=True, operation_timeout=30,
                                   request_timeout=30)
    with pytest.raises(KafkaException) as refused:
        futures["too-wide"].result(timeout=60)
    error = refused.value.args[0]
    assert (error.code(), error.str()) == (KafkaError.INVALID_REPLICATION_FACTOR,
                                           "Replication factor: 4 larger than available brokers: 3.")
    client.create_topics([NewTopic("checked", 2, 3)], validate_only=True, operation_timeout=30,
                         request_timeout=30)["checked"].result(timeout=60)
    assert "checked" not in client.list_topics(timeout=30).topics


def test_kafka_python_sees_kafkas_refusals(admin: Any) -> None:
    from kafka.admin import NewTopic
    from kafka.errors import InvalidPartitionsError, InvalidRequestError

    with pytest.raises(InvalidPartitionsError, match=r"Number of partitions must be larger than 0\."):
        admin.create_topics([NewTopic("no-partitions", 0, 1)], timeout_ms=30000)
    with pytest.raises(InvalidRequestError, match="Both numPartitions or replicationFactor and replicasAssignments"):
        admin.create_topics([NewTopic("both", 2, 1, replica_assignments={0: [1], 1: [2]})], timeout_ms=30000)
    with pytest.raises(InvalidRequestError, match=r"Null value not supported for topic configs : retention\.ms"):
        admin.create_topics([NewTopic("nulls", 1, 1, topic_configs={"retention.ms": None})], timeout_ms=30000)
    assert not {"no-partitions", "both", "nulls"} & set(admin.list_topics())


def test_kafka_python_creates_on_an_absent_broker_and_reads_the_id_and_configs(admin: Any) -> None:
    from kafka.admin import NewTopic

    answer = admin.create_topics([NewTopic("elsewhere", -1, -1, replica_assignments={0: [1, 9]},
                                           topic_configs={"cleanup.policy": "compact"})], timeout_ms=30000)
    (created,) = answer["topics"]
    assert (created["error_code"], created["num_partitions"], created["replication_factor"]) == (0, 1, 2)
    assert created["configs"]["cleanup.policy"]["value"] == "compact"
    assert created["configs"]["cleanup.policy"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"  # source 1
    def known() -> Any:  # describe_topics asks the least loaded broker, whose cache may not have the topic yet
        (found,) = admin.describe_topics(["elsewhere"])
        return found if found["partitions"] else None

    described = wait_for(known, "a broker's metadata to list elsewhere's partition")
    assert isinstance(described, dict)
    assert described["topic_id"] == created["topic_id"] is not None
    (partition,) = described["partitions"]
    assert (partition["leader_id"], partition["replica_nodes"], partition["offline_replicas"]) == (1, [1, 9], [9])
