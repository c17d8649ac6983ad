"""`KafkaController`'s own decisions, on the embedded store with a runtime whose sleeps return at once and are
recorded: the back-off after failed failovers, and resigning then rethrowing on an illegal state."""

from __future__ import annotations

import logging

import pytest
from tests.unit.controller.standalone import RecordingRuntime, standalone_controller

from zkcontroller.controller.errors import IllegalControllerStateError
from zkcontroller.controller.events import TopicChange
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.runtime.log_lines import java_traceback
from zkcontroller.zk.errors import ControllerMovedError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


async def make_controller(**config: int) -> tuple[KafkaController, RecordingRuntime, KafkaZkClient]:
    runtime = RecordingRuntime()
    controller, zk = await standalone_controller(runtime, **config)
    return controller, runtime, zk


async def test_failed_failovers_back_off_doubling_to_the_cap_and_reset_after_success(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    controller, runtime, zk = await make_controller(failover_retry_backoff_ms=1000,
                                                    failover_retry_backoff_max_ms=3000)

    async def broken() -> None:
        raise ValueError("a znode no controller can load")

    monkeypatch.setattr(controller.topics, "load_context", broken)
    for _ in range(4):
        await controller.elect()
        assert await zk.get_controller_id() is None  # gave /controller up after the back-off
        assert not controller.is_active
    assert runtime.sleeps == [1000, 2000, 3000, 3000]
    assert (await zk.get_controller_epoch())[0] == 4  # type: ignore[index]

    monkeypatch.undo()
    await controller.elect()
    assert controller.is_active and controller.failover_failures == 0
    await controller.trigger_controller_move()
    monkeypatch.setattr(controller.topics, "load_context", broken)
    await controller.elect()
    assert runtime.sleeps[-1] == 1000


async def test_an_illegal_state_resigns_then_rethrows(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kafka.controller")
    controller, _runtime, zk = await make_controller()
    await controller.elect()
    assert controller.is_active
    error = IllegalControllerStateError("request batch not empty")
    with pytest.raises(IllegalControllerStateError):
        await controller.handle_illegal_state(error)
    assert not controller.is_active and await zk.get_controller_id() is None

    await controller.elect()

    async def illegal(_event: TopicChange) -> None:
        raise error

    monkeypatch.setitem(controller._handlers, TopicChange, illegal)
    await controller.process(TopicChange())  # the event thread survives; the failure is logged after resigning
    messages = [r.getMessage() for r in caplog.records]
    assert any("Forcing the controller to resign" in m for m in messages)
    assert any("Error processing event TopicChange" in m for m in messages)
    assert await zk.get_controller_id() is None


async def test_resigning_empties_the_state_machines_batches_so_the_next_tenure_can_change_state() -> None:
    """A ControllerMovedError in the middle of an OfflineReplica transition leaves the StopReplica it queued
    before the fenced ISR write in the replica state machine's batch; the next tenure must not inherit it."""
    controller, _runtime, _zk = await make_controller()
    await controller.elect()
    core = controller.core
    left_over = TopicPartition("t", 0)
    core.replica_state_machine.batch.add_stop_replica_request_for_brokers([1], left_over, False)
    core.partition_state_machine.batch.add_update_metadata_request_for_brokers([1], [])
    assert not core.replica_state_machine.batch.is_empty and not core.partition_state_machine.batch.is_empty
    await controller.trigger_controller_move()
    await controller.elect()
    assert controller.is_active
    for batch in (core.request_batch, core.partition_state_machine.batch, core.replica_state_machine.batch):
        assert batch.is_empty
        batch.new_batch()  # raised IllegalControllerStateError ("batch is not empty") before


async def test_a_moved_controller_logs_why_with_the_event(caplog: pytest.LogCaptureFixture) -> None:
    """Kafka's ``info(s"Controller moved to another broker when processing $event.", e)``: with a hand-bumped
    /controller_epoch the operator sees the failed zkVersion check under the line, not just that it moved."""
    caplog.set_level(logging.INFO, logger="kafka.controller")
    controller, _runtime, zk = await make_controller()
    await controller.elect()
    data, _stat = await zk._session.get_data("/controller_epoch")
    await zk._session.set_data("/controller_epoch", data)  # same epoch, next zkVersion: our fenced writes fail
    await zk.create_topic_assignment("t", None, {TopicPartition("t", 0): ReplicaAssignment((1,))})
    await controller.process(TopicChange())
    moved = [r for r in caplog.records if r.getMessage().endswith(
        "Controller moved to another broker when processing TopicChange.")]
    assert len(moved) == 1 and moved[0].levelno == logging.INFO
    assert isinstance(moved[0].exc_info and moved[0].exc_info[1], ControllerMovedError)
    assert "Controller epoch zkVersion check fails" in str(moved[0].exc_info[1])  # type: ignore[index]
    trace = java_traceback(logging.Formatter().formatException(moved[0].exc_info), moved[0].exc_info[1])
    assert trace.splitlines()[-1] == ("org.apache.kafka.common.errors.ControllerMovedException: Controller epoch "
                                      "zkVersion check fails. Expected zkVersion = 1")  # as Kafka's log shows it
