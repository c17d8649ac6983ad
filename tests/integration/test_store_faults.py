"""What the controller does with store contents it cannot use (issue 10's "what a new user hits"), on both
backends: a topic id that two topics share, an unreadable ``/controller_epoch``, and ``/controller`` overwritten
by another client. Each is reported with its path and the cluster keeps (or gets back) a working controller."""

from __future__ import annotations

import logging

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory
from tests.integration.test_controller_cluster import create_topic, partition_states, wait_for_states

from zkcontroller.model import ReplicaAssignment, TopicId, TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import ControllerZNode, TopicZNode


async def epoch(admin: KafkaZkClient) -> int:
    found = await admin.get_controller_epoch()
    assert found is not None
    return found[0]


async def test_a_duplicate_topic_id_is_reported_and_skipped_without_an_election_storm(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="kafka.controller")
    cluster = await make_cluster([1, 2])
    await cluster.wait_for_controller()
    shared = TopicId.from_string("AAAAAAAAQACAAAAAAAAAAQ")
    for topic in ("alpha", "beta"):
        assignment = {TopicPartition(topic, 0): ReplicaAssignment((1, 2))}
        await admin.session.create(paths.topic_path(topic), TopicZNode.encode(shared, assignment))
    await wait_for_states(admin, "alpha", 1, lambda s: True, "alpha served")
    # A failover loads the same contents: it must succeed too, once, not loop.
    before = await epoch(admin)
    old = cluster.active_controller()
    assert old is not None
    await cluster.stop_broker(old.controller_id)
    new = await cluster.wait_for_controller(exclude=old.controller_id)
    assert new.context.topic_ids == {"alpha": shared}
    assert "beta" not in new.context.all_topics
    assert await partition_states(admin, "beta", 1) == {}
    assert await epoch(admin) == before + 1
    reports = [r.getMessage() for r in caplog.records if "/brokers/topics/beta" in r.getMessage()]
    assert reports and "already the id of topic alpha" in reports[0]


async def test_an_unreadable_controller_epoch_is_reported_and_election_resumes_when_fixed(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="kafka.controller")
    await admin.create_top_level_paths()
    await admin.session.create(paths.CONTROLLER_EPOCH, b"not-a-number")
    cluster = await make_cluster([1, 2])
    await wait_until(
        lambda: any("not-a-number" in r.getMessage() and paths.CONTROLLER_EPOCH in r.getMessage()
                    for r in caplog.records),
        what="the bad /controller_epoch reported with its value")
    assert cluster.active_controller() is None
    await admin.session.set_data(paths.CONTROLLER_EPOCH, b"7", -1)
    controller = await cluster.wait_for_controller(timeout_s=30)
    assert controller.context.epoch == 8


async def test_controller_znode_overwritten_by_another_client_is_deleted_by_its_owner(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="kafka.controller")
    cluster = await make_cluster([1, 2, 3])
    first = await cluster.wait_for_controller()
    first_epoch = first.context.epoch
    foreign = next(b for b in (1, 2, 3) if b != first.controller_id)
    await admin.session.set_data(paths.CONTROLLER, ControllerZNode.encode(foreign, 0), -1)
    second = await cluster.wait_for_controller(min_epoch=first_epoch + 1, timeout_s=30)
    assert await admin.get_controller_id() == second.controller_id
    assert sum(1 for s in cluster.running_brokers() if s.controller and s.controller.is_active) == 1
    assert any("written by another client" in r.getMessage() for r in caplog.records)
    await create_topic(admin, "after", {0: [1, 2]})
    await wait_for_states(admin, "after", 1, lambda s: True, "the new controller serves topics")
