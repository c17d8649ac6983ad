"""The seam between the controller and brokers: how a request reaches a broker, and how a broker listens.

The controller's channel manager sends through a `BrokerTransport`; a broker exposes one `RequestHandler`
through a `RequestListener`. `runtime.in_process.InProcessTransport` is both for brokers in one process (the
embedded default); the simulator puts its network at the same seam, and the wire-protocol transport later.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from zkcontroller.model import Broker


class BrokerUnreachableError(ConnectionError):
    """The transport could not deliver a request (no connection, broker stopped, timeout)."""


class ConnectTimeoutError(BrokerUnreachableError):
    """No connection within the caller's own bound (``NetworkClientUtils.awaitReady`` returned false): Kafka's
    callers throw ``SocketTimeoutException``, where a connection that failed (refused, or the connection-setup
    timeout ending first) is ``awaitReady``'s ``IOException``."""


RequestHandler = Callable[[Any], Any | Awaitable[Any]]
"""A broker's entry point: one request in, its response out (directly, or as an awaitable)."""


class BrokerTransport(Protocol):
    async def send(self, broker: Broker, request: Any) -> Any:
        """Deliver one request and return the broker's response; raise `BrokerUnreachableError` if it can't."""
        ...


class RequestListener(Protocol):
    def register(self, broker_id: int, handler: RequestHandler) -> None:
        """Start taking requests for ``broker_id``."""
        ...

    def unregister(self, broker_id: int) -> None:
        """Stop taking requests: from now on senders find the broker unreachable."""
        ...


class BrokerNetwork(BrokerTransport, RequestListener, Protocol):
    """Both sides at once, as one broker process uses its network: it listens for requests to itself and its
    controller candidate sends to the other brokers (in-process, simulated or TCP)."""
