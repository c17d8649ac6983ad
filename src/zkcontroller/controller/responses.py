"""Broker responses (spec §7.5): ``LeaderAndIsrResponseReceived`` (replicas on failed log dirs go offline)
and ``UpdateMetadataResponseReceived`` (errors are logged). The channel manager's callback only enqueues."""

from __future__ import annotations

from collections.abc import Mapping

from zkcontroller.controller.core import ControllerCore
from zkcontroller.controller.events import (
    ControllerEvent,
    LeaderAndIsrResponseReceived,
    TopicDeletionStopReplicaResponseReceived,
    UpdateMetadataResponseReceived,
)
from zkcontroller.controller.families import EventFamily, Handler, OfflineReplicasClient
from zkcontroller.protocol.control_requests import (
    AnyControlRequest,
    ControlResponse,
    Errors,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
)


class ResponseEvents(EventFamily):
    def __init__(self, core: ControllerCore, offline_replicas: OfflineReplicasClient) -> None:
        super().__init__(core)
        self.context = core.context
        self._offline_replicas = offline_replicas

    def handlers(self) -> Mapping[type[ControllerEvent], Handler]:
        return {
            LeaderAndIsrResponseReceived: self.process_leader_and_isr_response,
            UpdateMetadataResponseReceived: self.process_update_metadata_response,
        }

    def on_broker_response(self, broker_id: int, request: AnyControlRequest, response: ControlResponse) -> None:
        """The channel manager's callback (its send task): only turn the response into an event."""
        if isinstance(request, LeaderAndIsrRequest):
            self.core.events.put(LeaderAndIsrResponseReceived(broker_id=broker_id, request=request, response=response))
        elif isinstance(request, UpdateMetadataRequest):
            self.core.events.put(UpdateMetadataResponseReceived(broker_id=broker_id, response=response))
        elif isinstance(request, StopReplicaRequest):  # the topic deletion family handles deleted partitions
            self._on_stop_replica_response(broker_id, request, response)

    def _on_stop_replica_response(self, broker_id: int, request: StopReplicaRequest,
                                  response: ControlResponse) -> None:
        """Kafka 2.8's callback: only the partitions the answer lists, asked to be deleted, of topics whose
        deletion is in progress. A top-level error (a stale controller or broker epoch) lists none, so it fails
        no replica deletion: the retry comes from whatever fenced the request."""
        deleted = {s.topic_partition for s in request.partition_states if s.delete_partition}
        if not deleted:
            return
        in_progress = self.context.is_topic_deletion_in_progress
        errors = tuple((tp, error) for tp, error in sorted(response.partition_error_map().items())
                       if tp in deleted and in_progress(tp.topic))
        if errors:
            self.core.events.put(TopicDeletionStopReplicaResponseReceived(
                broker_id=broker_id, error=response.error, partition_errors=errors))

    async def process_leader_and_isr_response(self, event: LeaderAndIsrResponseReceived) -> None:
        if not self.core.is_active or event.response is None:
            return
        response = event.response
        if response.error is not Errors.NONE:
            self.core.state_change_logger.error(
                f"Received error {response.error.name} in LeaderAndIsr response {response} "
                f"from broker {event.broker_id}"
            )
            return
        errors = response.partition_error_map()
        offline = sorted(tp for tp, err in errors.items() if err is Errors.KAFKA_STORAGE_ERROR)
        current = self.context.replicas_on_offline_dirs.get(event.broker_id, set())
        if current:
            online = {tp for tp, err in errors.items() if err is Errors.NONE}
            updated = (current - online) | set(offline)
        else:  # the common case: nothing was offline, so nothing comes back (no set of every partition answered)
            updated = set(offline)
        if updated:
            self.context.replicas_on_offline_dirs[event.broker_id] = updated
        else:  # Kafka keeps an empty set; none at all keeps the context's "no failed log dirs" fast paths on
            self.context.replicas_on_offline_dirs.pop(event.broker_id, None)
        new_offline = updated - current
        if new_offline:
            self.core.state_change_logger.info(
                f"Mark replicas {','.join(str(tp) for tp in sorted(new_offline))} on broker {event.broker_id} "
                "as offline"
            )
            replicas = {
                p for p in self.context.replicas_on_brokers({event.broker_id}) if p.topic_partition in new_offline
            }
            await self._offline_replicas.on_replicas_become_offline(replicas)

    async def process_update_metadata_response(self, event: UpdateMetadataResponseReceived) -> None:
        if not self.core.is_active or event.response is None:
            return
        if event.response.error is not Errors.NONE:
            self.core.state_change_logger.error(
                f"Received error {event.response.error.name} in UpdateMetadata response {event.response} from "
                f"broker {event.broker_id}"
            )
