"""KIP-455's pure rules for a reassignment: which API targets are refused. Kept apart from the phases so they
can be read and tested without a controller. How RS/AR/RR follow from a target, and how Kafka renders them, are
`controller.assignment`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from zkcontroller.controller.assignment import reassign_to
from zkcontroller.controller.events import ApiError
from zkcontroller.model import ReplicaAssignment
from zkcontroller.protocol.control_requests import Errors


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
