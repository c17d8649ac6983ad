"""The event log's ``broker_epoch`` (docs/event-log.md): written where the controller knows the broker's
registration, on ``broker_registered`` and ``controlled_shutdown``, and valid against the contract."""

from __future__ import annotations

import asyncio
import json

from tests.helpers import wait_until
from tests.unit.controller.standalone import RecordingRuntime, standalone_controller

from zkcontroller.controller.events import ControlledShutdown
from zkcontroller.event_schema import validate_record
from zkcontroller.model import Broker, BrokerInfo, EndPoint
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import ControlledShutdownRequest


async def test_registration_and_controlled_shutdown_records_carry_the_registration_epoch() -> None:
    controller, zk = await standalone_controller(RecordingRuntime(), auto_leader_rebalance_enable=False)
    lines: list[str] = []
    controller.core.event_log.sink = lines.append
    controller.startup()
    try:
        def records(kind: str) -> list[dict[str, object]]:
            controller.core.event_log.flush()
            return [r for r in map(json.loads, lines) if r["type"] == kind]

        events = controller.event_manager
        await wait_until(lambda: controller.is_active and events.queue_size == 0 and events.state.name == "IDLE",
                         what="the controller idle")  # watching /brokers/ids: broker 2 comes as a BrokerChange
        epoch2 = await zk.register_broker(BrokerInfo(Broker(2, (EndPoint("localhost", 9093, "PLAINTEXT",
                                                                           "PLAINTEXT"),), None)))
        await wait_until(lambda: any(r["broker_id"] == 2 for r in records("broker_registered")),
                         what="broker 2's registration record")
        answers: asyncio.Queue[object] = asyncio.Queue()
        controller.core.events.put(ControlledShutdown(request=ControlledShutdownRequest(2, epoch2),
                                                      callback=answers.put_nowait))
        answer = await asyncio.wait_for(answers.get(), 10)
        assert answer.error is Errors.NONE  # type: ignore[attr-defined]
        registered = [r for r in records("broker_registered") if r["broker_id"] == 2]
        shutdowns = records("controlled_shutdown")
        assert [r["broker_epoch"] for r in registered] == [epoch2]
        assert [(r["broker_id"], r["broker_epoch"]) for r in shutdowns] == [(2, epoch2)]
        assert [validate_record(r) for r in (*registered, *shutdowns)] == [[], []]
    finally:
        await controller.shutdown()
