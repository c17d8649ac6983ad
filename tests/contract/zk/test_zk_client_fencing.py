"""Fencing (§1.4) on both backends: a controller whose epoch moved on can write nothing, through any fenced
operation, including batched ones spanning several multis."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import pytest
from tests.contract.zk.conftest import MakeClient
from tests.helpers import snapshot

from zkcontroller.coordination.errors import NoNodeError
from zkcontroller.model import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicIdReplicaAssignment,
    TopicPartition,
)
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ControllerMovedError
from zkcontroller.zk.fencing import NO_FENCING, BatchLimits
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

PARTITIONS = [TopicPartition("t", p) for p in range(10)]
NEW_PARTITIONS = [TopicPartition("u", p) for p in range(4)]


@dataclass
class Cluster:
    old: KafkaZkClient
    """The deposed controller: its session is alive, but another controller was elected since."""
    old_epoch: int
    old_version: int
    new: KafkaZkClient
    new_version: int
    isr_notifications: list[str]
    log_dir_events: list[str]


async def build_cluster(make_client: MakeClient) -> Cluster:
    old = await make_client(limits=BatchLimits(max_multi_ops=3, max_in_flight=2))
    epoch, version = await old.register_controller_and_increment_controller_epoch(1)
    await old.create_top_level_paths()
    await old.create_topic_assignment("t", None, {tp: ReplicaAssignment((1, 2)) for tp in PARTITIONS})
    await old.create_topic_assignment("u", None, {tp: ReplicaAssignment((1, 2)) for tp in NEW_PARTITIONS})
    states = {tp: LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2)), epoch) for tp in PARTITIONS}
    assert not (await old.create_topic_partition_states(states, version)).failed
    await old.create_delete_topic_path("t")
    await old.propagate_isr_changes(PARTITIONS[:2])
    await old.propagate_log_dir_event(2)
    await old.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {"retention.ms": "1"})
    await old.create_partition_reassignment({PARTITIONS[0]: (2, 3)})
    await old.create_preferred_replica_election(PARTITIONS[:1])
    # A forced move: the /controller node goes away and broker 2 wins the next election.
    await old.session.delete(paths.CONTROLLER)
    new = await make_client()
    _, new_version = await new.register_controller_and_increment_controller_epoch(2)
    return Cluster(old, epoch, version, new, new_version,
                   await old.get_all_isr_change_notifications(), await old.get_all_log_dir_event_notifications())


FencedWrite = Callable[[Cluster], Awaitable[object]]

FENCED_WRITES: dict[str, FencedWrite] = {
    "update_leader_and_isr": lambda c: c.old.update_leader_and_isr(
        {tp: LeaderAndIsr(2, 1, (2,), 0) for tp in PARTITIONS}, c.old_epoch, c.old_version),
    "create_topic_partition_states": lambda c: c.old.create_topic_partition_states(
        {tp: LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1,)), c.old_epoch) for tp in NEW_PARTITIONS},
        c.old_version),
    "set_topic_assignment": lambda c: c.old.set_topic_assignment(
        "t", None, {PARTITIONS[0]: ReplicaAssignment((3,))}, c.old_version),
    "assign_topic_ids": lambda c: c.old.assign_topic_ids(
        [TopicIdReplicaAssignment("t", None, {}), TopicIdReplicaAssignment("u", None, {})], c.old_version),
    "delete_topic_znode": lambda c: c.old.delete_topic_znode("t", c.old_version),
    "delete_topic_deletions": lambda c: c.old.delete_topic_deletions(["t"], c.old_version),
    "delete_isr_change_notifications": lambda c: c.old.delete_isr_change_notifications(
        c.isr_notifications, c.old_version),
    "delete_log_dir_event_notifications": lambda c: c.old.delete_log_dir_event_notifications(
        c.log_dir_events, c.old_version),
    "delete_topic_configs": lambda c: c.old.delete_topic_configs(["t"], c.old_version),
    "set_or_create_partition_reassignment": lambda c: c.old.set_or_create_partition_reassignment(
        {PARTITIONS[1]: (3,)}, c.old_version),
    "delete_partition_reassignment": lambda c: c.old.delete_partition_reassignment(c.old_version),
    "delete_preferred_replica_election": lambda c: c.old.delete_preferred_replica_election(c.old_version),
    "delete_controller": lambda c: c.old.delete_controller(c.old_version),
}


@pytest.mark.parametrize("write", sorted(FENCED_WRITES))
async def test_deposed_controller_writes_nothing(make_client: MakeClient, write: str) -> None:
    cluster = await build_cluster(make_client)
    before = await snapshot(cluster.new.session)
    with pytest.raises(ControllerMovedError, match="Expected zkVersion = 1"):
        await FENCED_WRITES[write](cluster)
    assert await snapshot(cluster.new.session) == before


@pytest.mark.parametrize("write", sorted(FENCED_WRITES))
async def test_current_controller_can_write(make_client: MakeClient, write: str) -> None:
    """The same calls with the current epoch version go through: the failures above are the fencing."""
    cluster = await build_cluster(make_client)
    cluster.old_version = cluster.new_version
    before = await snapshot(cluster.new.session)
    await FENCED_WRITES[write](cluster)
    assert await snapshot(cluster.new.session) != before


async def test_missing_epoch_node_is_a_zookeeper_error_not_a_move(make_client: MakeClient) -> None:
    client = await make_client()
    await client.create_top_level_paths()
    with pytest.raises(NoNodeError):
        await client.delete_topic_deletions(["x"], 0)


async def test_negative_expected_version_other_than_no_fencing_is_rejected(make_client: MakeClient) -> None:
    client = await make_client()
    with pytest.raises(ValueError, match="non-negative"):
        await client.delete_topic_deletions(["x"], -2)
    await client.delete_topic_deletions(["x"], NO_FENCING)  # unfenced: nothing to delete, fine
