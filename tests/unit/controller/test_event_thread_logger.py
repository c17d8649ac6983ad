"""The controller event thread's lines carry Kafka's logger: the inner class
``kafka.controller.ControllerEventManager$ControllerEventThread`` (ControllerEventManager.scala 2.8.2)."""

from __future__ import annotations

import logging

import pytest
from tests.unit.controller.standalone import RecordingRuntime

from zkcontroller.controller.event_manager import ControllerEventManager
from zkcontroller.controller.events import ControllerEvent, Reelect

THREAD_LOGGER = "kafka.controller.ControllerEventManager$ControllerEventThread"


class _Failing:
    async def process(self, event: ControllerEvent) -> None:
        raise RuntimeError("boom")

    def preempt(self, event: ControllerEvent) -> None:
        pass


async def test_an_uncaught_error_is_logged_under_the_event_threads_logger(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    events = ControllerEventManager(3, _Failing(), RecordingRuntime())
    events.start()
    await events.put(Reelect()).await_finished()
    await events.close()
    [record] = [r for r in caplog.records if "Uncaught error" in r.getMessage()]
    assert record.name == THREAD_LOGGER and record.levelno == logging.ERROR
    assert record.getMessage() == "[ControllerEventThread controllerId=3] Uncaught error processing event Reelect"
    assert record.exc_info is not None


async def test_start_and_close_log_kafkas_shutdownable_thread_lines(caplog: pytest.LogCaptureFixture) -> None:
    """ShutdownableThread 2.8.2: ``run`` logs "Starting" then, once its loop ends, "Stopped"; ``close`` is
    ``initiateShutdown`` ("Shutting down") and ``awaitShutdown`` ("Shutdown completed"), in the order the real
    controller.log samples show (e.g. 66-fabricdbench-2.3-controller-epochs.log)."""
    caplog.set_level(logging.INFO)
    events = ControllerEventManager(0, _Failing(), RecordingRuntime())
    events.start()
    await events.put(Reelect()).await_finished()
    await events.close()
    lines = [r.getMessage() for r in caplog.records if r.name == THREAD_LOGGER and r.levelno == logging.INFO]
    assert lines == [f"[ControllerEventThread controllerId=0] {what}"
                     for what in ("Starting", "Shutting down", "Stopped", "Shutdown completed")]
