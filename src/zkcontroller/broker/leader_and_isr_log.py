"""The INFO lines a Kafka 2.8 broker writes while it applies a LeaderAndIsr request (nothing but log lines).

``state.change.logger`` (``state-change.log``), prefixed ``[Broker id=N] `` as Kafka's ``StateChangeLogger``:
``ReplicaManager.makeLeaders``' "Stopped fetchers as part of LeaderAndIsr request ... become-leader transition for
K partitions", ``Partition.makeLeader``'s "Leader <tp> starts at leader epoch E from offset O with high watermark H
ISR [..] addingReplicas [..] removingReplicas [..]. Previous leader epoch was P.", ``Partition.makeFollower``'s
"Follower <tp> starts at leader epoch ...", the "Skipped the become-leader/-follower state change ..." lines,
``makeFollowers``' "Stopped fetchers as part of become-follower request ... for K partitions" and
``becomeLeaderOrFollower``'s "Finished LeaderAndIsr request in Xms correlationId C from controller K for N
partitions". ``kafka.server.ReplicaFetcherManager``, prefixed ``[ReplicaFetcherManager on broker N] ``:
``AbstractFetcherManager``'s "Removed fetcher for partitions Set(..)" and "Added fetcher to broker B for
partitions Map(<tp> -> InitialFetchState(BrokerEndPoint(id=B, host=h:p),E,O))".

The per-partition facts are collected while the partitions change role and the lines written once the request is
applied, in Kafka's order (leaders first, then followers). Nothing is collected when neither logger is enabled for
INFO: a benchmark's request carries tens of thousands of partitions. The "Removed fetcher" sets print as Kafka
2.8's (Scala 2.13): the leaders' (``partitionStates.keySet.map(_.topicPartition)``) and a failed log dir's
(``.toSet``) are immutable ``Set``s, the followers' (``partitionsToMakeFollower.map(..)``) a ``mutable.HashSet``
(`zkcontroller.scala_sets`). A small immutable one's order is a ``mutable.HashMap``'s keyed by ``Partition``
objects (identity hashes, not reproducible): partition order here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING

from zkcontroller.broker.metadata_cache import STATE_CHANGE_LOGGER
from zkcontroller.model import Broker, TopicPartition
from zkcontroller.protocol.control_requests import LeaderAndIsrPartitionState, LeaderAndIsrRequest
from zkcontroller.runtime.log_lines import write_line
from zkcontroller.scala_sets import immutable_set, mutable_hash_set, topic_partition_key_hash

if TYPE_CHECKING:
    from zkcontroller.broker.partition import Partition

FETCHER_MANAGER_LOGGER = "kafka.server.ReplicaFetcherManager"
state_log = logging.getLogger(STATE_CHANGE_LOGGER)
fetcher_manager_log = logging.getLogger(FETCHER_MANAGER_LOGGER)


def _ints(values: Iterable[int]) -> str:
    return "[" + ",".join(map(str, values)) + "]"


def leader_unavailable_line(broker_id: int, request: LeaderAndIsrRequest, correlation_id: int,
                            state: LeaderAndIsrPartitionState) -> str:
    """``makeFollowers``' ERROR for a follower whose new leader is not alive in the metadata cache."""
    return (f"[Broker id={broker_id}] Received LeaderAndIsrRequest with correlation id {correlation_id} from "
            f"controller {request.controller_id} epoch {request.controller_epoch} for partition "
            f"{state.topic_partition} (last update controller epoch {state.controller_epoch}) but cannot become "
            f"follower since the new leader {state.leader} is unavailable.")


def removed_fetcher_line(broker_id: int, tps: Collection[TopicPartition], mutable: bool = False) -> str:
    """``AbstractFetcherManager.removeFetcherForPartitions``' line; ``mutable``: the set is a ``mutable.HashSet``
    (the followers'), else an immutable ``Set``."""
    shown = (mutable_hash_set(tps, topic_partition_key_hash) if mutable
             else immutable_set(tps, topic_partition_key_hash))
    return f"[ReplicaFetcherManager on broker {broker_id}] Removed fetcher for partitions {shown}"


