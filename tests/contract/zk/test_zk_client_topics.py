"""Topics and partition states on both backends: assignments and ids, batched creates and conditional
updates whose per-partition results stay exact when some version checks fail, and topic deletion."""

from __future__ import annotations

import math
import random

import pytest
from tests.contract.zk.conftest import MakeClient

from zkcontroller.coordination.api import SetDataOp
from zkcontroller.coordination.errors import BadArgumentsError, NodeExistsError, NoNodeError
from zkcontroller.model import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicId,
    TopicIdReplicaAssignment,
    TopicPartition,
)
from zkcontroller.zk.fencing import BatchLimits, estimated_size
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import TopicPartitionStateZNode, TopicZNode


async def controller_with_topic(make_client: MakeClient, topic: str, n: int, limits: BatchLimits | None = None,
                                ) -> tuple[KafkaZkClient, int, int, list[TopicPartition]]:
    """An elected controller, a topic with ``n`` partitions and their initial states."""
    client = await make_client(limits=limits)
    epoch, version = await client.register_controller_and_increment_controller_epoch(1)
    parts = [TopicPartition(topic, p) for p in range(n)]
    await client.create_topic_assignment(topic, None, {tp: ReplicaAssignment((1, 2, 3)) for tp in parts})
    states = {tp: LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2, 3)), epoch) for tp in parts}
    created = await client.create_topic_partition_states(states, version)
    assert not created.failed and created.created == states
    return client, epoch, version, parts


async def test_assignments_and_ids_round_trip(make_client: MakeClient) -> None:
    client = await make_client()
    topic_id = TopicId.generate(random.Random(1))
    assignment = {TopicPartition("a", 0): ReplicaAssignment((1, 2)),
                  TopicPartition("a", 1): ReplicaAssignment((2, 3, 1), (3,), (1,))}
    await client.create_topic_assignment("a", topic_id, assignment)
    await client.create_topic_assignment("b", None, {TopicPartition("b", 0): ReplicaAssignment((1,))})
    with pytest.raises(NodeExistsError):
        await client.create_topic_assignment("a", None, {})
    assert await client.get_all_topics_in_cluster() == {"a", "b"}
    read = await client.get_topic_assignments(["a", "b", "missing"])
    assert read.values["a"] == TopicIdReplicaAssignment("a", topic_id, assignment)
    assert read.values["b"].topic_id is None and "missing" not in read.values
    full = await client.get_full_replica_assignment_for_topics(["a", "b"])
    assert full.values[TopicPartition("a", 1)].removing_replicas == (1,)
    assert (await client.get_partitions_for_topics(["a", "b"])).values == {"a": [0, 1], "b": [0]}


async def test_assign_topic_ids_only_to_topics_without_one(make_client: MakeClient) -> None:
    client = await make_client(seed=42)
    _, version = await client.register_controller_and_increment_controller_epoch(1)
    existing = TopicId.generate(random.Random(0))
    await client.create_topic_assignment("has", existing, {})
    await client.create_topic_assignment("lacks", None, {TopicPartition("lacks", 0): ReplicaAssignment((1,))})
    read = await client.get_topic_assignments(["has", "lacks"])
    out = {t.topic: t for t in await client.assign_topic_ids(read.values.values(), version)}
    assert out["has"].topic_id == existing
    assert out["lacks"].topic_id == TopicId.generate(random.Random(42))  # from the injected source
    again = await client.get_topic_assignments(["has", "lacks"])
    assert again.values == out


async def test_partition_states_read_back_with_versions(make_client: MakeClient) -> None:
    client, epoch, _, parts = await controller_with_topic(make_client, "t", 5)
    read = await client.get_topic_partition_states([*parts, TopicPartition("t", 99)])
    assert set(read.values) == set(parts) and not read.malformed
    assert all(s.leader_and_isr.zk_version == 0 and s.controller_epoch == epoch for s in read.values.values())
    assert await client.get_topic_partition_state(TopicPartition("t", 99)) is None


async def test_creating_existing_partition_states_fails_per_partition(make_client: MakeClient) -> None:
    client, epoch, version, parts = await controller_with_topic(make_client, "t", 3)
    states = {tp: LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 0, (2,)), epoch)
              for tp in [*parts, TopicPartition("t", 3)]}
    result = await client.create_topic_partition_states(states, version)
    assert set(result.created) == {TopicPartition("t", 3)}
    assert set(result.failed) == set(parts) and all(isinstance(e, NodeExistsError) for e in result.failed.values())


