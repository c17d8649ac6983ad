"""A removed broker's sender stops even when its task's cancellation is lost (Python 3.11's ``asyncio.wait_for``
can swallow one): a resigned controller kept retrying a StopReplica to a removed broker every 100 ms until its
process was killed."""

from __future__ import annotations

import asyncio

from zkcontroller.controller.channel_manager import SEND_BACKOFF_MS, ControllerChannelManager
from zkcontroller.model import Broker, EndPoint
from zkcontroller.protocol.control_requests import StopReplicaRequest
from zkcontroller.protocol.transport import BrokerUnreachableError
from zkcontroller.runtime.runtime import AsyncioRuntime

BROKER = Broker(1, (EndPoint("127.0.0.1", 9, "PLAINTEXT", "PLAINTEXT"),))


class _Unreachable:
    def __init__(self) -> None:
        self.attempts = 0
        self.tried = asyncio.Event()

    async def send(self, broker: Broker, request: object) -> object:
        self.attempts += 1
        self.tried.set()
        raise BrokerUnreachableError(f"broker {broker.id} is down")


async def test_a_removed_brokers_sender_stops_retrying_though_its_cancellation_was_lost() -> None:
    transport = _Unreachable()
    manager = ControllerChannelManager(2, transport, lambda *_: None, lambda: 5, AsyncioRuntime())  # type: ignore[arg-type]
    manager.add_broker(BROKER)
    manager.send_request(1, StopReplicaRequest(2, 5, -1))
    await asyncio.wait_for(transport.tried.wait(), 10)
    task = manager._channels[1].task
    assert task is not None
    task.cancel = lambda *_a, **_k: False  # type: ignore[method-assign]  # the cancellation wait_for swallowed
    manager.remove_broker(1)
    attempts = transport.attempts
    try:
        await asyncio.wait({task}, timeout=100 * SEND_BACKOFF_MS / 1000)  # it ends after its current back-off
        assert task.done(), f"still retrying: {transport.attempts - attempts} attempts after the removal"
    finally:
        asyncio.Task.cancel(task)
    assert transport.attempts == attempts
    assert manager.broker_ids() == []


async def test_a_broker_added_again_gets_a_sender_of_its_own() -> None:
    transport = _Unreachable()
    manager = ControllerChannelManager(2, transport, lambda *_: None, lambda: 5, AsyncioRuntime())  # type: ignore[arg-type]
    manager.add_broker(BROKER)
    first = manager._channels[1].task
    manager.remove_broker(1)
    manager.add_broker(BROKER)
    manager.send_request(1, StopReplicaRequest(2, 5, -1))
    await asyncio.wait_for(transport.tried.wait(), 10)
    assert first is not None and first.cancelled()
    manager.shutdown()
