"""State names and legal transitions, as data (Kafka's ``PartitionState``/``ReplicaState``/``ControllerState``).

Each state machine validates a transition by looking the current state up in its table; an illegal one is
logged and skipped, never applied.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import Enum
from typing import NamedTuple, TypeVar

from zkcontroller.model import TopicPartition


class PartitionState(Enum):
    NEW = "NewPartition"
    ONLINE = "OnlinePartition"
    OFFLINE = "OfflinePartition"
    NON_EXISTENT = "NonExistentPartition"

    def __str__(self) -> str:
        return self.value


VALID_PREVIOUS_PARTITION_STATES: dict[PartitionState, frozenset[PartitionState]] = {
    PartitionState.NEW: frozenset({PartitionState.NON_EXISTENT}),
    PartitionState.ONLINE: frozenset({PartitionState.NEW, PartitionState.ONLINE, PartitionState.OFFLINE}),
    PartitionState.OFFLINE: frozenset({PartitionState.NEW, PartitionState.ONLINE, PartitionState.OFFLINE}),
    PartitionState.NON_EXISTENT: frozenset({PartitionState.OFFLINE}),
}


class ReplicaState(Enum):
    NEW = "NewReplica"
    ONLINE = "OnlineReplica"
    OFFLINE = "OfflineReplica"
    DELETION_STARTED = "ReplicaDeletionStarted"
    DELETION_SUCCESSFUL = "ReplicaDeletionSuccessful"
    DELETION_INELIGIBLE = "ReplicaDeletionIneligible"
    NON_EXISTENT = "NonExistentReplica"

    def __str__(self) -> str:
        return self.value


_LIVE_OR_INELIGIBLE = frozenset(
    {ReplicaState.NEW, ReplicaState.ONLINE, ReplicaState.OFFLINE, ReplicaState.DELETION_INELIGIBLE}
)
VALID_PREVIOUS_REPLICA_STATES: dict[ReplicaState, frozenset[ReplicaState]] = {
    ReplicaState.NEW: frozenset({ReplicaState.NON_EXISTENT}),
    ReplicaState.ONLINE: _LIVE_OR_INELIGIBLE,
    ReplicaState.OFFLINE: _LIVE_OR_INELIGIBLE,
    ReplicaState.DELETION_STARTED: frozenset({ReplicaState.OFFLINE}),
    ReplicaState.DELETION_SUCCESSFUL: frozenset({ReplicaState.DELETION_STARTED}),
    ReplicaState.DELETION_INELIGIBLE: frozenset({ReplicaState.OFFLINE, ReplicaState.DELETION_STARTED}),
    ReplicaState.NON_EXISTENT: frozenset({ReplicaState.DELETION_SUCCESSFUL}),
}


K = TypeVar("K")
S = TypeVar("S", bound=Enum)


def split_by_validity(items: Sequence[K], current: Sequence[S], target: S, table: dict[S, frozenset[S]]
                      ) -> tuple[list[K], list[S], list[K]]:
    """(valid, their current states, invalid) for moving ``items``, whose states are ``current`` (in the same
    order), to ``target`` by ``table``; the order of ``items`` is kept.

    The states come as a list because the caller reads them in C (``map`` of a dict method), once per item,
    where a callback per item cost half of this step. The valid states are tested as a tuple: identity
    comparisons in C, where a set would call `Enum.__hash__`, a Python function, per item."""
    valid_previous = tuple(table[target])
    if all(map(valid_previous.__contains__, current)):  # the usual case: every transition is legal
        return list(items), list(current), []
    valid: list[K] = []
    valid_states: list[S] = []
    invalid: list[K] = []
    for item, state in zip(items, current, strict=True):
        if state in valid_previous:
            valid.append(item)
            valid_states.append(state)
        else:
            invalid.append(item)
    return valid, valid_states, invalid


def render_states(states: Iterable[Enum]) -> str:
    """A valid-previous-states set as Kafka prints it (declaration order)."""
    return ",".join(str(s) for s in sorted(states, key=_declaration_index))


def _declaration_index(state: Enum) -> int:
    return list(type(state)).index(state)


class PartitionAndReplica(NamedTuple):
    """A NamedTuple for C-speed hash and equality (the replica state map is keyed by it); same fields, order,
    ``str`` and hash value as the frozen dataclass it replaces."""

    topic_partition: TopicPartition
    replica: int

    def __str__(self) -> str:
        tp = self.topic_partition
        return f"[Topic={tp.topic},Partition={tp.partition},Replica={self.replica}]"


def sorted_replicas(replicas: Iterable[PartitionAndReplica]) -> list[PartitionAndReplica]:
    """``sorted(replicas)``: nested tuples ((topic, partition), replica) compare in C, by topic, partition, replica."""
    return sorted(replicas)


class ControllerState(Enum):
    """What the controller is doing (the ``ControllerState`` gauge); value = Kafka's byte, timer = its timer."""

    IDLE = (0, None)
    CONTROLLER_CHANGE = (1, "ControllerChangeRateAndTimeMs")
    BROKER_CHANGE = (2, "LeaderElectionRateAndTimeMs")
    TOPIC_CHANGE = (3, "TopicChangeRateAndTimeMs")
    TOPIC_DELETION = (4, "TopicDeletionRateAndTimeMs")
    ALTER_PARTITION_REASSIGNMENT = (5, "PartitionReassignmentRateAndTimeMs")
    AUTO_LEADER_BALANCE = (6, "AutoLeaderBalanceRateAndTimeMs")
    MANUAL_LEADER_BALANCE = (7, "ManualLeaderBalanceRateAndTimeMs")
    CONTROLLED_SHUTDOWN = (8, "ControlledShutdownRateAndTimeMs")
    ISR_CHANGE = (9, "IsrChangeRateAndTimeMs")
    LEADER_AND_ISR_RESPONSE_RECEIVED = (10, "LeaderAndIsrResponseReceivedRateAndTimeMs")
    LOG_DIR_CHANGE = (11, "LogDirChangeRateAndTimeMs")
    CONTROLLER_SHUTDOWN = (12, "ControllerShutdownRateAndTimeMs")
    UNCLEAN_LEADER_ELECTION_ENABLE = (13, "UncleanLeaderElectionEnableRateAndTimeMs")
    TOPIC_UNCLEAN_LEADER_ELECTION_ENABLE = (14, "TopicUncleanLeaderElectionEnableRateAndTimeMs")
    LIST_PARTITION_REASSIGNMENT = (15, "ListPartitionReassignmentRateAndTimeMs")
    UPDATE_METADATA_RESPONSE_RECEIVED = (16, None)
    UPDATE_FEATURES = (17, "UpdateFeaturesRateAndTimeMs")

    @property
    def byte(self) -> int:
        return self.value[0]

    @property
    def timer_name(self) -> str | None:
        return self.value[1]
