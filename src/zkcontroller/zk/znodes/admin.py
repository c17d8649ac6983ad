"""Admin requests and notifications: topic deletion, legacy reassignment and preferred election,
ISR-change and log-dir-event sequential notifications."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from zkcontroller.model import TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.errors import (
    NullDereferenceError,
    NullZnodeDataError,
    UnparseableZnodeError,
    ZnodeDecodeError,
    require_data,
)
from zkcontroller.zk.json_fields import JsonObject, dumps, json_kind, parse_json, parse_object, refuse_no_value
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
    """``/admin/delete_topics/<topic>``: null data, only the child name matters (Kafka's ``createDeleteTopicPath``
    creates it with ``createRecursive``'s default, null; ``zkCli.sh get`` shows ``null``)."""

    @staticmethod
    def path(topic: str) -> str:
        return paths.delete_topic_path(topic)

    @staticmethod
    def encode() -> None:
        return None


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
    def decode(data: bytes | None, path: str = paths.REASSIGN_PARTITIONS) -> dict[TopicPartition, tuple[int, ...]]:
        """Target replicas per partition (a later duplicate entry wins, as in Kafka's ``toMap``).

        Kafka binds this znode to case classes with Jackson's default ``ObjectMapper`` (``Json.parseBytesAs``),
        then walks them. What the binding refuses (not JSON, no value, not an object, a field it does not know,
        a value of the wrong type) is a JSON error, which ``getPartitionReassignment`` logs and reads as no
        reassignment (`kafka_reads_as_empty`). Null data (``readValue`` refuses a null array: an
        IllegalArgumentException) and a binding that leaves ``null`` where the walk dereferences it (the
        document ``null``, ``partitions`` absent or null, a null entry, an entry's ``replicas`` absent or null:
        NullPointerExceptions, the last one where the controller uses the target) throw in Kafka:
        `NullZnodeDataError` and `NullDereferenceError` here, raised only when nothing else is refused, since
        Jackson fails before the walk. ``version`` and an entry's ``partition`` are bound as Jackson binds a
        Scala ``Int`` (`JsonObject.jackson_int`: absent is 0); nothing checks the version's value.

        Stricter than Kafka, whose ``topic`` is a ``String`` (null, absent or a number bind) and whose
        ``replicas`` is a ``java.util.List`` of ``Object`` (any JSON values bind, and fail, or read null as 0,
        only where the controller uses them): here ``topic`` must be a string and ``replicas`` 32-bit integers,
        else the data is refused as a JSON error."""
        data = require_data(data, path)
        try:
            value = parse_json(data, path)
        except UnparseableZnodeError:
            refuse_no_value(data, path)  # readValue: "No content to map due to end-of-input"
            raise
        if value is None:
            raise NullDereferenceError(path, "the document is JSON null (Kafka's decoder dereferences it)")
        if not isinstance(value, dict):
            raise ZnodeDecodeError(path, f"expected a JSON object, got {json_kind(value)}")
        obj = JsonObject(value, path)
        _refuse_unknown(obj, _ASSIGNMENT_FIELDS)
        obj.jackson_int("version")
        if obj.is_null_or_absent("partitions"):
            null_at = "partitions is absent or null"
            entries: list[object] = []
        else:
            null_at = ""
            entries = obj.get_list("partitions")
        out: dict[TopicPartition, tuple[int, ...]] = {}
        for i, raw in enumerate(entries):
            if raw is None:
                null_at = null_at or f"partitions[{i}] is null"
                continue
            entry = obj.as_object(raw, f"partitions[{i}]")
            _refuse_unknown(entry, _REPLICA_ASSIGNMENT_FIELDS)
            tp = TopicPartition(entry.get_str("topic"), entry.jackson_int("partition"))
            if entry.is_null_or_absent("replicas"):
                null_at = null_at or f"partitions[{i}].replicas is absent or null"
                continue
            out[tp] = entry.get_int_list("replicas")
        if null_at:
            raise NullDereferenceError(path, f"{null_at} (Kafka's decoder dereferences it)")
        return out

    @staticmethod
    def kafka_reads_as_empty(error: ZnodeDecodeError) -> bool:
        """Whether Kafka 2.8's ``getPartitionReassignment`` reads data `decode` refuses with ``error`` as no
        reassignment ("Ignoring partition reassignment due to invalid json", WARN): a JSON error, not null."""
        return not isinstance(error, NullZnodeDataError | NullDereferenceError)


_ASSIGNMENT_FIELDS = frozenset({"version", "partitions"})
_REPLICA_ASSIGNMENT_FIELDS = frozenset({"topic", "partition", "replicas"})


def _refuse_unknown(obj: JsonObject, known: frozenset[str]) -> None:
    """Jackson's ``UnrecognizedPropertyException`` (a JSON error) for a field the bound case class lacks."""
    unknown = obj.unknown_keys(known)
    if unknown:
        raise ZnodeDecodeError(obj.path, f"unknown field {obj.where(unknown[0])!r} (Kafka's Jackson binding knows "
                                         f"only {', '.join(sorted(known))})")


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
    def decode(data: bytes | None, path: str = paths.PREFERRED_REPLICA_ELECTION) -> frozenset[TopicPartition]:
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
    def decode(data: bytes | None, path: str) -> frozenset[TopicPartition]:
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
    def decode(data: bytes | None, path: str) -> int:
        """The broker whose log directory failed (the only field Kafka reads: no version, no event)."""
        return parse_object(data, path).get_int("broker")
