"""`zk.write_ops` builds `SetDataOp`s without their constructor: they must be the constructor's, field for field,
and the helpers must notice if `SetDataOp` gains or renames a field. Partition-state paths said valid must be valid:
the store does not validate them again."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkcontroller.coordination.api import ANY_VERSION, SetDataOp, check_path_rules
from zkcontroller.coordination.errors import BadArgumentsError
from zkcontroller.model import TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.write_ops import checked_partition_state_paths, partition_state_paths, set_data_ops


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


def test_checked_paths_say_valid_for_plain_topics_and_int_partitions() -> None:
    partitions = [TopicPartition("t", 0), TopicPartition("a.b_c-d", 3), TopicPartition(".x", -1)]
    built, valid = checked_partition_state_paths(partitions)
    assert built == partition_state_paths(partitions)
    assert valid


@pytest.mark.parametrize("partition", [TopicPartition("", 0), TopicPartition(".", 1), TopicPartition("..", 1),
                                       TopicPartition("a\x00b", 1), TopicPartition("a/", 1),
                                       TopicPartition("t", "0/../x"), TopicPartition("t", True)])  # type: ignore[arg-type]
def test_checked_paths_say_not_known_valid_for_a_bad_topic_or_partition(partition: TopicPartition) -> None:
    built, valid = checked_partition_state_paths([TopicPartition("t", 0), partition])
    assert built == [paths.partition_state_path("t", 0), paths.partition_state_path(*partition)]
    assert not valid


@given(st.lists(st.tuples(st.text(alphabet="ab./\x00\u0085é-_", max_size=6), st.integers(-3, 12)), min_size=1,
                max_size=6))
def test_paths_said_valid_pass_the_stores_rules(parts: list[tuple[str, int]]) -> None:
    """Whatever the topic names, a batch said valid has only paths `check_path_rules` accepts (what the store's
    validation of each path would have found)."""
    built, valid = checked_partition_state_paths([TopicPartition(t, p) for t, p in parts])
    if valid:
        for path in built:
            check_path_rules(path)
    else:
        assert any(_rejected(path) for path in built)


def _rejected(path: str) -> bool:
    try:
        check_path_rules(path)
    except BadArgumentsError:
        return True
    return False
