"""Contract: `get_data_many` (bulk reads) — order, missing nodes, stats, watches — identical on both backends.

On real ZooKeeper an unwatched bulk read goes out as ``multiRead`` batches of up to 1,000 reads; a watched one
is pipelined single reads (ZooKeeper arms no watch inside a ``multiRead``). Both must honour the same contract.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from tests.helpers import Recorder, settle_watches

from zkcontroller.coordination.api import CoordinationSession, CreateOp, EventType, SessionState, WatchedEvent
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.errors import BadArgumentsError, ErrorCode, ZkError
from zkcontroller.coordination.kazoo_store import KazooSession


async def _fill(backend: CoordinationBackend, n: int) -> list[str]:
    s = await backend.new_session()
    await s.create("/m")
    paths = [f"/m/n{i}" for i in range(n)]
    for start in range(0, n, 500):
        await s.multi([CreateOp(p, f"v{i}".encode()) for i, p in enumerate(paths[start : start + 500], start)])
    await s.set_data(paths[1], b"changed")
    await s.close()
    return paths


async def test_bulk_read_keeps_order_data_and_stats_with_none_for_missing(
    backend: CoordinationBackend, session: CoordinationSession
) -> None:
    paths = await _fill(backend, 2500)  # more than two multiRead batches
    asked = [*paths, "/m/missing", paths[0], "/nowhere/deep"]
    got = await session.get_data_many(asked)
    assert len(got) == len(asked)
    assert got[-1] is None and got[-3] is None
    for i, path in enumerate(paths):
        item = got[i]
        assert item is not None
        expected = b"changed" if i == 1 else f"v{i}".encode()
        assert item[0] == expected, path
    assert got[-2] == got[0]
    single_data, single_stat = await session.get_data(paths[1])
    assert got[1] == (single_data, single_stat)
    assert single_stat.version == 1 and single_stat.data_length == len(b"changed")
    assert await session.get_data_many([]) == []


async def test_bulk_read_empty_data_is_empty_bytes(session: CoordinationSession) -> None:
    await session.create("/e")
    [item] = await session.get_data_many(["/e"])
    assert item is not None and item[0] == b""


@pytest.fixture
async def three_nodes(backend: CoordinationBackend
                      ) -> AsyncIterator[tuple[list[str], CoordinationSession, CoordinationSession]]:
    """Three nodes under /m (``_fill``), a watching session and a writing session."""
    paths = await _fill(backend, 3)
    w, s = await backend.new_session(), await backend.new_session()
    yield paths, w, s
    await w.close()
    await s.close()


async def test_watched_bulk_read_arms_a_watch_on_each_existing_node_only(
    three_nodes: tuple[list[str], CoordinationSession, CoordinationSession]
) -> None:
    paths, w, s = three_nodes
    rec = Recorder()
    got = await w.get_data_many([*paths, "/m/later"], rec)
    assert got[-1] is None
    await s.create("/m/later")  # no watch was armed on the missing node
    await s.set_data(paths[2], b"x")
    assert await rec.next() == WatchedEvent(EventType.NODE_DATA_CHANGED, SessionState.CONNECTED, paths[2])
    await settle_watches(w, s, "/m")
    assert rec.pending() == []


async def test_unwatched_bulk_read_arms_nothing(
    three_nodes: tuple[list[str], CoordinationSession, CoordinationSession]
) -> None:
    paths, w, s = three_nodes
    rec = Recorder()
    await w.get_data_many(paths)
    await w.get_data(paths[0], rec)  # the only watch armed
    await s.set_data(paths[1], b"x")
    await s.set_data(paths[0], b"x")
    assert await rec.next() == WatchedEvent(EventType.NODE_DATA_CHANGED, SessionState.CONNECTED, paths[0])
    await settle_watches(w, s, "/m")
    assert rec.pending() == []


async def test_bulk_read_rejects_a_bad_path_naming_it(session: CoordinationSession) -> None:
    with pytest.raises(BadArgumentsError, match="bad/"):
        await session.get_data_many(["/ok", "bad/"])
    with pytest.raises(ValueError, match="max_in_flight"):
        await session.get_data_many(["/ok"], max_in_flight=0)


async def test_server_without_multi_read_falls_back_to_pipelined_reads(
    backend: CoordinationBackend, session: CoordinationSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server before 3.6 answers ``multiRead`` with UNIMPLEMENTED: the session pipelines from then on."""
    paths = await _fill(backend, 5)
    if not isinstance(session, KazooSession):
        pytest.skip("multiRead is the ZooKeeper backend's")
    calls = []

    async def unimplemented(chunk: list[str]) -> list[None]:
        calls.append(len(chunk))
        err = ZkError(chunk[0], "UNIMPLEMENTED")
        err.code = ErrorCode.UNIMPLEMENTED
        raise err

    monkeypatch.setattr(session, "_read_chunk", unimplemented)
    first = await session.get_data_many(paths)
    second = await session.get_data_many(paths)
    assert calls == [5]  # asked once, then never again
    assert first == second and all(item is not None for item in first)
    assert [item[0] for item in first if item is not None] == [b"v0", b"changed", b"v2", b"v3", b"v4"]
