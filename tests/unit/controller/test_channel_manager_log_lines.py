"""The controller's channel lines as Kafka 2.8.2 writes them: a failed send under ``RequestSendThread`` with its
``[RequestSendThread controllerId=N] `` ident and the broker as ``Node.toString``; a request to a broker with no
channel under ``ControllerChannelManager`` with ``[Channel manager on controller N]: ``; and events without fields
printed as Kafka's case objects (``Reelect``, not ``Reelect()``)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from zkcontroller.controller.channel_manager import ControllerChannelManager
from zkcontroller.controller.events import Reelect, TopicDeletionStopReplicaResponseReceived
from zkcontroller.model import Broker, EndPoint
from zkcontroller.protocol.control_requests import StopReplicaRequest
from zkcontroller.protocol.transport import connection_failed, disconnected
from zkcontroller.runtime.runtime import AsyncioRuntime

BROKER = Broker(3, (EndPoint("broker3.example", 9093, "PLAINTEXT", "PLAINTEXT"),), "r1")


class _Unreachable:
    def __init__(self) -> None:
        self.tried = asyncio.Event()

    async def send(self, broker: Broker, request: object) -> object:
        self.tried.set()
        raise connection_failed(broker)


async def test_a_failed_send_and_an_offline_broker(caplog: pytest.LogCaptureFixture) -> None:
    transport = _Unreachable()
    manager = ControllerChannelManager(2, transport, lambda *_: None, lambda: 5, AsyncioRuntime())  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING):
        manager.send_request(1, StopReplicaRequest(2, 5, -1))
        manager.add_broker(BROKER)
        manager.send_request(3, StopReplicaRequest(2, 5, -1))
        await asyncio.wait_for(transport.tried.wait(), 10)
        manager.shutdown()
    offline = [r.getMessage() for r in caplog.records if r.name == "kafka.controller.ControllerChannelManager"]
    assert offline == ["[Channel manager on controller 2]: Not sending request StopReplicaRequest to broker 1, "
                       "since it is offline."]
    failed = [r.getMessage() for r in caplog.records if r.name == "kafka.controller.RequestSendThread"]
    # no connection, so nothing sent: brokerReady()'s line, as in Kafka 2.8's controller.log for a dead broker
    assert failed[0] == ("[RequestSendThread controllerId=2] Controller 2's connection to broker "
                         "broker3.example:9093 (id: 3 rack: r1) was unsuccessful"
                         "\njava.io.IOException: Connection to broker3.example:9093 (id: 3 rack: r1) failed.")


class _Disconnecting(_Unreachable):
    async def send(self, broker: Broker, request: object) -> object:
        self.tried.set()
        raise disconnected(broker.id)


async def test_a_send_lost_in_flight(caplog: pytest.LogCaptureFixture) -> None:
    """A request sent and its connection lost before the answer: the send loop's own catch, "fails to send"."""
    transport = _Disconnecting()
    manager = ControllerChannelManager(2, transport, lambda *_: None, lambda: 5, AsyncioRuntime())  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING):
        manager.add_broker(BROKER)
        manager.send_request(3, StopReplicaRequest(2, 5, -1))
        await asyncio.wait_for(transport.tried.wait(), 10)
        manager.shutdown()
    failed = [r.getMessage() for r in caplog.records if r.name == "kafka.controller.RequestSendThread"]
    assert failed[0] == ("[RequestSendThread controllerId=2] Controller 2 epoch 5 fails to send request "
                         "StopReplicaRequest to broker broker3.example:9093 (id: 3 rack: r1). Reconnecting to broker."
                         "\njava.io.IOException: Connection to 3 was disconnected before the response was read")


def test_an_event_without_fields_prints_as_a_case_object() -> None:
    assert f"{Reelect()}" == "Reelect"
    with_fields = TopicDeletionStopReplicaResponseReceived(broker_id=1)
    assert f"{with_fields}" == repr(with_fields) and "broker_id=1" in f"{with_fields}"  # fields still shown
