"""A topic znode with no data at all: Jackson reads it as ``MissingNode``, on which Kafka 2.8.2's
``TopicZNode.decode`` throws (``Expected JSON object, received ``). Kafka's controller then fails the failover
("Error while electing or becoming controller ... Trigger controller movement immediately", so the controllership
moves on and on) or the TopicChange event (the other new topics of that event are lost). Ours keeps running: the
topic is left out with an ERROR naming its znode, as a topic znode of the wrong shape is, and the other topics are
served; the znode is not rewritten (an empty assignment with a new topic id was written over it before)."""

from __future__ import annotations

import logging

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory
from tests.integration.test_controller_cluster import create_topic, wait_for_states
from tests.integration.test_topic_deletion import start_topic
from tests.integration.test_unparseable_topic import fail_over_onto

from zkcontroller.model import TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

SKIPPED = ("Skipping topic with malformed assignment at /brokers/topics/empty: no JSON value (0 bytes of data): "
           "expected a JSON object")


def _skipped(caplog: pytest.LogCaptureFixture) -> bool:
    return any(r.getMessage().endswith(SKIPPED) for r in caplog.records if r.levelno == logging.ERROR)


async def test_failover_skips_an_empty_topic_znode_and_serves_the_rest(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    cluster = await make_cluster([1, 2, 3])
    first = await cluster.wait_for_controller()
    await start_topic(cluster, admin, "empty")
    await start_topic(cluster, admin, "good")
    controller = await fail_over_onto(cluster, admin, first, "empty", b"")
    assert "empty" not in controller.context.all_topics
    assert controller.context.partitions_for_topic("good")
    assert _skipped(caplog)
    assert (await admin.session.get_data(paths.topic_path("empty")))[0] == b""  # left for the operator


async def test_topic_change_skips_an_empty_topic_znode_and_admits_the_others(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    cluster = await make_cluster([1, 2, 3])
    controller = await cluster.wait_for_controller()
    await admin.session.create(paths.topic_path("empty"), b"")
    await create_topic(admin, "good", {0: [1, 2, 3]})
    await wait_for_states(admin, "good", 1, lambda s: s[0].leader_and_isr.leader != -1, "good-0 led")
    await wait_until(lambda: _skipped(caplog), what="the empty topic znode reported")
    # the controller caches good-0's leadership once its ZooKeeper write has returned, after the admin may see it
    await wait_until(lambda: controller.context.partition_leader_and_isr(TopicPartition("good", 0)) is not None,
                     what="good-0's leadership in the controller's context")
    assert "empty" not in controller.context.all_topics
    assert (await admin.session.get_data(paths.topic_path("empty")))[0] == b""


async def test_a_malformed_topic_znode_is_reported_once_per_write(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    """The topic stays out of all_topics so that a repair is picked up, so every TopicChange reads it again: each
    later create logged the same ERROR for it. Now once per write of its znode; a repair is picked up as before."""
    caplog.set_level(logging.INFO)
    cluster = await make_cluster([1, 2, 3])
    controller = await cluster.wait_for_controller()

    def reports() -> int:
        return sum(r.getMessage().endswith(SKIPPED) for r in caplog.records if r.levelno == logging.ERROR)

    def topic_changes() -> int:
        return sum("New topics: [" in r.getMessage() for r in caplog.records)

    await admin.session.create(paths.topic_path("empty"), b"")
    await wait_until(lambda: reports() == 1, what="the empty topic znode reported")
    for i, topic in enumerate(["good1", "good2"]):
        seen = topic_changes()
        await create_topic(admin, topic, {0: [1, 2, 3]})
        await wait_until(lambda: topic_changes() > seen, what=f"the TopicChange of {topic}")  # noqa: B023
        assert reports() == 1, i
    await admin.session.set_data(paths.topic_path("empty"), b"")  # rewritten, still malformed: reported again
    await wait_until(lambda: reports() == 2, what="the rewrite reported")
    seen = topic_changes()
    await create_topic(admin, "good3", {0: [1, 2, 3]})
    await wait_until(lambda: topic_changes() > seen, what="the TopicChange of good3")
    assert reports() == 2
    await admin.session.set_data(paths.topic_path("empty"), b'{"version":1,"partitions":{"0":[1,2,3]}}')
    await wait_until(lambda: "empty" in controller.context.all_topics, what="the repaired topic admitted")
    await wait_for_states(admin, "empty", 1, lambda s: s[0].leader_and_isr.leader != -1, "empty-0 led")
    assert reports() == 2
