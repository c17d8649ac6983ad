"""`InProcessTransport`: brokers living in this process, reached by a direct call after one loop hop."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from zkcontroller.model import Broker
from zkcontroller.protocol.transport import RequestHandler, connection_failed


class InProcessTransport:
    """A registry of broker id -> request handler; both the `BrokerTransport` and the `RequestListener`.
    A stopped (unregistered) broker is unreachable."""

    def __init__(self) -> None:
        self._handlers: dict[int, RequestHandler] = {}
        self.sent: int = 0

    def register(self, broker_id: int, handler: RequestHandler) -> None:
        self._handlers[broker_id] = handler

    def unregister(self, broker_id: int) -> None:
        self._handlers.pop(broker_id, None)

    async def send(self, broker: Broker, request: Any) -> Any:
        await asyncio.sleep(0)  # a hop: the broker handles it in its own turn
        handler = self._handlers.get(broker.id)
        if handler is None:
            raise connection_failed(broker)
        self.sent += 1
        response = handler(request)
        if inspect.isawaitable(response):
            response = await response
        return response
