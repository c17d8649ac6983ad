"""Taking over a ZooKeeper that a Kafka 2.x cluster left behind, and living with malformed registrations."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from tests.integration.conftest import ClusterFactory
from tests.integration.test_controller_cluster import create_topic, wait_for_states

from zkcontroller.coordination.api import CreateMode
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.model import TopicPartition
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


@pytest.fixture
async def admin(backend: CoordinationBackend) -> AsyncIterator[KafkaZkClient]:
    session = await backend.new_session()
    yield KafkaZkClient(session, wall_clock_ms)
    await session.close()


async def write_kafka_2x_leftovers(admin: KafkaZkClient) -> None:
    """What a Kafka 2.7 cluster leaves: epoch 7, a version-2 topic without id, states by that controller."""
    s = admin.session
    await admin.create_top_level_paths()
    await s.create("/controller_epoch", b"0")
    await s.set_data("/controller_epoch", b"7")
    await s.create(
        "/brokers/topics/legacy",
        b'{"version":2,"partitions":{"2":[1],"1":[1],"0":[1]},"adding_replicas":{},"removing_replicas":{}}',
    )
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


async def test_malformed_broker_registration_is_skipped(make_cluster: ClusterFactory, admin: KafkaZkClient) -> None:
    cluster = await make_cluster([1, 2])
    controller = await cluster.wait_for_controller()
    await admin.session.create("/brokers/ids/9", b"{not json", CreateMode.EPHEMERAL)
    await create_topic(admin, "after", {0: [1, 2], 1: [2, 1]})
    states = await wait_for_states(admin, "after", 2, lambda s: True, "the topic served")
    assert {states[0].leader_and_isr.leader, states[1].leader_and_isr.leader} == {1, 2}
    assert 9 not in controller.context.live_or_shutting_down_broker_ids
    assert TopicPartition("after", 1) in controller.context.partitions_with_leaders
