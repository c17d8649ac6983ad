"""Contract: ZooKeeper keeps null data apart from empty data, and so do both backends.

A znode created with no data (``zkCli.sh create /x``, or Kafka's ``createRecursive``, which writes null) reads back
as None, not b"": through a single read, a bulk read (``multiRead`` on a real server, unwatched; pipelined single
reads, watched) and after a set or a multi. Its stat's ``dataLength`` is 0, as for empty data.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from zkcontroller.coordination.api import CoordinationSession, CreateOp, SetDataOp, Stat, WatchedEvent


def _no_watch(_event: WatchedEvent) -> None:
    pass


BulkRead = Callable[[CoordinationSession, list[str]], object]


@pytest.mark.parametrize("watched", [False, True], ids=["multiRead", "pipelined"])
async def test_null_and_empty_data_round_trip(session: CoordinationSession, watched: bool) -> None:
    await session.create("/null", None)
    await session.create("/empty", b"")
    await session.create("/full", b"x")

    null_data, null_stat = await session.get_data("/null")
    empty_data, empty_stat = await session.get_data("/empty")
    assert null_data is None
    assert empty_data == b""
    assert null_stat.data_length == 0 and empty_stat.data_length == 0

    got = await session.get_data_many(["/null", "/empty", "/full", "/absent"], _no_watch if watched else None)
    assert [None if item is None else item[0] for item in got] == [None, b"", b"x", None]
    assert got[3] is None  # absent: no (data, stat) pair at all
    assert got[0] is not None and got[0][1] == null_stat


async def test_set_data_to_null_and_back(session: CoordinationSession) -> None:
    await session.create("/n", b"data")
    stat = await session.set_data("/n", None)
    assert stat.version == 1 and stat.data_length == 0
    assert (await session.get_data("/n"))[0] is None
    [item] = await session.get_data_many(["/n"])
    assert item is not None and item[0] is None
    await session.set_data("/n", b"")
    assert (await session.get_data("/n"))[0] == b""


async def test_multi_writes_null_data(session: CoordinationSession) -> None:
    result = await session.multi([CreateOp("/a", None), CreateOp("/b", b""), CreateOp("/c", b"c"),
                                  SetDataOp("/c", None)])
    assert result.ok, result
    got = await session.get_data_many(["/a", "/b", "/c"])
    assert [item[0] for item in got if item is not None] == [None, b"", None]
    stats: list[Stat] = [item[1] for item in got if item is not None]
    assert [s.data_length for s in stats] == [0, 0, 0]


async def test_ensure_path_writes_null_data_as_kafka_s_create_recursive(session: CoordinationSession) -> None:
    """Kafka's ``makeSurePersistentPathExists``/``createRecursive`` create the node and its parents with null
    data; so does `ensure_path` (a Kafka broker reads ``/latest_producer_id_block`` holding null as "no block yet",
    but empty data as a block it cannot parse)."""
    await session.ensure_path("/p/q")
    assert [(await session.get_data(p))[0] for p in ("/p", "/p/q")] == [None, None]
