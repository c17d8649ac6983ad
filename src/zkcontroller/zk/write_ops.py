"""Store write ops built in bulk: a broker failure writes 20,000 partition states in one step.

`SetDataOp` is a frozen slotted dataclass; its generated ``__init__`` is a Python frame that sets each field
through ``object.__setattr__``. Here each op is made by ``object.__new__`` and its three slots are set through
their descriptors, all C calls: about half the time per op (tests/unit/zk/test_write_ops.py checks the ops are
equal to the constructor's and that the field list is still (path, data, version)).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from zkcontroller.coordination.api import SetDataOp, validate_path
from zkcontroller.coordination.errors import BadArgumentsError
from zkcontroller.model import TopicPartition
from zkcontroller.zk import paths

_new = object.__new__
_slots: Mapping[str, Any] = vars(SetDataOp)  # the slots' member descriptors
_set_path, _set_data, _set_version = (_slots[name].__set__ for name in ("path", "data", "version"))


def set_data_ops(op_paths: Iterable[str], data: Iterable[bytes | None], versions: Iterable[int]) -> list[SetDataOp]:
    """``[SetDataOp(p, d, v) for p, d, v in zip(op_paths, data, versions, strict=True)]``, built in C."""
    out = []
    for path, value, version in zip(op_paths, data, versions, strict=True):
        op = _new(SetDataOp)
        _set_path(op, path)
        _set_data(op, value)
        _set_version(op, version)
        out.append(op)
    return out


def partition_state_paths(partitions: Sequence[TopicPartition]) -> list[str]:
    """`paths.partition_state_path` of each partition, with each topic's prefix made once (the partitions of a
    topic usually come together: sorted, they always do)."""
    return checked_partition_state_paths(partitions)[0]


def checked_partition_state_paths(partitions: Sequence[TopicPartition]) -> tuple[list[str], bool]:
    """`partition_state_paths`, and whether every path is known to pass `validate_path`: each topic's prefix
    ``/brokers/topics/<topic>/partitions`` is validated once, and a prefix that passes stays valid with
    ``/<int>/state`` after it (a decimal integer, sign included, is a valid node name). False when a prefix fails or
    a partition is not an ``int``: the store then validates every path, and raises for the bad one as before."""
    prefix_of: dict[str, str] = {}
    valid = True
    out = []
    for topic, partition in partitions:
        prefix = prefix_of.get(topic)
        if prefix is None:
            prefix = prefix_of[topic] = paths.partition_state_path(topic, 0)[: -len("0/state")]
            if valid and not _valid_path(prefix[:-1]):
                valid = False
        if type(partition) is not int:
            valid = False
        out.append(f"{prefix}{partition}/state")
    return out, valid


def _valid_path(path: str) -> bool:
    try:
        validate_path(path)
    except BadArgumentsError:
        return False
    return True
