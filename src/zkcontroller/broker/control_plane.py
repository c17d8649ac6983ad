"""One broker's handling of the controller's LeaderAndIsr, UpdateMetadata and StopReplica requests, with
Kafka 2.8's fencing (spec §8; ``KafkaApis`` and ``ReplicaManager``).

Order of checks: broker epoch (stale ⇔ the request's is not -1 and is smaller than ours), then controller
epoch (older than the newest seen → rejected; otherwise adopted), then per-partition checks. What a broker
does with a partition beyond the control plane (logs, fetchers, ISR upkeep) is not modelled: a hosted
partition is its role, leadership, leader epoch and log dir, enough for the controller's view of the world
and for the simulator's invariants.

Pure state and no I/O: the owner sets `broker_epoch` on every (re-)registration and may fail log dirs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum

from zkcontroller.broker.config import DEFAULT_LOG_DIRS
from zkcontroller.broker.metadata_cache import STATE_CHANGE_LOGGER, MetadataCache
from zkcontroller.model import ZERO_TOPIC_ID, TopicId, TopicPartition
from zkcontroller.protocol.control_requests import (
    EPOCH_DURING_DELETE,
    NO_EPOCH,
    UNKNOWN_BROKER_EPOCH,
    AnyControlRequest,
    ApiKey,
    ControlResponse,
    Errors,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from zkcontroller.runtime.log_lines import TRACE

KAFKA_APIS_LOGGER = "kafka.server.KafkaApis"
UNKNOWN_LEADER_EPOCH = -1
"""A partition this broker has never led or followed (Kafka's ``Partition`` starts at leader epoch -1)."""


_REQUEST_NAMES = {ApiKey.LEADER_AND_ISR: "LeaderAndIsr", ApiKey.STOP_REPLICA: "StopReplica",
                  ApiKey.UPDATE_METADATA: "UpdateMetadata"}
_BROKER_EPOCH_NAMES = {**_REQUEST_NAMES, ApiKey.UPDATE_METADATA: "update metadata"}
"""How Kafka's KafkaApis names each request in its stale-broker-epoch line."""


class PartitionRole(Enum):
    LEADER = "Leader"
    FOLLOWER = "Follower"
    NONE = "None"
    """Hosted but neither leading nor following: its first LeaderAndIsr named a leader that was not alive.
    (StopReplica without delete leaves the role as it was, as Kafka leaves the ``Partition``.)"""


@dataclass(frozen=True, slots=True)
class HostedPartition:
    """A partition this broker hosts, as the last accepted LeaderAndIsr left it.

    ``isr`` is the controller's ISR from that request (Kafka's followers keep none; we keep it for
    observers). ``controller_epoch`` is that of the controller that made the leadership decision.
    """

    topic_partition: TopicPartition
    log_dir: str
    role: PartitionRole = PartitionRole.NONE
    leader: int = -1
    leader_epoch: int = UNKNOWN_LEADER_EPOCH
    isr: tuple[int, ...] = ()
    replicas: tuple[int, ...] = ()
    zk_version: int = 0
    controller_epoch: int = 0
    topic_id: TopicId | None = None


class BrokerControlPlane:
    """Control-request handling for broker ``broker_id`` with log dirs ``log_dirs`` (all online at start)."""

    def __init__(self, broker_id: int, broker_epoch: int = UNKNOWN_BROKER_EPOCH, *,
                 log_dirs: Sequence[str] = DEFAULT_LOG_DIRS, metadata_cache: MetadataCache | None = None):
        if not log_dirs:
            raise ValueError("a broker needs at least one log dir")
        self.broker_id = broker_id
        self.broker_epoch = broker_epoch
        """czxid of our current registration; the owner updates it on every re-registration."""
        self.controller_epoch = 0
        """The newest controller epoch seen in an accepted control request (shared by all three kinds)."""
        self.metadata_cache = metadata_cache or MetadataCache(broker_id)
        self.log_dirs = tuple(log_dirs)
        self._offline_dirs: set[str] = set()
        self._partitions: dict[TopicPartition, HostedPartition] = {}
        self._dir_counts: dict[str, int] = {d: 0 for d in self.log_dirs}
        """Partitions hosted per log dir, kept as partitions come and go (placement is per new partition)."""
        self._offline: set[TopicPartition] = set()
        self.leader_unavailable: dict[TopicPartition, LeaderAndIsrPartitionState] = {}
        """Partitions of the last LeaderAndIsr accepted (NONE) but left as they were, their new leader not being
        alive (Kafka's makeFollowers only creates the log), with the state asked for: the replica manager must not
        re-apply their old state, and reports each (`leader_and_isr_log.leader_unavailable_line`)."""
        self._state_log = logging.getLogger(STATE_CHANGE_LOGGER)
        self._apis_log = logging.getLogger(KAFKA_APIS_LOGGER)

    # ------------------------------------------------------------------ observers and log dirs

    @property
    def partitions(self) -> Mapping[TopicPartition, HostedPartition]:
        return dict(self._partitions)

    def partition(self, tp: TopicPartition) -> HostedPartition | None:
        return self._partitions.get(tp)

    def partitions_with_role(self, role: PartitionRole) -> list[TopicPartition]:
        return sorted(tp for tp, p in self._partitions.items() if p.role is role)

    @property
    def offline_partitions(self) -> frozenset[TopicPartition]:
        """Kafka's ``HostedPartition.Offline``: partitions that were in a failed log dir, or that a LeaderAndIsr
        named and left without a local log."""
        return frozenset(self._offline)

    @property
    def offline_log_dirs(self) -> frozenset[str]:
        return frozenset(self._offline_dirs)

    def fail_log_dir(self, log_dir: str) -> list[TopicPartition]:
        """A disk failure: every partition in ``log_dir`` goes offline; returns them. (In Kafka the broker then
        writes a log-dir event notification for the controller; that is the owner's job.)"""
        if log_dir not in self.log_dirs:
            raise ValueError(f"{log_dir} is not one of this broker's log dirs {self.log_dirs}")
        self._offline_dirs.add(log_dir)
        failed = sorted(tp for tp, p in self._partitions.items() if p.log_dir == log_dir)
        for tp in failed:
            self._unhost(tp)
            self._offline.add(tp)
        return failed

    def _next_log_dir(self) -> str | None:
        """The online dir holding fewest partitions (Kafka's ``LogManager.nextLogDirs``), None if all failed."""
        online = [d for d in self.log_dirs if d not in self._offline_dirs]
        return min(online, key=lambda d: (self._dir_counts[d], online.index(d))) if online else None

    def _unhost(self, tp: TopicPartition) -> None:
        hosted = self._partitions.pop(tp)
        self._dir_counts[hosted.log_dir] -= 1

    # ------------------------------------------------------------------ dispatch and shared checks

    def handle(self, request: AnyControlRequest, correlation_id: int = 0) -> ControlResponse:
        if isinstance(request, LeaderAndIsrRequest):
            return self.handle_leader_and_isr(request, correlation_id)
        if isinstance(request, UpdateMetadataRequest):
            return self.handle_update_metadata(request, correlation_id)
        return self.handle_stop_replica(request, correlation_id)

    def _fence(self, request: AnyControlRequest, correlation_id: int) -> Errors | None:
        """The one preamble of every control request (spec §8): a stale broker epoch, then an older controller
        epoch, is refused with its error (and Kafka's log line); otherwise the request's controller epoch is
        adopted and None returned."""
        kind = request.api_key
        if self._is_broker_epoch_stale(request.broker_epoch, _BROKER_EPOCH_NAMES[kind]):
            return Errors.STALE_BROKER_EPOCH
        cid = request.controller_id
        if kind is not ApiKey.UPDATE_METADATA:
            self._state(logging.INFO, f"Handling {_REQUEST_NAMES[kind]} request correlationId {correlation_id} from "
                        f"controller {cid} for {len(request.partition_states)} partitions")
        if request.controller_epoch < self.controller_epoch:
            if kind is ApiKey.UPDATE_METADATA:
                line = (f"Received update metadata request with correlation id {correlation_id} from an old "
                        f"controller {cid} with epoch {request.controller_epoch}.")
            else:
                line = (f"Ignoring {_REQUEST_NAMES[kind]} request from controller {cid} with correlation id "
                        f"{correlation_id} since its controller epoch {request.controller_epoch} is old.")
            self._state(logging.WARNING, f"{line} Latest known controller epoch is {self.controller_epoch}")
            return Errors.STALE_CONTROLLER_EPOCH
        self.controller_epoch = request.controller_epoch
        return None

    def _is_broker_epoch_stale(self, request_epoch: int, kind: str) -> bool:
        """KIP-380: -1 means an old sender; a larger epoch may arrive before we learn of our re-registration."""
        stale = request_epoch != UNKNOWN_BROKER_EPOCH and request_epoch < self.broker_epoch
        if stale:
            self._apis_log.info("[KafkaApi-%d] Received %s request with broker epoch %d smaller than the current "
                                "broker epoch %d", self.broker_id, kind, request_epoch, self.broker_epoch)
        return stale

    def _state(self, level: int, message: str) -> None:
        self._state_log.log(level, "[Broker id=%d] %s", self.broker_id, message)

    # ------------------------------------------------------------------ UpdateMetadata

    def handle_update_metadata(self, request: UpdateMetadataRequest, correlation_id: int = 0) -> ControlResponse:
        """Stale broker epoch → STALE_BROKER_EPOCH; older controller epoch → STALE_CONTROLLER_EPOCH (Kafka
        throws ControllerMovedException, mapped to that code); else update the cache and adopt the epoch."""
        fenced = self._fence(request, correlation_id)
        if fenced is not None:
            return ControlResponse(ApiKey.UPDATE_METADATA, fenced)
        self.metadata_cache.update_metadata(correlation_id, request)
        return ControlResponse(ApiKey.UPDATE_METADATA)

    # ------------------------------------------------------------------ StopReplica

    def handle_stop_replica(self, request: StopReplicaRequest, correlation_id: int = 0) -> ControlResponse:
        """Fencing as §8, then stop the accepted partitions (delete → no longer hosted; else left as they are)."""
        fenced = self._fence(request, correlation_id)
        if fenced is not None:
            return ControlResponse(ApiKey.STOP_REPLICA, fenced)
        cid = request.controller_id
        errors = []
        for s in request.partition_states:
            tp = s.topic_partition
            errors.append((tp, self._stop_replica(tp, s, cid, correlation_id)))
        return ControlResponse(ApiKey.STOP_REPLICA, Errors.NONE, tuple(errors))

    def _stop_replica(self, tp: TopicPartition, state: StopReplicaPartitionState, controller_id: int,
                      correlation_id: int) -> Errors:
        def about() -> str:  # only the refusals say it
            return (f"StopReplica request (delete={str(state.delete_partition).lower()}) from controller "
                    f"{controller_id} with correlation id {correlation_id} epoch {self.controller_epoch} "
                    f"for partition {tp}")

        if tp in self._offline:
            self._state(logging.WARNING, f"Ignoring {about()} as the local replica for the partition is in an "
                        "offline log directory")
            return Errors.KAFKA_STORAGE_ERROR
        hosted = self._partitions.get(tp)
        if hosted is not None:
            requested, current = state.leader_epoch, hosted.leader_epoch
            if requested not in (EPOCH_DURING_DELETE, NO_EPOCH) and requested <= current:
                relation = (f"is smaller than the current leader epoch {current}" if requested < current
                            else "matches the current leader epoch")
                level = logging.WARNING if requested < current else logging.INFO
                self._state(level, f"Ignoring {about()} since its associated leader epoch {requested} {relation}")
                return Errors.FENCED_LEADER_EPOCH
            if state.delete_partition:
                self._unhost(tp)
            # without delete Kafka's stopPartitions only stops the fetcher: a leader stays leader
        return Errors.NONE  # not hosted: accepted (Kafka still deletes leftover log dirs)

    # ------------------------------------------------------------------ LeaderAndIsr

    def handle_leader_and_isr(self, request: LeaderAndIsrRequest, correlation_id: int = 0) -> ControlResponse:
        """Fencing as §8; accepted partitions become leader (if the request names us) or follower."""
        self.leader_unavailable = {}
        fenced = self._fence(request, correlation_id)
        if fenced is not None:
            return _error_response(request, fenced)
        cid = request.controller_id
        topic_ids = {t: i for t, i in request.topic_ids if i is not None and i != ZERO_TOPIC_ID}
        states = [(s.topic_partition, s) for s in request.partition_states]  # tens of thousands: keyed once
        errors: dict[TopicPartition, Errors] = {}
        for tp, state in states:
            errors[tp] = self._check_partition(tp, state, topic_ids, cid, correlation_id)
        for tp, state in states:
            if errors[tp] is Errors.NONE:
                errors[tp] = self._apply(tp, state, topic_ids.get(state.topic), cid, correlation_id)
        for tp, _ in states:
            if tp not in self._partitions:
                # Kafka's becomeLeaderOrFollower creates a Partition for every named partition, then marks those
                # left without a local log (refused, or no online dir) HostedPartition.Offline until a restart.
                self._offline.add(tp)
        return ControlResponse(ApiKey.LEADER_AND_ISR, Errors.NONE, tuple((tp, errors[tp]) for tp, _ in states))

    def _check_partition(self, tp: TopicPartition, state: LeaderAndIsrPartitionState,
                         topic_ids: Mapping[str, TopicId], controller_id: int, correlation_id: int) -> Errors:
        def about() -> str:  # only the refusals say it
            return (f"LeaderAndIsr request from controller {controller_id} with correlation id {correlation_id} "
                    f"epoch {self.controller_epoch} for partition {tp}")

        if tp in self._offline:
            self._state(logging.WARNING, f"Ignoring {about()} as the local replica for the partition is in an "
                        "offline log directory")
            return Errors.KAFKA_STORAGE_ERROR
        hosted = self._partitions.get(tp)
        current = hosted.leader_epoch if hosted is not None else UNKNOWN_LEADER_EPOCH
        request_id, log_id = topic_ids.get(tp.topic), hosted.topic_id if hosted is not None else None
        if request_id is not None and log_id is not None and request_id != log_id:
            self._state(logging.ERROR, f"Topic Id in memory: {log_id} does not match the topic Id for partition "
                        f"{tp} provided in the request: {request_id}.")  # Kafka's Partition.checkOrSetTopicId
            return Errors.INCONSISTENT_TOPIC_ID
        if state.leader_epoch > current:
            if self.broker_id in state.replicas:
                return Errors.NONE
            self._state(logging.WARNING, f"Ignoring {about()} as itself is not in assigned replica list "
                        f"{','.join(map(str, state.replicas))}")
            return Errors.UNKNOWN_TOPIC_OR_PARTITION
        if state.leader_epoch < current:
            self._state(logging.WARNING, f"Ignoring {about()} since its associated leader epoch "
                        f"{state.leader_epoch} is smaller than the current leader epoch {current}")
        else:
            self._state(logging.INFO, f"Ignoring {about()} since its associated leader epoch {state.leader_epoch} "
                        "matches the current leader epoch")
        return Errors.STALE_CONTROLLER_EPOCH

    def _apply(self, tp: TopicPartition, state: LeaderAndIsrPartitionState, topic_id: TopicId | None,
               controller_id: int, correlation_id: int) -> Errors:
        """Kafka's makeLeaders / makeFollowers for one partition that passed the checks."""
        hosted = self._partitions.get(tp)
        if hosted is None:
            log_dir = self._next_log_dir()
            if log_dir is None:
                self._state(logging.ERROR, f"Skipped the state change with correlation id {correlation_id} from "
                            f"controller {controller_id} epoch {self.controller_epoch} for partition {tp} since the "
                            "replica for the partition is offline due to disk error")
                return Errors.KAFKA_STORAGE_ERROR
            hosted = HostedPartition(tp, log_dir)
            self._dir_counts[log_dir] += 1
        topic_id = topic_id if topic_id is not None else hosted.topic_id
        if state.leader == self.broker_id:
            role = PartitionRole.LEADER
        elif self.metadata_cache.has_alive_broker(state.leader):
            role = PartitionRole.FOLLOWER
        else:
            # Kafka creates the log but leaves the partition's state alone until the leader is known; the replica
            # manager writes the ERROR line among the follower lines (`leader_and_isr_log.leader_unavailable_line`).
            self._partitions[tp] = replace(hosted, topic_id=topic_id)
            self.leader_unavailable[tp] = state
            return Errors.NONE
        self._partitions[tp] = HostedPartition(
            tp, hosted.log_dir, role, state.leader, state.leader_epoch, state.isr, state.replicas,
            state.zk_version, state.controller_epoch, topic_id)
        if self._state_log.isEnabledFor(TRACE):  # a per-partition line: not even formatted when disabled
            transition = "become-leader" if role is PartitionRole.LEADER else "become-follower"
            self._state(TRACE, f"Completed LeaderAndIsr request correlationId {correlation_id} from controller "
                        f"{controller_id} epoch {self.controller_epoch} for the {transition} transition for "
                        f"partition {tp}")
        return Errors.NONE


def _error_response(request: LeaderAndIsrRequest, error: Errors) -> ControlResponse:
    """``LeaderAndIsrRequest.getErrorResponse``: the error at the top and on every partition."""
    return ControlResponse(ApiKey.LEADER_AND_ISR, error, tuple((s.topic_partition, error)
                                                               for s in request.partition_states))
