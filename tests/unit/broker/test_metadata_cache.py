"""The metadata cache: partial partition updates, total broker/controller updates, deletions, topic ids,
and the Metadata-response view."""

from __future__ import annotations

import logging

import pytest

from zkcontroller.broker.metadata_cache import MetadataCache, PartitionMetadata, TopicMetadata
from zkcontroller.model import ZERO_TOPIC_ID, TopicId, TopicPartition
from zkcontroller.protocol.control_requests import Errors

from .helpers import broker, um_state, update_metadata

ID_T = TopicId(b"t" * 16)


@pytest.fixture
def cache() -> MetadataCache:
    c = MetadataCache(1)
    c.update_metadata(0, update_metadata(
        um_state(0, leader=1, replicas=(1, 2), isr=(1, 2)),
        um_state(1, leader=2, replicas=(2, 3), isr=(2,), offline=(3,)),
        um_state(0, leader=3, replicas=(3,), topic="u"),
        live=(1, 2, 3), topic_ids={"t": ID_T}))
    return c


def test_brokers_controller_and_partitions(cache: MetadataCache) -> None:
    assert [b.id for b in cache.alive_brokers()] == [1, 2, 3]
    assert cache.alive_broker(2) == broker(2)
    assert cache.controller_id == 9
    assert cache.all_topics() == {"t", "u"}
    assert cache.topic_id("t") == ID_T and cache.topic_id("u") is None
    state = cache.partition_info(TopicPartition("t", 1))
    assert state is not None and (state.leader, state.isr, state.offline_replicas) == (2, (2,), (3,))
    assert [s.partition for s in cache.partitions_of("t")] == [0, 1]
    assert cache.alive_endpoint(1, "SSL") is not None and cache.alive_endpoint(1, "SASL_SSL") is None
    assert [e.port for e in cache.alive_endpoints("PLAINTEXT")] == [9092] * 3


def test_partition_updates_are_partial_broker_updates_total(cache: MetadataCache) -> None:
    cache.update_metadata(1, update_metadata(um_state(1, leader=3, leader_epoch=1), live=(1, 3), controller_id=-1))
    assert cache.partition_info(TopicPartition("t", 0)) is not None  # untouched partitions stay
    assert cache.partition_info(TopicPartition("t", 1)).leader == 3  # type: ignore[union-attr]
    assert [b.id for b in cache.alive_brokers()] == [1, 3]
    assert cache.controller_id is None  # -1: no controller
    cache.update_metadata(2, update_metadata(live=(2,)))  # no partitions: states kept, brokers replaced
    assert cache.all_topics() == {"t", "u"} and [b.id for b in cache.alive_brokers()] == [2]


def test_leader_during_delete_removes_partitions_then_topic(cache: MetadataCache) -> None:
    deleted = cache.update_metadata(3, update_metadata(um_state(0, leader=-2)))
    assert deleted == [TopicPartition("t", 0)]
    assert cache.contains_topic("t") and cache.topic_id("t") == ID_T
    cache.update_metadata(4, update_metadata(um_state(1, leader=-2)))
    assert not cache.contains_topic("t") and cache.topic_id("t") is None


@pytest.mark.parametrize("absent", [None, ZERO_TOPIC_ID])
def test_a_zero_or_missing_topic_id_keeps_the_cached_one(cache: MetadataCache, absent: TopicId | None) -> None:
    """Kafka's ZkMetadataCache drops zero ids before merging: only a topic's last partition takes its id away
    (audit #18)."""
    cache.update_metadata(5, update_metadata(topic_ids={"t": absent}))
    assert cache.topic_id("t") == ID_T
    cache.update_metadata(6, update_metadata(um_state(0, leader=2, leader_epoch=1), topic_ids={"t": absent}))
    assert cache.topic_id("t") == ID_T


def test_topic_metadata(cache: MetadataCache) -> None:
    cache.update_metadata(6, update_metadata(live=(1, 2)))  # broker 3 gone: u-0's leader is not alive
    t, u, missing = cache.topic_metadata(["t", "u", "nope"], "PLAINTEXT")
    assert t == TopicMetadata("t", Errors.NONE, ID_T, False, (
        PartitionMetadata(0, Errors.NONE, 1, 0, (1, 2), (1, 2), ()),
        PartitionMetadata(1, Errors.NONE, 2, 0, (2, 3), (2,), (3,)),
    ))
    assert u.partitions == (PartitionMetadata(0, Errors.LEADER_NOT_AVAILABLE, -1, 0, (3,), (3,), ()),)
    assert missing == TopicMetadata("nope", Errors.UNKNOWN_TOPIC_OR_PARTITION, None, False)
    # A listener the leader does not have: no leader either.
    assert cache.topic_metadata(["t"], "SASL_SSL")[0].partitions[0].error is Errors.LEADER_NOT_AVAILABLE
    assert [m.topic for m in cache.topic_metadata(None, "PLAINTEXT")] == ["t", "u"]
    assert cache.leader_endpoint(TopicPartition("t", 1), "PLAINTEXT") == broker(2).endpoints[0]
    assert cache.leader_endpoint(TopicPartition("u", 0), "PLAINTEXT") is None


def test_snapshots_are_immutable(cache: MetadataCache) -> None:
    before = cache.snapshot
    cache.update_metadata(7, update_metadata(um_state(2)))
    assert 2 not in before.partition_states["t"] and 2 in cache.snapshot.partition_states["t"]
    with pytest.raises(TypeError):
        before.partition_states["t"][9] = None  # type: ignore[index]


def test_update_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    cache = MetadataCache(4)
    with caplog.at_level(logging.INFO, logger="state.change.logger"):
        cache.update_metadata(11, update_metadata(um_state(0), um_state(1, leader=-2), controller_epoch=3))
    assert caplog.messages == [
        "[Broker id=4] Add 1 partitions and deleted 1 partitions from metadata cache in response to UpdateMetadata "
        "request sent by controller 9 epoch 3 with correlation id 11"]


def test_an_update_copies_only_the_topics_it_touches(cache: MetadataCache) -> None:
    """Readers holding the old snapshot see it unchanged; topics the request does not name are shared, not
    copied (copying every topic per request made a stream of small updates quadratic)."""
    before = cache.snapshot
    cache.update_metadata(5, update_metadata(um_state(0, leader=2, replicas=(1, 2), isr=(2,))))
    after = cache.snapshot
    assert before.partition_states["t"][0].leader == 1 and after.partition_states["t"][0].leader == 2
    assert after.partition_states["u"] is before.partition_states["u"]
    assert after.partition_states["t"] is not before.partition_states["t"]
    assert after.partition_states["t"][1] is before.partition_states["t"][1]
