"""The produce purgatory's shutdown (Kafka's ``DelayedOperationPurgatory.shutdown`` from
``ReplicaManager.shutdown``): a waiting acks=-1 request is dropped, not answered, and later ones are too; a
request the controlled shutdown's LeaderAndIsr completed first keeps its answer."""

from __future__ import annotations

import pytest

from zkcontroller.broker.delayed_produce import PurgatoryShutDown
from zkcontroller.model import TopicPartition

from .replica_helpers import Brokers, state
from .test_produce_replica_manager import send_all, settle, waiting

NOT_LEADER_OR_FOLLOWER = 6
TP = TopicPartition("t", 0)


async def test_replica_manager_shutdown_drops_a_waiting_request(brokers: Brokers) -> None:
    brokers.lead(state())
    leader = brokers.rms[1]
    task = send_all(leader, 3)
    await waiting(leader, task)
    leader.shutdown()
    with pytest.raises(PurgatoryShutDown):
        await settle(task)
    assert leader.produce_waiters.waiting() == 0
    with pytest.raises(PurgatoryShutDown):  # nothing waits in a purgatory that is shut down
        await settle(send_all(leader, 1))
    assert leader.log_end_offset(TP) == 4  # both appended before waiting, as in Kafka


async def test_a_request_completed_by_the_controlled_shutdown_keeps_its_answer(brokers: Brokers) -> None:
    brokers.lead(state())
    leader = brokers.rms[1]
    task = send_all(leader, 2)
    await waiting(leader, task)
    brokers.lead(state(leader=2, leader_epoch=1))  # the controlled shutdown moved the leadership ...
    leader.shutdown()  # ... and the broker shuts down before the woken request has run: Kafka completed it at once
    assert [(a.error, a.base_offset) for a in await settle(task)] == [(NOT_LEADER_OR_FOLLOWER, 0)]
