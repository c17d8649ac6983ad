"""A `KazooSession.connect` whose caller is cancelled (Ctrl-C) while ``client.start`` runs: the thread cannot be
cancelled, so the start may still connect; the client must then be stopped, not left pinging with its threads
and socket for the rest of the process."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from kazoo.client import KazooClient

from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess
from zkcontroller.coordination.kazoo_store import KazooSession

BOUND_S = 10.0
"""Upper bound on every wait here (each ends as soon as its condition holds)."""


def _kazoo_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if "zk_loop" in t.name or "kazoo" in t.name.lower()}


@pytest.mark.zookeeper
async def test_a_start_that_connects_after_its_caller_was_cancelled_is_stopped(
    zookeeper_server: ZooKeeperServerProcess, monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_start = KazooClient.start
    entered, release, returned = threading.Event(), threading.Event(), threading.Event()
    connected: list[bool] = []

    def gated_start(client: KazooClient, *args: Any, **kwargs: Any) -> None:
        """Hold the start until the caller is cancelled, then really connect."""
        entered.set()
        release.wait(BOUND_S)
        try:
            real_start(client, *args, **kwargs)
        finally:
            connected.append(client.connected)
            returned.set()

    monkeypatch.setattr(KazooClient, "start", gated_start)
    before = _kazoo_threads()
    connecting = asyncio.create_task(KazooSession.connect(zookeeper_server.connect_string))
    assert await asyncio.to_thread(entered.wait, BOUND_S)
    connecting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await connecting

    release.set()
    assert await asyncio.to_thread(returned.wait, BOUND_S)
    assert connected == [True]  # it did connect after all: only a stop can end its threads
    for thread in _kazoo_threads() - before:
        await asyncio.to_thread(thread.join, BOUND_S)
    assert not {t.name for t in _kazoo_threads() - before if t.is_alive()}
