"""`zk.write_ops` builds `SetDataOp`s without their constructor: they must be the constructor's, field for field,
and the helpers must notice if `SetDataOp` gains or renames a field."""

from __future__ import annotations

import dataclasses

from zkcontroller.coordination.api import ANY_VERSION, SetDataOp
from zkcontroller.model import TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.write_ops import partition_state_paths, set_data_ops


def test_set_data_op_still_has_the_three_slots_set_here() -> None:
    assert [f.name for f in dataclasses.fields(SetDataOp)] == ["path", "data", "version"]


def test_ops_equal_the_constructors() -> None:
    args = [("/a", b"x", 3), ("/b/c", None, ANY_VERSION), ("/d", b"", 0)]
    built = set_data_ops(*zip(*args, strict=True))
    assert built == [SetDataOp(*a) for a in args]
    assert [type(op) for op in built] == [SetDataOp] * 3
    assert [hash(op) for op in built] == [hash(SetDataOp(*a)) for a in args]


def test_partition_state_paths_are_paths_partition_state_path() -> None:
    partitions = [TopicPartition("t", 0), TopicPartition("t", 12), TopicPartition("a.b_c-d", 3), TopicPartition("t", 5)]
    expected = [paths.partition_state_path(tp.topic, tp.partition) for tp in partitions]
    assert partition_state_paths(partitions) == expected
