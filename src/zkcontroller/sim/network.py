"""`SimNetwork`: the controller-to-broker network at the transport seam (`protocol.transport`).

Each (sender, broker) pair is one connection. A request travels for a latency drawn from that link's
distribution, is handled by the broker when it arrives, and the response travels back on the reverse link.
Arrivals on one connection keep their sending order, as TCP does (a message never overtakes an earlier one).
Faults: a dropped message resets the connection (the sender learns at once and retries); a message crossing a
partitioned link (one-way or both ways) is lost, and its sender gives up after the request timeout; a held
link queues what arrives until released, then delivers it in order. A request already on the wire arrives even
if its sender is cancelled or frozen meanwhile; a frozen (paused) broker handles it when it resumes.
"""

from __future__ import annotations

import asyncio
import inspect
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from zkcontroller.model import Broker
from zkcontroller.protocol.transport import BrokerUnreachableError, RequestHandler

Link = tuple[int, int]


class NetworkHost(Protocol):
    broker_id: int

    async def wait_runnable(self) -> None: ...

    def when_runnable(self, callback: Callable[[], None]) -> None: ...


class DeliveryObserver(Protocol):
    def deliver(self, host: NetworkHost, handler: RequestHandler, request: Any) -> Any:
        """Hand ``request`` to ``handler`` (a broker) and return its response; checks invariants on the way."""
        ...


@dataclass
class _Message:
    link: Link
    request: Any
    future: asyncio.Future[Any]
    sent_at: float


@dataclass
class NetworkConfig:
    min_latency_ms: float = 0.2
    max_latency_ms: float = 2.0
    drop_probability: float = 0.0
    request_timeout_ms: int = 30000
    link_latency_ms: dict[Link, tuple[float, float]] = field(default_factory=dict)
    """Per-link (min, max) overrides of the default latency range."""


class SimNetwork:
    def __init__(self, rng: random.Random, observer: DeliveryObserver, config: NetworkConfig | None = None) -> None:
        self.rng = rng
        self.observer = observer
        self.config = config or NetworkConfig()
        self.handlers: dict[int, tuple[RequestHandler, NetworkHost]] = {}
        self.blocked: set[Link] = set()
        self.held: dict[Link, deque[_Message]] = {}
        self._last_arrival: dict[Link, float] = {}
        self.delivered = 0
        self.lost = 0

    # ------------------------------------------------------------------ faults

    def partition(self, side_a: list[int], side_b: list[int], *, one_way: bool = False) -> None:
        """Cut links from ``side_a`` to ``side_b`` (and back unless ``one_way``)."""
        for a in side_a:
            for b in side_b:
                self.blocked.add((a, b))
                if not one_way:
                    self.blocked.add((b, a))

    def heal(self) -> None:
        self.blocked.clear()

    def hold(self, src: int, dst: int) -> None:
        self.held.setdefault((src, dst), deque())

    def release(self, src: int, dst: int) -> None:
        queue = self.held.pop((src, dst), deque())
        while queue:
            self._arrive(queue.popleft())

    def release_all(self) -> None:
        for link in sorted(self.held):
            self.release(*link)

    # ------------------------------------------------------------------ sending

    def endpoint(self, host: NetworkHost) -> SimHostTransport:
        return SimHostTransport(self, host)

    def _leg_s(self, link: Link) -> float:
        low, high = self.config.link_latency_ms.get(link, (self.config.min_latency_ms, self.config.max_latency_ms))
        return self.rng.uniform(low, high) / 1000

    def _arrival(self, link: Link) -> float:
        now = asyncio.get_running_loop().time()
        at = max(now + self._leg_s(link), self._last_arrival.get(link, 0.0))
        self._last_arrival[link] = at
        return at

    async def send(self, src: NetworkHost, broker: Broker, request: Any) -> Any:
        await src.wait_runnable()
        loop = asyncio.get_running_loop()
        link = (src.broker_id, broker.id)
        future: asyncio.Future[Any] = loop.create_future()
        timeout = loop.call_later(self.config.request_timeout_ms / 1000, _fail, future,
                                  f"request to broker {broker.id} timed out")
        message = _Message(link, request, future, loop.time())
        if self.config.drop_probability and self.rng.random() < self.config.drop_probability:
            self.lost += 1
            loop.call_later(self._leg_s(link), _fail, future, f"connection to broker {broker.id} was reset")
        elif link in self.blocked:
            self.lost += 1  # into the void: the timeout tells the sender
        else:
            loop.call_at(self._arrival(link), self._arrive, message)
        try:
            response = await future
        finally:
            timeout.cancel()
        await src.wait_runnable()
        return response

    def _arrive(self, message: _Message) -> None:
        if message.link in self.held:
            self.held[message.link].append(message)
            return
        if message.link in self.blocked:
            self.lost += 1
            return
        target = self.handlers.get(message.link[1])
        if target is None:
            loop = asyncio.get_running_loop()
            loop.call_later(self._leg_s(message.link), _fail, message.future,
                            f"broker {message.link[1]} is not reachable")
            return
        target[1].when_runnable(lambda: self._handle(message))

    def _handle(self, message: _Message) -> None:
        target = self.handlers.get(message.link[1])
        if target is None:
            _fail(message.future, f"broker {message.link[1]} is not reachable")
            return
        handler, host = target
        response = self.observer.deliver(host, handler, message.request)
        self.delivered += 1
        if inspect.isawaitable(response):  # a request the broker answers later (its controller's, say)
            task = asyncio.ensure_future(response)
            task.add_done_callback(lambda done: self._reply(message, done))
            return
        self._reply_with(message, response)

    def _reply(self, message: _Message, done: asyncio.Future[Any]) -> None:
        if done.cancelled() or done.exception() is not None:
            _fail(message.future, f"broker {message.link[1]} failed to answer: {done}")
            return
        self._reply_with(message, done.result())

    def _reply_with(self, message: _Message, response: Any) -> None:
        back = (message.link[1], message.link[0])
        if back in self.blocked:
            self.lost += 1
            return
        asyncio.get_running_loop().call_at(self._arrival(back), _resolve, message.future, response)


def _fail(future: asyncio.Future[Any], why: str) -> None:
    if not future.done():
        future.set_exception(BrokerUnreachableError(why))


def _resolve(future: asyncio.Future[Any], response: Any) -> None:
    if not future.done():
        future.set_result(response)


class SimHostTransport:
    """One host's view of the network: `BrokerTransport` (it sends as this host) and `RequestListener`."""

    def __init__(self, network: SimNetwork, host: NetworkHost) -> None:
        self._network = network
        self._host = host

    def register(self, broker_id: int, handler: RequestHandler) -> None:
        self._network.handlers[broker_id] = (handler, self._host)

    def unregister(self, broker_id: int) -> None:
        current = self._network.handlers.get(broker_id)
        if current is not None and current[1] is self._host:
            del self._network.handlers[broker_id]

    async def send(self, broker: Broker, request: Any) -> Any:
        return await self._network.send(self._host, broker, request)
