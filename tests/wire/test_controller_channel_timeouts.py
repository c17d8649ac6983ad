"""Audit F5: the controller-to-broker channel's timeouts come from Kafka's keys, as ControllerChannelManager
sets them: the NetworkClient's request timeout is ``request.timeout.ms``; connecting (RequestSendThread's
``awaitReady``) waits ``controller.socket.timeout.ms``, and no longer than the NetworkClient's connection-setup
timeout (``socket.connection.setup.timeout.ms`` doubling per failed attempt to ``.max.ms``, ±20%)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from zkcontroller.cluster.broker_process import BrokerProcess
from zkcontroller.cluster.server_properties import broker_properties, parse_properties
from zkcontroller.model import Broker, EndPoint
from zkcontroller.protocol.control_requests import UpdateMetadataRequest
from zkcontroller.protocol.transport import BrokerUnreachableError
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.runtime.tcp_transport import TcpTransport

BASE = "broker.id=1\nlisteners=PLAINTEXT://127.0.0.1:0\nzookeeper.connect=127.0.0.1:2181\n"


def test_broker_process_takes_the_channel_timeouts_from_kafkas_keys() -> None:
    props = broker_properties(parse_properties(BASE), [
        "request.timeout.ms=7000", "controller.socket.timeout.ms=4000",
        "socket.connection.setup.timeout.ms=3000", "socket.connection.setup.timeout.max.ms=60000"])
    transport = BrokerProcess(props).transport
    assert (transport.request_timeout_ms, transport.connect_timeout_ms) == (7000, 4000)
    assert (transport.connection_setup_timeout_ms, transport.connection_setup_timeout_max_ms) == (3000, 60000)
    defaults = BrokerProcess(broker_properties(parse_properties(BASE))).transport
    assert (defaults.request_timeout_ms, defaults.connect_timeout_ms) == (30000, 30000)
    assert (defaults.connection_setup_timeout_ms, defaults.connection_setup_timeout_max_ms) == (10000, 127000)


class _NeverConnects:
    """An ``open_connection`` whose connection never completes (a peer that drops SYNs), until cancelled."""

    def __init__(self) -> None:
        self.cancelled = asyncio.Event()

    async def __call__(self, *address: Any) -> Any:
        try:
            await asyncio.Event().wait()
        finally:
            self.cancelled.set()


_BROKER = Broker(2, (EndPoint("127.0.0.1", 9, "PLAINTEXT", "PLAINTEXT"),))


@pytest.mark.parametrize(("kwargs", "wait_ms"), [
    ({"connect_timeout_ms": 150}, 150),  # controller.socket.timeout.ms below the setup timeout
    ({"connect_timeout_ms": 30000, "connection_setup_timeout_ms": 120, "connection_setup_timeout_max_ms": 120}, 120),
])
async def test_a_hanging_connect_is_abandoned_at_the_first_bound(kwargs: dict[str, int], wait_ms: int) -> None:
    transport = TcpTransport(AsyncioRuntime(), request_timeout_ms=60000, **kwargs)
    never = _NeverConnects()
    transport._open_connection = never  # type: ignore[assignment]
    # The error's detail names the bound the transport waited on: the first one, not the request timeout (60 s),
    # which does not apply; its message is Kafka's. The outer bound only ends a test that would otherwise hang.
    with pytest.raises(BrokerUnreachableError, match=r"^Connection to 127\.0\.0\.1:9 \(id: 2 rack: null\) failed\.$"
                       ) as failed:
        await asyncio.wait_for(transport.send(_BROKER, UpdateMetadataRequest(1, 1, -1)), 30)
    assert failed.value.detail == f"no connection within {wait_ms} ms"
    assert never.cancelled.is_set()
    await transport.close()


def test_setup_timeout_grows_per_failed_attempt_with_jitter() -> None:
    transport = TcpTransport(AsyncioRuntime(random.Random(7)))
    for failures, term in [(0, 10000), (1, 20000), (2, 40000), (3, 80000), (4, 127000), (9, 127000)]:
        for _ in range(20):
            assert 0.8 * term <= transport._setup_timeout_ms(failures) <= 1.2 * term, failures
    fixed = TcpTransport(AsyncioRuntime(), connection_setup_timeout_ms=5000, connection_setup_timeout_max_ms=5000)
    assert {fixed._setup_timeout_ms(n) for n in range(5)} == {5000}  # expMax 0: no growth, no jitter
