"""The TCP transport's disconnect line says why the connection went, each cause in its own words, and whom it was to
(the controller for AlterIsr and controlled shutdown, else a broker). A cancelled request was once always "the broker
was removed", though only the controller channel's sender is cancelled that way: an AlterIsr or a fetch cancelled
by its sender's own timeout (`broker.timeouts.within`) read the same."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator

import pytest
from tests.helpers import ManualRuntime, until_idle, wait_until

from zkcontroller.broker.timeouts import send_with_timeout, within
from zkcontroller.model import Broker, EndPoint
from zkcontroller.protocol.control_requests import UpdateMetadataRequest
from zkcontroller.protocol.inter_broker import ControlledShutdownRequest, FetchRequest
from zkcontroller.protocol.transport import BrokerUnreachableError
from zkcontroller.runtime.tcp_transport import TcpTransport

LOGGER = "kafka.controller.RequestSendThread"


class _Runtime(ManualRuntime):
    rng = random.Random(3)


class _Silent:
    """A peer that reads every request and answers none; `hang_up` closes its side."""

    def __init__(self) -> None:
        self.arrived = asyncio.Event()
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        await reader.read(1)
        self.arrived.set()
        await reader.read()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    def hang_up(self) -> None:
        for writer in self.writers:
            writer.close()


@pytest.fixture
async def silent() -> AsyncIterator[tuple[_Silent, Broker]]:
    peer = _Silent()
    port = await peer.start()
    yield peer, Broker(1, (EndPoint("127.0.0.1", port, "PLAINTEXT", "PLAINTEXT"),))
    peer.hang_up()
    assert peer.server is not None
    peer.server.close()


def _lines(caplog: pytest.LogCaptureFixture, port: int) -> list[str]:
    return [r.getMessage().replace(f":{port}:", ":PORT:") for r in caplog.records if r.name == LOGGER]


def _port(broker: Broker) -> int:
    return broker.endpoints[0].port


async def test_the_transports_request_timeout_names_the_controller_and_its_bound(
        silent: tuple[_Silent, Broker], caplog: pytest.LogCaptureFixture) -> None:
    peer, controller = silent
    caplog.set_level(logging.INFO, LOGGER)
    runtime = _Runtime()
    transport = TcpTransport(runtime, request_timeout_ms=30000)  # type: ignore[arg-type]
    send = asyncio.ensure_future(transport.send(controller, ControlledShutdownRequest(2, 7)))
    await asyncio.wait_for(peer.arrived.wait(), 30)
    await wait_until(lambda: runtime.sleeping() == [30000], timeout_s=30, what="the request timeout armed")
    runtime.advance(30000)
    with pytest.raises(BrokerUnreachableError):
        await asyncio.wait_for(send, 30)
    await transport.close()
    assert _lines(caplog, _port(controller)) == [
        "Disconnected from controller 1 at 127.0.0.1:PORT: request timed out after 30000 ms"]


async def test_a_senders_own_timeout_is_said_as_such_not_as_a_broker_removed(
        silent: tuple[_Silent, Broker], caplog: pytest.LogCaptureFixture) -> None:
    """AlterIsr's and the fetcher's bound (`send_with_timeout`) ends before the transport's request timeout."""
    peer, leader = silent
    caplog.set_level(logging.INFO, LOGGER)
    runtime = _Runtime()
    transport = TcpTransport(runtime, request_timeout_ms=30000)  # type: ignore[arg-type]
    send = asyncio.ensure_future(send_with_timeout(transport, runtime, leader,  # type: ignore[arg-type]
                                                   FetchRequest(2), 500))
    await asyncio.wait_for(peer.arrived.wait(), 30)
    await wait_until(lambda: sorted(runtime.sleeping()) == [500, 30000], timeout_s=30, what="both bounds armed")
    runtime.advance(500)
    with pytest.raises(BrokerUnreachableError, match=r"^no answer from broker 1 within 500 ms$"):
        await asyncio.wait_for(send, 30)
    await transport.close()
    assert _lines(caplog, _port(leader)) == [
        "Disconnected from broker 1 at 127.0.0.1:PORT: request cancelled: no answer within 500 ms"]


async def test_a_sender_that_stops_says_so(silent: tuple[_Silent, Broker], caplog: pytest.LogCaptureFixture) -> None:
    peer, controller = silent
    caplog.set_level(logging.INFO, LOGGER)
    runtime = _Runtime()
    transport = TcpTransport(runtime, request_timeout_ms=30000)  # type: ignore[arg-type]
    work = transport.send(controller, ControlledShutdownRequest(2, 7))
    sender = asyncio.ensure_future(within(runtime, work, 5000, TimeoutError))  # type: ignore[arg-type]
    await asyncio.wait_for(peer.arrived.wait(), 30)
    await until_idle()
    sender.cancel()  # the AlterIsr manager or a fetcher shut down while its request was out
    await wait_until(lambda: bool(_lines(caplog, _port(controller))), timeout_s=30, what="the disconnect line")
    assert sender.cancelled()
    await transport.close()
    assert _lines(caplog, _port(controller)) == [
        "Disconnected from controller 1 at 127.0.0.1:PORT: request cancelled: its sender stopped"]


async def test_the_controller_channels_cancel_is_the_broker_removed(
        silent: tuple[_Silent, Broker], caplog: pytest.LogCaptureFixture) -> None:
    """The channel manager's `remove_broker` cancels the broker's sender, with no message."""
    peer, broker = silent
    caplog.set_level(logging.INFO, LOGGER)
    transport = TcpTransport(_Runtime(), request_timeout_ms=30000)  # type: ignore[arg-type]
    send = asyncio.ensure_future(transport.send(broker, UpdateMetadataRequest(2, 1, -1)))
    await asyncio.wait_for(peer.arrived.wait(), 30)
    await until_idle()
    send.cancel()
    await wait_until(lambda: bool(_lines(caplog, _port(broker))), timeout_s=30, what="the disconnect line")
    await transport.close()
    assert _lines(caplog, _port(broker)) == [
        "Disconnected from broker 1 at 127.0.0.1:PORT: request cancelled: the broker was removed from the "
        "controller's channel"]


@pytest.mark.parametrize(("request_", "role"), [(UpdateMetadataRequest(2, 1, -1), "broker"),
                                                (ControlledShutdownRequest(2, 7), "controller")])
async def test_a_connection_closed_by_the_peer_says_which_peer(
        silent: tuple[_Silent, Broker], caplog: pytest.LogCaptureFixture, request_: object, role: str) -> None:
    peer, broker = silent
    caplog.set_level(logging.INFO, LOGGER)
    transport = TcpTransport(_Runtime(), request_timeout_ms=30000)  # type: ignore[arg-type]
    send = asyncio.ensure_future(transport.send(broker, request_))
    await asyncio.wait_for(peer.arrived.wait(), 30)
    peer.hang_up()
    with pytest.raises(BrokerUnreachableError):
        await asyncio.wait_for(send, 30)
    await transport.close()
    assert _lines(caplog, _port(broker)) == [f"Disconnected from {role} 1 at 127.0.0.1:PORT: connection closed by "
                                             f"the {role}"]
