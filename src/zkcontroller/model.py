"""The plain values every layer shares: what Kafka's znodes and requests carry, as immutable dataclasses
(Kafka's case classes of the same names), and its topic id. Imports nothing of ours (layer 1)."""

from __future__ import annotations

import base64
import binascii
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from operator import attrgetter, itemgetter
from typing import NamedTuple, TypeVar

_UUID_BYTES = 16
_B64_LEN = 22


@dataclass(frozen=True, slots=True, order=True)
class TopicId:
    """A topic id; ``str()`` gives the 22-character form stored in ``/brokers/topics/<t>``."""

    raw: bytes

    def __post_init__(self) -> None:
        if len(self.raw) != _UUID_BYTES:
            raise ValueError(f"a topic id has {_UUID_BYTES} bytes, got {len(self.raw)}")

    def __str__(self) -> str:
        return base64.urlsafe_b64encode(self.raw).decode("ascii").rstrip("=")

    def __repr__(self) -> str:
        return f"TopicId({self})"

    @classmethod
    def from_string(cls, text: str) -> TopicId:
        """Parse the Base64 form (Kafka's ``Uuid.fromString``); raises ValueError on anything else."""
        if len(text) != _B64_LEN or not text.isascii():
            raise ValueError(f"{text!r} is not a 22-character URL-safe Base64 topic id")
        try:
            raw = base64.b64decode(text + "==", altchars=b"-_", validate=True)
        except binascii.Error as e:
            raise ValueError(f"{text!r} is not URL-safe Base64: {e}") from None
        if str(cls(raw)) != text:  # non-canonical trailing bits
            raise ValueError(f"{text!r} is not a canonical topic id")
        return cls(raw)


    @classmethod
    def generate(cls, rng: random.Random) -> TopicId:
        """A random version-4 UUID from the injected source, as ``Uuid.randomUuid`` makes.

        Like later Kafka versions, never returns the all-zero id or one whose text starts with ``-``
        (which command-line tools would mistake for an option).
        """
        while True:
            value = bytearray(rng.getrandbits(128).to_bytes(_UUID_BYTES, "big"))
            value[6] = (value[6] & 0x0F) | 0x40  # version 4
            value[8] = (value[8] & 0x3F) | 0x80  # IETF variant
            candidate = cls(bytes(value))
            if candidate != ZERO_TOPIC_ID and not str(candidate).startswith("-"):
                return candidate


ZERO_TOPIC_ID = TopicId(bytes(_UUID_BYTES))


NO_LEADER = -1
"""``LeaderAndIsr.NoLeader``."""
INITIAL_LEADER_EPOCH = 0
INITIAL_PARTITION_EPOCH = 0
"""Initial ``zkVersion`` of a freshly created partition state znode."""
INITIAL_CONTROLLER_EPOCH = 0
INITIAL_CONTROLLER_EPOCH_ZK_VERSION = 0

R = TypeVar("R")

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


