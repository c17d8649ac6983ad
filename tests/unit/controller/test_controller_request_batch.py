"""`ControllerBrokerRequestBatch` (spec §7.1): what is sent, to whom, in which order, with which fields."""

from __future__ import annotations

import asyncio
import logging

import pytest
from tests.unit.controller.conftest import CONTROLLER_ID, RecordingSender, broker, broker_epoch, messages

from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.errors import IllegalControllerStateError
from zkcontroller.controller.event_log import TRACE, StateChangeLogger
from zkcontroller.controller.fencing_token import FencingToken
from zkcontroller.controller.request_batch import ControllerBrokerRequestBatch
from zkcontroller.model import (
    ZERO_TOPIC_ID,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicId,
    TopicPartition,
)
from zkcontroller.protocol.control_requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)
TOPIC_A_ID = TopicId(bytes(range(1, 17)))


@pytest.fixture(autouse=True)
def topics(context: ControllerContext) -> None:
    context.set_all_topics({"a", "b"})
    context.add_topic_id("a", TOPIC_A_ID)
    for tp in (A0, A1, B0):
        context.update_partition_full_replica_assignment(tp, ReplicaAssignment((1, 2, 3)))


def lead(context: ControllerContext, tp: TopicPartition, leader: int, isr: tuple[int, ...] = (1, 2, 3),
         epoch: int = 4, zk_version: int = 7) -> LeaderIsrAndControllerEpoch:
    info = LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, epoch, isr, zk_version), 1)
    context.put_partition_leadership_info(tp, info)
    return info


def test_order_leader_and_isr_then_update_metadata_then_stop_replica(
        batch: ControllerBrokerRequestBatch, context: ControllerContext, sender: RecordingSender) -> None:
    batch.new_batch()
    batch.add_stop_replica_request_for_brokers([3], B0, delete_partition=False)
    batch.add_leader_and_isr_request_for_brokers([2, 1], A0, lead(context, A0, 1), ReplicaAssignment((1, 2, 3)),
                                                 is_new=False)
    batch.send_requests_to_brokers(FencingToken(1, 0))
    assert [(b, type(r).__name__) for b, r in sender.sent] == [
        (1, "LeaderAndIsrRequest"), (2, "LeaderAndIsrRequest"),
        (1, "UpdateMetadataRequest"), (2, "UpdateMetadataRequest"), (3, "UpdateMetadataRequest"),
        (3, "StopReplicaRequest"),
    ]
    assert batch.is_empty
    batch.new_batch()


def test_leader_and_isr_fields(batch: ControllerBrokerRequestBatch, context: ControllerContext,
                               sender: RecordingSender) -> None:
    context.fencing = FencingToken(5, 0)
    assignment = ReplicaAssignment((1, 2, 3, 4), (4,), (1,))
    batch.add_leader_and_isr_request_for_brokers([2], A0, lead(context, A0, 2), assignment, is_new=False)
    batch.add_leader_and_isr_request_for_brokers([2], B0, lead(context, B0, 3), ReplicaAssignment((1, 2, 3)),
                                                 is_new=True)
    batch.send_requests_to_brokers(context.fencing)
    [(to, request)] = sender.of_type(LeaderAndIsrRequest)
    assert to == 2 and request == LeaderAndIsrRequest(
        controller_id=CONTROLLER_ID, controller_epoch=5, broker_epoch=broker_epoch(2),
        partition_states=(
            LeaderAndIsrPartitionState("a", 0, 1, 2, 4, (1, 2, 3), 7, (1, 2, 3, 4), (4,), (1,), False),
            LeaderAndIsrPartitionState("b", 0, 1, 3, 4, (1, 2, 3), 7, (1, 2, 3), (), (), True),
        ),
        topic_ids=(("a", TOPIC_A_ID), ("b", ZERO_TOPIC_ID)),
        live_leaders=(broker(2), broker(3)),
    )


