"""`InProcessTransport`: brokers living in this process, reached by a direct call after one loop hop."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from zkcontroller.model import Broker
from zkcontroller.protocol.transport import CorrelationClients, RequestHandler, connection_failed


class InProcessTransport:
    """A registry of broker id -> request handler; both the `BrokerTransport` and the `RequestListener`.
    A stopped (unregistered) broker is unreachable."""

    def __init__(self) -> None:
        self._handlers: dict[int, RequestHandler] = {}
        self._takes_correlation_id: dict[int, bool] = {}
        self._correlation = CorrelationClients()
        self.sent: int = 0

    def register(self, broker_id: int, handler: RequestHandler) -> None:
        """``handler(request)``, or ``handler(request, correlation_id)`` when it takes a second argument (a
        broker's entry point, which names the id in its state-change lines as the wire header's)."""
        self._handlers[broker_id] = handler
        self._takes_correlation_id[broker_id] = _takes_two_arguments(handler)

    def unregister(self, broker_id: int) -> None:
        self._handlers.pop(broker_id, None)

    def close_client(self, broker_id: int, client: str, reason: str = "") -> None:
        """``client``'s requests to ``broker_id`` start a new count of correlation ids (a fetcher made again), as
        `TcpTransport.close_client`; there is no connection to close."""
        self._correlation.close(broker_id, client)

    async def send(self, broker: Broker, request: Any) -> Any:
        await asyncio.sleep(0)  # a hop: the broker handles it in its own turn
        handler = self._handlers.get(broker.id)
        if handler is None:
            raise connection_failed(broker)
        self.sent += 1
        if self._takes_correlation_id.get(broker.id):
            response = handler(request, self._correlation.next_id(broker.id, request))  # type: ignore[call-arg]
        else:
            response = handler(request)
        if inspect.isawaitable(response):
            response = await response
        return response


def _takes_two_arguments(handler: RequestHandler) -> bool:
    try:
        parameters = inspect.signature(handler).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): the one-argument call
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in parameters)
