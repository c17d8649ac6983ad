"""Elections asked for a partition the controller knows but has no leadership for (audit-controller-core finding
2): Kafka 2.8 throws there; ours lets the partition state machine initialise it, and answers with the new
leader when that worked, UNKNOWN_SERVER_ERROR only when nothing happened."""

from __future__ import annotations

import pytest
from tests.helpers import wait_until
from tests.unit.controller.standalone import RecordingRuntime, standalone_controller

from zkcontroller.controller.elections import ApiError
from zkcontroller.controller.events import ElectionType
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.controller.states import PartitionState
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

TP = TopicPartition("t", 0)


async def _idle(controller: KafkaController) -> None:
    events = controller.event_manager
    await wait_until(lambda: controller.is_active and events.queue_size == 0 and events.state.name == "IDLE",
                     what="the controller idle")


async def _partition_left_new(controller: KafkaController, zk: KafkaZkClient) -> None:
    """``t-0`` on broker 1 (the controller's own), created while the controller saw no live broker: it stays
    NewPartition with no leadership ("No assigned replica is alive"); then broker 1 is live again, with no
    start-up processed that would initialise the partition."""
    controller.startup()
    await _idle(controller)
    context = controller.context
    brokers = {b: context.live_broker_id_and_epochs[b.id] for b in context.live_or_shutting_down_brokers}
    context.remove_live_brokers([1])
    await zk.create_topic_assignment("t", None, {TP: ReplicaAssignment((1,))})
    await wait_until(lambda: context.partition_states.get(TP) is PartitionState.NEW, what="t-0 left New")
    await _idle(controller)
    assert context.partition_leader_and_isr(TP) is None
    context.add_live_brokers(brokers)


@pytest.mark.parametrize("election_type", [ElectionType.PREFERRED, ElectionType.UNCLEAN])
async def test_partition_initialised_by_the_election_is_answered_with_its_leader(
        election_type: ElectionType) -> None:
    controller, zk = await standalone_controller(RecordingRuntime(), auto_leader_rebalance_enable=False)
    try:
        await _partition_left_new(controller, zk)
        results = await controller.elections.elect_leaders([TP], election_type)
        assert results == {TP: 1}
        state = await zk.get_topic_partition_state(TP)
        assert state is not None and state.leader_and_isr.leader == 1
        assert controller.context.partition_states[TP] is PartitionState.ONLINE
    finally:
        await controller.shutdown()


async def test_partition_that_could_not_be_initialised_is_an_unknown_server_error() -> None:
    controller, zk = await standalone_controller(RecordingRuntime(), auto_leader_rebalance_enable=False)
    try:
        await _partition_left_new(controller, zk)
        controller.context.remove_live_brokers([1])  # still no live replica: the initialisation fails again
        results = await controller.elections.elect_leaders([TP], ElectionType.PREFERRED)
        assert isinstance(results[TP], ApiError) and results[TP].error is Errors.UNKNOWN_SERVER_ERROR
        assert await zk.get_topic_partition_state(TP) is None
    finally:
        await controller.shutdown()
