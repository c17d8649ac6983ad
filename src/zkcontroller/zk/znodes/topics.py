"""``/brokers/topics/<topic>`` (assignment + topic id) and its ``partitions/<p>/state`` children."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zkcontroller.model import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicId,
    TopicIdReplicaAssignment,
    TopicPartition,
)
from zkcontroller.zk import paths
from zkcontroller.zk.errors import UnparseableZnodeError, require_data
from zkcontroller.zk.json_fields import (
    INT32_MAX,
    INT32_MIN,
    JsonObject,
    check_int_list,
    clip_text,
    dumps,
    int_tuple_or_none,
    parse_int_text,
    parse_json,
    parse_object,
    refuse_no_value,
)
from zkcontroller.zk.scala_maps import scala_mutable_map
from zkcontroller.zk.topic_id import parse_topic_id


class TopicsZNode:
    @staticmethod
    def path() -> str:
        return paths.TOPICS


class TopicZNode:
    """A topic's replica assignment. Kafka 2.8 always writes version 3 and reads any version (it reads none)."""

    CURRENT_VERSION = 3

    @staticmethod
    def path(topic: str) -> str:
        return paths.topic_path(topic)

    @staticmethod
    def encode(topic_id: TopicId | None, assignment: Mapping[TopicPartition, ReplicaAssignment]) -> bytes:
        """Adding/removing maps are always written, holding only partitions with a non-empty list. Every map is a
        Scala ``mutable.Map`` in ZkData's ``encode``, written in its hash order (`scala_mutable_map`), as Kafka's
        bytes are: ``{"partitions":{...},"removing_replicas":{},"topic_id":"...","adding_replicas":{},
        "version":3}``."""
        ordered = sorted(assignment.items())
        fields = {
            "version": TopicZNode.CURRENT_VERSION,
            "partitions": scala_mutable_map({str(tp.partition): list(a.replicas) for tp, a in ordered}),
            "adding_replicas": scala_mutable_map({str(tp.partition): list(a.adding_replicas) for tp, a in ordered
                                                  if a.adding_replicas}),
            "removing_replicas": scala_mutable_map({str(tp.partition): list(a.removing_replicas)
                                                    for tp, a in ordered if a.removing_replicas}),
        }
        if topic_id is not None:
            fields["topic_id"] = str(topic_id)
        return dumps(scala_mutable_map(fields))

    @staticmethod
    def decode(data: bytes | None, path: str) -> TopicIdReplicaAssignment:
        """Missing maps or keys → empty lists (as Kafka reads).

        Empty (or whitespace-only) data is refused, leniently or not: Jackson 2.10 reads it as ``MissingNode``,
        which Kafka 2.8.2's ``TopicZNode.decode`` passes to ``asJsonObject``, throwing ``JsonMappingException:
        Expected JSON object, received `` (its controller fails the failover or the TopicChange event on it)."""
        topic = path.rsplit("/", 1)[-1]
        obj = parse_object(data, path)
        topic_id = parse_topic_id(obj.get_str("topic_id"), path) if "topic_id" in obj else None
        adding = obj.get_opt_obj("adding_replicas")
        removing = obj.get_opt_obj("removing_replicas")
        partitions = obj.get_opt_obj("partitions")
        if partitions is None:
            return TopicIdReplicaAssignment(topic, topic_id, {})
        fast = _well_formed(topic, partitions, adding, removing)
        if fast is not None:
            return TopicIdReplicaAssignment(topic, topic_id, fast)
        assignment: dict[TopicPartition, ReplicaAssignment] = {}
        for key, replicas in partitions.items():
            partition = parse_int_text(key, path, f"partitions key {clip_text(key)}")
            assignment[TopicPartition(topic, partition)] = ReplicaAssignment(
                check_int_list(replicas, path, f"partitions.{key}"),
                _replicas_of(adding, key),
                _replicas_of(removing, key),
            )
        return TopicIdReplicaAssignment(topic, topic_id, assignment)

    @staticmethod
    def decode_lenient(data: bytes | None, path: str
                       ) -> tuple[TopicIdReplicaAssignment, UnparseableZnodeError | None]:
        """Kafka's reading (ZkData's ``TopicZNode.decode``): data that is not JSON is an empty assignment with no
        id, returned with the parse error so that the caller can report the znode; JSON of the wrong shape, empty
        data and null data (`NullZnodeDataError`: ``Json.parseBytes`` throws on null) still raise, as they throw in
        Kafka. `decode` refuses all of them (the admin tools flag such a topic)."""
        try:
            return TopicZNode.decode(require_data(data, path), path), None
        except UnparseableZnodeError as e:
            return TopicIdReplicaAssignment(path.rsplit("/", 1)[-1], None, {}), e


def _well_formed(topic: str, partitions: JsonObject, adding: JsonObject | None, removing: JsonObject | None
                 ) -> dict[TopicPartition, ReplicaAssignment] | None:
    """The assignment when every list holds only 32-bit integers and every partition key is plain decimal (what
    Kafka writes), checked per map rather than per partition; None sends the caller to the field-by-field
    checks, which name what is wrong."""
    replicas_by_key = partitions.int_tuples()
    adding_by_key = {} if adding is None else adding.int_tuples()
    removing_by_key = {} if removing is None else removing.int_tuples()
    if replicas_by_key is None or adding_by_key is None or removing_by_key is None:
        return None
    if not all(len(key) < 10 and key.isascii() and key.isdigit() for key in replicas_by_key):
        return None  # a sign, a non-ASCII digit or a value that may not fit 32 bits: `parse_int_text` decides
    no_replicas: tuple[int, ...] = ()
    return {TopicPartition(topic, int(key)): ReplicaAssignment(replicas, adding_by_key.get(key, no_replicas),
                                                                removing_by_key.get(key, no_replicas))
            for key, replicas in replicas_by_key.items()}


