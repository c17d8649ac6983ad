"""Admin znodes, notifications, configs and cluster-wide nodes on both backends."""

from __future__ import annotations

import json

import pytest
from tests.contract.zk.conftest import MakeClient

from zkcontroller.coordination.errors import NodeExistsError
from zkcontroller.model import FeatureZNodeData, FeatureZNodeStatus, FinalizedVersionRange, TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError

TP0, TP1 = TopicPartition("foo", 0), TopicPartition("bar", 2)


async def test_top_level_paths(make_client: MakeClient) -> None:
    client = await make_client()
    await client.create_top_level_paths()
    await client.create_top_level_paths()  # idempotent
    for path in paths.PERSISTENT_PATHS:
        assert await client.path_exists(path), path


async def test_topic_deletion_requests(make_client: MakeClient) -> None:
    client = await make_client()
    _, version = await client.register_controller_and_increment_controller_epoch(1)
    for topic in ("a", "b"):
        await client.create_delete_topic_path(topic)
    assert await client.get_topic_deletions() == {"a", "b"}
    assert await client.is_topic_marked_for_deletion("a")
    assert (await client.session.get_data(paths.delete_topic_path("a")))[0] is None  # Kafka's createRecursive: null
    await client.delete_topic_deletions(["a", "zzz"], version)
    assert await client.get_topic_deletions() == {"b"}


async def test_legacy_reassignment_lifecycle(make_client: MakeClient) -> None:
    client = await make_client()
    _, version = await client.register_controller_and_increment_controller_epoch(1)
    assert await client.get_partition_reassignment() is None
    await client.create_partition_reassignment({TP0: (4, 5, 6)})
    assert await client.reassign_partitions_in_progress()
    assert await client.get_partition_reassignment() == {TP0: (4, 5, 6)}
    await client.set_or_create_partition_reassignment({TP1: (1,)}, version)
    assert await client.get_partition_reassignment() == {TP1: (1,)}
    await client.delete_partition_reassignment(version)
    assert await client.get_partition_reassignment() is None
    await client.set_or_create_partition_reassignment({TP0: (2,)}, version)  # creates when absent
    assert await client.get_partition_reassignment() == {TP0: (2,)}
    await client.session.set_data(paths.REASSIGN_PARTITIONS, b"{not json")
    with pytest.raises(ZnodeDecodeError) as excinfo:
        await client.get_partition_reassignment()
    assert excinfo.value.path == paths.REASSIGN_PARTITIONS


async def test_legacy_preferred_election_lifecycle(make_client: MakeClient) -> None:
    client = await make_client()
    _, version = await client.register_controller_and_increment_controller_epoch(1)
    await client.create_preferred_replica_election([TP0, TP1])
    with pytest.raises(NodeExistsError):
        await client.create_preferred_replica_election([TP0])
    assert await client.get_preferred_replica_election() == {TP0, TP1}
    await client.delete_preferred_replica_election(version)
    assert await client.get_preferred_replica_election() is None


async def test_isr_change_notifications(make_client: MakeClient) -> None:
    client = await make_client()
    _, version = await client.register_controller_and_increment_controller_epoch(1)
    await client.create_top_level_paths()
    created = [await client.propagate_isr_changes([TP0]), await client.propagate_isr_changes([TP0, TP1])]
    await client.session.create(paths.isr_change_path("9999999999"), b"garbage")
    seqs = await client.get_all_isr_change_notifications()
    assert [paths.isr_change_path(s) for s in seqs[:2]] == created and len(seqs) == 3
    read = await client.get_partitions_from_isr_change_notifications(seqs)
    assert read.values == {seqs[0]: {TP0}, seqs[1]: {TP0, TP1}}
    assert list(read.malformed) == [paths.isr_change_path("9999999999")]
    await client.delete_isr_change_notifications(seqs, version)
    assert await client.get_all_isr_change_notifications() == []