def test_is_new_and_delete_partition_stick_when_entries_merge(
        batch: ControllerBrokerRequestBatch, context: ControllerContext, sender: RecordingSender) -> None:
    rs = ReplicaAssignment((1, 2, 3))
    batch.add_leader_and_isr_request_for_brokers([2], A0, lead(context, A0, 1, epoch=4), rs, is_new=True)
    batch.add_leader_and_isr_request_for_brokers([2], A0, lead(context, A0, 1, epoch=5), rs, is_new=False)
    batch.add_leader_and_isr_request_for_brokers([3], A0, lead(context, A0, 1, epoch=6), rs, is_new=False)
    batch.add_stop_replica_request_for_brokers([2], A1, delete_partition=True)
    batch.add_stop_replica_request_for_brokers([2], A1, delete_partition=False)
    batch.send_requests_to_brokers(FencingToken(1, 0))
    lai = dict(sender.of_type(LeaderAndIsrRequest))
    assert [(s.leader_epoch, s.is_new) for s in lai[2].partition_states] == [(5, True)]
    assert [(s.leader_epoch, s.is_new) for s in lai[3].partition_states] == [(6, False)]
    [(_, stop)] = sender.of_type(StopReplicaRequest)
    assert stop.partition_states == (StopReplicaPartitionState("a", 1, -1, True),)


def test_stop_replica_epochs_and_deletion_sentinels(
        batch: ControllerBrokerRequestBatch, context: ControllerContext, sender: RecordingSender) -> None:
    lead(context, A0, 1, epoch=9)
    lead(context, B0, 1, isr=(1, 3), epoch=3)
    context.queue_topic_deletion({"b"})
    batch.add_stop_replica_request_for_brokers([2, -1], A0, delete_partition=False)
    batch.add_stop_replica_request_for_brokers([2], A1, delete_partition=False)
    batch.add_stop_replica_request_for_brokers([2], B0, delete_partition=True)
    batch.add_update_metadata_request_for_brokers([2], [B0])
    batch.send_requests_to_brokers(FencingToken(1, 0))
    [(_, stop)] = sender.of_type(StopReplicaRequest)
    assert stop == StopReplicaRequest(CONTROLLER_ID, 1, broker_epoch(2), (
        StopReplicaPartitionState("a", 0, 9, False),
        StopReplicaPartitionState("a", 1, -1, False),
        StopReplicaPartitionState("b", 0, -2, True),
    ))
    [(_, um)] = sender.of_type(UpdateMetadataRequest)
    assert um.partition_states == (UpdateMetadataPartitionState("b", 0, 1, -2, 0, (1, 3), 0, (1, 2, 3), ()),)


def test_update_metadata_offline_replicas_topic_ids_and_live_brokers(
        batch: ControllerBrokerRequestBatch, context: ControllerContext, sender: RecordingSender,
        state_log: pytest.LogCaptureFixture) -> None:
    context.shutting_down_broker_ids.add(2)
    context.remove_live_brokers({3})
    context.replicas_on_offline_dirs[1] = {A0}
    lead(context, A0, 1)
    batch.add_update_metadata_request_for_brokers([1, 2, 3], [A0, A1])
    batch.send_requests_to_brokers(FencingToken(1, 0))
    assert [b for b, _ in sender.sent] == [1, 2]  # 3 is not registered; 2 is shutting down but still sent to
    for _, request in sender.sent:
        assert isinstance(request, UpdateMetadataRequest)
        assert request.partition_states == (UpdateMetadataPartitionState("a", 0, 1, 1, 4, (1, 2, 3), 7, (1, 2, 3),
                                                                          (1, 2, 3)),)
        assert request.live_brokers == (broker(1), broker(2)) and request.topic_ids == (("a", TOPIC_A_ID),)
    # the batch class's own logger, without a logIdent (Kafka's AbstractControllerBrokerRequestBatch has none)
    assert [r.getMessage() for r in state_log.records if r.name == "kafka.controller.ControllerBrokerRequestBatch"
            ] == ["Leader not yet assigned for partition a-1. Skip sending UpdateMetadataRequest."]


def test_not_live_brokers_are_dropped_silently(batch: ControllerBrokerRequestBatch, context: ControllerContext,
                                               sender: RecordingSender) -> None:
    batch.add_leader_and_isr_request_for_brokers([4, 2], A0, lead(context, A0, 2), ReplicaAssignment((2, 4)),
                                                 is_new=False)
    batch.add_stop_replica_request_for_brokers([4], A0, delete_partition=True)
    batch.send_requests_to_brokers(FencingToken(1, 0))
    assert 4 not in {b for b, _ in sender.sent}
    assert batch.is_empty


def test_empty_update_metadata_still_sends_live_broker_list(
        batch: ControllerBrokerRequestBatch, sender: RecordingSender, state_log: pytest.LogCaptureFixture) -> None:
    batch.send_requests_to_brokers(FencingToken(1, 0))
    batch.add_update_metadata_request_for_brokers([3], [])
    batch.send_requests_to_brokers(FencingToken(1, 0))
    [(to, request)] = sender.sent
    assert to == 3 and isinstance(request, UpdateMetadataRequest) and request.partition_states == ()
    assert len(request.live_brokers) == 3
    assert messages(state_log, logging.INFO) == [
        "[Controller id=1 epoch=1] Sending UpdateMetadata request to brokers HashSet() for 0 partitions",
        "[Controller id=1 epoch=1] Sending UpdateMetadata request to brokers HashSet(3) for 0 partitions",
    ]


