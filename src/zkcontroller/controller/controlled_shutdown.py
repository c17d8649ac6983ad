"""Controlled shutdown (spec §9.10, Kafka's ``processControlledShutdown`` / ``doControlledShutdown``).

A stopping broker asks the controller to move its leadership away before it goes. The controller marks it
shutting down (so no election picks it), re-elects the partitions it leads with the controlled-shutdown
strategy (the ISR loses every shutting-down broker), takes it out of the ISR of the partitions it follows
(StopReplica without delete, then OfflineReplica), and answers with the partitions it still leads; the broker
retries until that list is empty (``cluster.controlled_shutdown``).
"""

from __future__ import annotations

from collections.abc import Mapping

from zkcontroller.controller.election import ControlledShutdownPartitionLeaderElectionStrategy
from zkcontroller.controller.errors import BrokerNotAvailableError, StaleBrokerEpochError
from zkcontroller.controller.events import ControlledShutdown, ControllerEvent
from zkcontroller.controller.families import EventFamily, Handler
from zkcontroller.controller.states import PartitionAndReplica, PartitionState, ReplicaState
from zkcontroller.model import TopicPartition, sorted_partitions
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import ControlledShutdownRequest, ControlledShutdownResponse
from zkcontroller.zk.errors import ControllerMovedError

UNKNOWN_BROKER_EPOCH = -1
"""A request from a broker that predates KIP-380 carries no epoch; it is not refused."""


class ControllerMovedForShutdownError(Exception):
    """Kafka's ``ControllerMovedException`` thrown before any work: this broker is not the controller."""


class UncachedBrokerEpochError(KeyError):
    """A real broker epoch from a broker the controller has no epoch for: Kafka's map lookup throws
    ``NoSuchElementException``, which the callback's ``Try`` answers as UNKNOWN_SERVER_ERROR, logging nothing."""


def _error_for(error: Exception) -> Errors:
    """Kafka's ``Errors.forException`` for what a controlled shutdown can throw."""
    if isinstance(error, ControllerMovedError | ControllerMovedForShutdownError):
        return Errors.NOT_CONTROLLER
    if isinstance(error, StaleBrokerEpochError):
        return Errors.STALE_BROKER_EPOCH
    if isinstance(error, BrokerNotAvailableError):
        return Errors.BROKER_NOT_AVAILABLE
    return Errors.UNKNOWN_SERVER_ERROR


class ControlledShutdownEvents(EventFamily):
    def handlers(self) -> Mapping[type[ControllerEvent], Handler]:
        return {ControlledShutdown: self.process_controlled_shutdown}

    async def process_controlled_shutdown(self, event: ControlledShutdown) -> None:
        """Answer the broker in every case; a fenced write or an illegal batch state still propagates so the
        controller resigns (Kafka answers through the callback's ``Try`` and the event thread does the rest)."""
        request: ControlledShutdownRequest = event.request
        try:
            remaining = await self.do_controlled_shutdown(request.broker_id, request.broker_epoch)
        except (ControllerMovedForShutdownError, UncachedBrokerEpochError, StaleBrokerEpochError,
                BrokerNotAvailableError) as e:
            event.callback(ControlledShutdownResponse(_error_for(e)))
            return
        except Exception as e:
            event.callback(ControlledShutdownResponse(_error_for(e)))
            raise
        event.callback(ControlledShutdownResponse(Errors.NONE, tuple(sorted_partitions(remaining))))

    async def do_controlled_shutdown(self, broker_id: int, broker_epoch: int) -> set[TopicPartition]:
        core, context = self.core, self.core.context
        if not core.is_active:
            raise ControllerMovedForShutdownError("Controller moved to another broker. Aborting controlled shutdown")
        if broker_epoch != UNKNOWN_BROKER_EPOCH:
            cached = context.live_broker_id_and_epochs.get(broker_id)
            if cached is None:  # Kafka's map lookup throws here; the broker hears UNKNOWN_SERVER_ERROR
                raise UncachedBrokerEpochError(f"key not found: {broker_id}")
            if broker_epoch < cached:
                message = (f"Received controlled shutdown request from an old broker epoch {broker_epoch} for "
                           f"broker {broker_id}. Current broker epoch is {cached}.")
                core.log.info(message)
                raise StaleBrokerEpochError(message)
        core.log.info(f"Shutting down broker {broker_id}")
        core.emit("controlled_shutdown", broker_id=broker_id,
                  broker_epoch=context.live_broker_id_and_epochs.get(broker_id))  # the registration shutting down
        if broker_id not in context.live_or_shutting_down_broker_ids:
            raise BrokerNotAvailableError(f"Broker id {broker_id} does not exist.")
        context.shutting_down_broker_ids.add(broker_id)
        core.log.debug(f"All shutting down brokers: {','.join(map(str, sorted(context.shutting_down_broker_ids)))}")
        core.log.debug(f"Live brokers: {','.join(map(str, sorted(context.live_broker_ids)))}")
        led, followed = self._partitions_to_act_on(broker_id)
        await core.partition_state_machine.handle_state_changes(
            led, PartitionState.ONLINE, ControlledShutdownPartitionLeaderElectionStrategy(),
            trigger="ControlledShutdown", distinct=True)  # sorted and distinct (`_partitions_to_act_on`)
        batch = core.request_batch
        batch.new_batch()
        batch.add_stop_replica_requests([broker_id], followed, False)
        batch.send_requests_to_brokers(context.fencing)
        new_tuple = tuple.__new__  # NamedTuples built in C (10,000 when a broker leading and following 10,000 stops)
        await core.replica_state_machine.handle_state_changes(
            [new_tuple(PartitionAndReplica, (tp, broker_id)) for tp in followed],  # sorted, as `followed` is
            ReplicaState.OFFLINE, sorted_distinct=True)
        remaining = context.partition_leaders_on_broker(broker_id)
        core.log.trace(f"All leaders = {len(context.partitions_leadership_info)} partitions, "
                       f"{len(remaining)} still led by {broker_id}")
        return remaining

    def _partitions_to_act_on(self, broker_id: int) -> tuple[list[TopicPartition], list[TopicPartition]]:
        """The broker's partitions with another replica, known leadership, and a topic not being deleted,
        split into those it leads and those it follows."""
        context = self.core.context
        leadership = context.partitions_leadership_info
        led: list[TopicPartition] = []
        followed: list[TopicPartition] = []
        new_tuple = tuple.__new__  # a `TopicPartition` per partition of the broker without its Python `__new__`
        for topic, parts in context.partition_assignments.items():  # one pass over the assignment, in C where it can
            if context.is_topic_queued_up_for_deletion(topic):
                continue
            for partition, assignment in parts.items():
                replicas = assignment.replicas
                if broker_id not in replicas or len(replicas) <= 1:
                    continue
                tp = new_tuple(TopicPartition, (topic, partition))
                info = leadership.get(tp)
                if info is not None:
                    (led if info.leader_and_isr.leader == broker_id else followed).append(tp)
        return sorted_partitions(led), sorted_partitions(followed)
