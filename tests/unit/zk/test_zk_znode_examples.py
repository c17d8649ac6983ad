"""Every znode's example JSON from the spec (§1.2) decodes to the right value, and what we write is what
Kafka 2.8 writes (compared as parsed JSON: Jackson does not guarantee key order)."""

from __future__ import annotations

import json

import pytest

from zkcontroller.model import (
    Broker,
    BrokerInfo,
    EndPoint,
    FeatureZNodeData,
    FeatureZNodeStatus,
    FinalizedVersionRange,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicId,
    TopicPartition,
)
from zkcontroller.zk import paths
from zkcontroller.zk.znodes import (
    BrokerIdZNode,
    BrokerSequenceIdZNode,
    ClusterIdZNode,
    ConfigEntityChangeNotificationSequenceZNode,
    ConfigEntityZNode,
    ControllerEpochZNode,
    ControllerZNode,
    DeleteTopicsTopicZNode,
    FeatureZNode,
    IsrChangeNotificationSequenceZNode,
    LogDirEventNotificationSequenceZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    TopicPartitionStateZNode,
    TopicZNode,
)


def as_json(data: bytes) -> object:
    return json.loads(data)


def test_controller_example() -> None:
    data = b'{"version":1,"brokerid":3,"timestamp":"1662110000000"}'
    assert ControllerZNode.decode(data) == 3
    assert as_json(ControllerZNode.encode(3, 1662110000000)) == as_json(data)
    assert ControllerZNode.path() == "/controller"


def test_controller_epoch_is_bare_text() -> None:
    assert ControllerEpochZNode.decode(b"5") == 5
    assert ControllerEpochZNode.encode(5) == b"5"
    assert ControllerEpochZNode.encode(0) == b"0"


BROKER_V5 = (
    b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT","SSL":"SSL"},'
    b'"endpoints":["PLAINTEXT://host1:9092","SSL://host1:9093"],"jmx_port":-1,"host":"host1",'
    b'"timestamp":"1662110000000","port":9092,"version":5,"rack":"dc1"}'
)
BROKER_V5_VALUE = BrokerInfo(
    Broker(
        7,
        (EndPoint("host1", 9092, "PLAINTEXT", "PLAINTEXT"), EndPoint("host1", 9093, "SSL", "SSL")),
        rack="dc1",
    ),
    version=5,
    jmx_port=-1,
)


def test_broker_v5_example() -> None:
    assert BrokerIdZNode.decode(BROKER_V5, "/brokers/ids/7") == BROKER_V5_VALUE
    assert as_json(BrokerIdZNode.encode(BROKER_V5_VALUE, 1662110000000)) == as_json(BROKER_V5)
    assert BrokerIdZNode.path(7) == "/brokers/ids/7"


def test_broker_v1_legacy_example() -> None:
    data = b'{"version":1,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666"}'
    info = BrokerIdZNode.decode(data, "/brokers/ids/0")
    assert info == BrokerInfo(Broker(0, (EndPoint("localhost", 9092, "PLAINTEXT", "PLAINTEXT"),)), 1, 9999)


def test_broker_v2_v3_v4_docs_examples() -> None:
    v2 = (b'{"version":2,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666",'
          b'"endpoints":["PLAINTEXT://host1:9092", "SSL://host1:9093"]}')
    info = BrokerIdZNode.decode(v2, "/brokers/ids/1")
    assert [e.security_protocol for e in info.broker.endpoints] == ["PLAINTEXT", "SSL"]
    assert info.broker.rack is None
    v3 = v2.replace(b'"version":2', b'"version":3').replace(b"}", b',"rack":"dc1"}')
    assert BrokerIdZNode.decode(v3, "/brokers/ids/1").broker.rack == "dc1"
    v4 = (b'{"version":4,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666",'
          b'"endpoints":["CLIENT://host1:9092","REPLICATION://host1:9093"],"rack":"dc1",'
          b'"listener_security_protocol_map":{"CLIENT":"SSL","REPLICATION":"PLAINTEXT"}}')
    eps = BrokerIdZNode.decode(v4, "/brokers/ids/1").broker.endpoints
    assert eps == (
        EndPoint("host1", 9092, "CLIENT", "SSL"), EndPoint("host1", 9093, "REPLICATION", "PLAINTEXT")
    )


