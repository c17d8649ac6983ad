"""ControllerChannelManager: one FIFO queue and one sender task per broker (spec §7.3–§7.4).

A request to a broker that is registered but unreachable is retried after a 100 ms back-off until it goes
through or the broker is removed, so it blocks only that broker's queue. Responses are handed to
``on_response``, which only enqueues a controller event. How bytes reach a broker is the transport's
business (`protocol.transport`): in-process, simulated, or over the wire.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from zkcontroller.model import Broker
from zkcontroller.protocol.control_requests import AnyControlRequest, ControlResponse
from zkcontroller.protocol.transport import BrokerTransport, BrokerUnreachableError, ConnectionFailedError, node_string
from zkcontroller.runtime.log_lines import exception_line
from zkcontroller.runtime.runtime import Runtime

log = logging.getLogger("kafka.controller.ControllerChannelManager")
send_thread_log = logging.getLogger("kafka.controller.RequestSendThread")
"""Kafka's per-broker sender thread's logger (``[RequestSendThread controllerId=N] ``)."""

SEND_BACKOFF_MS = 100


ResponseCallback = Callable[[int, AnyControlRequest, ControlResponse], None]


@dataclass
class _BrokerChannel:
    broker: Broker
    queue: asyncio.Queue[AnyControlRequest]
    task: asyncio.Task[None] | None = None


class ControllerChannelManager:
    def __init__(
        self,
        controller_id: int,
        transport: BrokerTransport,
        on_response: ResponseCallback,
        epoch: Callable[[], int],
        runtime: Runtime,
    ) -> None:
        self.controller_id = controller_id
        self._transport = transport
        self._on_response = on_response
        self._epoch = epoch
        self._runtime = runtime
        self._channels: dict[int, _BrokerChannel] = {}
        self.requests_handed_to_transport = 0

    @property
    def total_queue_size(self) -> int:
        return sum(c.queue.qsize() for c in self._channels.values())

    def broker_ids(self) -> list[int]:
        return sorted(self._channels)

    def startup(self, brokers: list[Broker]) -> None:
        for broker in sorted(brokers, key=lambda b: b.id):
            self.add_broker(broker)

    def add_broker(self, broker: Broker) -> None:
        if broker.id in self._channels:
            return
        channel = _BrokerChannel(broker, asyncio.Queue())
        self._channels[broker.id] = channel  # first: the sender runs while its channel is the broker's
        channel.task = self._runtime.spawn(
            self._send_loop(channel), f"Controller-{self.controller_id}-to-broker-{broker.id}-send-thread"
        )

    def remove_broker(self, broker_id: int) -> None:
        """Stop the sender; requests still queued or in flight to this broker are dropped."""
        channel = self._channels.pop(broker_id, None)
        if channel is not None and channel.task is not None:
            channel.task.cancel()

    def send_request(self, broker_id: int, request: AnyControlRequest) -> None:
        channel = self._channels.get(broker_id)
        if channel is None:
            log.warning("[Channel manager on controller %d]: Not sending request %s to broker %d, since it is offline.",
                        self.controller_id, type(request).__name__, broker_id)
            return
        channel.queue.put_nowait(request)

    def shutdown(self) -> None:
        for broker_id in list(self._channels):
            self.remove_broker(broker_id)

    async def _send_loop(self, channel: _BrokerChannel) -> None:
        while self._channels.get(channel.broker.id) is channel:
            request = await channel.queue.get()
            response = await self._send_until_delivered(channel, request)
            if response is None:
                return
            self._on_response(channel.broker.id, request, response)

    async def _send_until_delivered(self, channel: _BrokerChannel, request: AnyControlRequest,
                                    ) -> ControlResponse | None:
        """The response, or None once the channel was removed: its sender stops (Kafka's RequestSendThread checks
        ``isRunning`` before each retry). The task's cancellation alone is not enough: on Python 3.11
        ``asyncio.wait_for`` can swallow it when the send it guards ends at that moment, and a resigned
        controller would then retry a removed broker every back-off for as long as its process lived."""
        broker = channel.broker
        while self._channels.get(broker.id) is channel:
            try:
                self.requests_handed_to_transport += 1
                return await self._transport.send(broker, request)
            except ConnectionFailedError as e:  # brokerReady() false: nothing was sent
                send_thread_log.warning(
                    "[RequestSendThread controllerId=%d] Controller %d's connection to broker %s was unsuccessful"
                    "\n%s", self.controller_id, self.controller_id, node_string(broker), exception_line(e))
                await self._runtime.sleep_ms(SEND_BACKOFF_MS)
            except (BrokerUnreachableError, OSError, TimeoutError) as e:  # the send or its answer was lost
                send_thread_log.warning(
                    "[RequestSendThread controllerId=%d] Controller %d epoch %d fails to send request %s to broker "
                    "%s. Reconnecting to broker.\n%s", self.controller_id, self.controller_id, self._epoch(),
                    type(request).__name__, node_string(broker), exception_line(e))
                await self._runtime.sleep_ms(SEND_BACKOFF_MS)
        return None

