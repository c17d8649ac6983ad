"""KIP-455's pure rules for a reassignment: how RS/AR/RR follow from a target, how Kafka renders them, and
which API targets are refused. Kept apart from the phases so they can be read and tested without a controller.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from zkcontroller.controller.events import ApiError
from zkcontroller.model import ReplicaAssignment
from zkcontroller.protocol.control_requests import Errors


def reassign_to(current: ReplicaAssignment, target: Sequence[int]) -> ReplicaAssignment:
    """Kafka's ``ReplicaAssignment.reassignTo``: RS = (TRS ++ ORS).distinct, AR = RS − ORS, RR = RS − TRS."""
    origin = current.origin_replicas
    full = tuple(dict.fromkeys((*target, *origin)))
    return ReplicaAssignment(full, tuple(r for r in full if r not in origin),
                             tuple(r for r in full if r not in target))


def render_assignment(a: ReplicaAssignment) -> str:
    """Kafka's ``ReplicaAssignment.toString``."""
    def ids(rs: Iterable[int]) -> str:
        return ",".join(str(r) for r in rs)
    return (f"ReplicaAssignment(replicas={ids(a.replicas)}, addingReplicas={ids(a.adding_replicas)}, "
            f"removingReplicas={ids(a.removing_replicas)})")


def validate_replicas(replicas: Sequence[int], current: ReplicaAssignment, live: set[int]) -> ApiError | None:
    """``validateReplicas``: an API target must be non-empty, distinct, non-negative, new replicas alive."""
    shown = f"List({', '.join(str(r) for r in replicas)})"
    if not replicas:
        return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "Empty replica list specified in partition reassignment.")
    if len(set(replicas)) != len(replicas):
        return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT,
                        f"Duplicate replica ids in partition reassignment replica list: {shown}")
    if any(r < 0 for r in replicas):
        return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, f"Invalid broker id in replica list: {shown}")
    adding = reassign_to(current, replicas).adding_replicas
    if not set(adding) <= live:
        return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT,
                        f"Replica assignment has brokers that are not alive. Replica list: "
                        f"List({', '.join(str(r) for r in adding)}), live broker list: "
                        f"Set({', '.join(str(b) for b in sorted(live))})")
    return None
