"""Embedded-store specifics the simulator relies on: disconnects, timeouts on the injected clock."""

from __future__ import annotations

import asyncio

import pytest
from tests.helpers import ManualClock, Recorder, until_idle

from zkcontroller.coordination.api import CreateMode, EventType, SessionState, WatchedEvent
from zkcontroller.coordination.embedded import EmbeddedServer
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.coordination.embedded_session import EmbeddedSession
from zkcontroller.coordination.errors import ConnectionLossError, SessionExpiredError


async def test_disconnect_within_timeout_keeps_the_session() -> None:
    clock = ManualClock(1_000_000)
    server = EmbeddedServer(clock)
    s = EmbeddedSession(server, 6000)
    await s.create("/e", mode=CreateMode.EPHEMERAL)
    states, watch = Recorder(), Recorder()
    s.add_session_listener(states)
    await s.get_data("/e", watch)
    server.disconnect(s.session_id)
    assert await states.next() is SessionState.DISCONNECTED
    assert await watch.next() == WatchedEvent(EventType.NONE, SessionState.DISCONNECTED, None)
    with pytest.raises(ConnectionLossError):
        await s.exists("/e")
    clock.now_ms += 5999
    server.tick()
    server.reconnect(s.session_id)
    assert await states.next() is SessionState.CONNECTED
    stat = await s.exists("/e")
    assert stat is not None and stat.ephemeral_owner == s.session_id
    assert stat.ctime == 1_000_000  # stamped from the injected clock, not the wall


async def test_silence_past_the_timeout_expires_and_the_client_learns_on_reconnect() -> None:
    clock = ManualClock(1_000_000)
    server = EmbeddedServer(clock)
    victim, other = EmbeddedSession(server, 6000), EmbeddedSession(server, 6000)
    await victim.create("/e", mode=CreateMode.EPHEMERAL)
    states, gone = Recorder(), Recorder()
    victim.add_session_listener(states)
    await other.exists("/e", gone)
    server.disconnect(victim.session_id)
    assert await states.next() is SessionState.DISCONNECTED
    clock.now_ms += 6000
    assert await other.exists("/e") is None  # any request lets the server notice the timeout
    assert await gone.next() == WatchedEvent(EventType.NODE_DELETED, SessionState.CONNECTED, "/e")
    await until_idle()  # every delivery due has arrived
    assert states.pending() == []  # a partitioned client cannot know yet
    server.reconnect(victim.session_id)
    assert await states.next() is SessionState.EXPIRED
    with pytest.raises(SessionExpiredError):
        await victim.exists("/")


async def test_closing_the_backend_ends_its_session_ticker() -> None:
    backend = EmbeddedBackend(ManualClock(1_000_000), tick_ms=10)
    await backend.new_session()
    ticker = backend._ticker
    assert ticker is not None and not ticker.done()
    await backend.close()
    assert ticker.done() and ticker.cancelled()  # ended, not merely asked to: the loop may close right after


async def test_closing_the_backend_completes_in_a_task_being_cancelled() -> None:
    """Ctrl-C and SIGTERM cancel the main task, whose clean-up then closes the backend: the ticker's own
    cancellation must not escape from close() and skip the rest of that clean-up."""
    backend = EmbeddedBackend(ManualClock(1_000_000), tick_ms=10)
    await backend.new_session()
    closed: list[bool] = []

    async def serve() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await backend.close()
            closed.append(True)

    task = asyncio.create_task(serve())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed == [True]
