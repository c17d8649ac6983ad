"""`ReplicaAssignment` operations Kafka keeps on the case class (``reassignTo``, ``removeReplica``, toString).

They live here as functions because `zkcontroller.model.ReplicaAssignment` is the znode value and stays
free of controller logic.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from zkcontroller.model import ReplicaAssignment

EMPTY_ASSIGNMENT = ReplicaAssignment(())
"""``ReplicaAssignment.empty``: what the context answers for a partition it does not know."""


def _distinct(replicas: Iterable[int]) -> tuple[int, ...]:
    """Scala's ``Seq.distinct``: first occurrence wins, order kept."""
    return tuple(dict.fromkeys(replicas))


def _diff(replicas: Sequence[int], other: Sequence[int]) -> tuple[int, ...]:
    """Scala's ``Seq.diff`` for duplicate-free sequences: ``replicas`` minus ``other``, order kept."""
    excluded = set(other)
    return tuple(r for r in replicas if r not in excluded)


def reassign_to(assignment: ReplicaAssignment, target: Sequence[int]) -> ReplicaAssignment:
    """The assignment while moving to ``target``: RS = distinct(target ++ ORS), adding = RS − ORS,
    removing = RS − target. Current [1,2,3] → target [3,4,2] gives RS [3,4,2,1], adding [4], removing [1]."""
    origin = assignment.origin_replicas
    full = _distinct([*target, *origin])
    return ReplicaAssignment(full, _diff(full, origin), _diff(full, target))


def remove_replica(assignment: ReplicaAssignment, replica: int) -> ReplicaAssignment:
    """``replica`` dropped from RS, adding and removing (a replica whose deletion completed)."""
    return ReplicaAssignment(
        tuple(r for r in assignment.replicas if r != replica),
        tuple(r for r in assignment.adding_replicas if r != replica),
        tuple(r for r in assignment.removing_replicas if r != replica),
    )


def render_assignment(assignment: ReplicaAssignment) -> str:
    """Kafka's toString: ``ReplicaAssignment(replicas=1,2,3, addingReplicas=, removingReplicas=)``."""
    return (
        f"ReplicaAssignment(replicas={_join(assignment.replicas)}, "
        f"addingReplicas={_join(assignment.adding_replicas)}, "
        f"removingReplicas={_join(assignment.removing_replicas)})"
    )


def _join(replicas: Iterable[int]) -> str:
    return ",".join(str(r) for r in replicas)
