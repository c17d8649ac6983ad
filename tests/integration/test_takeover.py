"""Taking over a ZooKeeper that a Kafka 2.x cluster left behind, and living with malformed registrations."""

from __future__ import annotations

import json
import random

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory, recording_transport
from tests.integration.test_controller_cluster import create_topic, wait_for_states

from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.coordination.api import CreateMode
from zkcontroller.model import ReplicaAssignment, TopicId, TopicPartition
from zkcontroller.protocol.control_requests import LeaderAndIsrRequest, UpdateMetadataRequest
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

LEGACY_TOPIC = b'{"version":2,"partitions":{"2":[1],"1":[1],"0":[1]},"adding_replicas":{},"removing_replicas":{}}'
"""A topic znode as Kafka 2.7 writes it: version 2, no topic id."""


async def write_kafka_2x_leftovers(admin: KafkaZkClient) -> None:
    """What a Kafka 2.7 cluster leaves: epoch 7, a version-2 topic without id, states by that controller."""
    s = admin.session
    await admin.create_top_level_paths()
    await s.create("/controller_epoch", b"0")
    await s.set_data("/controller_epoch", b"7")
    await s.create("/brokers/topics/legacy", LEGACY_TOPIC)
    await s.ensure_path("/brokers/topics/legacy/partitions/0")
    await s.ensure_path("/brokers/topics/legacy/partitions/1")
    await s.create(
        "/brokers/topics/legacy/partitions/0/state",
        b'{"controller_epoch":7,"leader":1,"version":1,"leader_epoch":3,"isr":[1]}',
    )
    await s.create(
        "/brokers/topics/legacy/partitions/1/state",
        b'{"isr":[1],"leader_epoch":5,"leader":1,"version":1,"controller_epoch":6}',
    )
    # partition 2 never got a state (the old controller died before initialising it)


async def test_takes_over_a_kafka_2x_zookeeper(make_cluster: ClusterFactory, admin: KafkaZkClient) -> None:
    await write_kafka_2x_leftovers(admin)
    cluster = await make_cluster([1, 2])
    controller = await cluster.wait_for_controller()
    assert controller.context.epoch == 8
    states = await wait_for_states(admin, "legacy", 3, lambda s: True, "every partition has a state")
    assert (states[0].leader_and_isr.leader, states[0].leader_and_isr.leader_epoch) == (1, 3)
    assert states[0].controller_epoch == 7  # untouched: its leader is alive
    assert (states[1].leader_and_isr.leader, states[1].leader_and_isr.leader_epoch) == (1, 5)
    assert states[1].controller_epoch == 6
    assert (states[2].leader_and_isr.leader, states[2].leader_and_isr.leader_epoch) == (1, 0)
    assert states[2].controller_epoch == 8
    topic = (await admin.get_topic_assignments(["legacy"])).values["legacy"]
    assert topic.topic_id is not None  # IBP 2.8: the new controller gave the topic an id
    assert controller.context.topic_ids["legacy"] == topic.topic_id


async def wait_told(cluster: LocalCluster, broker_id: int, tp: TopicPartition) -> None:
    """Until ``broker_id`` has answered a LeaderAndIsr for ``tp``: the requests are delivered after the
    controller's ZooKeeper writes return, so a test that saw the state in ZooKeeper cannot count them yet."""
    transport = recording_transport(cluster)
    await wait_until(lambda: any(ps.topic_partition == tp for r in transport.requests_to(broker_id, LeaderAndIsrRequest)
                                 for ps in r.partition_states),  # type: ignore[union-attr]
                     what=f"broker {broker_id} told of {tp}")


def topic_ids_sent(cluster: LocalCluster) -> set[tuple[str, TopicId | None]]:
    transport = recording_transport(cluster)
    return {ids for _, r in transport.delivered if isinstance(r, LeaderAndIsrRequest | UpdateMetadataRequest)
            for ids in r.topic_ids}


