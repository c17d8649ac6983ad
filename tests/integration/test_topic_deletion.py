"""Topic deletion (spec §9.6) in a whole cluster, on the embedded store and on a real ZooKeeper.

Assertions are on what ZooKeeper holds, on what every broker hosts and lists in its metadata, and on the
StopReplica requests brokers actually handled.
"""

from __future__ import annotations

import json
import logging
import random

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory, recording_transport
from tests.integration.test_controller_cluster import create_topic, wait_for_states

from zkcontroller.admin.describe import describe_lines, describe_topics
from zkcontroller.admin.errors import TopicExistsError
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.protocol.control_requests import StopReplicaRequest
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


async def traces(admin: KafkaZkClient, topic: str) -> list[str]:
    """Every ZooKeeper path that still mentions the topic."""
    candidates = [paths.topic_path(topic), paths.delete_topic_path(topic), paths.topic_config_path(topic)]
    return [p for p in candidates if await admin.path_exists(p)]


def brokers_listing(cluster: LocalCluster, topic: str) -> list[int]:
    return [s.broker_id for s in cluster.running_brokers()
            if s.control_plane.metadata_cache.contains_topic(topic)
            or any(tp.topic == topic for tp in s.control_plane.partitions)]


async def wait_gone(cluster: LocalCluster, admin: KafkaZkClient, topic: str) -> None:
    async def gone() -> bool:
        return not await traces(admin, topic) and not brokers_listing(cluster, topic)

    await wait_until(gone, timeout_s=30.0, what=f"every trace of {topic} gone", poll_s=0.02)


async def start_topic(cluster: LocalCluster, admin: KafkaZkClient, topic: str) -> None:
    await create_topic(admin, topic, {0: [1, 2, 3], 1: [2, 3, 1]})
    await admin.set_or_create_entity_configs("topics", topic, {"retention.ms": "1000"})
    await wait_for_states(admin, topic, 2, lambda s: True, f"partition states of {topic}")
    await wait_until(lambda: len(brokers_listing(cluster, topic)) == len(cluster.running_brokers()),
                     what=f"{topic} in every broker's metadata")


async def halted_deletion(make_cluster: ClusterFactory, admin: KafkaZkClient
                          ) -> tuple[LocalCluster, KafkaController, int]:
    """Brokers 1 to 3 and "doomed" on all of them; a broker other than the controller (the victim) stops, then
    "doomed" is marked for deletion, which halts on the victim's replicas (and stays queued while it is down).
    Returns the cluster, its controller and the victim."""
    cluster = await make_cluster([1, 2, 3])
    controller = await cluster.wait_for_controller()
    victim = 3 if controller.controller_id != 3 else 2
    await start_topic(cluster, admin, "doomed")
    await halt_deletion(cluster, controller, admin, victim)
    return cluster, controller, victim


async def halt_deletion(cluster: LocalCluster, controller: KafkaController, admin: KafkaZkClient,
                        victim: int) -> None:
    """Stops broker ``victim``, then marks "doomed" for deletion and waits until ``controller`` has halted it
    on the victim's replicas."""
    await cluster.stop_broker(victim)
    await wait_until(lambda: victim not in controller.context.live_broker_ids, what="victim seen offline")
    await admin.create_delete_topic_path("doomed")
    await wait_until(lambda: "doomed" in controller.context.topics_ineligible_for_deletion,
                     what="deletion halted on the offline replica")


def deletion_phases(make_cluster: ClusterFactory, topic: str) -> list[str]:
    """The phases of ``topic``'s deletion in the event log of the clusters ``make_cluster`` made, in order."""
    return [r["phase"] for r in map(json.loads, make_cluster.records)  # type: ignore[attr-defined]
            if r["type"] == "topic_deletion" and r["topic"] == topic]