async def test_log_dir_event_notifications(make_client: MakeClient) -> None:
    client = await make_client()
    _, version = await client.register_controller_and_increment_controller_epoch(1)
    await client.create_top_level_paths()
    await client.propagate_log_dir_event(2)
    await client.propagate_log_dir_event(3)
    seqs = await client.get_all_log_dir_event_notifications()
    assert sorted((await client.get_broker_ids_from_log_dir_events(seqs)).values.values()) == [2, 3]
    await client.delete_log_dir_event_notifications(seqs, version)
    assert await client.get_all_log_dir_event_notifications() == []


@pytest.mark.parametrize(("value", "expected"), [("true", True), (" TRUE ", True), ("false", False)])
async def test_unclean_leader_election_override(make_client: MakeClient, value: str, expected: bool) -> None:
    client = await make_client()
    assert await client.get_unclean_leader_election_override("t") is None
    await client.set_or_create_entity_configs("topics", "t", {"unclean.leader.election.enable": value})
    assert await client.get_unclean_leader_election_override("t") is expected
    await client.set_or_create_entity_configs("topics", "t", {"retention.ms": "1"})
    assert await client.get_unclean_leader_election_override("t") is None


async def test_invalid_unclean_override_names_the_znode(make_client: MakeClient) -> None:
    client = await make_client()
    await client.set_or_create_entity_configs("topics", "t", {"unclean.leader.election.enable": "yes"})
    with pytest.raises(ZnodeDecodeError) as excinfo:
        await client.get_unclean_leader_election_override("t")
    assert excinfo.value.path == "/config/topics/t"


async def test_topic_configs_and_change_notifications(make_client: MakeClient) -> None:
    client = await make_client()
    _, version = await client.register_controller_and_increment_controller_epoch(1)
    await client.set_or_create_entity_configs("topics", "a", {"retention.ms": "1"})
    await client.set_or_create_entity_configs("topics", "b", {"cleanup.policy": "compact"})
    read = await client.get_topic_configs(["a", "b", "c"])
    assert read.values == {"a": {"retention.ms": "1"}, "b": {"cleanup.policy": "compact"}}
    path = await client.create_config_change_notification("topics/a")
    data, _ = await client.session.get_data(path)
    assert json.loads(data) == {"version": 2, "entity_path": "topics/a"}
    await client.delete_topic_configs(["a", "c"], version)
    assert set((await client.get_topic_configs(["a", "b"])).values) == {"b"}


async def test_cluster_id_is_created_once(make_client: MakeClient) -> None:
    first, second = await make_client(), await make_client()
    assert await first.get_cluster_id() is None
    assert await first.create_or_get_cluster_id("Qm0Bq2l1R9yJp1dxK3fJ7A") == "Qm0Bq2l1R9yJp1dxK3fJ7A"
    assert await second.create_or_get_cluster_id("other") == "Qm0Bq2l1R9yJp1dxK3fJ7A"
    data, _ = await first.session.get_data(paths.CLUSTER_ID)
    assert json.loads(data) == {"version": "1", "id": "Qm0Bq2l1R9yJp1dxK3fJ7A"}


async def test_broker_sequence_ids_increase(make_client: MakeClient) -> None:
    client = await make_client()
    ids = [await client.generate_broker_sequence_id() for _ in range(3)]
    assert ids == sorted(ids) and len(set(ids)) == 3


async def test_feature_node(make_client: MakeClient) -> None:
    client = await make_client()
    assert await client.get_feature() is None
    value = FeatureZNodeData(FeatureZNodeStatus.ENABLED, (("f", FinalizedVersionRange(1, 2)),))
    await client.create_feature(value)
    assert await client.get_feature() == (value, 0)
    disabled = FeatureZNodeData(FeatureZNodeStatus.DISABLED)
    assert await client.update_feature(disabled) == 1
    assert await client.get_feature() == (disabled, 1)
