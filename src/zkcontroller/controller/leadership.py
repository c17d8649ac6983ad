"""Small facts about partition leadership the context keeps count of: Kafka's leader-epoch sentinels, the
preferred-leader rule behind ``PreferredReplicaImbalanceCount``, and the meters the state layer marks."""

from __future__ import annotations

from dataclasses import dataclass

from zkcontroller.model import LeaderIsrAndControllerEpoch, ReplicaAssignment

EPOCH_DURING_DELETE = -2
"""``LeaderAndIsr.EpochDuringDelete``."""
NO_EPOCH = -1
"""``LeaderAndIsr.NoEpoch``."""


@dataclass(slots=True)
class ControllerStats:
    """Kafka's ``ControllerStats`` meters that the state layer marks; never reset (survives `reset_context`)."""

    unclean_leader_elections: int = 0


def has_preferred_leader(assignment: ReplicaAssignment, leadership: LeaderIsrAndControllerEpoch) -> bool:
    """§4.4: led by RS[0]; a preferred replica still being added counts as balanced until it is in the ISR.

    An empty RS has no preferred replica and counts as balanced (Kafka would fail on ``replicas.head``).
    """
    if not assignment.replicas:
        return True
    preferred = assignment.replicas[0]
    if assignment.is_being_reassigned and preferred in assignment.adding_replicas:
        return preferred not in leadership.leader_and_isr.isr
    return leadership.leader_and_isr.leader == preferred
