"""Kafka's ``preferredReplicaImbalanceCount``, kept incrementally (spec §4.4).

Recomputing the gauge over every partition on each leadership or assignment change would cost
O(partitions) per transition, so — as Kafka does — each change subtracts the partition's old contribution
and adds its new one. The context decides which partitions count (topics queued for deletion do not).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from zkcontroller.controller.leadership import has_preferred_leader
from zkcontroller.model import LeaderIsrAndControllerEpoch, ReplicaAssignment


@dataclass
class PreferredReplicaImbalance:
    """Number of partitions whose leader is not their preferred (first assigned) replica."""

    count: int = 0

    @staticmethod
    def _imbalanced(assignment: ReplicaAssignment | None, leadership: LeaderIsrAndControllerEpoch | None) -> bool:
        return assignment is not None and leadership is not None and not has_preferred_leader(assignment, leadership)

    def replace(
        self,
        old_assignment: ReplicaAssignment | None,
        old_leadership: LeaderIsrAndControllerEpoch | None,
        new_assignment: ReplicaAssignment | None,
        new_leadership: LeaderIsrAndControllerEpoch | None,
    ) -> None:
        """One partition changed: swap its old contribution for its new one."""
        self.count -= self._imbalanced(old_assignment, old_leadership)
        self.count += self._imbalanced(new_assignment, new_leadership)

    def subtract_topic(
        self,
        assignments: Mapping[int, ReplicaAssignment],
        leadership_of: Callable[[int], LeaderIsrAndControllerEpoch | None],
    ) -> None:
        """A whole topic stops counting (queued for deletion or removed)."""
        for partition, assignment in assignments.items():
            if self._imbalanced(assignment, leadership_of(partition)):
                self.count -= 1
