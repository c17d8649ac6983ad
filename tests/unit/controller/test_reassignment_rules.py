"""The pure rules of KIP-455 reassignment (spec §9.7): Kafka's ``reassignTo`` and the API target checks."""

from __future__ import annotations

import pytest

from zkcontroller.controller.assignment import reassign_to, render_assignment
from zkcontroller.controller.reassignment_rules import validate_replicas
from zkcontroller.model import ReplicaAssignment
from zkcontroller.protocol.control_requests import Errors


@pytest.mark.parametrize(("current", "target", "expected"), [
    (ReplicaAssignment((1, 2)), (2, 3), ReplicaAssignment((2, 3, 1), (3,), (1,))),
    (ReplicaAssignment((1, 2, 3)), (4, 5, 6), ReplicaAssignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))),
    # a new target while one runs: ORS is kept, the superseded adding replica 3 is no longer in RS
    (ReplicaAssignment((2, 3, 1), (3,), (1,)), (2, 4), ReplicaAssignment((2, 4, 1), (4,), (1,))),
    # cancelling is reassigning to ORS = RS - AR, in RS's order
    (ReplicaAssignment((2, 3, 1), (3,), (1,)), (2, 1), ReplicaAssignment((2, 1))),
    (ReplicaAssignment((1, 2)), (1, 2), ReplicaAssignment((1, 2))),
])
def test_reassign_to_is_kafkas(current: ReplicaAssignment, target: tuple[int, ...],
                               expected: ReplicaAssignment) -> None:
    result = reassign_to(current, target)
    assert result == expected
    assert result.target_replicas == target or not result.is_being_reassigned
    assert set(result.origin_replicas) == set(current.origin_replicas)


def test_render_is_kafkas_to_string() -> None:
    assert render_assignment(ReplicaAssignment((2, 3, 1), (3,), (1,))) == (
        "ReplicaAssignment(replicas=2,3,1, addingReplicas=3, removingReplicas=1)")


@pytest.mark.parametrize(("target", "message"), [
    ((), "Empty replica list specified in partition reassignment."),
    ((2, 2), "Duplicate replica ids in partition reassignment replica list: List(2, 2)"),
    ((2, -1), "Invalid broker id in replica list: List(2, -1)"),
    ((2, 9), "Replica assignment has brokers that are not alive. Replica list: List(9), live broker list: "
             "Set(1, 2, 3)"),
])
def test_invalid_targets_are_refused_with_kafkas_messages(target: tuple[int, ...], message: str) -> None:
    error = validate_replicas(target, ReplicaAssignment((1, 2)), {1, 2, 3})
    assert error is not None and error.error is Errors.INVALID_REPLICA_ASSIGNMENT and error.message == message


def test_a_valid_target_passes_even_when_an_original_replica_is_offline() -> None:
    assert validate_replicas((2, 3), ReplicaAssignment((1, 2)), {2, 3}) is None