def _replicas_of(replicas_by_partition: JsonObject | None, key: str) -> tuple[int, ...]:
    if replicas_by_partition is None or key not in replicas_by_partition:
        return ()
    return replicas_by_partition.get_int_list(key)


class TopicPartitionsZNode:
    """``/brokers/topics/<t>/partitions``: created (empty, fenced) with the first partition state."""

    @staticmethod
    def path(topic: str) -> str:
        return paths.topic_partitions_path(topic)


class TopicPartitionZNode:
    """``/brokers/topics/<t>/partitions/<p>``: an empty parent of the state znode."""

    @staticmethod
    def path(tp: TopicPartition) -> str:
        return paths.topic_partition_path(tp.topic, tp.partition)


class TopicPartitionStateZNode:
    """``{"controller_epoch":5,"leader":1,"version":1,"leader_epoch":3,"isr":[1,2,3]}``."""

    VERSION = 1

    @staticmethod
    def path(tp: TopicPartition) -> str:
        return paths.partition_state_path(tp.topic, tp.partition)

    @staticmethod
    def encode(state: LeaderIsrAndControllerEpoch) -> bytes:
        return TopicPartitionStateZNode.encode_all((state.leader_and_isr,), state.controller_epoch)[0]

    @staticmethod
    def encode_all(leader_and_isrs: Iterable[LeaderAndIsr], controller_epoch: int) -> list[bytes]:
        """Each leadership as written by the controller of ``controller_epoch``, in one loop (one per partition
        per election or ISR change: 20,000 in a broker failure).

        Kafka's bytes: its five-entry Scala ``Map`` is a ``HashMap``, which Jackson writes in the hash trie's
        order, ``controller_epoch``, ``leader``, ``version``, ``leader_epoch``, ``isr`` (`KEY_ORDER`), as
        ``dumps`` writes them, formatted directly: the head (up to the leader) is made once per batch, the ISR's
        tail once per distinct ISR, of which a broker failure's partitions share a few dozen. A field that is not
        a plain ``int`` (a ``bool`` would print as ``True``) takes the JSON encoder for the whole entry. The ISR
        memo is keyed by value, and ``(True, 2) == (1, 2)``: ISR members are always plain ints (decoded with
        `int_tuple_or_none`, or taken from such an ISR or assignment), so only a caller's bug could put an ISR of
        bools after an equal one of ints in one batch."""
        version = TopicPartitionStateZNode.VERSION
        plain = type(controller_epoch) is int
        head = f'{{"controller_epoch":{controller_epoch},"leader":'
        middle = f',"version":{version},"leader_epoch":'
        tail_of: dict[tuple[int, ...], str | None] = {}  # per distinct ISR; None when it needs the encoder
        out = []
        for lai in leader_and_isrs:
            leader, leader_epoch, isr = lai.leader, lai.leader_epoch, lai.isr
            tail = tail_of.get(isr, "")
            if tail == "":
                tail = tail_of[isr] = (f',"isr":[{",".join(map(str, isr))}]}}'
                                       if plain and all(type(r) is int for r in isr) else None)
            if tail is not None and type(leader) is int and type(leader_epoch) is int:
                out.append(f"{head}{leader}{middle}{leader_epoch}{tail}".encode())
            else:
                out.append(dumps({"controller_epoch": controller_epoch, "leader": leader, "version": version,
                                  "leader_epoch": leader_epoch, "isr": list(isr)}))
        return out

    KEY_ORDER = ("controller_epoch", "leader", "version", "leader_epoch", "isr")
    """``Map("version" -> 1, "leader" -> .., "leader_epoch" -> .., "controller_epoch" -> .., "isr" -> ..)``
    iterated as Scala 2.13's immutable ``HashMap`` does (`java_hash.scala_immutable_hash_set_order` of the keys'
    ``String.hashCode``; checked against scala-library 2.13.18)."""

    @staticmethod
    def decode(data: bytes | None, path: str, zk_version: int) -> LeaderIsrAndControllerEpoch:
        """``zk_version`` is the znode's stat version, carried as the next conditional write's condition.

        The common well-formed znode is checked field by field in a few C-level tests; anything that fails
        them takes the strict path, which raises the error naming the field. Null data raises
        `NullZnodeDataError` (Kafka's ``Json.parseBytes`` throws on it).
        """
        data = require_data(data, path)
        try:
            d = parse_json(data, path)
        except UnparseableZnodeError:
            refuse_no_value(data, path)  # Kafka's decoder calls asJsonObject on readTree's MissingNode
            raise
        if type(d) is dict:
            leader, leader_epoch, controller_epoch = d.get("leader"), d.get("leader_epoch"), d.get("controller_epoch")
            isr = int_tuple_or_none(d.get("isr"))
            if (
                isr is not None
                and type(leader) is int and INT32_MIN <= leader <= INT32_MAX
                and type(leader_epoch) is int and INT32_MIN <= leader_epoch <= INT32_MAX
                and type(controller_epoch) is int and INT32_MIN <= controller_epoch <= INT32_MAX
            ):
                lai = LeaderAndIsr(leader, leader_epoch, isr, zk_version)
                return LeaderIsrAndControllerEpoch(lai, controller_epoch)
        obj = parse_object(data, path)  # Kafka reads no version
        lai = LeaderAndIsr(
            obj.get_int("leader"), obj.get_int("leader_epoch"), obj.get_int_list("isr"), zk_version
        )
        return LeaderIsrAndControllerEpoch(lai, obj.get_int("controller_epoch"))
