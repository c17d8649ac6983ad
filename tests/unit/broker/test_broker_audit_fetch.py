"""Audit findings on the leader's and follower's fetch handling (Kafka 2.8.2's Partition and fetcher threads)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import FetchPartition, FetchRequest

from .replica_helpers import Brokers, state

TP = TopicPartition("t", 0)


@pytest.fixture
def brokers() -> Iterator[Brokers]:
    b = Brokers()
    yield b
    b.close()


def fetch(replica: int, epoch: int, offset: int = 0) -> FetchRequest:
    return FetchRequest(replica, (FetchPartition(TP, epoch, offset),))


async def test_a_fetch_without_a_current_leader_epoch_skips_the_epoch_check(brokers: Brokers) -> None:
    """Audit #9: -1 (Fetch v0-v8, or no known epoch) is Kafka's Optional.empty: checkCurrentLeaderEpoch answers
    NONE, so the leader serves it and a non-leader answers NOT_LEADER_OR_FOLLOWER, never FENCED_LEADER_EPOCH."""
    brokers.lead(state(leader_epoch=3))
    leader = brokers.rms[1]
    leader.append(TP, 4)
    (answer,) = leader.handle_fetch(fetch(2, -1)).partitions
    assert (answer.error, answer.records) == (Errors.NONE, 4)
    assert leader.partition(TP).followers[2].log_end_offset == 0  # type: ignore[union-attr]
    assert leader.handle_fetch(fetch(2, -1, offset=5)).partitions[0].error is Errors.OFFSET_OUT_OF_RANGE
    assert brokers.rms[2].handle_fetch(fetch(3, -1)).partitions[0].error is Errors.NOT_LEADER_OR_FOLLOWER
