"""How a leader's ISR change reaches ZooKeeper per inter.broker.protocol.version: AlterIsr to a (fake)
controller with retries, or a conditional write of its own plus batched ISR-change notifications."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.helpers import ManualClock, wait_until

from zkcontroller.broker.alter_isr_manager import AlterIsrManager, ZkIsrManager
from zkcontroller.broker.config import ReplicationConfig, parse_ibp
from zkcontroller.broker.partition import IsrProposal
from zkcontroller.broker.replica_manager import ReplicaManager
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import AlterIsrPartitionResult, AlterIsrRequest, AlterIsrResponse
from zkcontroller.zk.kafka_zk_client import NO_FENCING, KafkaZkClient

from .replica_helpers import LAG_MS, Brokers, ManualRuntime, config, state

TP = TopicPartition("t", 0)


@pytest.mark.parametrize(("ibp", "alter_isr"), [("2.8-IV1", True), ("2.7-IV2", True), ("2.7", True),
                                                ("2.7-IV1", False), ("2.6", False), ("0.10.2-IV0", False)])
def test_the_ibp_decides_the_propagation(ibp: str, alter_isr: bool) -> None:
    assert ReplicationConfig(inter_broker_protocol_version=ibp).uses_alter_isr is alter_isr


@pytest.mark.parametrize("bad", ["", "2.8-beta", "two"])
def test_a_bad_ibp_is_refused_naming_the_setting(bad: str) -> None:
    with pytest.raises(ValueError, match=r"inter\.broker\.protocol\.version"):
        parse_ibp(bad)


def test_bad_durations_are_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match="replica_lag_time_max_ms"):
        ReplicationConfig(replica_lag_time_max_ms=0)


class FakeController:
    """Answers AlterIsr as Kafka's controller would for a partition at ``version``: NOT_CONTROLLER for the
    first ``refusals`` requests, then check leader epoch and version, bump the version."""

    def __init__(self, refusals: int, version: int = 0, leader_epoch: int = 0) -> None:
        self.refusals = refusals
        self.version = version
        self.leader_epoch = leader_epoch
        self.requests: list[AlterIsrRequest] = []

    def __call__(self, request: Any) -> AlterIsrResponse:
        assert isinstance(request, AlterIsrRequest)
        self.requests.append(request)
        if len(self.requests) <= self.refusals:
            return AlterIsrResponse(Errors.NOT_CONTROLLER)
        results = []
        for p in request.partitions:
            if p.leader_epoch != self.leader_epoch:
                results.append(AlterIsrPartitionResult(p.topic_partition, Errors.FENCED_LEADER_EPOCH))
            elif p.current_isr_version != self.version:
                results.append(AlterIsrPartitionResult(p.topic_partition, Errors.INVALID_UPDATE_VERSION))
            else:
                self.version += 1
                results.append(AlterIsrPartitionResult(p.topic_partition, Errors.NONE, 1, self.leader_epoch,
                                                       p.new_isr, self.version))
        return AlterIsrResponse(Errors.NONE, tuple(results))


def lagging_followers(brokers: Brokers) -> ReplicaManager:
    """Broker 1 leads TP (ISR 1, 2, 3) and starts up; brokers 2 and 3 stop fetching, a record is appended and the
    clock passes the lag time, so the leader's next ISR check proposes (1,). Returns the leader."""
    leader = brokers.rms[1]
    brokers.lead(state())
    leader.startup()
    brokers.rms[2].pause_fetchers()
    brokers.rms[3].pause_fetchers()
    leader.append(TP, 1)
    brokers.clock.advance(LAG_MS + 1)
    return leader


async def test_alter_isr_is_retried_until_the_controller_answers_and_its_answer_applies() -> None:
    controller = FakeController(refusals=2)
    brokers = Brokers(controller=controller, run_tasks=True)
    try:
        leader = lagging_followers(brokers)
        assert isinstance(leader.isr_manager, AlterIsrManager)
        await wait_until(lambda: leader.partition(TP).isr == (1,), what="the ISR shrink confirmed")  # type: ignore[union-attr]
        assert len(controller.requests) == 3
        assert controller.requests[-1].broker_epoch == leader.control_plane.broker_epoch
        assert leader.partition(TP).zk_version == 1  # type: ignore[union-attr]
    finally:
        brokers.close()


async def test_a_refused_alter_isr_leaves_the_isr_alone() -> None:
    controller = FakeController(refusals=0, version=7)  # the controller has a newer state than the leader
    brokers = Brokers(controller=controller, run_tasks=True)
    try:
        leader = lagging_followers(brokers)
        await wait_until(lambda: controller.requests and leader.partition(TP).isr_update_refused,  # type: ignore[union-attr]
                         what="the refusal handled")
        assert leader.partition(TP).isr == (1, 2, 3)  # type: ignore[union-attr]
        assert leader.partition(TP).pending_isr == (1,)  # type: ignore[union-attr]  # Kafka leaves it in flight
    finally:
        brokers.close()