@pytest.mark.parametrize("seed", range(4))
async def test_batched_update_attributes_every_result_to_its_partition(make_client: MakeClient, seed: int) -> None:
    limits = BatchLimits(max_multi_ops=7, max_in_flight=3)
    client, epoch, version, parts = await controller_with_topic(make_client, "t", 40, limits)
    rnd = random.Random(seed)
    stale = set(rnd.sample(parts, rnd.randint(0, 12)))
    missing = set(rnd.sample(sorted(set(parts) - stale), rnd.randint(0, 5)))
    other = await make_client()  # e.g. a partition leader updating the ISR behind the controller's back
    for tp in stale:
        foreign = LeaderIsrAndControllerEpoch(LeaderAndIsr(3, 7, (3,)), epoch)
        await other.session.set_data(TopicPartitionStateZNode.path(tp), TopicPartitionStateZNode.encode(foreign))
    for tp in missing:
        await other.session.delete(TopicPartitionStateZNode.path(tp))

    updates = {tp: LeaderAndIsr(2, 1, (2, 3), zk_version=0) for tp in parts}
    result = await client.update_leader_and_isr(updates, epoch, version)

    good = set(parts) - stale - missing
    assert result.finished == {tp: updates[tp].with_zk_version(1) for tp in good}
    assert set(result.to_retry) == stale and len(result.to_retry) == len(stale)
    assert set(result.failed) == missing and all(isinstance(e, NoNodeError) for e in result.failed.values())
    assert client.last_batch_stats.multis >= math.ceil(len(parts) / 7)
    assert client.last_batch_stats.splits == len(stale) + len(missing)
    now = await client.get_topic_partition_states(parts)
    for tp in good:
        assert now.values[tp] == LeaderIsrAndControllerEpoch(updates[tp].with_zk_version(1), epoch)
    for tp in stale:
        assert now.values[tp].leader_and_isr == LeaderAndIsr(3, 7, (3,), 1)
    assert not missing & set(now.values)


async def test_batches_respect_the_byte_budget(make_client: MakeClient) -> None:
    client, epoch, version, parts = await controller_with_topic(make_client, "t", 30)
    updates = {tp: LeaderAndIsr(2, 1, (2, 3), zk_version=0) for tp in parts}
    op_size = estimated_size_of_update(parts[0], updates[parts[0]], epoch)
    client.limits = BatchLimits(max_multi_bytes=op_size * 4 + 200, max_in_flight=2)
    result = await client.update_leader_and_isr(updates, epoch, version)
    assert len(result.finished) == 30
    assert client.last_batch_stats.multis == math.ceil(30 / 4)


def estimated_size_of_update(tp: TopicPartition, lai: LeaderAndIsr, epoch: int) -> int:
    data = TopicPartitionStateZNode.encode(LeaderIsrAndControllerEpoch(lai, epoch))
    return estimated_size(SetDataOp(TopicPartitionStateZNode.path(tp), data, 0))


async def test_large_batch_stays_within_zookeeper_request_limit(make_client: MakeClient) -> None:
    """With default limits, thousands of updates go in ~1000-op multis that real ZooKeeper accepts."""
    client, epoch, version, parts = await controller_with_topic(make_client, "a-rather-long-topic-name" * 4, 3000)
    updates = {tp: LeaderAndIsr(2, 1, (2, 3, 1), zk_version=0) for tp in parts}
    result = await client.update_leader_and_isr(updates, epoch, version)
    assert len(result.finished) == 3000 and not result.failed and not result.to_retry
    assert client.last_batch_stats.multis == 3


async def test_malformed_partition_state_is_reported_not_fatal(make_client: MakeClient) -> None:
    client, _, _, parts = await controller_with_topic(make_client, "t", 4)
    bad = TopicPartitionStateZNode.path(parts[2])
    await client.session.set_data(bad, b'{"version":1,"leader":"one"}')
    read = await client.get_topic_partition_states(parts)
    assert set(read.values) == set(parts) - {parts[2]}
    assert list(read.malformed) == [bad] and read.malformed[bad].path == bad


async def test_delete_topic_znode_removes_the_subtree_in_ordered_batches(make_client: MakeClient) -> None:
    client, _, version, _ = await controller_with_topic(make_client, "gone", 12, BatchLimits(max_multi_ops=5))
    await controller_topic_only(client, "kept")
    await client.delete_topic_znode("gone", version)
    assert await client.get_all_topics_in_cluster() == {"kept"}
    assert client.last_batch_stats.multis == 6  # 1 + 1 + 12 + 12 nodes, 5 per multi
    await client.delete_topic_znode("gone", version)  # already gone: nothing to do


async def controller_topic_only(client: KafkaZkClient, topic: str) -> None:
    await client.create_topic_assignment(topic, None, {TopicPartition(topic, 0): ReplicaAssignment((1,))})
    assert await client.session.exists(TopicZNode.path(topic)) is not None


async def test_a_bad_topic_name_in_a_state_update_still_gets_the_stores_bad_arguments(make_client: MakeClient
                                                                                       ) -> None:
    """Partition-state paths built from validated topic prefixes skip the store's per-path check; a batch with a
    name that is not a valid node name keeps it, so every op of that batch fails with BADARGUMENTS, not with what
    the tree would say of a path it cannot hold."""
    client, epoch, version, parts = await controller_with_topic(make_client, "t", 3)
    bad = TopicPartition("t\x00", 0)
    updates = {tp: LeaderAndIsr(2, 1, (2, 3), zk_version=0) for tp in [*parts, bad]}
    result = await client.update_leader_and_isr(updates, epoch, version)
    assert set(result.failed) == {*parts, bad} and not result.finished and not result.to_retry
    assert all(isinstance(e, BadArgumentsError) for e in result.failed.values())
    good = await client.update_leader_and_isr({tp: updates[tp] for tp in parts}, epoch, version)
    assert good.finished == {tp: updates[tp].with_zk_version(1) for tp in parts}
