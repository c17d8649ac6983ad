"""Audit findings on the leader's ISR upkeep against Kafka 2.8.2 (Partition, ReplicaManager, AlterIsrManager)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from zkcontroller.broker.alter_isr_manager import AlterIsrManager
from zkcontroller.model import TopicPartition

from .replica_helpers import LAG_MS, Brokers, state

TP = TopicPartition("t", 0)


@pytest.fixture
def brokers() -> Iterator[Brokers]:
    """Background tasks do not run: the AlterIsr manager's queue is only drained when a test says."""
    b = Brokers()
    yield b
    b.close()


def queued_shrink(brokers: Brokers) -> AlterIsrManager:
    """Broker 1 leads TP with ISR 1,2,3; both followers lag, so its ISR check queues the shrink to (1,)."""
    brokers.lead(state())
    leader = brokers.rms[1]
    brokers.rms[2].pause_fetchers()
    brokers.rms[3].pause_fetchers()
    leader.append(TP, 1)
    brokers.clock.advance(LAG_MS + 1)
    assert len(leader.maybe_shrink_isr()) == 1
    manager = leader.isr_manager
    assert isinstance(manager, AlterIsrManager) and set(manager.unsent) == {TP}
    return manager


@pytest.mark.parametrize("new_leader", [1, 2])
async def test_a_new_leadership_clears_the_queued_alter_isr_item(brokers: Brokers, new_leader: int) -> None:
    """Audit #13: Kafka's makeLeader and makeFollower call alterIsrManager.clearPending(tp), so a queued proposal
    made at the old leader epoch is never sent."""
    manager = queued_shrink(brokers)
    brokers.lead(state(leader=new_leader, leader_epoch=1, zk_version=1))
    assert manager.unsent == {}
