"""Which StopReplica answers reach topic deletion, as Kafka 2.8's ``ControllerChannelManager`` callback decides:
only partitions the answer lists, asked to be deleted, of topics whose deletion has started."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.events import TopicDeletionStopReplicaResponseReceived
from zkcontroller.controller.responses import ResponseEvents
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import (
    ApiKey,
    ControlResponse,
    Errors,
    StopReplicaPartitionState,
    StopReplicaRequest,
)

GONE, MOVED = TopicPartition("gone", 0), TopicPartition("moved", 0)
REQUEST = StopReplicaRequest(1, 3, 7, partition_states=(
    StopReplicaPartitionState("gone", 0, -2, True),    # its topic is being deleted
    StopReplicaPartitionState("moved", 0, 4, True),    # a replica a reassignment removed
    StopReplicaPartitionState("gone", 1, -2, False),
))


def _events(response: ControlResponse) -> list[Any]:
    context = ControllerContext()
    context.begin_topic_deletion(["gone"])
    queued: list[Any] = []
    family = ResponseEvents(SimpleNamespace(context=context, events=SimpleNamespace(put=queued.append)),  # type: ignore[arg-type]
                            offline_replicas=None)  # type: ignore[arg-type]
    family.on_broker_response(2, REQUEST, response)
    return queued


def test_a_top_level_error_lists_no_partition_and_fails_no_deletion() -> None:
    for error in (Errors.STALE_CONTROLLER_EPOCH, Errors.STALE_BROKER_EPOCH):
        assert _events(ControlResponse(ApiKey.STOP_REPLICA, error)) == []


def test_only_listed_deleted_partitions_of_topics_being_deleted_are_passed_on() -> None:
    answer = ControlResponse(ApiKey.STOP_REPLICA, Errors.NONE, (
        (GONE, Errors.KAFKA_STORAGE_ERROR), (MOVED, Errors.NONE), (TopicPartition("gone", 1), Errors.NONE)))
    [event] = _events(answer)
    assert isinstance(event, TopicDeletionStopReplicaResponseReceived)
    assert (event.broker_id, event.error, event.partition_errors) == (2, Errors.NONE,
                                                                     ((GONE, Errors.KAFKA_STORAGE_ERROR),))


def test_an_answer_about_no_deleting_topic_queues_nothing() -> None:
    assert _events(ControlResponse(ApiKey.STOP_REPLICA, Errors.NONE, ((MOVED, Errors.NONE),))) == []
