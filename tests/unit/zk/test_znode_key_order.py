"""The topic, broker registration and entity config znodes are written in the key order of Kafka 2.8's bytes.
ZkData builds the first two as Scala ``mutable.Map``s (the partition maps too; the listener map is an immutable
``Map``), which Jackson writes in the map's own iteration order: the orders below were printed by scala-library
2.13.18 (Kafka 2.8.2 is built with Scala 2.13.5; the hash tables' layout is the same) for these keys. We wrote
insertion order.
"""

from __future__ import annotations

from zkcontroller.model import (
    Broker,
    BrokerInfo,
    EndPoint,
    FeatureZNodeData,
    FeatureZNodeStatus,
    ReplicaAssignment,
    TopicId,
    TopicPartition,
)
from zkcontroller.zk.scala_maps import scala_immutable_map, scala_mutable_map
from zkcontroller.zk.znodes.brokers import BrokerIdZNode
from zkcontroller.zk.znodes.config import ConfigEntityZNode, FeatureZNode
from zkcontroller.zk.znodes.topics import TopicZNode

TOPIC_ID = TopicId(bytes(range(16)))


def test_a_topic_znode_is_written_in_kafkas_order() -> None:
    assignment = {TopicPartition("t", p): ReplicaAssignment((1, 2), adding_replicas=(2,) if p in (1, 4) else ())
                  for p in range(12)}
    partitions = ",".join(f'"{p}":[1,2]' for p in (11, *range(11)))  # "11" first: the table's bucket order
    assert TopicZNode.encode(TOPIC_ID, assignment) == (
        f'{{"partitions":{{{partitions}}},"removing_replicas":{{}},"topic_id":"{TOPIC_ID}",'
        '"adding_replicas":{"1":[2],"4":[2]},"version":3}').encode()
    assert TopicZNode.encode(None, {}) == b'{"partitions":{},"removing_replicas":{},"adding_replicas":{},"version":3}'


def test_a_broker_registration_is_written_in_kafkas_order() -> None:
    endpoints = (EndPoint("h", 9092, "PLAINTEXT", "PLAINTEXT"), EndPoint("h", 9093, "SSL", "SSL"))
    written = BrokerIdZNode.encode(BrokerInfo(Broker(1, endpoints)), 1662110000000)
    assert written == (b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT","SSL":"SSL"},'
                       b'"endpoints":["PLAINTEXT://h:9092","SSL://h:9093"],"jmx_port":-1,"port":9092,"host":"h",'
                       b'"version":5,"timestamp":"1662110000000"}')
    racked = BrokerIdZNode.encode(BrokerInfo(Broker(1, endpoints[:1], rack="dc1")), 5)
    assert racked.startswith(b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
                             b'"endpoints":["PLAINTEXT://h:9092"],"rack":"dc1","jmx_port":-1,')


def test_an_immutable_map_keeps_insertion_order_up_to_four_then_its_tries() -> None:
    pairs = [(name, name) for name in ("EXTERNAL", "INTERNAL", "REPLICATION", "SSL", "PLAINTEXT")]
    assert list(scala_immutable_map(pairs[:4])) == ["EXTERNAL", "INTERNAL", "REPLICATION", "SSL"]
    assert list(scala_immutable_map(pairs)) == ["INTERNAL", "EXTERNAL", "PLAINTEXT", "REPLICATION", "SSL"]
    assert list(scala_mutable_map([("4", 0), ("1", 0)])) == ["1", "4"]


def test_an_entity_config_is_written_in_the_properties_order() -> None:
    """ZkData's ``ConfigEntityZNode.encode`` hands Jackson the ``java.util.Properties`` itself, written in its
    iteration order; we sorted the keys. Expected: jackson-databind 2.14 on JDK 17 writing ``{"version": 1,
    "config": <Properties filled by setProperty in this order>}``."""
    throttles = {"leader.replication.throttled.rate": "10", "follower.replication.throttled.rate": "10",
                 "leader.replication.throttled.replicas": "*"}
    assert ConfigEntityZNode.encode(throttles) == (
        b'{"version":1,"config":{"leader.replication.throttled.replicas":"*",'
        b'"leader.replication.throttled.rate":"10","follower.replication.throttled.rate":"10"}}')
    topic = {"retention.ms": "1000", "segment.ms": "10", "cleanup.policy": "compact", "min.insync.replicas": "2",
             "max.message.bytes": "100"}
    assert ConfigEntityZNode.encode(topic) == (
        b'{"version":1,"config":{"cleanup.policy":"compact","max.message.bytes":"100","min.insync.replicas":"2",'
        b'"retention.ms":"1000","segment.ms":"10"}}')


def test_the_feature_znode_is_written_in_kafkas_order() -> None:
    """ZkData's ``FeatureZNode.encode``: a ``mutable.Map`` of version, status and features (the spec's example,
    §1.2, has this order too)."""
    assert FeatureZNode.encode(FeatureZNodeData(FeatureZNodeStatus.ENABLED, ())) == (
        b'{"features":{},"version":1,"status":1}')
