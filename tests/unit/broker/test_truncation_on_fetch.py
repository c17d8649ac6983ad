"""Truncation on fetch (Kafka 2.8 at IBP 2.7-IV1+, KIP-595's ``divergingEpoch``) instead of truncating a new
follower to its high watermark: the soak's finding F2 (docs/soak.md) was acknowledged records lost when a
follower, truncated to its lagging HW by a new leader epoch, was elected before it fetched again."""

from __future__ import annotations

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import FetchPartition, FetchRequest

from .helpers import leader_and_isr
from .replica_helpers import Brokers, state

TP = TopicPartition("t", 0)


async def _acked_beyond_follower_2s_hw(brokers: Brokers) -> None:
    """Broker 1 leads at epoch 0 and has 8 records, all acknowledged (leader HW 8); follower 2 has all 8 but its
    HW is still 6: the answer that would have brought 8 was lost (a follower's HW lags the leader's by at least a
    fetch, more when an answer fails: in the soak's F2 it was 2 behind)."""
    brokers.lead(state())
    leader = brokers.rms[1]
    leader.append(TP, 8)
    for _ in range(3):
        await brokers.fetch_all()
    follower = brokers.rms[2].partition(TP)
    assert follower is not None
    assert (leader.high_watermark(TP), follower.log_end_offset, follower.high_watermark) == (8, 8, 8)
    follower.high_watermark = 6


async def _new_epoch_then_leader_dies(brokers: Brokers) -> int:
    """The controller bumps the epoch (broker 3 out of the ISR), then broker 1 dies before 2 fetches again and
    broker 2 is elected: what it leads from."""
    for broker in (1, 2):
        brokers.rms[broker].handle_control_request(leader_and_isr(state(leader_epoch=1, isr=(1, 2), zk_version=1)))
    brokers.rms[2].handle_control_request(leader_and_isr(state(leader=2, leader_epoch=2, isr=(2,), zk_version=2)))
    return brokers.rms[2].log_end_offset(TP)


async def test_a_new_follower_keeps_acknowledged_records_above_its_high_watermark() -> None:
    brokers = Brokers()
    try:
        await _acked_beyond_follower_2s_hw(brokers)
        assert await _new_epoch_then_leader_dies(brokers) == 8  # offsets 6 and 7 were acknowledged
    finally:
        brokers.close()


async def test_below_ibp_2_7_iv1_a_new_follower_still_truncates_to_its_high_watermark() -> None:
    """Kafka's path without truncation on fetch (OffsetsForLeaderEpoch, which we do not send) is kept there."""
    brokers = Brokers(cfg=ReplicationConfig(inter_broker_protocol_version="2.7-IV0"))
    try:
        await _acked_beyond_follower_2s_hw(brokers)
        assert await _new_epoch_then_leader_dies(brokers) == 6
    finally:
        brokers.close()


async def test_a_divergent_tail_is_truncated_to_where_the_new_leaders_epoch_began() -> None:
    """Broker 3 missed offsets 6 and 7 (not acknowledged: the HW was held at 6 by it) and is elected at epoch 1
    (an unclean election), then appends 3 records of its own. Follower 2's fetch at 8 is within the new leader's
    log, so only the epoch check finds that 6 and 7 are not the leader's: it answers the diverging epoch's end,
    6, and the follower truncates there and fetches the new leader's 6..8."""
    brokers = Brokers()
    try:
        brokers.lead(state())
        leader = brokers.rms[1]
        leader.append(TP, 6)
        await brokers.fetch_all()
        brokers.rms[3].pause_fetchers()
        leader.append(TP, 2)
        await brokers.rms[2].fetchers[1].fetch_once()
        follower = brokers.rms[2].partition(TP)
        assert follower is not None and follower.log_end_offset == 8
        new = state(leader=3, leader_epoch=1, isr=(3,), zk_version=1)
        for broker in (2, 3):
            brokers.rms[broker].handle_control_request(leader_and_isr(new))
        brokers.rms[3].append(TP, 3)
        assert brokers.rms[3].log_end_offset(TP) == 9
        (answer,) = brokers.rms[3].handle_fetch(
            FetchRequest(2, (FetchPartition(TP, 1, 8, last_fetched_epoch=0),))).partitions
        assert (answer.error, answer.records, answer.diverging_epoch, answer.diverging_end_offset) == (
            Errors.NONE, 0, 0, 6)
        await brokers.rms[2].fetchers[3].fetch_once()
        assert follower.log_end_offset == 6
        await brokers.rms[2].fetchers[3].fetch_once()
        assert follower.log_end_offset == 9
    finally:
        brokers.close()
