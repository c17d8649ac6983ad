"""The leader's ISR proposals keep Kafka's member order: 2.8's ``Partition`` adds a rejoining follower to a small
Scala ``Set`` (insertion-ordered up to four members) and sends ``isr.toList``, so it comes last, not sorted in."""

from __future__ import annotations

from zkcontroller.broker.partition import Partition
from zkcontroller.model import TopicPartition


def test_a_rejoining_follower_is_appended_to_the_isr() -> None:
    partition = Partition(TopicPartition("t", 0), local_broker_id=2)
    partition.make_leader(leader_epoch=5, isr=(2, 3), replicas=(1, 2, 3), zk_version=7, controller_epoch=1,
                          now_ms=0)
    proposal = partition.record_follower_fetch(1, fetch_offset=0, now_ms=10)  # caught up: joins the ISR
    assert proposal is not None
    assert proposal.leader_and_isr.isr == (2, 3, 1)
    assert (proposal.leader_and_isr.leader, proposal.leader_and_isr.leader_epoch) == (2, 5)
