"""TopicChange removes the deleted topics before it admits the new ones, as Kafka's ``processTopicChange``
(audit-controller-core finding 5): a new topic may carry the id of a topic deleted by hand in the same change."""

from __future__ import annotations

import random

from tests.helpers import wait_until
from tests.unit.controller.standalone import RecordingRuntime, standalone_controller

from zkcontroller.coordination.api import CreateOp, DeleteOp
from zkcontroller.model import ReplicaAssignment, TopicId, TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.znodes import TopicZNode


async def test_new_topic_may_take_the_id_of_a_topic_deleted_in_the_same_change() -> None:
    controller, zk = await standalone_controller(RecordingRuntime(), auto_leader_rebalance_enable=False)
    try:
        controller.startup()
        await wait_until(lambda: controller.is_active, what="the controller active")
        shared = TopicId.generate(random.Random(7))
        # on broker 2, which is not running: no partition state znode is created under the topic
        await zk.create_topic_assignment("old", shared, {TopicPartition("old", 0): ReplicaAssignment((2,))})
        context = controller.context
        await wait_until(lambda: context.topic_ids.get("old") == shared, what="old known with its id")

        new_assignment = {TopicPartition("new", 0): ReplicaAssignment((2,))}
        result = await zk.session.multi([DeleteOp(paths.topic_path("old")),
                                         CreateOp(paths.topic_path("new"), TopicZNode.encode(shared, new_assignment))])
        assert result.ok

        await wait_until(lambda: "new" in context.all_topics, what="new admitted")
        assert "old" not in context.all_topics
        assert context.topic_ids == {"new": shared}
        assert context.topic_names == {shared: "new"}
    finally:
        await controller.shutdown()
