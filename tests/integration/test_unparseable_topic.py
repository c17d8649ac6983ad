"""A topic znode that is not JSON (audit-controller-core finding 1): Kafka 2.8.2 reads it as a topic with no
partitions, so the topic stays known and ``kafka-topics --delete`` removes it. Ours reads it the same way,
reports it with its path and the parse error, and leaves the znode as it is."""

from __future__ import annotations

import logging

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory
from tests.integration.test_topic_deletion import start_topic, traces

from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

NOT_JSON = b"not json"


def _messages(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == level]


async def test_unparseable_topic_is_kept_reported_and_deletable(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    cluster = await make_cluster([1, 2, 3])
    first = await cluster.wait_for_controller()
    await start_topic(cluster, admin, "t")
    await admin.session.set_data(paths.topic_path("t"), NOT_JSON, -1)

    await cluster.stop_broker(first.controller_id)  # the next controller reads it at failover
    controller = await cluster.wait_for_controller(exclude=first.controller_id)
    assert "t" in controller.context.all_topics and not controller.context.partitions_for_topic("t")
    assert any(f"{paths.topic_path('t')} as a topic with no partitions" in m and "invalid JSON" in m
               for m in _messages(caplog, logging.WARNING))
    found = await admin.session.get_data(paths.topic_path("t"))
    assert found[0] == NOT_JSON  # not rewritten with a topic id

    await admin.create_delete_topic_path("t")

    async def deleted() -> bool:
        return not await traces(admin, "t")

    await wait_until(deleted, timeout_s=30.0, what="the topic znode, its config and the marker deleted")
    assert not await admin.path_exists(paths.topic_partitions_path("t"))
    assert any(m.endswith("Deletion of topic t successfully completed") for m in _messages(caplog, logging.INFO))
    assert not any("Ignoring request to delete non-existing topics" in m for m in _messages(caplog, logging.WARNING))