def test_broker_encoding_without_plaintext_and_ipv6() -> None:
    broker = Broker(2, (EndPoint("::1", 9093, "SSL", "SSL"), EndPoint(None, 9094, "INTERNAL", "SASL_SSL")))
    doc = as_json(BrokerIdZNode.encode(BrokerInfo(broker), 5))
    assert doc["host"] is None and doc["port"] == -1
    assert doc["endpoints"] == ["SSL://[::1]:9093", "INTERNAL://:9094"]
    assert doc["timestamp"] == "5" and "rack" not in doc
    data = BrokerIdZNode.encode(BrokerInfo(broker), 5)
    assert BrokerIdZNode.decode(data, "/brokers/ids/2").broker == broker


def test_broker_v2_and_v4_writers_omit_newer_fields() -> None:
    broker = Broker(2, (EndPoint("h", 1, "PLAINTEXT", "PLAINTEXT"),), rack="r")
    v2 = as_json(BrokerIdZNode.encode(BrokerInfo(broker, version=2), 1))
    assert set(v2) == {"version", "host", "port", "endpoints", "jmx_port", "timestamp"}
    v4 = as_json(BrokerIdZNode.encode(BrokerInfo(broker, version=4), 1))
    assert set(v4) == set(v2) | {"rack", "listener_security_protocol_map"}
    with pytest.raises(ValueError):
        BrokerIdZNode.encode(BrokerInfo(broker, version=3), 1)


TOPIC_ID = TopicId.from_string("kXyz3Q9mTn2u5ZC0Ed1B7w")


def test_topic_example() -> None:
    data = (b'{"version":3,"partitions":{"0":[1,2,3],"1":[2,3,1]},"adding_replicas":{},'
            b'"removing_replicas":{},"topic_id":"kXyz3Q9mTn2u5ZC0Ed1B7w"}')
    value = TopicZNode.decode(data, "/brokers/topics/foo")
    assert value.topic == "foo" and value.topic_id == TOPIC_ID
    assert value.assignment == {
        TopicPartition("foo", 0): ReplicaAssignment((1, 2, 3)),
        TopicPartition("foo", 1): ReplicaAssignment((2, 3, 1)),
    }
    assert as_json(TopicZNode.encode(TOPIC_ID, value.assignment)) == as_json(data)


def test_topic_mid_reassignment_example() -> None:
    data = (b'{"version":3,"partitions":{"0":[4,5,6,1,2,3]},"adding_replicas":{"0":[4,5,6]},'
            b'"removing_replicas":{"0":[1,2,3]}}')
    value = TopicZNode.decode(data, "/brokers/topics/foo")
    ra = value.assignment[TopicPartition("foo", 0)]
    assert ra == ReplicaAssignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))
    assert ra.origin_replicas == (1, 2, 3) and ra.target_replicas == (4, 5, 6)
    assert value.topic_id is None
    assert as_json(TopicZNode.encode(None, value.assignment)) == as_json(data)


def test_topic_legacy_versions_and_no_partitions() -> None:
    v1 = TopicZNode.decode(b'{"version":1,"partitions":{"0":[1]}}', "/brokers/topics/t")
    assert v1.assignment == {TopicPartition("t", 0): ReplicaAssignment((1,))}
    assert TopicZNode.decode(b'{"version":2}', "/brokers/topics/t").assignment == {}


def test_partition_state_example() -> None:
    data = b'{"controller_epoch":5,"leader":1,"version":1,"leader_epoch":3,"isr":[1,2,3]}'
    tp = TopicPartition("foo", 0)
    value = TopicPartitionStateZNode.decode(data, TopicPartitionStateZNode.path(tp), zk_version=7)
    assert value == LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 2, 3), 7), 5)
    assert TopicPartitionStateZNode.encode(value) == data  # byte for byte: Kafka's Scala HashMap's key order
    assert TopicPartitionStateZNode.path(tp) == "/brokers/topics/foo/partitions/0/state"


def test_delete_topic_is_null_and_seqid_empty() -> None:
    """Kafka's createDeleteTopicPath creates with createRecursive's null; generateBrokerSequenceId writes empty."""
    assert DeleteTopicsTopicZNode.encode() is None
    assert DeleteTopicsTopicZNode.path("foo") == "/admin/delete_topics/foo"
    assert BrokerSequenceIdZNode.encode() == b"" and BrokerSequenceIdZNode.path() == "/brokers/seqid"


