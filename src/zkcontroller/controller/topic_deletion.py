"""Topic deletion (spec §9.6): Kafka's ``TopicDeletionManager`` and the ``TopicDeletion`` /
``TopicDeletionStopReplicaResponseReceived`` events.

The manager keeps no state of its own: the context's ``topics_to_be_deleted``, ``topics_with_deletion_started``,
``topics_ineligible_for_deletion`` and the replica states ReplicaDeletionStarted / Successful / Ineligible say
where each topic is, so a new controller rebuilds everything from ``/admin/delete_topics`` and the live brokers.
A topic is halted (ineligible) while a replica's broker is offline, a replica failed to delete, or one of its
partitions is being reassigned; `resume_deletion_for_topics` (a broker came back, a reassignment finished)
and every failover retry it. With ``delete.topic.enable=false`` the markers are removed and nothing is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zkcontroller.controller.core import ControllerCore
from zkcontroller.controller.event_log import DELETION_LOGGER, PrefixedLogger
from zkcontroller.controller.events import (
    ControllerEvent,
    TopicDeletion,
    TopicDeletionStopReplicaResponseReceived,
)
from zkcontroller.controller.families import EventFamily, Handler
from zkcontroller.controller.states import PartitionAndReplica, PartitionState, ReplicaState, sorted_replicas
from zkcontroller.model import sorted_partitions
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.scala_sets import immutable_set, java_string_hash, mutable_hash_set
from zkcontroller.zk import paths


def _names(items: Iterable[object]) -> str:
    return ",".join(sorted(str(i) for i in items))


class TopicDeletionManager(EventFamily):
    """Kafka's ``TopicDeletionManager`` plus the controller's ``processTopicDeletion`` and
    ``processTopicDeletionStopReplicaResponseReceived``; other families reach it as a `TopicDeletionClient`."""

    def __init__(self, core: ControllerCore) -> None:
        super().__init__(core)
        self.context = core.context
        self.enabled = core.config.delete_topic_enable
        self.log = PrefixedLogger(DELETION_LOGGER, f"[Topic Deletion Manager {core.config.broker_id}] ")
        """Kafka's own logger and ident for the manager's lines (the controller's for processTopicDeletion's)."""

    def handlers(self) -> Mapping[type[ControllerEvent], Handler]:
        return {
            TopicDeletion: self.process_topic_deletion,
            TopicDeletionStopReplicaResponseReceived: self.process_stop_replica_response,
        }

    # ---------------------------------------------------------------- failover steps

    async def register_watches(self) -> None:
        self.core.watches.register_child_handler(paths.DELETE_TOPICS, TopicDeletion)

    async def on_session_reconnected(self) -> None:
        self.core.events.put(TopicDeletion())

    async def load_context(self) -> None:
        """``fetchTopicDeletionsInProgress`` + ``init``: runs after the topics are loaded and before the state
        machines start (they leave topics queued for deletion alone)."""
        self.core.log.info("Fetching topic deletions in progress")
        to_delete = await self.core.zk.get_topic_deletions(self.core.on_watch)
        with_offline = {t for t in self.context.all_topics
                        if any(not self.context.is_replica_online(r.replica, r.topic_partition)
                               for r in self.context.replicas_for_topic(t))}
        reassigning = {tp.topic for tp in self.context.partitions_being_reassigned}
        ineligible = with_offline | reassigning
        log = self.core.log
        log.info(f"List of topics to be deleted: {_names(to_delete)}")
        log.info(f"List of topics ineligible for deletion: {_names(ineligible)}")
        log.info("Initializing topic deletion manager")
        # Kafka's sets: ``getTopicDeletions.toSet`` (immutable; ZooKeeper's child order, not reproduced: sorted)
        # and ``allTopics.filter(..) | partitionsBeingReassigned.map(_.topic)`` (a mutable.HashSet, even empty)
        to_delete_set = immutable_set(sorted(to_delete), java_string_hash)
        self.log.info(f"Initializing manager with initial deletions: {to_delete_set}, initial ineligible deletions: "
                      f"{mutable_hash_set([*sorted(with_offline), *sorted(reassigning)], java_string_hash)}")
        if self.enabled:
            # every marker, as Kafka's init: one whose topic is gone (a controller moved between deleting the
            # topic znode and its config and marker) has no replicas, so `resume_deletions` completes it at
            # once, deleting what is left of it
            self.context.queue_topic_deletion(to_delete)
            self.context.topics_ineligible_for_deletion |= ineligible & self.context.topics_to_be_deleted
        else:
            self.log.info(f"Removing {to_delete_set} since delete topic is disabled")
            await self.core.zk.delete_topic_deletions(to_delete, self.context.fencing.epoch_zk_version)

    async def on_failover(self) -> None:
        """``tryTopicDeletion`` (after reassignments were resumed)."""
        if self.enabled:
            await self.resume_deletions()

    def on_resignation(self) -> None:
        self.core.watches.unregister_child_handler(paths.DELETE_TOPICS)

    # ---------------------------------------------------------------- TopicDeletion (§9.6.1)

    async def process_topic_deletion(self, _event: TopicDeletion) -> None:
        if not self.core.is_active:
            return
        core = self.core
        to_delete = await core.zk.get_topic_deletions(core.on_watch)
        read = len(to_delete)  # Kafka's ``topicsToBeDeleted --= nonExistentTopics``: a HashSet's rest is a HashSet
        core.log.debug(f"Delete topics listener fired for topics {_names(to_delete)} to be deleted")
        non_existent = to_delete - self.context.all_topics
        if non_existent:
            core.log.warn(f"Ignoring request to delete non-existing topics {_names(non_existent)}")
            await core.zk.delete_topic_deletions(non_existent, self.context.fencing.epoch_zk_version)
        to_delete -= non_existent
        if not self.enabled:  # logged even when nothing is left, as Kafka (removing a marker re-fires the watch)
            core.log.info(f"Removing {immutable_set(sorted(to_delete), java_string_hash, read)} since delete topic "
                          "is disabled")
            await core.zk.delete_topic_deletions(to_delete, self.context.fencing.epoch_zk_version)
            for topic in sorted(to_delete):
                core.emit("topic_deletion", topic=topic, phase="refused", deletion_reason="delete.topic.enable=false")
            return
        if not to_delete:
            return
        core.log.info(f"Starting topic deletion for topics {_names(to_delete)}")
        for topic in sorted(to_delete - self.context.topics_to_be_deleted):
            core.emit("topic_deletion", topic=topic, phase="queued")
        reassigning = {tp.topic for tp in self.context.partitions_being_reassigned}
        for topic in sorted(to_delete & reassigning):
            self.mark_topic_ineligible_for_deletion({topic}, "topic reassignment in progress")
        await self.enqueue_topics_for_deletion(to_delete)

    # ---------------------------------------------------------------- StopReplica responses (§9.6.5)

    async def process_stop_replica_response(self, event: TopicDeletionStopReplicaResponseReceived) -> None:
        if not self.core.is_active:
            return
        errors = dict(event.partition_errors)
        self.core.log.debug(
            f"Delete topic callback invoked on StopReplica response received from broker {event.broker_id}: "
            f"request error = {event.error.name}, partition errors = "
            f"Map({', '.join(f'{tp} -> {e.name}' for tp, e in sorted(errors.items()))})")
        if event.error is not Errors.NONE:
            in_error = set(errors)
        else:
            in_error = {tp for tp, e in errors.items() if e is not Errors.NONE}
        await self.fail_replica_deletion({PartitionAndReplica(tp, event.broker_id) for tp in in_error})
        deleted = set(errors) - in_error
        if deleted:
            await self.complete_replica_deletion({PartitionAndReplica(tp, event.broker_id) for tp in deleted})

    # ---------------------------------------------------------------- the manager's operations (§9.6.2)

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        return self.enabled and self.context.is_topic_queued_up_for_deletion(topic)

    def _is_ineligible(self, topic: str) -> bool:
        return not self.enabled or topic in self.context.topics_ineligible_for_deletion

    def _is_deletion_in_progress(self, topic: str) -> bool:
        return self.enabled and self.context.is_any_replica_in_state(topic, ReplicaState.DELETION_STARTED)

    def _is_eligible(self, topic: str) -> bool:
        return (self.context.is_topic_queued_up_for_deletion(topic) and not self._is_deletion_in_progress(topic)
                and not self._is_ineligible(topic))

    async def enqueue_topics_for_deletion(self, topics: Iterable[str]) -> None:
        if self.enabled:
            self.context.queue_topic_deletion(topics)
            await self.resume_deletions()

    async def resume_deletion_for_topics(self, topics: Iterable[str]) -> None:
        if not self.enabled:
            return
        resumed = set(topics) & self.context.topics_to_be_deleted
        if resumed:
            self.context.topics_ineligible_for_deletion -= resumed
            for topic in sorted(resumed):
                self.core.emit("topic_deletion", topic=topic, phase="resumed")
            await self.resume_deletions()

    async def fail_replica_deletion(self, replicas: set[PartitionAndReplica]) -> None:
        if not self.enabled:
            return
        # beyond Kafka: a replica already deleted cannot fail (Kafka logs an invalid transition for it when its
        # broker dies before the topic completes)
        failed = {r for r in replicas if self.context.is_topic_queued_up_for_deletion(r.topic_partition.topic)
                  and self.context.replica_states.get(r) is not ReplicaState.DELETION_SUCCESSFUL}
        if not failed:
            return
        topics = {r.topic_partition.topic for r in failed}
        self.log.debug(f"Deletion failed for replicas {_names(failed)}. Halting deletion for topics "
                       f"{immutable_set(sorted(topics), java_string_hash, len(replicas))}")
        await self.core.replica_state_machine.handle_state_changes(sorted_replicas(failed),
                                                                   ReplicaState.DELETION_INELIGIBLE)
        self.mark_topic_ineligible_for_deletion(topics, "replica deletion failure")
        await self.resume_deletions()

    def mark_topic_ineligible_for_deletion(self, topics: Iterable[str], reason: str) -> None:
        if not self.enabled:
            return
        halted = set(topics) & self.context.topics_to_be_deleted
        self.context.topics_ineligible_for_deletion |= halted
        if halted:
            self.log.info(f"Halted deletion of topics {_names(halted)} due to {reason}")
            for topic in sorted(halted):
                self.core.emit("topic_deletion", topic=topic, phase="halted", deletion_reason=reason)

    async def complete_replica_deletion(self, replicas: set[PartitionAndReplica]) -> None:
        done = {r for r in replicas if self.is_topic_queued_up_for_deletion(r.topic_partition.topic)}
        self.log.debug(f"Deletion successfully completed for replicas {_names(done)}")
        await self.core.replica_state_machine.handle_state_changes(sorted_replicas(done),
                                                                   ReplicaState.DELETION_SUCCESSFUL)
        await self.resume_deletions()

    # ---------------------------------------------------------------- the deletion itself (§9.6.3, §9.6.4)

    async def resume_deletions(self) -> None:
        queued = sorted(self.context.topics_to_be_deleted)
        retry: list[str] = []
        eligible: list[str] = []
        if queued:
            self.log.info(f"Handling deletion for topics {','.join(queued)}")
        for topic in queued:
            if self.context.are_all_replicas_in_state(topic, ReplicaState.DELETION_SUCCESSFUL):
                await self._complete_delete_topic(topic)
                self.log.info(f"Deletion of topic {topic} successfully completed")
                self.core.emit("topic_deletion", topic=topic, phase="completed")
            elif (not self.context.is_any_replica_in_state(topic, ReplicaState.DELETION_STARTED)
                  and self.context.is_any_replica_in_state(topic, ReplicaState.DELETION_INELIGIBLE)):
                retry.append(topic)
            if self._is_eligible(topic):
                self.log.info(f"Deletion of topic {topic} (re)started")
                self.core.emit("topic_deletion", topic=topic, phase="started")
                eligible.append(topic)
        if retry:
            await self._retry_deletion_for_ineligible_replicas(retry)
        if eligible:
            await self._on_topic_deletion(eligible)

    async def _retry_deletion_for_ineligible_replicas(self, topics: list[str]) -> None:
        """ReplicaDeletionIneligible -> OfflineReplica, ready for another attempt: one DEBUG line and one state
        change (so one StopReplica request per broker) for all the topics, as Kafka's
        ``retryDeletionForIneligibleReplicas``."""
        failed = {r for t in topics for r in self.context.replicas_in_state(t, ReplicaState.DELETION_INELIGIBLE)}
        self.log.debug(f"Retrying deletion of topics {','.join(topics)} since replicas {_names(failed)} were not "
                       "successfully deleted")
        await self.core.replica_state_machine.handle_state_changes(sorted_replicas(failed), ReplicaState.OFFLINE)

    async def _on_topic_deletion(self, topics: list[str]) -> None:
        psm = self.core.partition_state_machine
        unseen = [t for t in topics if t not in self.context.topics_with_deletion_started]
        if unseen:
            partitions = sorted_partitions(tp for t in unseen for tp in self.context.partitions_for_topic(t))
            await psm.handle_state_changes(partitions, PartitionState.OFFLINE)
            await psm.handle_state_changes(partitions, PartitionState.NON_EXISTENT)
            self.context.begin_topic_deletion(unseen)
        self.core.send_update_metadata_request(
            self.context.live_or_shutting_down_broker_ids,
            {tp for t in topics for tp in self.context.partitions_for_topic(t)})
        await self._on_partition_deletion(topics)

    async def _on_partition_deletion(self, topics: list[str]) -> None:
        dead_replicas: set[PartitionAndReplica] = set()
        retry_replicas: set[PartitionAndReplica] = set()
        with_dead: set[str] = set()
        for topic in topics:
            replicas = self.context.replicas_for_topic(topic)
            alive = {r for r in replicas if self.context.is_replica_online(r.replica, r.topic_partition)}
            dead = replicas - alive
            retry_replicas |= alive - self.context.replicas_in_state(topic, ReplicaState.DELETION_SUCCESSFUL)
            dead_replicas |= dead
            if dead:
                self.log.debug(f"Dead Replicas ({_names(dead)}) found for topic {topic}")
                with_dead.add(topic)
        rsm = self.core.replica_state_machine
        await rsm.handle_state_changes(sorted_replicas(dead_replicas), ReplicaState.DELETION_INELIGIBLE)
        await rsm.handle_state_changes(sorted_replicas(retry_replicas), ReplicaState.OFFLINE)
        await rsm.handle_state_changes(sorted_replicas(retry_replicas), ReplicaState.DELETION_STARTED)
        if with_dead:
            self.mark_topic_ineligible_for_deletion(with_dead, "offline replicas")

    async def _complete_delete_topic(self, topic: str) -> None:
        """Mute the topic's PartitionModifications watch (a re-created topic is new), forget its replicas,
        then delete its znodes, config and marker (fenced) and drop it from the context."""
        core = self.core
        core.watches.unregister_node_handler(paths.topic_path(topic))
        done = self.context.replicas_in_state(topic, ReplicaState.DELETION_SUCCESSFUL)
        await core.replica_state_machine.handle_state_changes(sorted_replicas(done), ReplicaState.NON_EXISTENT)
        expected = self.context.fencing.epoch_zk_version
        await core.zk.delete_topic_znode(topic, expected)
        await core.zk.delete_topic_configs([topic], expected)
        await core.zk.delete_topic_deletions([topic], expected)
        for tp in self.context.partitions_for_topic(topic):
            self.context.partition_states.pop(tp, None)
        self.context.remove_topic(topic)
