"""Controller log lines as Kafka 2.8.2 (Scala 2.13, its distribution's default) prints them
(audit-controller-core finding 4): the failover's progress lines, the broker, topic and partition callbacks,
the stale-epoch AlterIsr line and the broker registration line; and no "Error processing event" for a
ControlledShutdown from a broker whose epoch the controller does not have (Kafka answers it through a ``Try``)."""

from __future__ import annotations

import asyncio
import logging

import pytest
from tests.helpers import wait_until
from tests.unit.controller.standalone import RecordingRuntime, standalone_controller

from zkcontroller.controller.events import AlterIsrReceived, ControlledShutdown
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.model import Broker, BrokerInfo, EndPoint, ReplicaAssignment, TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import AlterIsrRequest, ControlledShutdownRequest
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

CONTROLLER = "kafka.controller.KafkaController"


def lines(caplog: pytest.LogCaptureFixture, logger: str = CONTROLLER) -> list[str]:
    """The controller's messages (the failover's too, logged while the fixture set up) without their
    ``[Controller id=1 ...]`` prefix."""
    records = [*caplog.get_records("setup"), *caplog.records]
    return [r.getMessage().split("] ", 1)[-1] for r in records if r.name == logger]


def assert_in_order(found: list[str], expected: list[str]) -> None:
    position = 0
    for line in expected:
        assert line in found[position:], (line, found)
        position = found.index(line, position) + 1


async def _idle(controller: KafkaController) -> None:
    events = controller.event_manager
    await wait_until(lambda: controller.is_active and events.queue_size == 0 and events.state.name == "IDLE",
                     what="the controller idle")


def _info(broker_id: int, port: int) -> BrokerInfo:
    return BrokerInfo(Broker(broker_id, (EndPoint("localhost", port, "PLAINTEXT", "PLAINTEXT"),), None))


@pytest.fixture
async def controller(caplog: pytest.LogCaptureFixture) -> tuple[KafkaController, KafkaZkClient]:
    caplog.set_level(logging.INFO)
    controller, zk = await standalone_controller(RecordingRuntime(), auto_leader_rebalance_enable=False)
    controller.startup()
    await _idle(controller)
    yield controller, zk
    await controller.shutdown()


async def test_failover_lines(controller: tuple[KafkaController, KafkaZkClient],
                              caplog: pytest.LogCaptureFixture) -> None:
    active, _zk = controller
    epoch = active.context.live_broker_id_and_epochs[1]
    assert_in_order(lines(caplog), [
        "Registering handlers",
        "Deleting log dir event notifications",
        "Deleting isr change notifications",
        "Initializing controller context",
        f"Initialized broker epochs cache: HashMap(1 -> {epoch})",
        "Currently active brokers in the cluster: Set(1)",
        "Currently shutting brokers in the cluster: HashSet()",
        "Current list of topics in the cluster: HashSet()",
        "Fetching topic deletions in progress",
        "List of topics to be deleted: ",
        "Initializing topic deletion manager",
        "Sending update metadata request",
        "Ready to serve as the new controller with epoch 1",
        "Resuming preferred replica election for partitions: ",
        "Starting the controller scheduler",
    ])
    # the ineligible topics are a union of mutable sets: a mutable.HashSet, printed so even when empty
    assert ("Initializing manager with initial deletions: Set(), initial ineligible deletions: HashSet()"
            in lines(caplog, "kafka.controller.TopicDeletionManager"))


async def test_topic_partition_and_broker_lines(controller: tuple[KafkaController, KafkaZkClient],
                                                caplog: pytest.LogCaptureFixture) -> None:
    active, zk = controller
    tps = [TopicPartition("t", p) for p in range(3)]
    await zk.create_topic_assignment("t", None, {tp: ReplicaAssignment((1,)) for tp in tps[:2]})
    await wait_until(lambda: "New partition creation callback for t-0,t-1" in lines(caplog), what="creation")
    await _idle(active)
    topic_id = active.context.topic_ids.get("t")
    await zk.set_topic_assignment("t", topic_id, {tp: ReplicaAssignment((1,)) for tp in tps}, -1)
    await wait_until(lambda: "New partition creation callback for t-2" in lines(caplog), what="the new partition")
    assert ("New partitions to be added Map(t-2 -> ReplicaAssignment(replicas=1, addingReplicas=, "
            "removingReplicas=))") in lines(caplog)

    await zk.update_broker_info(_info(1, 9999))  # a live broker re-writes its registration
    await wait_until(lambda: "Broker info update callback for 1" in lines(caplog), what="the broker update")

    epoch2 = await zk.register_broker(_info(2, 9093))
    assert (f"Registered broker 2 at path /brokers/ids/2 with addresses: PLAINTEXT://localhost:9093, czxid (broker "
            f"epoch): {epoch2}") in lines(caplog, "kafka.zk.KafkaZkClient")
    epoch1 = active.context.live_broker_id_and_epochs[1]
    await wait_until(lambda: f"Updated broker epochs cache: HashMap(1 -> {epoch1}, 2 -> {epoch2})" in lines(caplog),
                     what="the epochs cache line")


async def test_stale_alter_isr_line(controller: tuple[KafkaController, KafkaZkClient],
                                    caplog: pytest.LogCaptureFixture) -> None:
    active, _zk = controller
    epoch = active.context.live_broker_id_and_epochs[1]
    answers: asyncio.Queue[object] = asyncio.Queue()
    active.core.events.put(AlterIsrReceived(request=AlterIsrRequest(1, epoch + 7), callback=answers.put_nowait))
    answer = await asyncio.wait_for(answers.get(), 10)
    assert answer.error is Errors.STALE_BROKER_EPOCH  # type: ignore[attr-defined]
    assert f"Ignoring AlterIsr due to stale broker epoch {epoch + 7} for broker 1" in lines(caplog)


async def test_controlled_shutdown_of_an_uncached_broker_logs_no_error(
        controller: tuple[KafkaController, KafkaZkClient], caplog: pytest.LogCaptureFixture) -> None:
    active, _zk = controller
    answers: asyncio.Queue[object] = asyncio.Queue()
    active.core.events.put(ControlledShutdown(request=ControlledShutdownRequest(9, 5), callback=answers.put_nowait))
    answer = await asyncio.wait_for(answers.get(), 10)
    assert answer.error is Errors.UNKNOWN_SERVER_ERROR  # type: ignore[attr-defined]
    await _idle(active)
    assert not any(line.startswith("Error processing event") for line in lines(caplog))
