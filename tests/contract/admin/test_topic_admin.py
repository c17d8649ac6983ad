"""Topic creation, partition addition and deletion marking on both backends, checked in the znodes."""

from __future__ import annotations

import random
import re

import pytest
from tests.contract.zk.conftest import MakeClient

from zkcontroller.admin.errors import (
    AdminOperationError,
    BrokerNotAvailableError,
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    TopicAlreadyMarkedForDeletionError,
    TopicExistsError,
    UnknownTopicError,
)
from zkcontroller.admin.replica_assignment import RackAwareMode
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import ConfigEntityZNode

from .conftest import register_brokers


async def stored_assignment(zk: KafkaZkClient, topic: str) -> dict[int, list[int]]:
    read = await zk.get_topic_assignments([topic])
    return {tp.partition: list(ra.replicas) for tp, ra in sorted(read.values[topic].assignment.items())}


async def test_create_writes_assignment_and_config(zk: KafkaZkClient, admin: TopicAdmin) -> None:
    assignment = await admin.create_topic("orders", 6, 2)
    assert await stored_assignment(zk, "orders") == assignment
    assert sorted(assignment) == list(range(6))
    assert all(len(set(r)) == 2 and set(r) <= {1, 2, 3} for r in assignment.values())
    # Kafka writes the config node even without overrides, and no change notification at creation.
    data, _ = await zk.session.get_data(paths.topic_config_path("orders"))
    assert ConfigEntityZNode.decode(data, paths.topic_config_path("orders")) == {}
    assert await zk.get_children(paths.CONFIG_CHANGES) == []
    read = await zk.get_topic_assignments(["orders"])
    assert read.values["orders"].topic_id is None  # the controller assigns it


async def test_create_with_configs_and_topic_id(zk: KafkaZkClient) -> None:
    admin = TopicAdmin(zk, random.Random(1), topic_id_rng=random.Random(2))
    await admin.create_topic("payments", 1, 3, {"unclean.leader.election.enable": "true"})
    assert await zk.get_unclean_leader_election_override("payments") is True
    assert (await zk.get_topic_assignments(["payments"])).values["payments"].topic_id is not None


async def test_same_seed_same_placement(zk: KafkaZkClient) -> None:
    first = await TopicAdmin(zk, random.Random(5)).create_topic("a", 9, 2)
    second = await TopicAdmin(zk, random.Random(5)).create_topic("b", 9, 2)
    assert first == second


async def test_create_errors(zk: KafkaZkClient, admin: TopicAdmin) -> None:
    await admin.create_topic("metrics.cpu", 1, 1)
    with pytest.raises(TopicExistsError, match=re.escape("Topic 'metrics.cpu' already exists.")):
        await admin.create_topic("metrics.cpu", 1, 1)
    with pytest.raises(InvalidTopicError, match=re.escape("collides with existing topics: metrics.cpu")):
        await admin.create_topic("metrics_cpu", 1, 1)
    with pytest.raises(InvalidTopicError, match="illegal"):
        await admin.create_topic("bad/name", 1, 1)
    with pytest.raises(InvalidReplicationFactorError, match="larger than available brokers: 3"):
        await admin.create_topic("t", 1, 4)
    with pytest.raises(InvalidPartitionsError):
        await admin.create_topic("t", 0, 1)
    with pytest.raises(InvalidConfigError, match=re.escape("Unknown topic config name: no.such")):
        await admin.create_topic("t", 1, 1, {"no.such": "1"})
    assert await zk.get_all_topics_in_cluster() == {"metrics.cpu"}  # failed creations wrote nothing
    assert await zk.get_children(paths.config_entity_type_path(paths.ConfigType.TOPIC)) == ["metrics.cpu"]


