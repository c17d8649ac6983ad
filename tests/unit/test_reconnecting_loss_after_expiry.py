"""A CONNECTIONLOSS that reaches `ReconnectingSession` after its session was already told it expired (on kazoo the
two come to the loop from different threads, in either order) is final: the retry fails with SESSION_EXPIRED. It
used to wait for the session's next state, which an expired session never has: the request, and the controller
event that made it, hung for good."""

from __future__ import annotations

import asyncio

import pytest
from tests.helpers import ManualClock, Recorder, wait_until

from zkcontroller.coordination.api import SessionState, Watcher
from zkcontroller.coordination.embedded import EmbeddedServer
from zkcontroller.coordination.embedded_session import EmbeddedSession
from zkcontroller.coordination.errors import ConnectionLossError, SessionExpiredError
from zkcontroller.coordination.reconnecting import ReconnectingSession


@pytest.mark.parametrize("told", [SessionState.EXPIRED, SessionState.CLOSED])
async def test_a_loss_settled_after_the_session_ended_is_final(told: SessionState) -> None:
    server = EmbeddedServer(ManualClock(1_000))
    inner = EmbeddedSession(server, 6000)
    session = ReconnectingSession(inner)
    states = Recorder()
    inner.add_session_listener(states)
    if told is SessionState.EXPIRED:
        server.expire_session(inner.session_id)
    else:
        await inner.close()
    await wait_until(lambda: told in states.seen, what=f"the session told {told.name}")

    async def lost_before_the_end(path: str, watch: Watcher | None = None) -> None:
        del inner.exists  # type: ignore[attr-defined]  # the retry goes to the session itself
        raise ConnectionLossError(path)

    inner.exists = lost_before_the_end  # type: ignore[method-assign]
    with pytest.raises(SessionExpiredError):
        await asyncio.wait_for(session.exists("/"), 10)
    assert session.retries == 1


async def test_a_loss_that_keeps_coming_after_the_session_ended_is_final_at_once() -> None:
    """An ended session whose every request answers CONNECTIONLOSS (kazoo's, settling losses after the expiry): the
    retry used to loop without ever awaiting, the event loop spinning for good. It fails with SESSION_EXPIRED,
    chained to the loss."""
    server = EmbeddedServer(ManualClock(1_000))
    inner = EmbeddedSession(server, 6000)
    session = ReconnectingSession(inner)
    server.expire_session(inner.session_id)

    calls = 0

    async def always_lost(path: str, watch: Watcher | None = None) -> None:
        nonlocal calls
        calls += 1
        if calls > 100:  # the bound: a spinning retry never yields to a timer, so it is counted instead
            raise AssertionError("the retry spins on an ended session")
        raise ConnectionLossError(path)

    inner.exists = always_lost  # type: ignore[method-assign]
    with pytest.raises(SessionExpiredError) as raised:
        await session.exists("/")
    assert isinstance(raised.value.__cause__, ConnectionLossError)
    assert session.retries == 1
    # Kafka's ZooKeeperClientExpiredException text, as its "Error processing event" line shows it; the path kept
    assert str(raised.value) == "Session expired either before or while waiting for connection"
    assert raised.value.path == "/"
