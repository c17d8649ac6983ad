"""`all_partitions`: the one read of topic znodes' partitions behind the cluster shell's waits (lenient) and the
preferred election (strict, as Kafka's getPartitionsForTopics throws)."""

from __future__ import annotations

import pytest

from zkcontroller.admin.leader_election import all_partitions
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.coordination.api import ANY_VERSION
from zkcontroller.model import TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


async def _topics_a_b_c_with_b_corrupt(admin: TopicAdmin, zk: KafkaZkClient) -> None:
    for topic, count in (("a", 2), ("b", 1), ("c", 1)):
        await admin.create_topic_with_assignment(topic, {p: [1] for p in range(count)})
    await zk.session.set_data(paths.topic_path("b"), b"[1]", ANY_VERSION)


async def test_lenient_leaves_out_a_corrupt_topic(admin: TopicAdmin, zk: KafkaZkClient) -> None:
    await _topics_a_b_c_with_b_corrupt(admin, zk)
    assert await all_partitions(zk) == [TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("c", 0)]
    assert await all_partitions(zk, ["c", "gone"]) == [TopicPartition("c", 0)]


async def test_strict_names_a_corrupt_topic_it_reads_only(admin: TopicAdmin, zk: KafkaZkClient) -> None:
    await _topics_a_b_c_with_b_corrupt(admin, zk)
    for topics in (None, ["b", "c"]):
        with pytest.raises(ZnodeDecodeError) as excinfo:
            await all_partitions(zk, topics, strict=True)
        assert excinfo.value.path == "/brokers/topics/b"
    assert await all_partitions(zk, ["a"], strict=True) == [TopicPartition("a", 0), TopicPartition("a", 1)]