def expire_now(cluster: LocalCluster) -> None:
    """A killed broker's session ends at once on the embedded store (its clock moves past the timeout)."""
    if isinstance(cluster.backend, EmbeddedBackend):
        cluster.backend.server.clock.advance(6000)  # type: ignore[attr-defined]
        cluster.backend.server.tick()


async def test_deleting_a_topic_with_all_brokers_up_removes_every_trace(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    cluster = await make_cluster([1, 2, 3])
    controller = await cluster.wait_for_controller()
    await start_topic(cluster, admin, "doomed")
    await create_topic(admin, "kept", {0: [1, 2]})
    await wait_for_states(admin, "kept", 1, lambda s: True, "kept online")

    await admin.create_delete_topic_path("doomed")
    await wait_gone(cluster, admin, "doomed")
    # On a real ZooKeeper the test's own session can see the marker gone before the controller's session has
    # the answer to its delete (each connection has its own kazoo thread): the controller finishes (forgets the
    # topic, records "completed") a moment later, so wait for that record before looking at its state.
    await wait_until(lambda: "completed" in deletion_phases(make_cluster, "doomed"),
                     what="the controller to record the deletion completed")

    transport = recording_transport(cluster)
    for broker_id in (1, 2, 3):
        deleted = {(s.topic, s.partition, s.leader_epoch) for r in transport.requests_to(broker_id, StopReplicaRequest)
                   for s in r.partition_states if s.delete_partition}  # type: ignore[union-attr]
        assert deleted == {("doomed", 0, -2), ("doomed", 1, -2)}
    context = controller.context
    assert "doomed" not in context.all_topics and "doomed" not in context.topics_to_be_deleted
    assert not any(tp.topic == "doomed" for tp in context.partition_states)
    assert not any(r.topic_partition.topic == "doomed" for r in context.replica_states)
    assert await admin.get_all_topics_in_cluster() == {"kept"}
    assert "kept" in controller.context.all_topics
    assert deletion_phases(make_cluster, "doomed") == ["queued", "started", "completed"]


async def test_deletion_waits_for_an_offline_replica_and_completes_when_it_returns(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    cluster, controller, victim = await halted_deletion(make_cluster, admin)
    assert await admin.path_exists(paths.topic_path("doomed"))
    assert await admin.path_exists(paths.delete_topic_path("doomed"))
    assert "doomed" in controller.context.topics_to_be_deleted

    await cluster.start_broker(victim)
    await wait_gone(cluster, admin, "doomed")


async def test_a_controller_failover_during_a_halted_deletion_does_not_lose_it(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    cluster = await make_cluster([1, 2, 3, 4])
    first = await cluster.wait_for_controller()
    replicas = [b for b in (1, 2, 3, 4) if b != first.controller_id]
    await create_topic(admin, "doomed", {0: replicas[:2], 1: replicas[1:]})
    await wait_for_states(admin, "doomed", 2, lambda s: True, "doomed online")
    victim = replicas[2]
    await halt_deletion(cluster, first, admin, victim)

    await cluster.crash_broker(first.controller_id)
    expire_now(cluster)
    second = await cluster.wait_for_controller(exclude=first.controller_id)
    await wait_until(lambda: "doomed" in second.context.topics_ineligible_for_deletion,
                     what="the new controller holds the deletion, halted")
    assert await admin.path_exists(paths.topic_path("doomed"))

    await cluster.start_broker(victim)
    await wait_gone(cluster, admin, "doomed")


async def test_delete_topic_disabled_removes_the_marker_and_keeps_the_topic(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    await admin.create_delete_topic_path("early")  # found at failover: Kafka's init removes it
    cluster = await make_cluster([1, 2], delete_topic_enable=False)
    await cluster.wait_for_controller()
    await create_topic(admin, "kept", {0: [1, 2]})
    await wait_for_states(admin, "kept", 1, lambda s: True, "kept online")
    await admin.create_delete_topic_path("kept")

    async def marker_gone() -> bool:
        return not await admin.path_exists(paths.delete_topic_path("kept"))

    await wait_until(marker_gone, what="the deletion marker removed")
    assert await admin.path_exists(paths.topic_path("kept"))
    assert len((await admin.get_topic_partition_states([TopicPartition("kept", 0)])).values) == 1
    assert not await admin.path_exists(paths.delete_topic_path("early"))

    def removing(what: str) -> bool:
        return any(r.getMessage().endswith(f"Removing {what} since delete topic is disabled") for r in caplog.records)

    # the marker's own deletion fires the watch again, and Kafka logs the (now empty) set too
    await wait_until(lambda: removing("Set(early)") and removing("Set(kept)") and removing("Set()"),
                     what="Kafka's three 'Removing ... since delete topic is disabled' lines")


async def test_a_marker_of_a_vanished_topic_is_completed_at_failover_config_included(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    """What a controller that moved between deleting a topic znode and its config leaves: Kafka's init queues
    the marker with the others, and ``completeDeleteTopic`` deletes the config and the marker (the config used
    to stay, under a warning that the topic did not exist)."""
    await admin.set_or_create_entity_configs("topics", "ghost", {"retention.ms": "1000"})
    await admin.create_delete_topic_path("ghost")
    caplog.set_level(logging.INFO)
    cluster = await make_cluster([1, 2])
    await cluster.wait_for_controller()

    async def nothing_left() -> bool:
        return not await traces(admin, "ghost")

    await wait_until(nothing_left, what="the marker and the config of the vanished topic deleted")
    # logged once the controller's deletes have returned: after the test's own session may see them done
    await wait_until(lambda: any(r.getMessage().endswith("Deletion of topic ghost successfully completed")
                                 for r in caplog.records), what="the controller's completion line")
    lines = [r.getMessage() for r in caplog.records]
    # the ineligible topics are a mutable.HashSet (a union of the context's mutable sets), printed so when empty
    assert any("Initializing manager with initial deletions: Set(ghost), initial ineligible deletions: HashSet()"
               in m for m in lines), lines
    assert any(m.endswith("Deletion of topic ghost successfully completed") for m in lines)
    assert not any("non-existing" in m for m in lines)


async def test_partitions_added_to_a_topic_being_deleted_are_undone(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    _cluster, controller, _victim = await halted_deletion(make_cluster, admin)  # halted while partitions are added

    read = await admin.get_topic_assignments(["doomed"])
    current = read.values["doomed"]
    grown = dict(current.assignment) | {TopicPartition("doomed", 2): ReplicaAssignment((1, 2))}
    epoch_zk_version = (await admin.get_controller_epoch())[1].version  # type: ignore[index]
    await admin.set_topic_assignment("doomed", current.topic_id, grown, epoch_zk_version)

    async def restored() -> bool:
        now = (await admin.get_topic_assignments(["doomed"])).values["doomed"]
        return set(now.assignment) == {TopicPartition("doomed", 0), TopicPartition("doomed", 1)}

    await wait_until(restored, what="added partition undone in the topic znode")
    assert TopicPartition("doomed", 2) not in controller.context.all_partitions


async def test_creating_a_topic_queued_for_deletion_is_refused(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    """Its znode is still there: Kafka 2.8.2's ``validateTopicCreate`` says it already exists (it has no check of
    the deletion queue; "is marked for deletion" is only ``kafka-topics --delete``'s and ``--describe``'s)."""
    await halted_deletion(make_cluster, admin)  # the deletion stays queued
    with pytest.raises(TopicExistsError, match=r"^Topic 'doomed' already exists\.$"):
        await TopicAdmin(admin, random.Random(1)).create_topic_with_assignment("doomed", {0: [1, 2]}, {})
    lines = describe_lines(await describe_topics(admin, ["doomed"]), [1, 2, 3])
    assert any("MarkedForDeletion: true" in line for line in lines)
