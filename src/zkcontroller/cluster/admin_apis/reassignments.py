"""AlterPartitionReassignments and ListPartitionReassignments from an admin client (Kafka 2.8's
``handleAlterPartitionReassignmentsRequest`` / ``handleListPartitionReassignmentsRequest``), for a broker process
or an in-process listener.

Both go to this broker's controller; unless it is the active one the answer is a top-level NOT_CONTROLLER (clients
then look the controller up again). The controller validates each target (INVALID_REPLICA_ASSIGNMENT for an
empty, duplicated or unknown-broker list; UNKNOWN_TOPIC_OR_PARTITION; NO_REASSIGNMENT_IN_PROGRESS for cancelling
what is not being reassigned); null replicas cancel. The answer comes once the controller has processed the
request, not once the reassignment completes, as in Kafka.
"""

from __future__ import annotations

from collections.abc import Callable

from zkcontroller.broker.client_quota_manager import mark_local_complete
from zkcontroller.broker.kafka_apis import AlterReassignmentsHandler, ListReassignmentsHandler
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.controller.events import ApiError
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.wire.client_apis import ERROR_MESSAGES, OngoingReassignment, PartitionError

NOT_CONTROLLER = PartitionError("", -1, Errors.NOT_CONTROLLER, ERROR_MESSAGES[Errors.NOT_CONTROLLER])


def _active(server: Callable[[], KafkaServer | None]) -> KafkaController | None:
    """This broker's controller if it is the active one; the request's own work then ends: what follows is the
    controller's event (Kafka's handler hands the request to the controller with a callback), not request
    handling time for the request quota."""
    current = server()
    controller = current.active_controller if current is not None else None
    if current is not None and controller is not None:
        mark_local_complete(current.runtime.now_ms())
    return controller


def _top_level(error: ApiError) -> PartitionError:
    return PartitionError("", -1, int(error.error), _message(error))


def _message(error: ApiError) -> str | None:
    """Kafka's controller answers NOT_CONTROLLER and NO_REASSIGNMENT_IN_PROGRESS as ``new ApiError(error)``, which
    carries the error's own message."""
    return error.message if error.message is not None else ERROR_MESSAGES.get(int(error.error))


def alter_reassignments_handler(server: Callable[[], KafkaServer | None]) -> AlterReassignmentsHandler:
    async def alter(targets: dict[tuple[str, int], list[int] | None]) -> list[PartitionError] | PartitionError:
        controller = _active(server)
        if controller is None:
            return NOT_CONTROLLER
        outcome = await controller.alter_partition_reassignments(
            {TopicPartition(t, p): replicas for (t, p), replicas in targets.items()})
        if isinstance(outcome, ApiError):
            return _top_level(outcome)
        return [PartitionError(tp.topic, tp.partition, int(e.error), _message(e)) for tp, e in outcome.items()]

    return alter


def list_reassignments_handler(server: Callable[[], KafkaServer | None]) -> ListReassignmentsHandler:
    async def list_(partitions: list[tuple[str, int]] | None) -> list[OngoingReassignment] | PartitionError:
        controller = _active(server)
        if controller is None:
            return NOT_CONTROLLER
        found = await controller.list_partition_reassignments(
            None if partitions is None else [TopicPartition(t, p) for t, p in partitions])
        if isinstance(found, ApiError):
            return _top_level(found)
        return [OngoingReassignment(tp.topic, tp.partition, tuple(a.replicas), tuple(a.adding_replicas),
                                    tuple(a.removing_replicas)) for tp, a in found.items()]

    return list_
