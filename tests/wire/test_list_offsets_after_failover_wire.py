"""ListOffsets by timestamp (kafka-python's ``offsets_for_times``) on a follower that became leader: as in Kafka,
where every replica's log indexes the batches it appends (a follower's ``Log.appendAsFollower`` ->
``LogSegment.append``), the new leader finds the records appended before the failover. Ours serves the leader's
time index entries in the fetched batches' headers (first and max timestamps), and the follower indexes them.

Before, the time index was the leader's alone: the new leader answered offset -1 (kafka-python: None) for every
timestamp of the records produced before it took over."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest
from tests.helpers import wait_until
from tests.integration.listening import Cluster

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.model import TopicPartition

from .admin_fixture import address, admin_cluster_fixture, leader  # noqa: F401 (the fixture)
from .test_list_offsets_time_index_codecs import in_thread, look_up, produce_sets


@pytest.fixture
async def cluster(admin_cluster: Cluster) -> AsyncIterator[Cluster]:
    yield admin_cluster


def produce_batches(at: str, topic: str, batches: list[list[int]], compression: str | None = None,
                    idempotent: bool = False) -> None:
    """v2 batches, acks=all (`produce_sets`): the follower in the ISR has fetched them before the answer."""
    produce_sets(at, topic, batches, compression, acks="all", enable_idempotence=idempotent)


@pytest.mark.parametrize(("compression", "idempotent"), [(None, False), ("gzip", False), (None, True)])
async def test_the_new_leader_finds_records_appended_before_the_failover(cluster: Cluster, compression: str | None,
                                                                         idempotent: bool) -> None:
    """Three batches (1,000; 2,000 4,000 3,000; 5,000) on a leader with one follower in the ISR; the leader stops
    (controlled shutdown: the follower leads); the new leader answers every lookup as the old one did, then indexes
    its own appends after them, an idempotent producer's batches too (served whole: a record inside one is indexed
    by the follower from the records' timestamps when fetched over the wire, `fetch_codec.record_batch`)."""
    running, zk = cluster
    topic = f"failover-{compression or 'none'}{'-idempotent' if idempotent else ''}"
    tp = TopicPartition(topic, 0)
    await TopicAdmin(zk, random.Random(1)).create_topic(topic, 1, 2)
    await wait_until(lambda: all(leader(s, topic, 0) not in (None, -1) for s in running.running_brokers()),
                     timeout_s=30, what=f"{topic} led in every broker's cache")
    (old,) = [s for s in running.running_brokers() if leader(s, topic, 0) == s.broker_id]
    await wait_until(lambda: old.replica_manager.partition(tp) is not None, timeout_s=30, what=f"{tp} hosted")
    follower = next(s for s in running.running_brokers()
                    if s is not old and s.replica_manager.partition(tp) is not None)
    await wait_until(lambda: len(old.replica_manager.partition(tp).isr) == 2, timeout_s=30,  # type: ignore[union-attr]
                     what="the follower in the ISR")
    at = address(running, old)
    await in_thread(produce_batches, at, topic, [[1_000], [2_000, 4_000, 3_000], [5_000]], compression, idempotent)
    targets = [500, 1_500, 3_500, 4_001, 5_001]
    expected = [(0, 1_000), (1, 2_000), (2, 4_000), (4, 5_000), None]  # 3,500: the record inside the batch
    assert await in_thread(look_up, at, topic, targets) == expected

    await running.stop_broker(old.broker_id)
    new_at = address(running, follower)
    await wait_until(lambda: leader(follower, topic, 0) == follower.broker_id, timeout_s=30,
                     what="the follower leads")
    assert await in_thread(look_up, new_at, topic, targets) == expected
    await in_thread(produce_batches, new_at, topic, [[6_000]])
    assert await in_thread(look_up, new_at, topic, [5_001, 6_001]) == [(5, 6_000), None]
