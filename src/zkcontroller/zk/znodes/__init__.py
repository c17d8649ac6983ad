"""One codec object per Kafka 2.8 znode: ``path(...)``, ``encode(...)``, ``decode(data, path, ...)``.

Decoders are insensitive to key order and raise `ZnodeDecodeError` (naming the znode) for malformed JSON,
wrong types or versions Kafka 2.8 refuses (most decoders read no version, as Kafka's); encoders write what
Kafka 2.8 writes.
"""

from zkcontroller.zk.znodes.admin import (
    BoundReassignment,
    DeleteTopicsTopicZNode,
    DeleteTopicsZNode,
    IsrChangeNotificationSequenceZNode,
    IsrChangeNotificationZNode,
    LogDirEventNotificationSequenceZNode,
    LogDirEventNotificationZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
)
from zkcontroller.zk.znodes.brokers import BrokerIdsZNode, BrokerIdZNode, BrokerSequenceIdZNode
from zkcontroller.zk.znodes.config import (
    UNCLEAN_LEADER_ELECTION_ENABLE,
    ClusterIdZNode,
    ConfigEntityChangeNotificationSequenceZNode,
    ConfigEntityChangeNotificationZNode,
    ConfigEntityTypeZNode,
    ConfigEntityZNode,
    FeatureZNode,
)
from zkcontroller.zk.znodes.controller import ControllerEpochZNode, ControllerZNode
from zkcontroller.zk.znodes.producer_id import ProducerIdBlock, ProducerIdBlockZNode
from zkcontroller.zk.znodes.topics import (
    TopicPartitionStateZNode,
    TopicPartitionsZNode,
    TopicPartitionZNode,
    TopicsZNode,
    TopicZNode,
)

__all__ = [
    "UNCLEAN_LEADER_ELECTION_ENABLE",
    "BoundReassignment",
    "BrokerIdZNode",
    "BrokerIdsZNode",
    "BrokerSequenceIdZNode",
    "ClusterIdZNode",
    "ConfigEntityChangeNotificationSequenceZNode",
    "ConfigEntityChangeNotificationZNode",
    "ConfigEntityTypeZNode",
    "ConfigEntityZNode",
    "ControllerEpochZNode",
    "ControllerZNode",
    "DeleteTopicsTopicZNode",
    "DeleteTopicsZNode",
    "FeatureZNode",
    "IsrChangeNotificationSequenceZNode",
    "IsrChangeNotificationZNode",
    "LogDirEventNotificationSequenceZNode",
    "LogDirEventNotificationZNode",
    "PreferredReplicaElectionZNode",
    "ProducerIdBlock",
    "ProducerIdBlockZNode",
    "ReassignPartitionsZNode",
    "TopicPartitionStateZNode",
    "TopicPartitionZNode",
    "TopicPartitionsZNode",
    "TopicZNode",
    "TopicsZNode",
]
