"""Random sequences of partition and replica transitions against the transition tables (spec §5.1, §6.1).

Each step asks the PSM or RSM for one transition on the embedded store. Checked after every step:
* an invalid transition changes nothing; a valid one either reaches the target or (only where ZooKeeper or
  leadership decides) leaves the state as it was;
* transitions that need no ZooKeeper always succeed when valid;
* the leadership cache equals the state znodes, and the offline gauge equals a recount.
"""

from __future__ import annotations

import asyncio
import logging

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from tests.helpers import ManualClock
from tests.unit.controller.conftest import RecordingSender, broker, broker_epoch

from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.election import OfflinePartitionLeaderElectionStrategy
from zkcontroller.controller.event_log import EventLog, StateChangeLogger
from zkcontroller.controller.fencing_token import FencingToken
from zkcontroller.controller.partition_state_machine import PartitionStateMachine
from zkcontroller.controller.replica_state_machine import ReplicaStateMachine
from zkcontroller.controller.request_batch import ControllerBrokerRequestBatch
from zkcontroller.controller.states import (
    VALID_PREVIOUS_PARTITION_STATES,
    VALID_PREVIOUS_REPLICA_STATES,
    PartitionAndReplica,
    PartitionState,
    ReplicaState,
)
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

PARTITIONS = [TopicPartition("t", 0), TopicPartition("t", 1)]
REPLICAS = [PartitionAndReplica(tp, b) for tp in PARTITIONS for b in (1, 2, 3)]
PSM_NEEDS_ZK = {PartitionState.ONLINE}
RSM_NEEDS_ZK_OR_LEADERSHIP = {ReplicaState.NEW, ReplicaState.OFFLINE}


class StateMachineTransitions(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.quiet = logging.getLogger("state.change.logger")
        self.quiet_level = self.quiet.level  # put back in teardown: later tests read state-change lines
        self.quiet.setLevel(logging.CRITICAL)
        self.loop = asyncio.new_event_loop()
        self.context = ControllerContext()
        self.loop.run_until_complete(self._setup())

    async def _setup(self) -> None:
        clock = ManualClock()
        self.backend = EmbeddedBackend(clock)
        self.zk = KafkaZkClient(await self.backend.new_session(), clock)
        await self.zk.create_top_level_paths()
        self.context.fencing = FencingToken(*(
            await self.zk.register_controller_and_increment_controller_epoch(1)))
        self.context.set_live_brokers({broker(b): broker_epoch(b) for b in (1, 2, 3)})
        assignment = {tp: ReplicaAssignment((1, 2, 3)) for tp in PARTITIONS}
        await self.zk.create_topic_assignment("t", None, assignment)
        self.context.set_all_topics({"t"})
        for tp, ra in assignment.items():
            self.context.update_partition_full_replica_assignment(tp, ra)
        logger = StateChangeLogger(1, lambda: self.context.epoch, EventLog("test", clock, None))
        config = ControllerConfig(broker_id=1)

        def batch() -> ControllerBrokerRequestBatch:
            return ControllerBrokerRequestBatch(1, self.context, RecordingSender(), logger)

        self.psm = PartitionStateMachine(config, self.context, self.zk, batch(), logger)
        self.rsm = ReplicaStateMachine(config, self.context, self.zk, batch(), logger)

    def teardown(self) -> None:
        self.loop.close()
        self.quiet.setLevel(self.quiet_level)

    @rule(tp=st.sampled_from(PARTITIONS), to=st.sampled_from(PartitionState))
    def partition_transition(self, tp: TopicPartition, to: PartitionState) -> None:
        target = to
        before = self.context.partition_states.get(tp, PartitionState.NON_EXISTENT)
        self.loop.run_until_complete(self.psm.handle_state_changes(
            [tp], target, OfflinePartitionLeaderElectionStrategy(False)))
        after = self.context.partition_states[tp]
        if before not in VALID_PREVIOUS_PARTITION_STATES[target]:
            assert after == before
        elif target in PSM_NEEDS_ZK:
            assert after in (before, target)
        else:
            assert after == target

    @rule(replica=st.sampled_from(REPLICAS), to=st.sampled_from(ReplicaState))
    def replica_transition(self, replica: PartitionAndReplica, to: ReplicaState) -> None:
        target = to
        before = self.context.replica_states.get(replica, ReplicaState.NON_EXISTENT)
        self.loop.run_until_complete(self.rsm.handle_state_changes([replica], target))
        after = self.context.replica_states.get(replica, ReplicaState.NON_EXISTENT)
        if before not in VALID_PREVIOUS_REPLICA_STATES[target]:
            assert after == before
        elif target in RSM_NEEDS_ZK_OR_LEADERSHIP:
            assert after in (before, target)
        else:
            assert after == target
        if after == ReplicaState.NON_EXISTENT and before != after:
            assert replica.replica not in self.context.partition_replica_assignment(replica.topic_partition)

    @invariant()
    def leadership_cache_matches_zookeeper(self) -> None:
        read = self.loop.run_until_complete(self.zk.get_topic_partition_states(PARTITIONS))
        assert dict(self.context.partitions_leadership_info) == read.values

    @invariant()
    def offline_gauge_matches_recount(self) -> None:
        offline = [tp for tp, s in self.context.partition_states.items() if s == PartitionState.OFFLINE]
        assert self.context.offline_partition_count == len(offline)

    @invariant()
    def batches_are_always_flushed(self) -> None:
        assert self.psm.batch.is_empty and self.rsm.batch.is_empty


TestStateMachineTransitions = StateMachineTransitions.TestCase
TestStateMachineTransitions.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
