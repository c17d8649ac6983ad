"""An abandoned reassignment (its topic is queued for deletion) drops its ISR-change watch handler, as a completed
one does: otherwise resignation, which unregisters the handlers of partitions still being reassigned, never
removes it, and every later change of that state znode queues a no-op event (audit deletion-reassign F5)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.core import WatchRegistry
from zkcontroller.controller.reassignment import PartitionReassignments
from zkcontroller.controller.reassignment_phases import _isr_change_handler
from zkcontroller.coordination.api import EventType, SessionState, WatchedEvent
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.zk import paths


class QueuedDeletion:
    def __init__(self) -> None:
        self.resumed: list[set[str]] = []

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        return topic == "doomed"

    async def resume_deletion_for_topics(self, topics: set[str]) -> None:
        self.resumed.append(set(topics))


class Log:
    def info(self, msg: str) -> None:
        pass


async def test_abandoning_a_reassignment_unregisters_its_isr_change_handler() -> None:
    queued: list[Any] = []
    watches = WatchRegistry(queued.append)
    context = ControllerContext()
    tp = TopicPartition("doomed", 0)
    context.update_partition_full_replica_assignment(tp, ReplicaAssignment((4, 1), adding_replicas=(4,),
                                                                           removing_replicas=(1,)))
    context.partitions_being_reassigned.add(tp)
    state_path = paths.partition_state_path(tp.topic, tp.partition)
    watches.register_node_handler(state_path, _isr_change_handler(tp))
    deletion = QueuedDeletion()
    core = SimpleNamespace(context=context, watches=watches, log=Log())
    family = PartitionReassignments(core, deletion)  # type: ignore[arg-type]

    await family.maybe_resume_reassignments_on_brokers({4})

    assert tp not in context.partitions_being_reassigned
    assert deletion.resumed == [{"doomed"}]
    watches.on_watch(WatchedEvent(EventType.NODE_DATA_CHANGED, SessionState.CONNECTED, state_path))
    assert queued == []
