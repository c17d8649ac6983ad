"""Contract: one-shot watches with ZooKeeper's trigger rules, and session events — on both backends."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from tests.helpers import Recorder, settle_watches

from zkcontroller.coordination.api import (
    CoordinationSession,
    CreateMode,
    EventType,
    SessionState,
    WatchedEvent,
)
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.errors import NoNodeError, SessionExpiredError

CONNECTED = SessionState.CONNECTED


def ev(etype: EventType, path: str) -> WatchedEvent:
    return WatchedEvent(etype, CONNECTED, path)


@pytest.fixture
async def pair(backend: CoordinationBackend) -> AsyncIterator[tuple[CoordinationSession, CoordinationSession]]:
    """A watching session and a writing session, with /w created."""
    watcher, writer = await backend.new_session(), await backend.new_session()
    await writer.create("/w")
    yield watcher, writer
    await watcher.close()
    await writer.close()


async def test_data_watch_is_one_shot_and_rearmable(pair: tuple[CoordinationSession, ...]) -> None:
    w, s = pair
    await s.create("/w/n", b"0")
    rec = Recorder()
    await w.get_data("/w/n", rec)
    await s.set_data("/w/n", b"1")
    assert await rec.next() == ev(EventType.NODE_DATA_CHANGED, "/w/n")
    await s.set_data("/w/n", b"2")  # not re-armed: nothing fires
    await settle_watches(w, s, "/w")
    assert rec.pending() == []
    data, _ = await w.get_data("/w/n", rec)  # re-arm by reading, as every Kafka handler does
    assert data == b"2"
    await s.delete("/w/n")
    assert await rec.next() == ev(EventType.NODE_DELETED, "/w/n")


async def test_exists_watch_sees_creation_and_get_data_on_missing_arms_nothing(
    pair: tuple[CoordinationSession, ...],
) -> None:
    w, s = pair
    created, not_armed = Recorder(), Recorder()
    assert await w.exists("/w/later", created) is None
    with pytest.raises(NoNodeError):
        await w.get_data("/w/later", not_armed)
    with pytest.raises(NoNodeError):
        await w.get_children("/w/later", not_armed)
    await s.create("/w/later", mode=CreateMode.EPHEMERAL)
    assert await created.next() == ev(EventType.NODE_CREATED, "/w/later")
    await settle_watches(w, s, "/w")
    assert not_armed.pending() == []


async def test_child_watch_rules(pair: tuple[CoordinationSession, ...]) -> None:
    w, s = pair
    await s.create("/w/p")
    children, data = Recorder(), Recorder()
    assert await w.get_children("/w/p", children) == []
    await w.get_data("/w/p", data)
    await s.create("/w/p/c1")
    assert await children.next() == ev(EventType.NODE_CHILDREN_CHANGED, "/w/p")
    await settle_watches(w, s, "/w")
    assert data.pending() == []  # a child's creation is not a data change of the parent

    await w.get_children("/w/p", children)
    await s.set_data("/w/p/c1", b"x")  # a child's data change is not a child change
    await settle_watches(w, s, "/w")
    assert children.pending() == []
    await s.delete("/w/p/c1")
    assert await children.next() == ev(EventType.NODE_CHILDREN_CHANGED, "/w/p")

    await w.get_children("/w/p", children)
    await s.delete("/w/p")
    assert await children.next() == ev(EventType.NODE_DELETED, "/w/p")
    assert await data.next() == ev(EventType.NODE_DELETED, "/w/p")


async def test_same_watcher_fires_once_per_event(pair: tuple[CoordinationSession, ...]) -> None:
    w, s = pair
    await s.create("/w/d")
    rec = Recorder()
    await w.get_data("/w/d", rec)
    await w.exists("/w/d", rec)
    await w.get_children("/w/d", rec)
    await s.delete("/w/d")
    assert await rec.next() == ev(EventType.NODE_DELETED, "/w/d")
    await settle_watches(w, s, "/w")
    assert rec.pending() == []


async def test_multi_fires_watches_only_when_committed(pair: tuple[CoordinationSession, ...]) -> None:
    from zkcontroller.coordination.api import CheckOp, CreateOp, SetDataOp

    w, s = pair
    await s.create("/w/m", b"0")
    rec, kids = Recorder(), Recorder()
    await w.get_data("/w/m", rec)
    await w.get_children("/w", kids)
    failed = await s.multi([SetDataOp("/w/m", b"1"), CreateOp("/w/new"), CheckOp("/w/m", 7)])
    assert not failed.ok
    await settle_watches(w, s, "/w")
    assert rec.pending() == []
    assert [e.type for e in kids.pending()] == [EventType.NODE_CHILDREN_CHANGED]  # the marker's own
    await w.get_children("/w", kids)
    done = await s.multi([SetDataOp("/w/m", b"1"), CreateOp("/w/new")])
    assert done.ok
    assert await rec.next() == ev(EventType.NODE_DATA_CHANGED, "/w/m")
    assert await kids.next() == ev(EventType.NODE_CHILDREN_CHANGED, "/w")


async def test_ephemerals_vanish_on_close_and_watchers_hear(backend: CoordinationBackend) -> None:
    owner, observer = await backend.new_session(), await backend.new_session()
    try:
        await owner.create("/brokers")
        await owner.create("/brokers/1", b"{}", CreateMode.EPHEMERAL)
        gone, kids = Recorder(), Recorder()
        await observer.exists("/brokers/1", gone)
        await observer.get_children("/brokers", kids)
        await owner.close()
        assert await gone.next() == ev(EventType.NODE_DELETED, "/brokers/1")
        assert await kids.next() == ev(EventType.NODE_CHILDREN_CHANGED, "/brokers")
        assert await observer.exists("/brokers/1") is None
        assert await observer.exists("/brokers") is not None  # persistent nodes stay
    finally:
        await observer.close()


async def test_session_expiry(backend: CoordinationBackend) -> None:
    victim, observer = await backend.new_session(6000), await backend.new_session()
    try:
        await observer.create("/ids")
        await victim.create("/ids/7", b"{}", CreateMode.EPHEMERAL)
        states, victim_watch, observer_watch = Recorder(), Recorder(), Recorder()
        victim.add_session_listener(states)
        await victim.get_children("/ids", victim_watch)
        await observer.exists("/ids/7", observer_watch)

        await backend.expire_session(victim)

        assert await observer_watch.next() == ev(EventType.NODE_DELETED, "/ids/7")
        assert await observer.exists("/ids/7") is None
        # As with a real client: the connection drops first, then the reconnect is told "expired".
        while (state := await states.next()) is not SessionState.EXPIRED:
            assert state in (SessionState.DISCONNECTED, SessionState.CONNECTED)
        assert SessionState.DISCONNECTED in states.seen
        assert victim_watch.seen == [WatchedEvent(EventType.NONE, SessionState.DISCONNECTED, None)]
        assert victim.state is SessionState.EXPIRED
        with pytest.raises(SessionExpiredError):
            await victim.create("/ids/8", b"{}", CreateMode.EPHEMERAL)
        assert await observer.get_children("/ids") == []
    finally:
        await victim.close()
        await observer.close()


async def test_close_tells_listeners(backend: CoordinationBackend) -> None:
    s = await backend.new_session()
    states = Recorder()
    s.add_session_listener(states)
    await s.close()
    assert await states.next() is SessionState.CLOSED
    with pytest.raises(SessionExpiredError):
        await s.exists("/")
