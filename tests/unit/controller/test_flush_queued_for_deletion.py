"""A reassignment that completes on a topic queued for deletion still gets its topic znode written with RS = TRS
(B6), as Kafka writes it before resuming the deletion: otherwise the znode keeps RS = ORS + TRS with
adding/removing replicas for the whole deletion, and a controller taking over then deletes the removed replicas
again and halts on their offline brokers (audit deletion-reassign F0)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.events import CompletedReassignmentsFlush
from zkcontroller.controller.reassignment_records import ReassignmentRecords
from zkcontroller.model import ReplicaAssignment, TopicPartition


class FakeZk:
    def __init__(self) -> None:
        self.written: dict[str, Any] = {}

    async def path_exists(self, path: str, watch: Any = None) -> bool:
        return path == "/brokers/topics/doomed"

    async def set_topic_assignment(self, topic: str, _topic_id: Any, assignment: Any, _version: int) -> None:
        self.written[topic] = dict(assignment)

    async def reassign_partitions_in_progress(self) -> bool:
        return False


class Log:
    def info(self, msg: str) -> None:
        pass


async def test_a_completed_reassignment_of_a_topic_queued_for_deletion_is_written() -> None:
    context = ControllerContext()
    context.set_all_topics(["doomed"])
    tp = TopicPartition("doomed", 0)
    context.update_partition_full_replica_assignment(tp, ReplicaAssignment((4, 5, 6)))  # B2 done: RS = TRS
    context.queue_topic_deletion(["doomed"])
    zk = FakeZk()
    core = SimpleNamespace(zk=zk, log=Log(), is_active=True, events=SimpleNamespace(put=lambda e: None))
    deletion = SimpleNamespace(is_topic_queued_up_for_deletion=lambda t: t in context.topics_to_be_deleted)
    records = ReassignmentRecords(core, context, deletion)  # type: ignore[arg-type]

    records.completed(tp, (4, 5, 6))
    await records.flush(CompletedReassignmentsFlush())

    assert zk.written == {"doomed": {tp: ReplicaAssignment((4, 5, 6))}}