class LeaderAndIsrLog:
    """One request's lines; `start` returns None when there is nothing to write."""

    def __init__(self, broker_id: int, request: LeaderAndIsrRequest, correlation_id: int,
                 state_info: bool, fetcher_info: bool) -> None:
        self.broker_id = broker_id
        self.request = request
        self.correlation_id = correlation_id
        self.state_info = state_info
        self.fetcher_info = fetcher_info
        self._states: dict[TopicPartition, LeaderAndIsrPartitionState] = {
            s.topic_partition: s for s in request.partition_states}
        self._to_be_leader: list[TopicPartition] = []
        self._to_be_follower = 0
        self._leader_lines: list[str] = []
        self._follower_lines: list[tuple[int, str]] = []
        """With their level: ``makeFollowers`` writes its per-partition INFO and ERROR lines in one loop."""
        self._made_follower: list[tuple[TopicPartition, Partition]] = []

    @classmethod
    def start(cls, broker_id: int, request: LeaderAndIsrRequest, correlation_id: int) -> LeaderAndIsrLog | None:
        state_info = state_log.isEnabledFor(logging.INFO)
        fetcher_info = fetcher_manager_log.isEnabledFor(logging.INFO)
        if not (state_info or fetcher_info):
            return None
        return cls(broker_id, request, correlation_id, state_info, fetcher_info)

    def accepted(self, tps: Iterable[TopicPartition]) -> None:
        """The partitions that passed the checks: Kafka's ``partitionsToBeLeader`` / ``partitionsToBeFollower``."""
        for tp in tps:
            if self._states[tp].leader == self.broker_id:
                self._to_be_leader.append(tp)
            else:
                self._to_be_follower += 1

    def _skipped(self, tp: TopicPartition, state: LeaderAndIsrPartitionState, role: str) -> str:
        return (f"Skipped the become-{role} state change after marking its partition as {role} with correlation id "
                f"{self.correlation_id} from controller {self.request.controller_id} epoch "
                f"{self.request.controller_epoch} for partition {tp} (last update controller epoch "
                f"{state.controller_epoch}) ")

    def making_leader(self, tp: TopicPartition, partition: Partition) -> None:
        """Before ``partition.make_leader`` (Kafka logs the offsets and epoch it starts from)."""
        state = self._states.get(tp)
        if state is None or state.leader != self.broker_id or not self.state_info:
            return
        self._leader_lines.append(
            f"Leader {tp} starts at leader epoch {state.leader_epoch} from offset {partition.log_end_offset} with "
            f"high watermark {partition.high_watermark} ISR {_ints(state.isr)} addingReplicas "
            f"{_ints(state.adding_replicas)} removingReplicas {_ints(state.removing_replicas)}. Previous leader "
            f"epoch was {partition.leader_epoch}.")
        if partition.is_leader:
            self._leader_lines.append(self._skipped(tp, state, "leader") + "since it is already the leader for the "
                                      "partition.")

    def making_follower(self, tp: TopicPartition, partition: Partition) -> None:
        """Before ``partition.make_follower``."""
        state = self._states.get(tp)
        if state is None or state.leader == self.broker_id:
            return
        if self.state_info:
            self._follower_lines.append((logging.INFO, (
                f"[Broker id={self.broker_id}] Follower {tp} starts at leader epoch {state.leader_epoch} from offset "
                f"{partition.log_end_offset} with high watermark {partition.high_watermark}. Previous leader epoch "
                f"was {partition.leader_epoch}.")))
        if partition.leader == state.leader and partition.leader_epoch == state.leader_epoch:
            if self.state_info:
                self._follower_lines.append((logging.INFO, f"[Broker id={self.broker_id}] " + self._skipped(
                    tp, state, "follower") + f"since the new leader {state.leader} is the same as the old leader"))
        else:
            self._made_follower.append((tp, partition))

    def leader_unavailable(self, state: LeaderAndIsrPartitionState) -> None:
        """A follower left alone because its new leader is not alive (written among the follower lines)."""
        self._follower_lines.append((logging.ERROR, leader_unavailable_line(
            self.broker_id, self.request, self.correlation_id, state)))

    def write(self, elapsed_ms: int, alive_broker: Callable[[int], Broker | None], fetching: bool,
              fenced: bool) -> None:
        """After the request is applied. ``fetching``: followers fetch (the Added lines); ``fenced``: refused
        before ``becomeLeaderOrFollower`` (a stale broker epoch): no lines at all."""
        if fenced:
            return
        me, cid, epoch, cor = self.broker_id, self.request.controller_id, self.request.controller_epoch, \
            self.correlation_id
        if self._to_be_leader:
            if self.fetcher_info:
                write_line(fetcher_manager_log, logging.INFO, removed_fetcher_line(me, self._to_be_leader))
            self._state(f"Stopped fetchers as part of LeaderAndIsr request correlationId {cor} from controller {cid} "
                        f"epoch {epoch} as part of the become-leader transition for {len(self._to_be_leader)} "
                        "partitions")
            for line in self._leader_lines:
                self._state(line)
        if self._to_be_follower:
            for level, line in self._follower_lines:
                if self.state_info or (level > logging.INFO and state_log.isEnabledFor(level)):
                    write_line(state_log, level, line)
            made = sorted(self._made_follower, key=lambda item: (item[0].topic, item[0].partition))
            if made and self.fetcher_info:
                write_line(fetcher_manager_log, logging.INFO,
                           removed_fetcher_line(me, [tp for tp, _ in made], mutable=True))
            self._state(f"Stopped fetchers as part of become-follower request from controller {cid} epoch {epoch} "
                        f"with correlation id {cor} for {len(made)} partitions")
            if made and fetching and self.fetcher_info:
                self._added_fetchers(made, alive_broker)
        self._state(f"Finished LeaderAndIsr request in {elapsed_ms}ms correlationId {cor} from controller {cid} "
                    f"for {len(self._states)} partitions")

    def _added_fetchers(self, made: list[tuple[TopicPartition, Partition]],
                        alive_broker: Callable[[int], Broker | None]) -> None:
        by_leader: dict[int, list[str]] = {}
        for tp, partition in made:
            leader = partition.leader
            broker = alive_broker(leader)
            endpoint = broker.endpoints[0] if broker is not None and broker.endpoints else None
            host = "null:-1" if endpoint is None else f"{endpoint.host or 'null'}:{endpoint.port}"
            by_leader.setdefault(leader, []).append(
                f"{tp} -> InitialFetchState(BrokerEndPoint(id={leader}, host={host}),{partition.leader_epoch},"
                f"{partition.log_end_offset})")
        for leader in sorted(by_leader):
            entries = by_leader[leader]
            name = "Map" if len(entries) <= 4 else "HashMap"
            write_line(fetcher_manager_log, logging.INFO,
                       f"[ReplicaFetcherManager on broker {self.broker_id}] Added fetcher to broker {leader} for "
                       f"partitions {name}({', '.join(entries)})")

    def _state(self, message: str) -> None:
        if self.state_info:
            write_line(state_log, logging.INFO, f"[Broker id={self.broker_id}] {message}")
