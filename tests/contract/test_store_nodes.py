"""Contract: nodes, stats, versions, errors and sequential names — identical on both backends."""

from __future__ import annotations

import asyncio

import pytest

from zkcontroller.coordination.api import CreateMode
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.errors import (
    BadArgumentsError,
    BadVersionError,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
)


async def test_create_read_stat(backend: CoordinationBackend) -> None:
    s = await backend.new_session()
    try:
        assert await s.create("/a", b"hello") == "/a"
        data, stat = await s.get_data("/a")
        assert data == b"hello"
        assert stat.version == 0 and stat.cversion == 0 and stat.aversion == 0
        assert stat.czxid == stat.mzxid == stat.pzxid > 0
        assert stat.ctime == stat.mtime > 0
        assert stat.ephemeral_owner == 0
        assert stat.data_length == 5 and stat.num_children == 0
        assert await s.exists("/a") == stat
        assert await s.exists("/missing") is None
    finally:
        await s.close()


async def test_set_data_versions_and_zxids(backend: CoordinationBackend) -> None:
    s = await backend.new_session()
    try:
        await s.create("/v", b"0")
        _, created = await s.get_data("/v")
        st1 = await s.set_data("/v", b"1", version=0)
        assert st1.version == 1 and st1.mzxid > created.czxid and st1.czxid == created.czxid
        assert st1.mtime >= created.mtime
        with pytest.raises(BadVersionError):
            await s.set_data("/v", b"x", version=0)
        st2 = await s.set_data("/v", b"22")  # unconditional
        assert st2.version == 2 and st2.data_length == 2
        assert (await s.get_data("/v"))[0] == b"22"
        with pytest.raises(BadVersionError):
            await s.delete("/v", version=1)
        await s.delete("/v", version=2)
        assert await s.exists("/v") is None
    finally:
        await s.close()


async def test_parent_stat_tracks_children(backend: CoordinationBackend) -> None:
    s = await backend.new_session()
    try:
        await s.create("/p")
        _, before = await s.get_data("/p")
        await s.create("/p/c1")
        _, c1 = await s.get_data("/p/c1")
        await s.create("/p/c2")
        _, after = await s.get_data("/p")
        assert after.num_children == 2 and after.cversion == 2
        assert after.pzxid > c1.czxid and after.mzxid == before.mzxid and after.version == 0
        assert await s.get_children("/p") == ["c1", "c2"]
        await s.delete("/p/c1")
        _, after_delete = await s.get_data("/p")
        assert after_delete.cversion == 3 and after_delete.num_children == 1
    finally:
        await s.close()


async def test_errors(backend: CoordinationBackend) -> None:
    s = await backend.new_session()
    try:
        with pytest.raises(NoNodeError):
            await s.create("/no/parent")
        await s.create("/e")
        with pytest.raises(NodeExistsError):
            await s.create("/e")
        await s.create("/e/child")
        with pytest.raises(NotEmptyError):
            await s.delete("/e")
        await s.create("/eph", mode=CreateMode.EPHEMERAL)
        with pytest.raises(NoChildrenForEphemeralsError):
            await s.create("/eph/child")
        for call in (s.get_data("/nope"), s.set_data("/nope", b""), s.delete("/nope"), s.get_children("/nope")):
            with pytest.raises(NoNodeError):
                await call
        for bad in ("relative", "/trailing/", "/a//b", "/a/./b", "/a/../b", ""):
            with pytest.raises(BadArgumentsError):
                await s.create(bad)
    finally:
        await s.close()


async def test_sequential_names_count_child_creations(backend: CoordinationBackend) -> None:
    """ZooKeeper 3.8 numbers by child creations; deletes bump cversion but not the number."""
    s = await backend.new_session()
    try:
        await s.create("/seq")
        first = await s.create("/seq/isr_change_", mode=CreateMode.PERSISTENT_SEQUENTIAL)
        assert first == "/seq/isr_change_0000000000"
        await s.delete(first)
        await s.create("/seq/other")
        third = await s.create("/seq/isr_change_", b"x", CreateMode.PERSISTENT_SEQUENTIAL)
        assert third == "/seq/isr_change_0000000002"
        assert (await s.exists("/seq")).cversion == 4  # type: ignore[union-attr]
        await s.delete("/seq/other")
        eph = await s.create("/seq/e-", mode=CreateMode.EPHEMERAL_SEQUENTIAL)
        assert eph == "/seq/e-0000000003"
        assert (await s.exists(eph)).ephemeral_owner == s.session_id  # type: ignore[union-attr]
    finally:
        await s.close()


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


async def test_pipelined_requests(backend: CoordinationBackend) -> None:
    s = await backend.new_session()
    try:
        await s.create("/pipe")
        paths = await asyncio.gather(*(s.create(f"/pipe/n{i:03d}", str(i).encode()) for i in range(300)))
        assert paths == [f"/pipe/n{i:03d}" for i in range(300)]
        reads = await asyncio.gather(*(s.get_data(p) for p in paths))
        assert [d for d, _ in reads] == [str(i).encode() for i in range(300)]
        czxids = [st.czxid for _, st in reads]
        assert czxids == sorted(czxids) and len(set(czxids)) == 300  # FIFO per session
    finally:
        await s.close()


async def test_ensure_path_and_delete_recursive(backend: CoordinationBackend) -> None:
    s = await backend.new_session()
    try:
        await s.ensure_path("/x/y/z")
        await s.ensure_path("/x/y/z")
        await s.create("/x/y/z/leaf", b"1")
        await s.create("/x/y/w")
        await s.delete_recursive("/x/y")
        assert await s.get_children("/x") == []
        await s.delete_recursive("/x/none")
    finally:
        await s.close()
