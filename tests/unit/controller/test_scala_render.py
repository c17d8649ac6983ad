"""Kafka's rendering of Scala collections in log lines (Scala 2.13, as Kafka 2.8.2 is built), and the
"Removing partitions Map(foo-0 -> Buffer(4, 5))" line of ``maybeRemoveFromZkReassignment`` (audit
deletion-reassign F4)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.reassignment_records import ReassignmentRecords
from zkcontroller.controller.scala_render import scala_buffer, scala_map
from zkcontroller.model import TopicPartition
from zkcontroller.zk.znodes import BoundReassignment


def test_maps_and_buffers_print_as_scala_does() -> None:
    assert scala_buffer((4, 5)) == "Buffer(4, 5)"
    assert scala_map({}) == "Map()"
    assert scala_map({"y": "1", "x": "2"}) == "Map(y -> 1, x -> 2)"  # Map1–Map4 keep insertion order
    # a part of a HashMap is a HashMap, however small
    assert scala_map({"y": "1", "x": "2"}, built_from=5) == "HashMap(x -> 2, y -> 1)"


class FakeZk:
    def __init__(self, current: dict[TopicPartition, tuple[int, ...]]) -> None:
        self.current = current
        self.written: Any = None

    async def reassign_partitions_in_progress(self) -> bool:
        return True

    async def get_bound_partition_reassignment(self) -> BoundReassignment:
        return BoundReassignment(dict(self.current), {})

    async def set_or_create_partition_reassignment(self, remaining: Any, _version: int) -> None:
        self.written = remaining

    async def delete_partition_reassignment(self, _version: int) -> None:
        self.written = None


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, msg: str) -> None:
        self.lines.append(msg)


@pytest.mark.parametrize(("current", "expected"), [
    ({TopicPartition("foo", 1): (1,), TopicPartition("foo", 0): (4, 5)},
     "Removing partitions Map(foo-0 -> Buffer(4, 5)) from the list of reassigned partitions in zookeeper"),
    ({TopicPartition("foo", p): (p, 9) for p in range(5)},
     "Removing partitions HashMap(foo-0 -> Buffer(0, 9)) from the list of reassigned partitions in zookeeper"),
])
async def test_removed_reassignments_are_logged_as_a_scala_map_of_buffers(
        current: dict[TopicPartition, tuple[int, ...]], expected: str) -> None:
    log = Log()
    zk = FakeZk(current)
    core = SimpleNamespace(zk=zk, log=log, events=SimpleNamespace(put=lambda e: None))
    records = ReassignmentRecords(core, ControllerContext(), deletion=None)  # type: ignore[arg-type]
    await records.maybe_remove_from_zk(lambda tp, _r: tp == TopicPartition("foo", 0))
    assert log.lines == [expected]
    assert TopicPartition("foo", 0) not in zk.written.targets


