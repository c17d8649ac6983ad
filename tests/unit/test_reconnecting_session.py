"""The CONNECTIONLOSS retry rule: a request made while disconnected completes once the connection is back."""

from __future__ import annotations

import asyncio

import pytest
from tests.helpers import ManualClock, until_idle, wait_until

from zkcontroller.coordination.embedded import EmbeddedServer
from zkcontroller.coordination.embedded_session import EmbeddedSession
from zkcontroller.coordination.errors import ConnectionLossError, SessionExpiredError
from zkcontroller.coordination.reconnecting import ReconnectingSession


async def test_request_during_disconnection_completes_after_reconnect() -> None:
    server = EmbeddedServer(ManualClock(1_000))
    inner = EmbeddedSession(server, 6000)
    session = ReconnectingSession(inner)
    server.disconnect(inner.session_id)
    with pytest.raises(ConnectionLossError):
        await inner.create("/direct")  # the raw session reports the loss
    pending = asyncio.ensure_future(session.create("/retried", b"x"))
    await wait_until(lambda: session.retries > 0, what="the request failed once")
    await until_idle()
    assert not pending.done() and session.retries == 1  # waiting for the connection, not retrying meanwhile
    server.reconnect(inner.session_id)
    assert await asyncio.wait_for(pending, 10) == "/retried"
    assert (await session.get_data("/retried"))[0] == b"x"


async def test_expiry_while_waiting_is_final() -> None:
    clock = ManualClock(1_000)
    server = EmbeddedServer(clock)
    inner = EmbeddedSession(server, 6000)
    session = ReconnectingSession(inner)
    server.disconnect(inner.session_id)
    pending = asyncio.ensure_future(session.exists("/"))
    await wait_until(lambda: session.retries > 0, what="the request failed once")
    clock.now_ms += 6000
    server.tick()
    server.reconnect(inner.session_id)  # the client learns it expired
    with pytest.raises(SessionExpiredError):
        await asyncio.wait_for(pending, 10)


async def test_each_wait_after_a_loss_says_kafkas_wait_until_connected_lines() -> None:
    """Kafka's ``retryRequestsUntilConnected`` calls ``waitUntilConnected`` after a CONNECTIONLOSS: "Waiting until
    connected.", then "Connected." once the connection is back; an expiry meanwhile throws after the first line."""
    clock = ManualClock(1_000)
    server = EmbeddedServer(clock)
    inner = EmbeddedSession(server, 6000)
    said: list[str] = []
    session = ReconnectingSession(inner, said.append)
    assert await session.exists("/") is not None and said == []  # nothing said without a loss
    server.disconnect(inner.session_id)
    pending = asyncio.ensure_future(session.create("/retried", b"x"))
    await wait_until(lambda: session.retries > 0, what="the request failed once")
    await until_idle()
    assert said == ["Waiting until connected."]
    server.reconnect(inner.session_id)
    assert await asyncio.wait_for(pending, 10) == "/retried"
    assert said == ["Waiting until connected.", "Connected."]
    said.clear()
    server.disconnect(inner.session_id)
    pending = asyncio.ensure_future(session.exists("/"))
    await wait_until(lambda: session.retries > 1, what="the request failed once more")
    clock.now_ms += 6000
    server.tick()
    server.reconnect(inner.session_id)  # the client learns it expired
    with pytest.raises(SessionExpiredError):
        await asyncio.wait_for(pending, 10)
    assert said == ["Waiting until connected."]
