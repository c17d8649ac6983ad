"""Retrying a halted deletion, as Kafka 2.8's ``retryDeletionForIneligibleReplicas``: the failed replicas of all
the topics to retry go back to OfflineReplica in one state change (one request batch, so one StopReplica per
broker), under one DEBUG line (audit deletion-reassign F4)."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.states import PartitionAndReplica, ReplicaState
from zkcontroller.controller.topic_deletion import TopicDeletionManager
from zkcontroller.model import ReplicaAssignment, TopicPartition


class RecordingStateMachine:
    def __init__(self) -> None:
        self.calls: list[tuple[list[PartitionAndReplica], ReplicaState]] = []

    async def handle_state_changes(self, replicas: Any, target: ReplicaState) -> None:
        self.calls.append((list(replicas), target))


async def test_failed_replicas_of_all_topics_are_retried_in_one_batch(caplog: pytest.LogCaptureFixture) -> None:
    context = ControllerContext()
    context.set_all_topics(["a", "b"])
    failed = []
    for topic in ("a", "b"):
        tp = TopicPartition(topic, 0)
        context.update_partition_full_replica_assignment(tp, ReplicaAssignment((1, 2)))
        context.put_replica_state(PartitionAndReplica(tp, 1), ReplicaState.DELETION_INELIGIBLE)
        context.put_replica_state(PartitionAndReplica(tp, 2), ReplicaState.DELETION_SUCCESSFUL)
        failed.append(PartitionAndReplica(tp, 1))
    context.queue_topic_deletion(["a", "b"])
    context.topics_ineligible_for_deletion |= {"a", "b"}  # halted: no new attempt starts here
    rsm = RecordingStateMachine()
    core = SimpleNamespace(context=context, config=SimpleNamespace(delete_topic_enable=True, broker_id=1),
                           replica_state_machine=rsm, emit=lambda *a, **k: None)
    manager = TopicDeletionManager(core)  # type: ignore[arg-type]

    with caplog.at_level(logging.DEBUG, logger="kafka.controller.TopicDeletionManager"):
        await manager.resume_deletions()

    assert rsm.calls == [(failed, ReplicaState.OFFLINE)]
    retry_lines = [r.getMessage() for r in caplog.records if "Retrying deletion" in r.getMessage()]
    assert retry_lines == [
        "[Topic Deletion Manager 1] Retrying deletion of topics a,b since replicas "
        "[Topic=a,Partition=0,Replica=1],[Topic=b,Partition=0,Replica=1] were not successfully deleted"]
    assert all(r.levelno == logging.DEBUG for r in caplog.records if "Retrying deletion" in r.getMessage())
