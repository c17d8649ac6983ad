"""The invariants of topic deletion and partition reassignment (issue 13), checked at the store's write seam,
and what liveness after heal requires of them.

- ``deleted-topic-stays-deleted`` — once ``/brokers/topics/<t>`` has been deleted, nothing writes under it again
  (the workload never re-creates a name, so any such write is a resurrection: a zombie or a stale retry).
- ``replicas-leave-after-target-in-isr`` — a topic-znode write that drops one of a partition's original
  replicas (not one it was only adding) lands only once every replica of the new replica set has been in the
  partition's ISR since the reassignment began: KIP-455 removes the old replicas only after the target set has
  caught up. The ISR may shrink again before the write lands (a target replica's broker fails), since the
  controller records completions in a later event (`CompletedReassignmentsFlush`); what counts is that the
  removal was decided on a caught-up ISR, as Kafka's B1-B5 decide it on the ISR read from ZooKeeper.
- ``reassignment-keeps-an-isr-member`` — while a partition is being reassigned, every partition-state write
  keeps an ISR with at least one member of its replica set.

The ``reassign-drops-origin-early`` mutation (at the same seam) rewrites the controller's first reassignment
write (RS = TRS + ORS, with adding/removing) into RS = TRS at once, as a controller that skipped the wait would.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from zkcontroller.coordination.api import CreateOp, DeleteOp, Op, SetDataOp
from zkcontroller.model import ReplicaAssignment
from zkcontroller.zk import paths
from zkcontroller.zk.znodes import TopicPartitionStateZNode, TopicZNode

if TYPE_CHECKING:
    from zkcontroller.sim.world import SimWorld

ADMIN_INVARIANTS = ("deleted-topic-stays-deleted", "replicas-leave-after-target-in-isr",
                    "reassignment-keeps-an-isr-member")
"""Checked on every landed write of every scenario (the workload's deletions and reassignments)."""

_TOPIC = re.compile(r"^/brokers/topics/([^/]+)$")
_UNDER_TOPIC = re.compile(r"^/brokers/topics/([^/]+)(/.*)?$")
_STATE = re.compile(r"^/brokers/topics/([^/]+)/partitions/(\d+)/state$")


class AdminInvariants:
    """Remembers each topic znode as last written, and which topics were deleted, to judge the next write."""

    def __init__(self, world: SimWorld) -> None:
        self.world = world
        self.deleted: set[str] = set()
        self._assignments: dict[str, dict[int, ReplicaAssignment]] = {}
        self._caught_up: dict[tuple[str, int], frozenset[int]] = {}
        """Per partition being reassigned: its target replicas, once a state write showed them all in the ISR."""

    def on_landed(self, ops: Sequence[Op]) -> None:
        for op in ops:
            under = _UNDER_TOPIC.match(op.path)
            if under is None:
                continue
            topic = under.group(1)
            if isinstance(op, DeleteOp):
                if under.group(2) is None:
                    self.deleted.add(topic)
                    self._assignments.pop(topic, None)
                    self._caught_up = {k: v for k, v in self._caught_up.items() if k[0] != topic}
                continue
            if not isinstance(op, CreateOp | SetDataOp):
                continue
            if topic in self.deleted:
                self.world.checker.violate("deleted-topic-stays-deleted", f"{op.path} written after {topic} was "
                                                                          "deleted")
                return
            if under.group(2) is None and op.data:
                self._on_topic_write(topic, op.data)
                continue
            state = _STATE.match(op.path)
            if state is not None and op.data:
                self._on_state_write(topic, int(state.group(2)), op.path, op.data)

    def _on_topic_write(self, topic: str, data: bytes) -> None:
        decoded = TopicZNode.decode(data, paths.topic_path(topic)).assignment
        new = {tp.partition: a for tp, a in decoded.items()}
        before = self._assignments.get(topic, {})
        self._assignments[topic] = new
        for partition, assignment in sorted(new.items()):
            prev = before.get(partition)
            caught_up = self._caught_up.get((topic, partition))
            if not assignment.is_being_reassigned:
                self._caught_up.pop((topic, partition), None)
            if prev is None:
                continue
            dropped = [r for r in prev.origin_replicas if r not in assignment.replicas]
            if not dropped or caught_up == frozenset(assignment.replicas):
                continue
            isr = self._isr(topic, partition)
            lagging = [r for r in assignment.replicas if r not in isr]
            if lagging:
                self.world.checker.violate(
                    "replicas-leave-after-target-in-isr",
                    f"{topic}-{partition}: replicas {dropped} left RS {list(prev.replicas)} -> "
                    f"{list(assignment.replicas)} while {lagging} not in ISR {sorted(isr)}")
                return

    def _on_state_write(self, topic: str, partition: int, path: str, data: bytes) -> None:
        assignment = self._assignments.get(topic, {}).get(partition)
        if assignment is None or not assignment.is_being_reassigned:
            return
        isr = TopicPartitionStateZNode.decode(data, path, 0).leader_and_isr.isr
        target = frozenset(assignment.target_replicas)
        if target <= set(isr):
            self._caught_up[(topic, partition)] = target
        if not set(isr) & set(assignment.replicas):
            self.world.checker.violate(
                "reassignment-keeps-an-isr-member",
                f"{topic}-{partition} being reassigned ({list(assignment.replicas)}) written with ISR {list(isr)}")

    def _isr(self, topic: str, partition: int) -> set[int]:
        path = paths.partition_state_path(topic, partition)
        found = self.world.zk.read(path)
        if found is None:
            return set()
        return set(TopicPartitionStateZNode.decode(found[0], path, found[1].version).leader_and_isr.isr)


def drop_origin_early(op: Op) -> Op:
    """The ``reassign-drops-origin-early`` mutation: a topic-znode write that still carries replicas being
    removed is rewritten to the target replicas alone."""
    if not isinstance(op, SetDataOp) or _TOPIC.match(op.path) is None or not op.data:
        return op
    decoded = TopicZNode.decode(op.data, op.path)
    if not any(a.removing_replicas for a in decoded.assignment.values()):
        return op
    rewritten = {tp: ReplicaAssignment(a.target_replicas) if a.removing_replicas else a
                 for tp, a in decoded.assignment.items()}
    return SetDataOp(op.path, TopicZNode.encode(decoded.topic_id, rewritten), op.version)


def admin_liveness_problems(world: SimWorld) -> list[str]:
    """After heal: every requested deletion completed, every reassignment completed or cancelled."""
    problems: list[str] = []
    marked = sorted(world.zk.children(paths.DELETE_TOPICS))
    if marked:
        problems.append(f"topics still marked for deletion: {marked}")
    lingering = sorted(set(world.deletions_requested) & set(world.topics()))
    if lingering:
        problems.append(f"topics whose deletion was requested still exist: {lingering}")
    if world.zk.read(paths.REASSIGN_PARTITIONS) is not None:
        problems.append(f"{paths.REASSIGN_PARTITIONS} still exists")
    for topic in world.topics():
        found: Any = world.zk.read(paths.topic_path(topic))
        if found is None:
            continue
        moving = sorted(tp.partition for tp, a in TopicZNode.decode(found[0], paths.topic_path(topic))
                        .assignment.items() if a.is_being_reassigned)
        if moving:
            problems.append(f"{topic} partitions {moving} still being reassigned")
    return problems