def test_log_lines(batch: ControllerBrokerRequestBatch, context: ControllerContext,
                   state_log: pytest.LogCaptureFixture) -> None:
    rs = ReplicaAssignment((1, 2, 3))
    batch.add_leader_and_isr_request_for_brokers([1], A0, lead(context, A0, 1), rs, is_new=True)
    batch.add_leader_and_isr_request_for_brokers([1], B0, lead(context, B0, 2), rs, is_new=False)
    batch.add_stop_replica_request_for_brokers([2], A1, delete_partition=True)
    batch.send_requests_to_brokers(FencingToken(1, 0))
    prefix = "[Controller id=1 epoch=1] "
    assert [m.removeprefix(prefix) for m in messages(state_log)] == [
        "Sending become-leader LeaderAndIsr request LeaderAndIsrPartitionState(topicName='a', partitionIndex=0, "
        "controllerEpoch=1, leader=1, leaderEpoch=4, isr=[1, 2, 3], zkVersion=7, replicas=[1, 2, 3], "
        "addingReplicas=[], removingReplicas=[], isNew=true) to broker 1 for partition a-0",
        "Sending become-follower LeaderAndIsr request LeaderAndIsrPartitionState(topicName='b', partitionIndex=0, "
        "controllerEpoch=1, leader=2, leaderEpoch=4, isr=[1, 2, 3], zkVersion=7, replicas=[1, 2, 3], "
        "addingReplicas=[], removingReplicas=[], isNew=false) to broker 1 for partition b-0",
        "Sending LeaderAndIsr request to broker 1 with 1 become-leader and 1 become-follower partitions",
        "Sending UpdateMetadata request to brokers HashSet(1, 2, 3) for 2 partitions",
        "Sending StopReplica request StopReplicaPartitionState(partitionIndex=1, leaderEpoch=-1, "
        "deletePartition=true) to broker 2 for partition a-1",
        "Sending StopReplica request for 1 replicas to broker 2",
    ]
    assert [r.levelno for r in state_log.records if r.name == "state.change.logger"] == [
        TRACE, TRACE, logging.INFO, logging.INFO, TRACE, logging.INFO]


def test_new_batch_on_a_non_empty_batch_raises(batch: ControllerBrokerRequestBatch,
                                                context: ControllerContext) -> None:
    batch.add_update_metadata_request_for_brokers([1], [])
    with pytest.raises(IllegalControllerStateError, match="UpdateMetadata"):
        batch.new_batch()
    batch.clear()
    batch.add_stop_replica_request_for_brokers([1], A0, delete_partition=False)
    with pytest.raises(IllegalControllerStateError, match="StopReplica"):
        batch.new_batch()
    batch.clear()
    batch.add_leader_and_isr_request_for_brokers([1], A0, lead(context, A0, 1), ReplicaAssignment((1,)), False)
    with pytest.raises(IllegalControllerStateError, match="LeaderAndIsr"):
        batch.new_batch()
    batch.clear()
    batch.new_batch()


def test_send_failure_is_illegal_state_and_leaves_the_batch_non_empty(
        batch: ControllerBrokerRequestBatch, context: ControllerContext, sender: RecordingSender) -> None:
    sender.fail_with = RuntimeError("queue closed")
    batch.add_leader_and_isr_request_for_brokers([1], A0, lead(context, A0, 1), ReplicaAssignment((1,)), False)
    with pytest.raises(IllegalControllerStateError) as raised:
        batch.send_requests_to_brokers(FencingToken(1, 0))
    assert isinstance(raised.value.__cause__, RuntimeError)
    with pytest.raises(IllegalControllerStateError):
        batch.new_batch()


@pytest.mark.parametrize(("ibp", "carried"), [("2.8", True), ("2.8-IV1", True), ("2.8-IV0", False),
                                              ("2.7-IV1", False)])
