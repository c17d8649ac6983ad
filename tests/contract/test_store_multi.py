"""Contract: `multi` applies all ops or none and reports ZooKeeper's per-op results — on both backends."""

from __future__ import annotations

import pytest

from zkcontroller.coordination.api import (
    CheckedOps,
    CheckOp,
    CheckResult,
    CoordinationSession,
    CreateMode,
    CreateOp,
    CreateResult,
    DeleteOp,
    DeleteResult,
    ErrorResult,
    SetDataOp,
    SetDataResult,
    check_multi_ops,
)
from zkcontroller.coordination.errors import BadArgumentsError, ErrorCode

OK, RI = ErrorCode.OK, ErrorCode.RUNTIME_INCONSISTENCY


async def test_multi_success_results(session: CoordinationSession) -> None:
    await session.create("/epoch", b"0")
    result = await session.multi(
        [
            CheckOp("/epoch", 0),
            CreateOp("/controller", b'{"brokerid":1}', CreateMode.EPHEMERAL),
            SetDataOp("/epoch", b"1", 0),
            CreateOp("/seq-", b"", CreateMode.PERSISTENT_SEQUENTIAL),
            DeleteOp("/seq-0000000002"),
        ]
    )
    assert result.ok and result.code is OK and result.failed_index() is None
    check, create, set_data, seq, delete = result.results
    assert check == CheckResult() and delete == DeleteResult()
    assert create == CreateResult("/controller") and seq == CreateResult("/seq-0000000002")
    assert isinstance(set_data, SetDataResult) and set_data.stat.version == 1
    _, controller = await session.get_data("/controller")
    assert controller.ephemeral_owner == session.session_id
    assert controller.czxid == set_data.stat.mzxid  # one transaction, one zxid
    assert await session.exists("/seq-0000000002") is None


async def test_multi_is_all_or_nothing(session: CoordinationSession) -> None:
    await session.create("/epoch", b"5")
    await session.set_data("/epoch", b"6")
    before = await session.exists("/")
    result = await session.multi(
        [
            CreateOp("/a"),
            CreateOp("/a/b", b"x"),
            SetDataOp("/epoch", b"7", 0),  # stale version: the fencing case
            CreateOp("/c"),
        ]
    )
    assert not result.ok
    assert result.results == (ErrorResult(OK), ErrorResult(OK), ErrorResult(ErrorCode.BAD_VERSION),
                              ErrorResult(RI))
    assert result.code is ErrorCode.BAD_VERSION and result.failed_index() == 2
    assert await session.exists("/a") is None and await session.exists("/c") is None
    assert (await session.get_data("/epoch"))[0] == b"6"
    after = await session.exists("/")
    assert after is not None and before is not None and after.cversion == before.cversion


async def test_multi_per_op_error_codes(session: CoordinationSession) -> None:
    await session.create("/x", b"")
    await session.create("/x/y", b"")
    cases = [
        ([CheckOp("/missing", 0)], 0, ErrorCode.NO_NODE),
        ([CreateOp("/x")], 0, ErrorCode.NODE_EXISTS),
        ([CheckOp("/x", 0), DeleteOp("/x")], 1, ErrorCode.NOT_EMPTY),
        ([DeleteOp("/x/y", 3)], 0, ErrorCode.BAD_VERSION),
        ([CreateOp("/q/r")], 0, ErrorCode.NO_NODE),
        ([CreateOp("/e", mode=CreateMode.EPHEMERAL), CreateOp("/e/c")], 1,
         ErrorCode.NO_CHILDREN_FOR_EPHEMERALS),
    ]
    for ops, index, code in cases:
        result = await session.multi(ops)
        assert result.failed_index() == index, ops
        assert result.code is code, ops
        assert isinstance(result.results[index], ErrorResult)
    assert await session.exists("/e") is None
    assert await session.get_children("/x") == ["y"]


async def test_multi_sees_its_own_earlier_ops(session: CoordinationSession) -> None:
    result = await session.multi(
        [CreateOp("/t"), CreateOp("/t/p"), SetDataOp("/t/p", b"v", 0), CheckOp("/t/p", 1), DeleteOp("/t/p", 1)]
    )
    assert result.ok
    assert await session.get_children("/t") == []
    assert (await session.multi([])).results == ()


async def test_checked_ops_apply_as_a_list_does(session: CoordinationSession) -> None:
    """`CheckedOps` skip the per-path validation only: results, versions and atomicity are a list's."""
    await session.create("/a", b"0")
    await session.create("/b", b"0")
    result = await session.multi(CheckedOps((CheckOp("/a", 0), SetDataOp("/a", b"1", 0), SetDataOp("/b", b"1"))))
    assert result.ok and [type(r) for r in result.results] == [CheckResult, SetDataResult, SetDataResult]
    failed = await session.multi(CheckedOps((SetDataOp("/a", b"2", 1), SetDataOp("/b", b"2", 7))))
    assert failed.results == (ErrorResult(OK), ErrorResult(ErrorCode.BAD_VERSION))
    assert (await session.get_data("/a"))[0] == b"1"


def test_check_multi_ops_passes_checked_ops_on_and_validates_the_rest() -> None:
    checked = CheckedOps((SetDataOp("/a", b""),))
    assert check_multi_ops(checked) is checked
    assert check_multi_ops((SetDataOp("/a", b""),)) == [SetDataOp("/a", b"")]
    with pytest.raises(BadArgumentsError):
        check_multi_ops([SetDataOp("/a", b""), SetDataOp("/b/", b"")])
