"""Requests between brokers and from a broker to the controller, as plain values (Kafka 2.8's schemas).

* ``ControlledShutdown`` v3 (broker → controller): a stopping broker asks the controller to move its
  leadership away first; the answer lists the partitions it still leads (spec §8.3, §9.10).
* ``AlterIsr`` v0 (leader → controller, IBP >= 2.7-IV2): a leader proposes a new ISR with the leader epoch and
  partition-state version it last saw; the controller checks both, writes ZooKeeper fenced, and answers with
  the state now in force (spec §9.8).
* ``Fetch`` (follower → leader), offsets only: no record bytes are carried, a fetch answers how many records
  the follower may append; what ISR upkeep needs (leader epoch fencing, high watermark) is exact.

The wire encoding (`protocol.wire`) carries the same values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import ApiKey, Errors


@dataclass(frozen=True, slots=True)
class ControlledShutdownRequest:
    broker_id: int
    broker_epoch: int
    api_key: ApiKey = field(default=ApiKey.CONTROLLED_SHUTDOWN, init=False)


@dataclass(frozen=True, slots=True)
class ControlledShutdownResponse:
    error: Errors = Errors.NONE
    remaining_partitions: tuple[TopicPartition, ...] = ()
    """Partitions the broker still leads (empty: it may stop now)."""


@dataclass(frozen=True, slots=True)
class AlterIsrPartition:
    topic_partition: TopicPartition
    leader_epoch: int
    new_isr: tuple[int, ...]
    current_isr_version: int
    """The partition state's zkVersion the leader last saw."""


@dataclass(frozen=True, slots=True)
class AlterIsrRequest:
    broker_id: int
    broker_epoch: int
    partitions: tuple[AlterIsrPartition, ...] = ()
    api_key: ApiKey = field(default=ApiKey.ALTER_ISR, init=False)


@dataclass(frozen=True, slots=True)
class AlterIsrPartitionResult:
    topic_partition: TopicPartition
    error: Errors = Errors.NONE
    leader_id: int = -1
    leader_epoch: int = -1
    isr: tuple[int, ...] = ()
    current_isr_version: int = -1


@dataclass(frozen=True, slots=True)
class AlterIsrResponse:
    error: Errors = Errors.NONE
    partitions: tuple[AlterIsrPartitionResult, ...] = ()


@dataclass(frozen=True, slots=True)
class FetchPartition:
    topic_partition: TopicPartition
    current_leader_epoch: int
    fetch_offset: int
    """The follower's log end offset: what it has, so what it asks for next."""


@dataclass(frozen=True, slots=True)
class FetchRequest:
    replica_id: int
    partitions: tuple[FetchPartition, ...] = ()
    max_records: int = 10_000
    api_key: ApiKey = field(default=ApiKey.FETCH, init=False)


@dataclass(frozen=True, slots=True)
class FetchPartitionResult:
    topic_partition: TopicPartition
    error: Errors = Errors.NONE
    high_watermark: int = -1
    records: int = 0
    """How many records from ``fetch_offset`` on the follower appends (offsets only, no payload)."""


@dataclass(frozen=True, slots=True)
class FetchResponse:
    error: Errors = Errors.NONE
    partitions: tuple[FetchPartitionResult, ...] = ()


BrokerToControllerRequest = ControlledShutdownRequest | AlterIsrRequest
BrokerToControllerResponse = ControlledShutdownResponse | AlterIsrResponse