def test_reassign_partitions_example() -> None:
    data = b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[4,5,6]}]}'
    value = ReassignPartitionsZNode.decode(data)
    assert value == {TopicPartition("foo", 0): (4, 5, 6)}
    assert as_json(ReassignPartitionsZNode.encode(value)) == as_json(data)


def test_preferred_replica_election_example() -> None:
    data = b'{"version":1,"partitions":[{"topic":"foo","partition":0},{"topic":"bar","partition":2}]}'
    value = PreferredReplicaElectionZNode.decode(data)
    assert value == {TopicPartition("foo", 0), TopicPartition("bar", 2)}
    assert PreferredReplicaElectionZNode.decode(PreferredReplicaElectionZNode.encode(value)) == value
    assert as_json(PreferredReplicaElectionZNode.encode(value))["version"] == 1


def test_isr_change_notification_example() -> None:
    data = b'{"version":1,"partitions":[{"topic":"foo","partition":0}]}'
    path = "/isr_change_notification/isr_change_0000000042"
    assert IsrChangeNotificationSequenceZNode.decode(data, path) == {TopicPartition("foo", 0)}
    assert as_json(IsrChangeNotificationSequenceZNode.encode({TopicPartition("foo", 0)})) == as_json(data)
    assert IsrChangeNotificationSequenceZNode.sequence_number(path) == "0000000042"
    assert IsrChangeNotificationSequenceZNode.path() == "/isr_change_notification/isr_change_"


def test_log_dir_event_example() -> None:
    data = b'{"version":1,"broker":2,"event":1}'
    path = "/log_dir_event_notification/log_dir_event_0000000003"
    assert LogDirEventNotificationSequenceZNode.decode(data, path) == 2
    assert as_json(LogDirEventNotificationSequenceZNode.encode(2)) == as_json(data)
    assert LogDirEventNotificationSequenceZNode.sequence_number("log_dir_event_0000000003") == "0000000003"


def test_topic_config_example() -> None:
    data = b'{"version":1,"config":{"unclean.leader.election.enable":"true","retention.ms":"1000"}}'
    path = paths.topic_config_path("foo")
    value = ConfigEntityZNode.decode(data, path)
    assert value == {"unclean.leader.election.enable": "true", "retention.ms": "1000"}
    assert as_json(ConfigEntityZNode.encode(value)) == as_json(data)
    assert path == "/config/topics/foo"
    assert ConfigEntityZNode.decode(b"", path) == {}


def test_config_change_notification_versions() -> None:
    path = "/config/changes/config_change_0000000001"
    v2 = b'{"version":2,"entity_path":"topics/foo"}'
    assert ConfigEntityChangeNotificationSequenceZNode.decode(v2, path) == "topics/foo"
    assert as_json(ConfigEntityChangeNotificationSequenceZNode.encode("topics/foo")) == as_json(v2)
    v1 = b'{"version":1,"entity_type":"topics","entity_name":"foo"}'
    assert ConfigEntityChangeNotificationSequenceZNode.decode(v1, path) == "topics/foo"


def test_cluster_id_example_has_string_version() -> None:
    data = b'{"version":"1","id":"Qm0Bq2l1R9yJp1dxK3fJ7A"}'
    assert ClusterIdZNode.decode(data) == "Qm0Bq2l1R9yJp1dxK3fJ7A"
    assert as_json(ClusterIdZNode.encode("Qm0Bq2l1R9yJp1dxK3fJ7A")) == as_json(data)


def test_feature_example() -> None:
    data = (b'{"features":{"some.feature":{"min_version_level":1,"max_version_level":2}},'
            b'"version":1,"status":1}')
    value = FeatureZNode.decode(data)
    assert value == FeatureZNodeData(
        FeatureZNodeStatus.ENABLED, (("some.feature", FinalizedVersionRange(1, 2)),)
    )
    assert as_json(FeatureZNode.encode(value)) == as_json(data)


def test_top_level_paths_match_kafka() -> None:
    assert set(paths.PERSISTENT_PATHS) == {
        "/consumers", "/brokers/ids", "/brokers/topics", "/config/changes", "/admin/delete_topics",
        "/brokers/seqid", "/isr_change_notification", "/latest_producer_id_block",
        "/log_dir_event_notification", "/config/topics", "/config/clients", "/config/users",
        "/config/brokers", "/config/ips",
    }
