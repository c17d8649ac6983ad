"""The batch writer's size estimate is an upper bound of the real wire size (kazoo's jute serializer),
so a batch within our budget can never exceed ZooKeeper's request limit."""

from __future__ import annotations

from typing import cast

from hypothesis import given
from hypothesis import strategies as st
from kazoo.protocol import serialization as jute
from kazoo.security import OPEN_ACL_UNSAFE

from zkcontroller.coordination.api import CheckOp, CoordinationSession, CreateOp, DeleteOp, Op, SetDataOp
from zkcontroller.zk.fencing import (
    DEFAULT_MAX_MULTI_BYTES,
    ZOOKEEPER_MAX_REQUEST_BYTES,
    BatchLimits,
    FencedBatchWriter,
    estimated_multi_size,
    estimated_size,
)

REQUEST_HEADER_AND_LENGTH = 4 + 4 + 4  # length prefix, xid, type


def to_kazoo(op: Op) -> object:
    if isinstance(op, CreateOp):
        return jute.Create(op.path, op.data, OPEN_ACL_UNSAFE, 0)
    if isinstance(op, SetDataOp):
        return jute.SetData(op.path, op.data, op.version)
    if isinstance(op, DeleteOp):
        return jute.Delete(op.path, op.version)
    return jute.CheckVersion(op.path, op.version)


paths = st.text(alphabet="abcz019/_-é", min_size=1, max_size=80).map(lambda p: "/" + p)
data = st.binary(max_size=300)
ops = st.one_of(
    st.builds(CreateOp, paths, data),
    st.builds(SetDataOp, paths, data, st.integers(-1, 2**31 - 1)),
    st.builds(DeleteOp, paths, st.integers(-1, 2**31 - 1)),
    st.builds(CheckOp, paths, st.integers(0, 2**31 - 1)),
)


@given(st.lists(ops, min_size=1, max_size=50))
def test_estimate_bounds_the_serialized_multi(batch: list[Op]) -> None:
    wire = len(jute.Transaction([to_kazoo(op) for op in batch]).serialize()) + REQUEST_HEADER_AND_LENGTH
    assert wire <= estimated_multi_size(batch)


def test_budget_leaves_room_under_zookeepers_limit() -> None:
    assert DEFAULT_MAX_MULTI_BYTES * 2 <= ZOOKEEPER_MAX_REQUEST_BYTES + 1


@given(st.lists(ops, max_size=60), st.integers(150, 2000), st.integers(1, 7))
def test_batches_are_cut_where_the_estimate_says(batch: list[Op], max_bytes: int, max_ops: int) -> None:
    """The writer's split (its size estimate inlined) cuts where `estimated_size` op by op would."""
    writer: FencedBatchWriter[int] = FencedBatchWriter(
        cast(CoordinationSession, None), 0, BatchLimits(max_multi_bytes=max_bytes, max_multi_ops=max_ops))
    writer._split_into_batches(list(enumerate(batch)))
    expected: list[list[int]] = []
    empty = estimated_multi_size([CheckOp("/controller_epoch", 0)])
    size = empty
    for i, op in enumerate(batch):
        if expected and expected[-1] and (size + estimated_size(op) > max_bytes or len(expected[-1]) >= max_ops):
            expected.append([])
            size = empty
        if not expected:
            expected.append([])
        expected[-1].append(i)
        size += estimated_size(op)
    assert [[key for key, _ in part] for part in writer._pending] == expected
