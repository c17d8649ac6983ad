"""The content of Kafka's controller-to-broker requests and their responses, as plain values.

LeaderAndIsr, UpdateMetadata and StopReplica carry the controller id and epoch and the recipient's broker
epoch, so a broker can fence a deposed controller (spec §7–§8). These are the fields of the 2.8 message
schemas (LeaderAndIsr v5, UpdateMetadata v7, StopReplica v3) that the controller and brokers act on; the wire
encoding comes with the protocol layer and carries the same values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import NamedTuple

from zkcontroller.model import Broker, TopicId, TopicPartition

UNKNOWN_BROKER_EPOCH = -1
"""``AbstractControlRequest.UNKNOWN_BROKER_EPOCH``: the sender did not say (pre-KIP-380)."""
LEADER_DURING_DELETE = -2
"""Leader id advertised in UpdateMetadata for a topic queued for deletion."""
EPOCH_DURING_DELETE = -2
"""StopReplica leader epoch for a topic queued for deletion."""
NO_EPOCH = -1
"""StopReplica leader epoch when unknown."""


class Errors(IntEnum):
    """Kafka's error codes used on the control plane (``org.apache.kafka.common.protocol.Errors``)."""

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    OFFSET_OUT_OF_RANGE = 1
    CORRUPT_MESSAGE = 2
    UNKNOWN_TOPIC_OR_PARTITION = 3
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    BROKER_NOT_AVAILABLE = 8
    STALE_CONTROLLER_EPOCH = 11
    INVALID_TOPIC_EXCEPTION = 17
    INVALID_REPLICA_ASSIGNMENT = 39
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
    KAFKA_STORAGE_ERROR = 56
    FETCH_SESSION_ID_NOT_FOUND = 70
    INVALID_FETCH_SESSION_EPOCH = 71
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    STALE_BROKER_EPOCH = 77
    PREFERRED_LEADER_NOT_AVAILABLE = 80
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
    ELECTION_NOT_NEEDED = 84
    NO_REASSIGNMENT_IN_PROGRESS = 85
    INVALID_UPDATE_VERSION = 95
    INCONSISTENT_TOPIC_ID = 103
    INELIGIBLE_REPLICA = 107


class ApiKey(IntEnum):
    """Kafka's API keys of the requests between brokers and the controller."""

    FETCH = 1
    LEADER_AND_ISR = 4
    STOP_REPLICA = 5
    UPDATE_METADATA = 6
    CONTROLLED_SHUTDOWN = 7
    ALTER_ISR = 56


class LeaderAndIsrPartitionState(NamedTuple):
    """A partition's entry in LeaderAndIsr. The three per-partition entries are NamedTuples, not frozen
    dataclasses: the controller builds one per partition per transition (tens of thousands per broker
    failure), and a tuple is built about four times faster."""

    topic: str
    partition: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    is_new: bool = False

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


class UpdateMetadataPartitionState(NamedTuple):
    topic: str
    partition: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


class StopReplicaPartitionState(NamedTuple):
    topic: str
    partition: int
    leader_epoch: int
    delete_partition: bool

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class ControlRequest:
    """Fields every control request carries: who sent it, at which controller epoch, to which broker epoch."""

    controller_id: int
    controller_epoch: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class LeaderAndIsrRequest(ControlRequest):
    partition_states: tuple[LeaderAndIsrPartitionState, ...] = ()
    topic_ids: tuple[tuple[str, TopicId | None], ...] = ()
    live_leaders: tuple[Broker, ...] = ()
    api_key: ApiKey = field(default=ApiKey.LEADER_AND_ISR, init=False)


@dataclass(frozen=True, slots=True)
class UpdateMetadataRequest(ControlRequest):
    partition_states: tuple[UpdateMetadataPartitionState, ...] = ()
    live_brokers: tuple[Broker, ...] = ()
    topic_ids: tuple[tuple[str, TopicId | None], ...] = ()
    api_key: ApiKey = field(default=ApiKey.UPDATE_METADATA, init=False)


@dataclass(frozen=True, slots=True)
class StopReplicaRequest(ControlRequest):
    partition_states: tuple[StopReplicaPartitionState, ...] = ()
    api_key: ApiKey = field(default=ApiKey.STOP_REPLICA, init=False)


AnyControlRequest = LeaderAndIsrRequest | UpdateMetadataRequest | StopReplicaRequest


@dataclass(frozen=True, slots=True)
class ControlResponse:
    """A broker's answer: a top-level error and, for LeaderAndIsr/StopReplica, one error per partition."""

    api_key: ApiKey
    error: Errors = Errors.NONE
    partition_errors: tuple[tuple[TopicPartition, Errors], ...] = ()

    def partition_error_map(self) -> dict[TopicPartition, Errors]:
        return dict(self.partition_errors)
