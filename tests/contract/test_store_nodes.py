"""Contract: nodes, stats, versions, errors and sequential names — identical on both backends."""

from __future__ import annotations

import asyncio

import pytest

from zkcontroller.coordination.api import CoordinationSession, CreateMode
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.errors import (
    BadArgumentsError,
    BadVersionError,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
)


async def test_create_read_stat(session: CoordinationSession) -> None:
    assert await session.create("/a", b"hello") == "/a"
    data, stat = await session.get_data("/a")
    assert data == b"hello"
    assert stat.version == 0 and stat.cversion == 0 and stat.aversion == 0
    assert stat.czxid == stat.mzxid == stat.pzxid > 0
    assert stat.ctime == stat.mtime > 0
    assert stat.ephemeral_owner == 0
    assert stat.data_length == 5 and stat.num_children == 0
    assert await session.exists("/a") == stat
    assert await session.exists("/missing") is None


async def test_set_data_versions_and_zxids(session: CoordinationSession) -> None:
    await session.create("/v", b"0")
    _, created = await session.get_data("/v")
    st1 = await session.set_data("/v", b"1", version=0)
    assert st1.version == 1 and st1.mzxid > created.czxid and st1.czxid == created.czxid
    assert st1.mtime >= created.mtime
    with pytest.raises(BadVersionError):
        await session.set_data("/v", b"x", version=0)
    st2 = await session.set_data("/v", b"22")  # unconditional
    assert st2.version == 2 and st2.data_length == 2
    assert (await session.get_data("/v"))[0] == b"22"
    with pytest.raises(BadVersionError):
        await session.delete("/v", version=1)
    await session.delete("/v", version=2)
    assert await session.exists("/v") is None


async def test_parent_stat_tracks_children(session: CoordinationSession) -> None:
    await session.create("/p")
    _, before = await session.get_data("/p")
    await session.create("/p/c1")
    _, c1 = await session.get_data("/p/c1")
    await session.create("/p/c2")
    _, after = await session.get_data("/p")
    assert after.num_children == 2 and after.cversion == 2
    assert after.pzxid > c1.czxid and after.mzxid == before.mzxid and after.version == 0
    assert await session.get_children("/p") == ["c1", "c2"]
    await session.delete("/p/c1")
    _, after_delete = await session.get_data("/p")
    assert after_delete.cversion == 3 and after_delete.num_children == 1


async def test_errors(session: CoordinationSession) -> None:
    with pytest.raises(NoNodeError):
        await session.create("/no/parent")
    await session.create("/e")
    with pytest.raises(NodeExistsError):
        await session.create("/e")
    await session.create("/e/child")
    with pytest.raises(NotEmptyError):
        await session.delete("/e")
    await session.create("/eph", mode=CreateMode.EPHEMERAL)
    with pytest.raises(NoChildrenForEphemeralsError):
        await session.create("/eph/child")
    for call in (session.get_data("/nope"), session.set_data("/nope", b""), session.delete("/nope"),
                 session.get_children("/nope")):
        with pytest.raises(NoNodeError):
            await call
    for bad in ("relative", "/trailing/", "/a//b", "/a/./b", "/a/../b", ""):
        with pytest.raises(BadArgumentsError):
            await session.create(bad)


async def test_sequential_names_count_child_creations(session: CoordinationSession) -> None:
    """ZooKeeper 3.8 numbers by child creations; deletes bump cversion but not the number."""
    await session.create("/seq")
    first = await session.create("/seq/isr_change_", mode=CreateMode.PERSISTENT_SEQUENTIAL)
    assert first == "/seq/isr_change_0000000000"
    await session.delete(first)
    await session.create("/seq/other")
    third = await session.create("/seq/isr_change_", b"x", CreateMode.PERSISTENT_SEQUENTIAL)
    assert third == "/seq/isr_change_0000000002"
    assert (await session.exists("/seq")).cversion == 4  # type: ignore[union-attr]
    await session.delete("/seq/other")
    eph = await session.create("/seq/e-", mode=CreateMode.EPHEMERAL_SEQUENTIAL)
    assert eph == "/seq/e-0000000003"
    assert (await session.exists(eph)).ephemeral_owner == session.session_id  # type: ignore[union-attr]


async def test_ephemeral_owner_and_czxid_order(backend: CoordinationBackend) -> None:
    """Broker epochs are czxids: a later registration always has a larger one."""
    s1 = await backend.new_session()
    s2 = await backend.new_session()
    try:
        await s1.create("/ids")
        await s1.create("/ids/1", b"{}", CreateMode.EPHEMERAL)
        await s2.create("/ids/2", b"{}", CreateMode.EPHEMERAL)
        st1 = await s2.exists("/ids/1")
        st2 = await s1.exists("/ids/2")
        assert st1 is not None and st2 is not None
        assert st1.ephemeral_owner == s1.session_id and st2.ephemeral_owner == s2.session_id
        assert s1.session_id != s2.session_id
        assert st2.czxid > st1.czxid
    finally:
        await s1.close()
        await s2.close()


async def test_pipelined_requests(session: CoordinationSession) -> None:
    await session.create("/pipe")
    paths = await asyncio.gather(*(session.create(f"/pipe/n{i:03d}", str(i).encode()) for i in range(300)))
    assert paths == [f"/pipe/n{i:03d}" for i in range(300)]
    reads = await asyncio.gather(*(session.get_data(p) for p in paths))
    assert [d for d, _ in reads] == [str(i).encode() for i in range(300)]
    czxids = [st.czxid for _, st in reads]
    assert czxids == sorted(czxids) and len(set(czxids)) == 300  # FIFO per session


async def test_ensure_path_and_delete_recursive(session: CoordinationSession) -> None:
    await session.ensure_path("/x/y/z")
    await session.ensure_path("/x/y/z")
    await session.create("/x/y/z/leaf", b"1")
    await session.create("/x/y/w")
    await session.delete_recursive("/x/y")
    assert await session.get_children("/x") == []
    await session.delete_recursive("/x/none")
