"""A control request before the broker has registered closes the connection quietly: the controller retries it
every back-off (a restarted broker waits out its old registration), and a warning per retry filled the log."""

from __future__ import annotations

import asyncio
import logging
import socket

import pytest
from tests.wire.test_protocol_server import _control

from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.protocol.control_requests import UpdateMetadataRequest
from zkcontroller.runtime.socket_server import SocketServer


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_control_request_before_registration_is_closed_without_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    apis = KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: None, cluster_id=lambda: "c")
    port = _free_port()
    server = SocketServer("127.0.0.1", port, apis.handle, close_on=(CloseConnection,))
    caplog.set_level(logging.DEBUG, logger="kafka.network.Processor")
    await server.start()
    try:
        with pytest.raises(AssertionError, match="closed the connection"):
            await asyncio.to_thread(_control, port, UpdateMetadataRequest(1, 1, 5), 7)
    finally:
        await server.stop()
    closes = [r for r in caplog.records if "not ready for control requests" in r.getMessage()]
    assert [r.levelno for r in closes] == [logging.DEBUG]
