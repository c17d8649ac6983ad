"""ElectLeaders from an admin client (Kafka 2.8's ``KafkaApis.handleElectReplicaLeader``,
``ReplicaManager.electLeaders`` and ``DelayedElectLeader``), for a broker process or an in-process listener.

The request goes to this broker's controller, which answers NOT_CONTROLLER for every partition unless it is the
active one (as Kafka's ``processReplicaLeaderElection``). Null partitions mean every partition this broker's
metadata cache knows. Partitions the controller elected a leader for are answered once this broker's cache shows
that leader, or REQUEST_TIMED_OUT at the request's timeout (measured from its arrival); the others get the
controller's error at once (ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE,
UNKNOWN_TOPIC_OR_PARTITION ...).
"""

from __future__ import annotations

from collections.abc import Callable

from zkcontroller.broker.client_quota_manager import mark_local_complete
from zkcontroller.broker.delayed_elect_leader import wait_for_leaders
from zkcontroller.broker.kafka_apis import ElectLeadersHandler
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.controller.events import ApiError, ElectionType
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.wire.client_apis import ERROR_MESSAGES, PartitionError


def elect_leaders_handler(server: Callable[[], KafkaServer | None]) -> ElectLeadersHandler:
    async def elect(election_type: int, partitions: list[tuple[str, int]] | None,
                    timeout_ms: int) -> list[PartitionError]:
        current = server()
        cache = current.control_plane.metadata_cache if current is not None and current.control_plane else None
        if partitions is None:
            wanted = [s.topic_partition for t in sorted(cache.all_topics()) for s in cache.partitions_of(t)] \
                if cache is not None else []
        else:
            wanted = [TopicPartition(t, p) for t, p in partitions]
        controller = current.active_controller if current is not None else None
        if current is None or cache is None or controller is None:
            return [PartitionError(tp.topic, tp.partition, Errors.NOT_CONTROLLER) for tp in wanted]
        now = current.runtime.now_ms()
        deadline = now + timeout_ms
        mark_local_complete(now)  # the controller's event and DelayedElectLeader are a wait, not handling time
        outcome = await controller.elections.elect_leaders(wanted, ElectionType(election_type))
        expected = {tp: r for tp, r in outcome.items() if not isinstance(r, ApiError)}
        results = [PartitionError(tp.topic, tp.partition, int(r.error), _message(r))
                   for tp, r in outcome.items() if isinstance(r, ApiError)]
        if expected:
            late = await wait_for_leaders(cache, expected, max(0, deadline - current.runtime.now_ms()),
                                          current.runtime)
            results += [PartitionError(tp.topic, tp.partition, Errors.REQUEST_TIMED_OUT if tp in late else 0)
                        for tp in expected]
        return results

    return elect


def _message(error: ApiError) -> str | None:
    """Kafka answers ELECTION_NOT_NEEDED as ``new ApiError(ELECTION_NOT_NEEDED)``, with the error's own message;
    NOT_CONTROLLER per partition with a null one."""
    if error.message is None and error.error == Errors.ELECTION_NOT_NEEDED:
        return ERROR_MESSAGES[Errors.ELECTION_NOT_NEEDED]
    return error.message
