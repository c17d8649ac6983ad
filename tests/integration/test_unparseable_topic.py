"""A topic znode that is not JSON (audit-controller-core finding 1): Kafka 2.8.2 reads it as a topic with no
partitions, so the topic stays known and ``kafka-topics --delete`` removes it. Ours reads it the same way,
reports it with its path and the parse error, and leaves the znode as it is."""

from __future__ import annotations

import logging

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory
from tests.integration.test_controller_cluster import create_topic, wait_for_states
from tests.integration.test_topic_deletion import start_topic, traces

from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.controller.states import PartitionState
from zkcontroller.model import TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

NOT_JSON = b"not json"
TP = TopicPartition("t", 0)


def _messages(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == level]


async def fail_over_onto(cluster: LocalCluster, admin: KafkaZkClient, first: KafkaController, topic: str,
                         data: bytes) -> KafkaController:
    """Write ``data`` over ``topic``'s znode, then stop the controller: the next one reads it at failover."""
    await admin.session.set_data(paths.topic_path(topic), data, -1)
    await cluster.stop_broker(first.controller_id)
    return await cluster.wait_for_controller(exclude=first.controller_id)


async def test_unparseable_topic_is_kept_reported_and_deletable(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    cluster = await make_cluster([1, 2, 3])
    first = await cluster.wait_for_controller()
    await start_topic(cluster, admin, "t")
    controller = await fail_over_onto(cluster, admin, first, "t", NOT_JSON)
    assert "t" in controller.context.all_topics and not controller.context.partitions_for_topic("t")
    assert any(f"{paths.topic_path('t')} as a topic with no partitions" in m and "invalid JSON" in m
               for m in _messages(caplog, logging.WARNING))
    found = await admin.session.get_data(paths.topic_path("t"))
    assert found[0] == NOT_JSON  # not rewritten with a topic id

    await admin.create_delete_topic_path("t")

    async def deleted() -> bool:
        return not await traces(admin, "t")

    await wait_until(deleted, timeout_s=30.0, what="the topic znode, its config and the marker deleted")
    # logged once the controller's deletes have returned: after the test's own session may see them done
    await wait_until(lambda: any(m.endswith("Deletion of topic t successfully completed")
                                 for m in _messages(caplog, logging.INFO)), what="the controller's completion line")
    assert not await admin.path_exists(paths.topic_partitions_path("t"))
    assert any(m.endswith("Deletion of topic t successfully completed") for m in _messages(caplog, logging.INFO))
    assert not any("Ignoring request to delete non-existing topics" in m for m in _messages(caplog, logging.WARNING))


@pytest.mark.parametrize("corrupt", [NOT_JSON, b'{"version":3,"partitions":"nope"}'], ids=["not-json", "wrong-shape"])
async def test_repaired_topic_loads_its_existing_partition_states(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture, corrupt: bytes
) -> None:
    """The audit's observation: a topic whose znode a failover could not use (read as empty, or skipped), then
    repaired by hand, has partitions with state znodes. They are loaded as a failover loads them, not created
    anew (NODEEXISTS), so the partition is served and acted on when one of its brokers stops."""
    caplog.set_level(logging.INFO)
    cluster = await make_cluster([1, 2, 3, 4])
    first = await cluster.wait_for_controller()
    others = [b for b in (1, 2, 3, 4) if b != first.controller_id]
    await create_topic(admin, "t", {0: [others[0], others[1], first.controller_id]})
    await wait_for_states(admin, "t", 1, lambda s: len(s[0].leader_and_isr.isr) == 3, "t-0 fully in sync")
    original = (await admin.session.get_data(paths.topic_path("t")))[0]
    controller = await fail_over_onto(cluster, admin, first, "t", corrupt)
    assert not controller.context.partitions_for_topic("t")

    await admin.session.set_data(paths.topic_path("t"), original, -1)
    await wait_until(lambda: controller.context.partition_leader_and_isr(TP) is not None, what="t-0's state loaded")
    # the loading event's later steps (replica and partition state changes) may still be running with the queue
    # empty: the errors looked for below would come from them
    await wait_until(lambda: controller.event_manager.queue_size == 0 and controller.event_manager.state.name == "IDLE",
                     what="the controller idle")
    assert not any("NodeExists" in r.getMessage() or "failed to change state" in r.getMessage()
                   for r in caplog.records if r.levelno >= logging.ERROR)
    assert controller.context.partition_states[TP] is PartitionState.ONLINE
    lai = controller.context.partition_leader_and_isr(TP)
    assert lai is not None and lai.leader == others[0]

    # the leader stops (a re-election), or, if it is the controller, a follower (an ISR removal)
    victim = others[0] if others[0] != controller.controller_id else others[1]
    await cluster.stop_broker(victim)
    await wait_for_states(admin, "t", 1, lambda s: s[0].leader_and_isr.leader not in (-1, victim)
                          and victim not in s[0].leader_and_isr.isr, f"t-0 acted on broker {victim} stopping")
