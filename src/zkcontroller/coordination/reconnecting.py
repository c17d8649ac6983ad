"""Kafka's ZooKeeperClient retry rule (spec §1.7): a request that fails with CONNECTIONLOSS is sent again once
the session is connected again, as often as it takes; any other outcome, session expiry included, is final, and so
is a loss that comes after the session ended (it fails as SESSION_EXPIRED).

A retried write may find its own earlier, committed attempt (NODEEXISTS, BADVERSION): the Kafka-level callers
that care (controller election, broker registration) check for exactly that, as Kafka's do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from zkcontroller.coordination.api import CoordinationSession, SessionState
from zkcontroller.coordination.delegating import DelegatingSession
from zkcontroller.coordination.errors import ConnectionLossError, SessionExpiredError

T = TypeVar("T")

STALE_STATE_BACKOFF_S = 0.05
"""Pause before retrying when the session still looks connected right after a connection loss."""


EXPIRED_WHILE_WAITING = "Session expired either before or while waiting for connection"
"""The message of Kafka's ZooKeeperClientExpiredException, thrown where a retried CONNECTIONLOSS finds the session
ended (`ReconnectingSession`): what the controller's "Error processing event" line shows under it."""

class ReconnectingSession(DelegatingSession):
    """Wraps a session so that connection losses are waited out instead of reaching the caller.

    A batch read (`get_data_many`) is re-sent whole after a loss: reads are idempotent, and the loss disarmed
    every watch, so re-reading re-arms them all."""

    def __init__(self, inner: CoordinationSession, say: Callable[[str], None] | None = None) -> None:
        """``say``: where Kafka's ``waitUntilConnected`` lines go ("Waiting until connected." before each wait
        after a loss, "Connected." once it is over), as a broker's ZooKeeperClient logs them."""
        super().__init__(inner)
        self._connected = asyncio.Event()
        if inner.state is SessionState.CONNECTED:
            self._connected.set()
        inner.add_session_listener(self._on_state)
        self.retries = 0
        self._say = say

    def _on_state(self, state: SessionState) -> None:
        if state is SessionState.DISCONNECTED:
            self._connected.clear()
        else:  # connected again, or gone for good: either way waiters must wake up
            self._connected.set()

    async def _forward(self, call: Callable[[], Awaitable[T]]) -> T:
        while True:
            try:
                return await call()
            except ConnectionLossError as loss:
                self.retries += 1
                if self._say is not None:
                    self._say("Waiting until connected.")
                state = self.inner.state
                if state is SessionState.CONNECTED:
                    await asyncio.sleep(STALE_STATE_BACKOFF_S)
                elif state is SessionState.DISCONNECTED:
                    self._connected.clear()
                    await self._connected.wait()
                else:
                    # The session already ended (expired, closed): kazoo can settle a request's loss after its
                    # session was told EXPIRED (the two reach the loop from different threads). No state change is
                    # coming, and a retry could answer CONNECTIONLOSS again, looping without ever awaiting: final.
                    # Kafka's retry (``waitUntilConnected``) throws ZooKeeperClientExpiredException here: its text.
                    expired = SessionExpiredError(None, EXPIRED_WHILE_WAITING)
                    expired.path = loss.path
                    raise expired from loss
                if self._say is not None and self.inner.state is SessionState.CONNECTED:
                    self._say("Connected.")  # an ended session's retry fails on its own, as Kafka's wait throws