async def test_an_ibp_without_topic_ids_leaves_a_version_2_topic_alone(make_cluster: ClusterFactory,
                                                                       admin: KafkaZkClient) -> None:
    """IBP 2.7-IV1 (< 2.8-IV0, Kafka's usesTopicId): no id is created, the znode is not rewritten, and a topic
    created afterwards gets none either; an id already in ZooKeeper is kept in the context (Kafka keeps it for
    reassignments) but LeaderAndIsr v4 / UpdateMetadata v6 have no field to carry it."""
    await write_kafka_2x_leftovers(admin)
    known = TopicId.generate(random.Random(7))
    await admin.create_topic_assignment("with-id", known, {TopicPartition("with-id", 0): ReplicaAssignment((1,))})
    cluster = await make_cluster([1, 2], inter_broker_protocol_version="2.7-IV1")
    controller = await cluster.wait_for_controller()
    await wait_for_states(admin, "legacy", 3, lambda s: True, "every partition has a state")
    await create_topic(admin, "fresh", {0: [2]})
    await wait_for_states(admin, "fresh", 1, lambda s: True, "the new topic has a state")
    data, stat = await admin.session.get_data("/brokers/topics/legacy")
    assert (data, stat.version) == (LEGACY_TOPIC, 0)
    assert (await admin.get_topic_assignments(["fresh"])).values["fresh"].topic_id is None
    assert (await admin.session.get_data("/brokers/topics/with-id"))[1].version == 0
    assert controller.context.topic_ids == {"with-id": known}
    await wait_told(cluster, 2, TopicPartition("fresh", 0))
    assert topic_ids_sent(cluster) == set()


@pytest.mark.parametrize(("ibp", "sent"), [("2.8-IV0", False), ("2.8", True)])
async def test_an_ibp_with_topic_ids_gives_the_topic_one(make_cluster: ClusterFactory, admin: KafkaZkClient,
                                                         ibp: str, sent: bool) -> None:
    """From 2.8-IV0 the controller writes an id into the version-2 znode; brokers get it from 2.8-IV1 on."""
    await write_kafka_2x_leftovers(admin)
    cluster = await make_cluster([1, 2], inter_broker_protocol_version=ibp)
    controller = await cluster.wait_for_controller()
    await wait_for_states(admin, "legacy", 3, lambda s: True, "every partition has a state")
    topic = (await admin.get_topic_assignments(["legacy"])).values["legacy"]
    assert topic.topic_id is not None and controller.context.topic_ids == {"legacy": topic.topic_id}
    assert (await admin.session.get_data("/brokers/topics/legacy"))[1].version == 1
    await wait_told(cluster, 1, TopicPartition("legacy", 2))  # the partition the failover gave a state
    assert topic_ids_sent(cluster) == ({("legacy", topic.topic_id)} if sent else set())


async def test_malformed_broker_registration_is_skipped(make_cluster: ClusterFactory, admin: KafkaZkClient) -> None:
    cluster = await make_cluster([1, 2])
    controller = await cluster.wait_for_controller()
    await admin.session.create("/brokers/ids/9", b"{not json", CreateMode.EPHEMERAL)
    await create_topic(admin, "after", {0: [1, 2], 1: [2, 1]})
    states = await wait_for_states(admin, "after", 2, lambda s: True, "the topic served")
    assert {states[0].leader_and_isr.leader, states[1].leader_and_isr.leader} == {1, 2}
    assert 9 not in controller.context.live_or_shutting_down_broker_ids
    # cached once the controller's ZooKeeper write has returned, after the admin may see the states
    await wait_until(lambda: TopicPartition("after", 1) in controller.context.partitions_with_leaders,
                     what="after-1's leader in the controller's context")


@pytest.mark.parametrize(("ibp", "version"), [("2.6", 4), ("2.7-IV0", 5), ("2.8", 5)])
async def test_brokers_register_with_the_json_version_of_their_ibp(
        make_cluster: ClusterFactory, admin: KafkaZkClient, ibp: str, version: int) -> None:
    """ZkData's BrokerInfo.apply: version 5 (features) from 2.7-IV0, else 4, readable by older brokers."""
    cluster = await make_cluster([1], inter_broker_protocol_version=ibp)
    await cluster.wait_for_controller()
    data, _ = await admin.session.get_data("/brokers/ids/1")
    assert json.loads(data)["version"] == version