@pytest.fixture
async def zk() -> AsyncIterator[tuple[KafkaZkClient, ManualClock]]:
    clock = ManualClock()
    backend = EmbeddedBackend(clock)
    session = await backend.new_session()
    client = KafkaZkClient(session, clock)
    await client.create_top_level_paths()
    await client.create_topic_assignment("t", None, {TP: ReplicaAssignment((1, 2, 3))})
    state0 = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2, 3)), 4)
    assert (await client.create_topic_partition_states({TP: state0}, NO_FENCING)).created
    yield client, clock
    await session.close()
    await backend.close()


async def test_zk_isr_manager_writes_conditionally_and_notifies_in_batches(
        zk: tuple[KafkaZkClient, ManualClock]) -> None:
    client, clock = zk
    cfg = config(inter_broker_protocol_version="2.6-IV0", isr_change_notification_linger_ms=5000,
                 isr_change_notification_max_delay_ms=60000)
    answers: list[LeaderAndIsr | Errors] = []
    manager = ZkIsrManager(1, lambda: client, ManualRuntime(clock), cfg, lambda _p, r: answers.append(r))
    manager.last_isr_propagation_ms = clock()
    assert await manager.send({TP: IsrProposal(TP, LeaderAndIsr(1, 0, (1, 2), 0), 4)})
    assert answers == [LeaderAndIsr(1, 0, (1, 2), 1)]
    written = await client.get_topic_partition_state(TP)
    assert written == LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2), 1), 4)
    await manager.send({TP: IsrProposal(TP, LeaderAndIsr(1, 0, (1,), 0), 4)})
    assert answers[-1] is Errors.INVALID_UPDATE_VERSION  # version 0 is stale now
    assert not await manager.maybe_propagate_isr_changes()  # still lingering
    clock.advance(5001)
    assert await manager.maybe_propagate_isr_changes()
    numbers = await client.get_all_isr_change_notifications()
    assert len(numbers) == 1
    read = await client.get_partitions_from_isr_change_notifications(numbers)
    assert list(read.values.values()) == [frozenset({TP})]
    assert not await manager.maybe_propagate_isr_changes()  # nothing new


async def test_zk_isr_manager_takes_a_write_already_in_zookeeper_as_done(
        zk: tuple[KafkaZkClient, ManualClock]) -> None:
    """Kafka's checkLeaderAndIsrZkData on BADVERSION: a write applied but unanswered (connection lost), then sent
    again, finds the znode already holding it: success at the znode's version, and the change is notified."""
    client, clock = zk
    cfg = config(inter_broker_protocol_version="2.6-IV0")
    answers: list[LeaderAndIsr | Errors] = []
    manager = ZkIsrManager(1, lambda: client, ManualRuntime(clock), cfg, lambda _p, r: answers.append(r))
    shrink = IsrProposal(TP, LeaderAndIsr(1, 0, (1, 2), 0), 4)
    assert (await client.update_leader_and_isr({TP: shrink.leader_and_isr}, 4, NO_FENCING)).finished  # lost answer
    assert await manager.send({TP: shrink})
    assert answers == [LeaderAndIsr(1, 0, (1, 2), 1)] and manager.isr_change_set == {TP}
    assert await manager.send({TP: IsrProposal(TP, LeaderAndIsr(1, 0, (1, 2), 0), 5)})  # another controller epoch
    assert await manager.send({TP: IsrProposal(TP, LeaderAndIsr(1, 0, (1,), 0), 4)})  # another ISR
    assert answers[1:] == [Errors.INVALID_UPDATE_VERSION, Errors.INVALID_UPDATE_VERSION]


async def test_an_unanswered_alter_isr_times_out_and_is_sent_again() -> None:
    answering = FakeController(refusals=0)
    requests: list[Any] = []

    def controller(request: Any) -> Any:
        requests.append(request)
        if len(requests) == 1:
            return asyncio.get_running_loop().create_future()  # a dropped event: never answered
        return answering(request)

    brokers = Brokers(controller=controller, run_tasks=True, cfg=config(request_timeout_ms=100))
    try:
        leader = lagging_followers(brokers)
        await wait_until(lambda: leader.partition(TP).isr == (1,), what="the ISR shrink confirmed")  # type: ignore[union-attr]
        assert len(requests) == 2 and requests[0] == requests[1]
    finally:
        brokers.close()
