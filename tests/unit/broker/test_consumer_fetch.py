"""A consumer's Fetch (replica id -1) below the high watermark is refused plainly: the brokers keep offsets, not
records (at the high watermark there is nothing to read: tests/wire/test_consumer_fetch_wire.py).

It was served as a follower's fetch from an unknown replica: NONE with no records, which a consumer reads as "no
new records" forever, and a warning about "follower -1" on the broker."""

from __future__ import annotations

import pytest

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import FetchPartition, FetchRequest

from .replica_helpers import (
    Brokers,
    brokers_fixture,  # noqa: F401
    state,
)

TP = TopicPartition("t", 0)
CONSUMER = -1


def consumer_fetch(epoch: int = -1, offset: int = 0, tp: TopicPartition = TP) -> FetchRequest:
    return FetchRequest(CONSUMER, (FetchPartition(tp, epoch, offset),))


async def test_a_consumer_fetch_from_the_leader_is_unsupported_for_the_message_format(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    brokers.lead(state(leader_epoch=2))
    leader = brokers.rms[1]
    leader.append(TP, 5)
    await brokers.fetch_all()
    await brokers.fetch_all()  # the followers' next fetch says what they have: the HW moves to 5
    assert leader.high_watermark(TP) == 5  # offset 0 is below it (at it, a consumer gets no records, no error)
    for _ in range(2):
        (answer,) = leader.handle_fetch(consumer_fetch()).partitions
        assert (answer.error, answer.records, answer.high_watermark) == (
            Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT, 0, leader.high_watermark(TP))
    assert leader.partition(TP).followers.get(CONSUMER) is None  # type: ignore[union-attr]
    said = [m for m in caplog.messages if "Fetch from a consumer" in m]
    assert len(said) == 1 and "keeps offsets, not records" in said[0]
    assert not any("follower -1" in m for m in caplog.messages)


async def test_a_consumer_gets_kafkas_routing_errors_first(brokers: Brokers) -> None:
    """Errors a consumer acts on (refresh metadata, reset its offset) come before the refusal, in Kafka's order."""
    brokers.lead(state(leader_epoch=2))
    leader, follower = brokers.rms[1], brokers.rms[2]
    leader.append(TP, 5)
    assert follower.handle_fetch(consumer_fetch()).partitions[0].error is Errors.NOT_LEADER_OR_FOLLOWER
    assert leader.handle_fetch(consumer_fetch(epoch=1)).partitions[0].error is Errors.FENCED_LEADER_EPOCH
    assert leader.handle_fetch(consumer_fetch(offset=9)).partitions[0].error is Errors.OFFSET_OUT_OF_RANGE
    assert leader.handle_fetch(consumer_fetch(tp=TopicPartition("nope", 0))).partitions[0].error is \
        Errors.UNKNOWN_TOPIC_OR_PARTITION
