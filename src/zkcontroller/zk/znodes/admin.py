"""Admin requests and notifications: topic deletion, legacy reassignment and preferred election,
ISR-change and log-dir-event sequential notifications."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from zkcontroller.model import TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.errors import (
    NullDereferenceError,
    NullZnodeDataError,
    UnparseableZnodeError,
    ZnodeDecodeError,
    require_data,
)
from zkcontroller.zk.json_fields import (
    JsonNumberText,
    JsonObject,
    JsonPairs,
    dumps,
    int_tuple_or_none,
    jackson_int_value,
    json_kind,
    parse_json_as_written,
    parse_object,
    refuse_no_value,
)
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
    def encode_bound(bound: BoundReassignment) -> bytes:
        """Kafka's ``encode`` of what it read back (a removal rewrites the entries it keeps): the usable
        entries, then the unusable ones as bound (a null topic is written ``null``), each value as Jackson writes
        what it bound (`dumps`: a replica of any length, ``1e400`` as ``"Infinity"``, never an error)."""
        entries: list[dict[str, object]] = [
            {"topic": tp.topic, "partition": tp.partition, "replicas": list(replicas)}
            for tp, replicas in sorted(bound.targets.items())]
        entries += [{"topic": topic, "partition": partition, "replicas": list(replicas)}
                    for (topic, partition), replicas in bound.unusable.items()]
        return dumps({"version": ReassignPartitionsZNode.VERSION, "partitions": entries})

    @staticmethod
    def decode(data: bytes | None, path: str = paths.REASSIGN_PARTITIONS) -> dict[TopicPartition, tuple[int, ...]]:
        """The usable entries of `decode_bound` (the admin tools' view)."""
        return ReassignPartitionsZNode.decode_bound(data, path).targets

    @staticmethod
    def decode_bound(data: bytes | None, path: str = paths.REASSIGN_PARTITIONS) -> BoundReassignment:
        """The znode as Kafka 2.8.2's ``decode`` binds it (a later entry for the same partition wins, as in its
        ``toMap``).

        Kafka binds this znode to case classes with Jackson 2.10's default ``ObjectMapper``
        (``Json.parseBytesAs``), then walks them. What the binding refuses is a JSON error, which
        ``getPartitionReassignment`` logs and reads as no reassignment (`kafka_reads_as_empty`): not JSON, no
        value, not an object, a field the case classes lack (every occurrence of a repeated field binds), an
        entry that is not an object, ``partitions``/``replicas`` not an array (nor null), ``version``/
        ``partition`` not what Jackson binds to an ``int`` (`jackson_int_value`: absent or null is 0, ``"1"``
        and ``1.9`` are 1, a boolean fails), ``topic`` an object or array. What it coerces is read as coerced:
        a number or boolean ``topic`` binds as its text (``5`` → ``"5"``). ``replicas`` is a
        ``java.util.List[Int]``, erased to a list of ``Object``: any JSON value binds there, and only a 32-bit
        integer is a broker id; an entry with any other replica, or a null (or absent) topic, is bound but
        `BoundReassignment.unusable`. Null data (``readValue`` refuses a null array: an
        IllegalArgumentException) and a binding that leaves ``null`` where the walk dereferences it (the
        document ``null``, ``partitions`` absent or null, a null entry, an entry's ``replicas`` absent or null:
        NullPointerExceptions, the last one where the controller uses the target) throw in Kafka:
        `NullZnodeDataError` and `NullDereferenceError` here, raised only when nothing else is refused, since
        Jackson fails before the walk. Nothing checks the version's value."""
        data = require_data(data, path)
        try:
            plain, value = parse_json_as_written(data, path)
        except UnparseableZnodeError:
            refuse_no_value(data, path)  # readValue: "No content to map due to end-of-input"
            raise
        if value is None:
            raise NullDereferenceError(path, "the document is JSON null (Kafka's decoder dereferences it)")
        root = _bind_object(value, path, "")
        partitions: list[Any] | None = None
        for key, field in root:
            if key == "version":
                jackson_int_value(_number(field), path, "version")
            elif key == "partitions":
                partitions = _bind_list(field, path, "partitions")
            else:
                _refuse_unknown(key, path, "", _ASSIGNMENT_FIELDS)
        null_at = "partitions is absent or null" if partitions is None else ""
        plain_entries = plain.get("partitions")  # the same entries as plain JSON (a repeated name: the last, as bound)
        bound = BoundReassignment({}, {})
        for i, raw in enumerate(partitions or ()):
            where = f"partitions[{i}]"
            if raw is None:
                null_at = null_at or f"{where} is null"
                continue
            topic: str | None = None
            partition = 0
            replicas: list[Any] | None = None
            for key, field in _bind_object(raw, path, where):
                if key == "topic":
                    topic = _bind_string(field, path, f"{where}.topic")
                elif key == "partition":
                    partition = jackson_int_value(_number(field), path, f"{where}.partition")
                elif key == "replicas":
                    replicas = _bind_list(field, path, f"{where}.replicas")
                else:
                    _refuse_unknown(key, path, where, _REPLICA_ASSIGNMENT_FIELDS)
            if replicas is None:
                null_at = null_at or f"{where}.replicas is absent or null"
                continue
            bound.put(topic, partition, tuple(plain_entries[i]["replicas"]))
        if null_at:
            raise NullDereferenceError(path, f"{null_at} (Kafka's decoder dereferences it)")
        return bound

    @staticmethod
    def kafka_reads_as_empty(error: ZnodeDecodeError) -> bool:
        """Whether Kafka 2.8's ``getPartitionReassignment`` reads data `decode` refuses with ``error`` as no
        reassignment ("Ignoring partition reassignment due to invalid json", WARN): a JSON error, not null."""
        return not isinstance(error, NullZnodeDataError | NullDereferenceError)


@dataclass
class BoundReassignment:
    """``/admin/reassign_partitions`` as Kafka's Jackson binding reads it (`ReassignPartitionsZNode.decode_bound`).

    ``unusable``: entries Kafka binds but cannot reassign, by ``(topic, partition)`` with their replicas as
    bound: a null topic (Kafka answers UNKNOWN_TOPIC_OR_PARTITION), or a replica that is not a 32-bit integer
    (a string, float, boolean, null, object, array or larger integer: Kafka fails on unboxing it, and a null
    unboxes as broker 0 where a boxed null is compared)."""

    targets: dict[TopicPartition, tuple[int, ...]]
    unusable: dict[tuple[str | None, int], tuple[Any, ...]]

    def put(self, topic: str | None, partition: int, replicas: tuple[Any, ...]) -> None:
        """A bound entry, replacing an earlier one for the same partition (Kafka's ``toMap``)."""
        if topic is not None:
            self.targets.pop(TopicPartition(topic, partition), None)
        self.unusable.pop((topic, partition), None)
        ids = int_tuple_or_none(list(replicas))
        if topic is None or ids is None:
            self.unusable[(topic, partition)] = replicas
        else:
            self.targets[TopicPartition(topic, partition)] = ids

    def keeping(self, keep: Callable[[tuple[str | None, int]], bool]) -> BoundReassignment:
        """Only the entries whose ``(topic, partition)`` ``keep`` accepts (targets and unusable ones alike)."""
        return BoundReassignment({tp: r for tp, r in self.targets.items() if keep(tp)},
                                 {k: r for k, r in self.unusable.items() if keep(k)})

    def __bool__(self) -> bool:
        return bool(self.targets or self.unusable)


_ASSIGNMENT_FIELDS = frozenset({"version", "partitions"})
_REPLICA_ASSIGNMENT_FIELDS = frozenset({"topic", "partition", "replicas"})


def _refuse_unknown(key: str, path: str, where: str, known: frozenset[str]) -> NoReturn:
    """Jackson's ``UnrecognizedPropertyException`` (a JSON error) for a field the bound case class lacks."""
    name = f"{where}.{key}" if where else key
    raise ZnodeDecodeError(path, f"unknown field {name!r} (Kafka's Jackson binding knows only "
                                 f"{', '.join(sorted(known))})")


def _bind_object(value: Any, path: str, where: str) -> JsonPairs:
    """A case class binds only from an object (Jackson: no creator takes a number, string, boolean or array)."""
    if not isinstance(value, JsonPairs):
        raise ZnodeDecodeError(path, f"{where}: expected an object, got {json_kind(value)}" if where
                               else f"expected a JSON object, got {json_kind(value)}")
    return value


def _bind_list(value: Any, path: str, where: str) -> list[Any] | None:
    """A ``java.util.List`` binds from an array or null (``ACCEPT_SINGLE_VALUE_AS_ARRAY`` is off; ``""`` has no
    creator either)."""
    if value is None or (isinstance(value, list) and not isinstance(value, JsonPairs)):
        return value
    raise ZnodeDecodeError(path, f"{where}: expected an array, got {json_kind(value)}")


def _bind_string(value: Any, path: str, where: str) -> str | None:
    """Jackson 2.10's ``StringDeserializer``: a string, a number as written, ``true``/``false`` as text, null;
    an object or array fails (``UNWRAP_SINGLE_VALUE_ARRAYS`` is off)."""
    if value is None or isinstance(value, str):
        return None if value is None else str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    raise ZnodeDecodeError(path, f"{where}: expected a string, got {json_kind(value)}")


def _number(value: Any) -> Any:
    return value.value() if isinstance(value, JsonNumberText) else value


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
