"""Controller events (spec §3.2). Watch handlers and response callbacks only create these; all controller
state changes happen while one of them is processed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from typing import Any, ClassVar

from zkcontroller.controller.states import ControllerState
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import AnyControlRequest, ControlResponse, Errors


@dataclass(frozen=True)
class ControllerEvent:
    state: ClassVar[ControllerState] = ControllerState.IDLE

    @property
    def name(self) -> str:
        return type(self).__name__

    def __str__(self) -> str:
        """An event without fields prints as Kafka's case object does (``Reelect``, not ``Reelect()``), in
        ``Error processing event ...`` and ``Controller moved to another broker when processing ...``."""
        return repr(self) if is_dataclass(self) and fields(self) else self.name


@dataclass(frozen=True)
class Startup(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.CONTROLLER_CHANGE


@dataclass(frozen=True)
class ControllerChange(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.CONTROLLER_CHANGE


@dataclass(frozen=True)
class Reelect(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.CONTROLLER_CHANGE


@dataclass(frozen=True)
class RegisterBrokerAndReelect(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.CONTROLLER_CHANGE


@dataclass(frozen=True)
class Expire(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.CONTROLLER_CHANGE


@dataclass(frozen=True)
class SessionReconnected(ControllerEvent):
    """Ours, not Kafka's: the store disarms watches on a dropped connection (see coordination.api), so after
    reconnecting the controller re-reads what it watches, which re-arms every watch."""

    state: ClassVar[ControllerState] = ControllerState.CONTROLLER_CHANGE


@dataclass(frozen=True)
class ShutdownEventThread(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.CONTROLLER_SHUTDOWN


@dataclass(frozen=True)
class BrokerChange(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.BROKER_CHANGE


@dataclass(frozen=True)
class BrokerModifications(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.BROKER_CHANGE
    broker_id: int = -1


@dataclass(frozen=True)
class TopicChange(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.TOPIC_CHANGE


@dataclass(frozen=True)
class PartitionModifications(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.TOPIC_CHANGE
    topic: str = ""


@dataclass(frozen=True)
class LeaderAndIsrResponseReceived(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.LEADER_AND_ISR_RESPONSE_RECEIVED
    broker_id: int = -1
    request: AnyControlRequest | None = None
    response: ControlResponse | None = None


@dataclass(frozen=True)
class UpdateMetadataResponseReceived(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.UPDATE_METADATA_RESPONSE_RECEIVED
    broker_id: int = -1
    response: ControlResponse | None = None


@dataclass(frozen=True)
class IsrChangeNotification(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.ISR_CHANGE


@dataclass(frozen=True)
class LogDirEventNotification(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.LOG_DIR_CHANGE


# ------------------------------------------------------------------ requests from brokers to the controller
# Each carries the callback that answers the broker; the event manager's pre-emption (clear_and_put on
# session expiry, shutdown) answers NOT_CONTROLLER through it, so a waiting broker always hears back.


@dataclass(frozen=True)
class BrokerRequestEvent(ControllerEvent):
    """Base of the events that answer a broker request (Kafka's events with a callback)."""

    request: Any = None
    callback: Callable[[Any], None] = field(default=lambda _response: None, compare=False, repr=False)


@dataclass(frozen=True)
class ControlledShutdown(BrokerRequestEvent):
    state: ClassVar[ControllerState] = ControllerState.CONTROLLED_SHUTDOWN


@dataclass(frozen=True)
class AlterIsrReceived(BrokerRequestEvent):
    state: ClassVar[ControllerState] = ControllerState.ISR_CHANGE


# ------------------------------------------------------------------ topic deletion (spec §9.6)


@dataclass(frozen=True)
class TopicDeletion(ControllerEvent):
    """``/admin/delete_topics`` changed (Kafka's ``TopicDeletion``)."""

    state: ClassVar[ControllerState] = ControllerState.TOPIC_DELETION


@dataclass(frozen=True)
class TopicDeletionStopReplicaResponseReceived(ControllerEvent):
    """A broker answered a StopReplica that deleted partitions; only the deleted partitions are carried."""

    state: ClassVar[ControllerState] = ControllerState.TOPIC_DELETION
    broker_id: int = -1
    error: Errors = Errors.NONE
    partition_errors: tuple[tuple[TopicPartition, Errors], ...] = ()


# ------------------------------------------------------------------ partition reassignment (spec §9.7)


@dataclass(frozen=True)
class ApiError:
    """Kafka's ``ApiError``: an error code and an optional message (the per-partition admin answer)."""

    error: Errors
    message: str | None = None

    def __str__(self) -> str:
        return f"ApiError(error={self.error.name}, message={self.message})"


@dataclass(frozen=True)
class AdminRequestEvent(ControllerEvent):
    """Base of the admin-API events that answer through a callback (NOT_CONTROLLER when dropped)."""

    callback: Callable[[Any], None] = field(default=lambda _result: None, compare=False, repr=False)


@dataclass(frozen=True)
class ZkPartitionReassignment(ControllerEvent):
    """``/admin/reassign_partitions`` was created (the legacy entry point)."""

    state: ClassVar[ControllerState] = ControllerState.ALTER_PARTITION_REASSIGNMENT


@dataclass(frozen=True)
class ApiPartitionReassignment(AdminRequestEvent):
    """AlterPartitionReassignments: per partition a target, or None to cancel; answers {tp: ApiError}."""

    state: ClassVar[ControllerState] = ControllerState.ALTER_PARTITION_REASSIGNMENT
    reassignments: tuple[tuple[TopicPartition, tuple[int, ...] | None], ...] = ()


@dataclass(frozen=True)
class ListPartitionReassignments(AdminRequestEvent):
    """ListPartitionReassignments: the given partitions (None: all) still being reassigned, with RS/AR/RR."""

    state: ClassVar[ControllerState] = ControllerState.LIST_PARTITION_REASSIGNMENT
    partitions: tuple[TopicPartition, ...] | None = None


@dataclass(frozen=True)
class PartitionReassignmentIsrChange(ControllerEvent):
    """The state znode of a partition being reassigned changed (its ISR may now hold every target replica)."""

    state: ClassVar[ControllerState] = ControllerState.ALTER_PARTITION_REASSIGNMENT
    tp: TopicPartition = field(default_factory=lambda: TopicPartition("", -1))


@dataclass(frozen=True)
class CompletedReassignmentsFlush(ControllerEvent):
    """Beyond Kafka: record the reassignments completed since the last flush in ZooKeeper at once, one write per
    topic znode (RS = TRS) and one rewrite of ``/admin/reassign_partitions``. Kafka writes both once per
    completed partition, each time the whole znode: quadratic in the partitions per topic and per request."""

    state: ClassVar[ControllerState] = ControllerState.ALTER_PARTITION_REASSIGNMENT


# ------------------------------------------------------------------ leader elections (spec §9.8, §9.9)


class ElectionType(Enum):
    """Kafka's ``ElectionType``."""

    PREFERRED = 0
    UNCLEAN = 1


class ElectionTrigger(Enum):
    """Who asked for a replica leader election (Kafka's ``ElectionTrigger``); the value is the event log's."""

    AUTO_TRIGGERED = "auto"
    ZK_TRIGGERED = "zk"
    ADMIN_CLIENT_TRIGGERED = "admin"

    def __str__(self) -> str:
        return {"auto": "AutoTriggered", "zk": "ZkTriggered", "admin": "AdminClientTriggered"}[self.value]


@dataclass(frozen=True)
class ReplicaLeaderElection(ControllerEvent):
    """Kafka's ``ReplicaLeaderElection``: ``partitions`` None means "read /admin/preferred_replica_election";
    the callback gets, per partition, the new leader id or an (error, message) pair."""

    state: ClassVar[ControllerState] = ControllerState.MANUAL_LEADER_BALANCE
    partitions: frozenset[TopicPartition] | None = None
    election_type: ElectionType = ElectionType.PREFERRED
    trigger: ElectionTrigger = ElectionTrigger.ZK_TRIGGERED
    callback: Callable[[Any], None] = field(default=lambda _results: None, compare=False, repr=False)


@dataclass(frozen=True)
class AutoPreferredReplicaLeaderElection(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.AUTO_LEADER_BALANCE


# ------------------------------------------------------------------ unclean-election enablement (spec §9.15)


@dataclass(frozen=True)
class ConfigChangeNotification(ControllerEvent):
    """Ours: Kafka's config manager (every broker's ``/config/changes`` listener) does this outside the controller;
    here the controller's own watch reads the notifications and queues what concerns it."""

    state: ClassVar[ControllerState] = ControllerState.TOPIC_UNCLEAN_LEADER_ELECTION_ENABLE


@dataclass(frozen=True)
class UncleanLeaderElectionEnable(ControllerEvent):
    """The broker-level ``unclean.leader.election.enable`` went from false to true (Kafka's
    ``DynamicLogConfig.reconfigure`` → ``enableDefaultUncleanLeaderElection``)."""

    state: ClassVar[ControllerState] = ControllerState.UNCLEAN_LEADER_ELECTION_ENABLE


@dataclass(frozen=True)
class TopicUncleanLeaderElectionEnable(ControllerEvent):
    state: ClassVar[ControllerState] = ControllerState.TOPIC_UNCLEAN_LEADER_ELECTION_ENABLE
    topic: str = ""