def test_topic_ids_travel_only_in_versions_that_have_them(
        context: ControllerContext, sender: RecordingSender, state_change_logger: StateChangeLogger,
        ibp: str, carried: bool) -> None:
    """LeaderAndIsr v5 / UpdateMetadata v7 (IBP >= 2.8-IV1) carry topic ids; v4 / v6 have no field for them."""
    batch = ControllerBrokerRequestBatch(CONTROLLER_ID, context, sender, state_change_logger, ibp)
    batch.add_leader_and_isr_request_for_brokers([1], A0, lead(context, A0, 1), ReplicaAssignment((1, 2, 3)),
                                                 is_new=False)
    batch.send_requests_to_brokers(FencingToken(1, 0))
    [(_, lai)] = sender.of_type(LeaderAndIsrRequest)
    umds = [r for _, r in sender.of_type(UpdateMetadataRequest)]
    assert isinstance(lai, LeaderAndIsrRequest) and len(umds) == 3
    expected = (("a", TOPIC_A_ID),) if carried else ()
    assert lai.topic_ids == expected and all(isinstance(r, UpdateMetadataRequest) and r.topic_ids == expected
                                             for r in umds)


def test_an_empty_step_queues_nothing(batch: ControllerBrokerRequestBatch) -> None:
    """A step with no partitions adds no UpdateMetadata recipients (a batch of one adds every live broker)."""
    batch.new_batch()
    batch.add_leader_and_isr_requests([], is_new=False)
    assert batch.is_empty


def test_a_step_queues_what_one_call_per_partition_queues(
        batch: ControllerBrokerRequestBatch, context: ControllerContext, sender: RecordingSender) -> None:
    entries = [([1, 2], A0, lead(context, A0, 1), ReplicaAssignment((1, 2, 3))),
               ([2, 3], B0, lead(context, B0, 3), ReplicaAssignment((1, 2, 3)))]
    batch.new_batch()
    batch.add_leader_and_isr_requests(entries, is_new=False)
    batch.send_requests_to_brokers(FencingToken(1, 0))
    at_once = list(sender.sent)
    sender.sent.clear()
    batch.new_batch()
    for brokers, tp, info, assignment in entries:
        batch.add_leader_and_isr_request_for_brokers(brokers, tp, info, assignment, is_new=False)
    batch.send_requests_to_brokers(FencingToken(1, 0))
    assert at_once == sender.sent
    sender.sent.clear()
    batch.new_batch()  # and with ``led`` (the leaderships are the context's): the same requests
    batch.add_leader_and_isr_requests(entries, is_new=False, led=True)
    batch.send_requests_to_brokers(FencingToken(1, 0))
    assert at_once == sender.sent


async def test_leader_and_isr_handed_over_before_update_metadata_is_built(
        batch: ControllerBrokerRequestBatch, context: ControllerContext, sender: RecordingSender) -> None:
    """The send loops (other tasks) get one turn between the LeaderAndIsr requests and the UpdateMetadata ones, as
    Kafka's RequestSendThreads send a LeaderAndIsr while the controller builds the rest; the requests themselves
    and their order are `send_requests_to_brokers`'."""
    turns: list[str] = []

    async def other_task() -> None:
        turns.append(f"other task ran after {len(sender.sent)} requests")

    batch.new_batch()
    batch.add_stop_replica_request_for_brokers([3], B0, delete_partition=False)
    batch.add_leader_and_isr_request_for_brokers([2, 1], A0, lead(context, A0, 1), ReplicaAssignment((1, 2, 3)),
                                                 is_new=False)
    task = asyncio.get_running_loop().create_task(other_task())
    await batch.send_requests_handing_leader_and_isr_first(FencingToken(1, 0))
    assert turns == ["other task ran after 2 requests"]
    assert [(b, type(r).__name__) for b, r in sender.sent] == [
        (1, "LeaderAndIsrRequest"), (2, "LeaderAndIsrRequest"),
        (1, "UpdateMetadataRequest"), (2, "UpdateMetadataRequest"), (3, "UpdateMetadataRequest"),
        (3, "StopReplicaRequest"),
    ]
    assert batch.is_empty
    await task


async def test_no_turn_without_a_leader_and_isr_request(
        batch: ControllerBrokerRequestBatch, context: ControllerContext, sender: RecordingSender) -> None:
    lead(context, A0, 1)
    turns: list[int] = []

    async def other_task() -> None:
        turns.append(len(sender.sent))

    batch.new_batch()
    batch.add_update_metadata_request_for_brokers([1, 2], [A0])
    task = asyncio.get_running_loop().create_task(other_task())
    await batch.send_requests_handing_leader_and_isr_first(FencingToken(1, 0))
    assert turns == [] and [type(r).__name__ for _, r in sender.sent] == ["UpdateMetadataRequest"] * 2
    await task
