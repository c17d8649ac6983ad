"""Admin requests and notifications: topic deletion, legacy reassignment and preferred election,
ISR-change and log-dir-event sequential notifications."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from zkcontroller.model import TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.json_fields import JsonObject, dumps, parse_object
from zkcontroller.zk.znodes.sequential import SequentialNotificationZNode


def _encode_partitions(partitions: Iterable[TopicPartition]) -> list[dict[str, object]]:
    return [{"topic": tp.topic, "partition": tp.partition} for tp in sorted(set(partitions))]


def _decode_partitions(obj: JsonObject) -> frozenset[TopicPartition]:
    """``"partitions":[{"topic":t,"partition":p}, ...]`` as a set."""
    out = set()
    for i, raw in enumerate(obj.get_list("partitions")):
        entry = obj.as_object(raw, f"partitions[{i}]")
        out.add(TopicPartition(entry.get_str("topic"), entry.get_int("partition")))
    return frozenset(out)


class DeleteTopicsZNode:
    @staticmethod
    def path() -> str:
        return paths.DELETE_TOPICS


class DeleteTopicsTopicZNode:
    """``/admin/delete_topics/<topic>``: empty data, only the child name matters."""

    @staticmethod
    def path(topic: str) -> str:
        return paths.delete_topic_path(topic)

    @staticmethod
    def encode() -> bytes:
        return b""


class ReassignPartitionsZNode:
    """Legacy ZooKeeper-submitted reassignment.

    ``{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[4,5,6]}]}``
    """

    VERSION = 1

    @staticmethod
    def path() -> str:
        return paths.REASSIGN_PARTITIONS

    @staticmethod
    def encode(reassignment: Mapping[TopicPartition, Sequence[int]]) -> bytes:
        return dumps({
            "version": ReassignPartitionsZNode.VERSION,
            "partitions": [
                {"topic": tp.topic, "partition": tp.partition, "replicas": list(replicas)}
                for tp, replicas in sorted(reassignment.items())
            ],
        })

    @staticmethod
    def decode(data: bytes, path: str = paths.REASSIGN_PARTITIONS) -> dict[TopicPartition, tuple[int, ...]]:
        """Target replicas per partition (a later duplicate entry wins, as in Kafka's ``toMap``).

        Kafka binds this znode to a case class with Jackson, whose ``version: Int`` is just a field: any int
        (or none) decodes, and nothing checks its value."""
        obj = parse_object(data, path)
        obj.jackson_int("version")
        out: dict[TopicPartition, tuple[int, ...]] = {}
        for i, raw in enumerate(obj.get_list("partitions")):
            entry = obj.as_object(raw, f"partitions[{i}]")
            tp = TopicPartition(entry.get_str("topic"), entry.get_int("partition"))
            out[tp] = entry.get_int_list("replicas")
        return out


class PreferredReplicaElectionZNode:
    """Legacy preferred-leader election request: ``{"version":1,"partitions":[{topic,partition}]}``."""

    VERSION = 1

    @staticmethod
    def path() -> str:
        return paths.PREFERRED_REPLICA_ELECTION

    @staticmethod
    def encode(partitions: Iterable[TopicPartition]) -> bytes:
        return dumps({"version": PreferredReplicaElectionZNode.VERSION,
                      "partitions": _encode_partitions(partitions)})

    @staticmethod
    def decode(data: bytes, path: str = paths.PREFERRED_REPLICA_ELECTION) -> frozenset[TopicPartition]:
        return _decode_partitions(parse_object(data, path))  # Kafka reads no version


class IsrChangeNotificationZNode:
    @staticmethod
    def path() -> str:
        return paths.ISR_CHANGE_NOTIFICATION


class IsrChangeNotificationSequenceZNode(SequentialNotificationZNode[Iterable[TopicPartition]]):
    """``/isr_change_notification/isr_change_N``: partitions whose ISR a leader changed in ZooKeeper."""

    VERSION = 1
    PARENT = paths.ISR_CHANGE_NOTIFICATION
    PREFIX = paths.ISR_CHANGE_PREFIX

    @staticmethod
    def encode(partitions: Iterable[TopicPartition]) -> bytes:
        return dumps({"version": IsrChangeNotificationSequenceZNode.VERSION,
                      "partitions": _encode_partitions(partitions)})

    @staticmethod
    def decode(data: bytes, path: str) -> frozenset[TopicPartition]:
        return _decode_partitions(parse_object(data, path))  # Kafka reads no version


class LogDirEventNotificationZNode:
    @staticmethod
    def path() -> str:
        return paths.LOG_DIR_EVENT_NOTIFICATION


class LogDirEventNotificationSequenceZNode(SequentialNotificationZNode[int]):
    """``/log_dir_event_notification/log_dir_event_N``: ``{"version":1,"broker":2,"event":1}``."""

    VERSION = 1
    PARENT = paths.LOG_DIR_EVENT_NOTIFICATION
    PREFIX = paths.LOG_DIR_EVENT_PREFIX
    LOG_DIR_FAILURE_EVENT = 1

    @staticmethod
    def encode(broker_id: int) -> bytes:
        return dumps({"version": LogDirEventNotificationSequenceZNode.VERSION, "broker": broker_id,
                      "event": LogDirEventNotificationSequenceZNode.LOG_DIR_FAILURE_EVENT})

    @staticmethod
    def decode(data: bytes, path: str) -> int:
        """The broker whose log directory failed (the only field Kafka reads: no version, no event)."""
        return parse_object(data, path).get_int("broker")
