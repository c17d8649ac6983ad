"""Requests brokers send to the controller (ControlledShutdown, AlterIsr) become controller events that carry
the callback answering the broker; a broker always hears back, NOT_CONTROLLER when the event is dropped."""

from __future__ import annotations

import asyncio
from collections.abc import Container

from zkcontroller.controller.event_manager import ControllerEventManager
from zkcontroller.controller.events import AlterIsrReceived, BrokerRequestEvent, ControlledShutdown
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import (
    AlterIsrRequest,
    AlterIsrResponse,
    BrokerToControllerRequest,
    BrokerToControllerResponse,
    ControlledShutdownRequest,
    ControlledShutdownResponse,
)

_BROKER_REQUEST_EVENTS: dict[type, type[BrokerRequestEvent]] = {
    ControlledShutdownRequest: ControlledShutdown,
    AlterIsrRequest: AlterIsrReceived,
}


def not_controller_response(request: BrokerToControllerRequest) -> BrokerToControllerResponse:
    """What a broker hears from a broker that is not (or no longer) the controller."""
    if isinstance(request, AlterIsrRequest):
        return AlterIsrResponse(Errors.NOT_CONTROLLER)
    return ControlledShutdownResponse(Errors.NOT_CONTROLLER)


async def submit_broker_request(events: ControllerEventManager, handled: Container[type],
                                request: BrokerToControllerRequest) -> BrokerToControllerResponse:
    """Queue the request's event and wait for its answer (NOT_CONTROLLER at once if nothing handles it)."""
    event_type = _BROKER_REQUEST_EVENTS[type(request)]
    if event_type not in handled:
        return not_controller_response(request)
    answered: asyncio.Future[BrokerToControllerResponse] = asyncio.Future()

    def answer(response: BrokerToControllerResponse) -> None:
        if not answered.done():
            answered.set_result(response)

    events.put(event_type(request=request, callback=answer))
    return await answered