class TopicPartition(NamedTuple):
    """A partition of a topic. A NamedTuple, not a dataclass: the controller hashes and compares 100k of these
    per failover, and a tuple does both in C (same fields, same order, same hash as the frozen dataclass had)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


partition_key: Callable[[TopicPartition], tuple[str, int]] = attrgetter("topic", "partition")
"""The order `TopicPartition` compares in, as a plain tuple (a `TopicPartition` is already one)."""


def sorted_partitions(partitions: Iterable[TopicPartition]) -> list[TopicPartition]:
    """``sorted(partitions)``: tuples compare in C."""
    return sorted(partitions)


def sorted_by_partition(items: Iterable[tuple[TopicPartition, R]]) -> list[tuple[TopicPartition, R]]:
    """``sorted(mapping.items())`` for a mapping keyed by partition (keys are unique, so values never compare)."""
    return sorted(items, key=itemgetter(0))


@dataclass(frozen=True, slots=True)
class EndPoint:
    """One advertised listener; ``host`` None means "all interfaces" (Kafka's null host)."""

    host: str | None
    port: int
    listener_name: str
    security_protocol: str

    @property
    def connection_string(self) -> str:
        """``LISTENER://host:port``, IPv6 hosts bracketed, null host as ``LISTENER://:port``."""
        if self.host is None:
            host_port = f":{self.port}"
        elif ":" in self.host:
            host_port = f"[{self.host}]:{self.port}"
        else:
            host_port = f"{self.host}:{self.port}"
        return f"{self.listener_name}://{host_port}"


@dataclass(frozen=True, slots=True)
class SupportedVersionRange:
    """A feature range a broker supports (``min_version``/``max_version`` in ``/brokers/ids/<id>``)."""

    min_version: int
    max_version: int

    def __post_init__(self) -> None:
        if self.min_version < 1 or self.max_version < self.min_version:
            raise ValueError(f"invalid supported range [{self.min_version}, {self.max_version}]")


@dataclass(frozen=True, slots=True)
class FinalizedVersionRange:
    """A cluster-wide finalized range (``min_version_level``/``max_version_level`` in ``/feature``)."""

    min_version_level: int
    max_version_level: int

    def __post_init__(self) -> None:
        if self.min_version_level < 1 or self.max_version_level < self.min_version_level:
            raise ValueError(f"invalid finalized range [{self.min_version_level}, {self.max_version_level}]")


def sorted_features(features: Mapping[str, R] | Iterable[tuple[str, R]]) -> tuple[tuple[str, R], ...]:
    """Features as a sorted tuple of pairs, so values holding them stay hashable and comparable."""
    items = features.items() if isinstance(features, Mapping) else features
    return tuple(sorted(items, key=lambda kv: kv[0]))


@dataclass(frozen=True, slots=True)
class Broker:
    """A registered broker (Kafka's ``kafka.cluster.Broker``)."""

    id: int
    endpoints: tuple[EndPoint, ...]
    rack: str | None = None
    features: tuple[tuple[str, SupportedVersionRange], ...] = ()

    def endpoint(self, listener_name: str) -> EndPoint | None:
        return next((e for e in self.endpoints if e.listener_name == listener_name), None)


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """What a broker writes to ``/brokers/ids/<id>``: the broker plus the JSON version and JMX port."""

    broker: Broker
    version: int = 5
    jmx_port: int = -1


@dataclass(frozen=True, slots=True)
class ReplicaAssignment:
    """A partition's full replica set RS and, during a reassignment, the replicas being added/removed."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    @property
    def is_being_reassigned(self) -> bool:
        return bool(self.adding_replicas or self.removing_replicas)

    @property
    def origin_replicas(self) -> tuple[int, ...]:
        """ORS = RS − adding, order of RS kept."""
        return tuple(r for r in self.replicas if r not in self.adding_replicas)

    @property
    def target_replicas(self) -> tuple[int, ...]:
        """TRS = RS − removing, order of RS kept."""
        return tuple(r for r in self.replicas if r not in self.removing_replicas)


@dataclass(frozen=True, slots=True)
class TopicIdReplicaAssignment:
    """The content of ``/brokers/topics/<topic>``: its id (if any) and every partition's assignment."""

    topic: str
    topic_id: TopicId | None
    assignment: Mapping[TopicPartition, ReplicaAssignment] = field(default_factory=dict)


class LeaderAndIsr(NamedTuple):
    """A partition's leadership; ``zk_version`` is the state znode's version, the next write's condition.

    A NamedTuple, like `TopicPartition`: one is built per partition per election or ISR change, several times
    faster than a frozen dataclass, and compared in C."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int = INITIAL_PARTITION_EPOCH

    # Direct construction, not dataclasses.replace (5x slower): both run once per partition per transition.
    def with_zk_version(self, zk_version: int) -> LeaderAndIsr:
        return LeaderAndIsr(self.leader, self.leader_epoch, self.isr, zk_version)

    def new_leader_and_isr(self, leader: int, isr: Iterable[int]) -> LeaderAndIsr:
        """A successor state: new leader and ISR with the leader epoch bumped, same expected zkVersion."""
        return LeaderAndIsr(leader, self.leader_epoch + 1, tuple(isr), self.zk_version)

    def equals_ignoring_zk_version(self, other: LeaderAndIsr) -> bool:
        return (self.leader, self.leader_epoch, self.isr) == (other.leader, other.leader_epoch, other.isr)


class LeaderIsrAndControllerEpoch(NamedTuple):
    """The content of a partition state znode: leadership plus the epoch of the controller that wrote it (a
    NamedTuple for the same reason as `LeaderAndIsr`)."""

    leader_and_isr: LeaderAndIsr
    controller_epoch: int


class FeatureZNodeStatus(IntEnum):
    DISABLED = 0
    ENABLED = 1


@dataclass(frozen=True, slots=True)
class FeatureZNodeData:
    """The content of ``/feature``: whether versioning is enabled and the finalized feature ranges."""

    status: FeatureZNodeStatus
    features: tuple[tuple[str, FinalizedVersionRange], ...] = ()


GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"
TRANSACTION_STATE_TOPIC_NAME = "__transaction_state"
INTERNAL_TOPICS = frozenset({GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME})


def is_internal(topic: str) -> bool:
    """Kafka's ``Topic.isInternal``: the topics Kafka itself creates and clients see flagged as internal."""
    return topic in INTERNAL_TOPICS