async def test_explicit_assignment_validation(zk: KafkaZkClient, admin: TopicAdmin) -> None:
    with pytest.raises(InvalidReplicaAssignmentError, match="same number of replicas"):
        await admin.create_topic_with_assignment("t", {0: [1, 2], 1: [3]})
    with pytest.raises(InvalidReplicaAssignmentError, match="Duplicate replica assignment"):
        await admin.create_topic_with_assignment("t", {0: [1, 1]})
    with pytest.raises(InvalidReplicaAssignmentError, match="consecutive 0-based"):
        await admin.create_topic_with_assignment("t", {0: [1], 2: [2]})
    with pytest.raises(BrokerNotAvailableError, match="partition id 1 are not available"):
        await admin.create_topic_with_assignment("t", {0: [1, 2], 1: [2, 9]})
    await admin.create_topic_with_assignment("t", {0: [1, 9]}, check_brokers=False)  # Kafka's own behaviour
    await admin.create_topic_with_assignment("u", {0: [3, 1], 1: [1, 2]})
    assert await stored_assignment(zk, "u") == {0: [3, 1], 1: [1, 2]}


async def test_rack_aware_creation(make_client: MakeClient) -> None:
    zk = await make_client()
    await zk.create_top_level_paths()
    await register_brokers(zk, [1, 2, 3, 4], {1: "a", 2: "a", 3: "b", 4: "b"})
    admin = TopicAdmin(zk, random.Random(3))
    assignment = await admin.create_topic("racked", 8, 2)
    racks = {1: "a", 2: "a", 3: "b", 4: "b"}
    assert all({racks[r] for r in replicas} == {"a", "b"} for replicas in assignment.values())
    await register_brokers(zk, [5])  # no rack
    with pytest.raises(AdminOperationError, match="Not all brokers have rack information"):
        await admin.create_topic("mixed", 1, 1)
    await admin.create_topic("mixed", 1, 1, rack_aware_mode=RackAwareMode.SAFE)


async def test_add_partitions(zk: KafkaZkClient) -> None:
    admin = TopicAdmin(zk, random.Random(0), topic_id_rng=random.Random(0))
    await admin.create_topic_with_assignment("grow", {0: [2, 3], 1: [3, 1]})
    topic_id = (await zk.get_topic_assignments(["grow"])).values["grow"].topic_id
    full = await admin.add_partitions("grow", 5)
    # Kafka continues from partition 0's first replica (start index 1, shift 1) at partition id 2.
    assert full == {0: [2, 3], 1: [3, 1], 2: [1, 3], 3: [2, 3], 4: [3, 1]}
    assert await stored_assignment(zk, "grow") == full
    assert (await zk.get_topic_assignments(["grow"])).values["grow"].topic_id == topic_id
    full = await admin.add_partitions("grow", 6, [[1, 3]])
    assert full[5] == [1, 3]


async def test_add_partitions_errors(zk: KafkaZkClient, admin: TopicAdmin) -> None:
    await admin.create_topic_with_assignment("grow", {0: [1, 2], 1: [2, 3]})
    with pytest.raises(InvalidPartitionsError, match="currently has 2 partitions, 2 would not be an increase"):
        await admin.add_partitions("grow", 2)
    with pytest.raises(UnknownTopicError, match="does not exist"):
        await admin.add_partitions("nope", 3)
    with pytest.raises(InvalidReplicaAssignmentError, match="by 2 but 1 assignments provided"):
        await admin.add_partitions("grow", 4, [[1, 2]])
    with pytest.raises(InvalidReplicaAssignmentError, match="partition 0 has 2 while partitions \\[2\\]"):
        await admin.add_partitions("grow", 3, [[1]])
    with pytest.raises(BrokerNotAvailableError, match="available brokers: 1, 2, 3"):
        await admin.add_partitions("grow", 3, [[1, 7]])
    with pytest.raises(InvalidPartitionsError, match="internal topic"):
        await admin.add_partitions("__consumer_offsets", 3)
    assert await stored_assignment(zk, "grow") == {0: [1, 2], 1: [2, 3]}


async def test_delete_marks_topic(zk: KafkaZkClient, admin: TopicAdmin) -> None:
    await admin.create_topic("old", 1, 1)
    await admin.delete_topic("old")
    assert await zk.get_topic_deletions() == {"old"}
    with pytest.raises(TopicAlreadyMarkedForDeletionError, match="already marked for deletion"):
        await admin.delete_topic("old")
    with pytest.raises(UnknownTopicError, match="Topic `nope` to delete does not exist"):
        await admin.delete_topic("nope")
    with pytest.raises(InvalidTopicError, match="internal topic"):
        await admin.delete_topic("__consumer_offsets")
