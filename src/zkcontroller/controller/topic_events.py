"""Topics: ``TopicChange`` (creation, topic ids) and ``PartitionModifications`` (added partitions), spec §9.4–§9.5."""

from __future__ import annotations

from collections.abc import Iterable

from zkcontroller.controller.base import ControllerBase, NodeHandler
from zkcontroller.controller.election import OfflinePartitionLeaderElectionStrategy
from zkcontroller.controller.events import ControllerEvent, PartitionModifications, TopicChange
from zkcontroller.controller.states import PartitionAndReplica, PartitionState, ReplicaState
from zkcontroller.coordination.api import EventType
from zkcontroller.model import TopicIdReplicaAssignment, TopicPartition
from zkcontroller.zk import paths


class TopicEventHandlers(ControllerBase):
    def partition_modifications_handler(self, topic: str) -> NodeHandler:
        def handle(event_type: EventType) -> ControllerEvent | None:
            return PartitionModifications(topic=topic) if event_type is EventType.NODE_DATA_CHANGED else None

        return handle

    def register_partition_modifications_handlers(self, topics: Iterable[str]) -> None:
        for topic in topics:
            self.register_node_handler(paths.topic_path(topic), self.partition_modifications_handler(topic))

    def unregister_partition_modifications_handlers(self, topics: Iterable[str]) -> None:
        for topic in topics:
            self.unregister_node_handler(paths.topic_path(topic))

    async def read_topic_assignments(self, topics: Iterable[str]) -> list[TopicIdReplicaAssignment]:
        """Read topic znodes (arming their data watches); malformed ones are logged with their path and
        skipped, so one bad topic never stops the controller serving the others."""
        read = await self.zk.get_topic_assignments(topics, self._on_watch)
        for path, error in sorted(read.malformed.items()):
            self.log.error(f"Skipping topic with malformed assignment at {path}: {error.reason}")
        return [read.values[t] for t in sorted(read.values)]

    async def process_topic_ids(self, topics: list[TopicIdReplicaAssignment]) -> list[TopicIdReplicaAssignment]:
        """Give topics without an id a new one, written back fenced (IBP >= 2.8-IV0), and record every id."""
        with_ids = await self.zk.assign_topic_ids(topics, self.context.epoch_zk_version)
        for t in with_ids:
            if t.topic_id is not None and t.topic in self.context.all_topics:
                self.context.add_topic_id(t.topic, t.topic_id)
        return with_ids

    # ---------------------------------------------------------------- TopicChange

    async def process_topic_change(self, _event: TopicChange) -> None:
        if not self.is_active:
            return
        topics = await self.zk.get_all_topics_in_cluster(self._on_watch)
        new_topics = topics - self.context.all_topics
        deleted = self.context.all_topics - topics
        self.context.set_all_topics(topics)
        self.register_partition_modifications_handlers(sorted(topics))
        assignments = await self.process_topic_ids(await self.read_topic_assignments(new_topics))
        self.unregister_partition_modifications_handlers(sorted(deleted))
        for topic in sorted(deleted):
            self.context.remove_topic(topic)
        new_partitions: dict[TopicPartition, object] = {}
        for t in assignments:
            for tp, assignment in sorted(t.assignment.items()):
                self.context.update_partition_full_replica_assignment(tp, assignment)
                new_partitions[tp] = assignment
        self.log.info(
            f"New topics: [{', '.join(sorted(new_topics))}], deleted topics: [{', '.join(sorted(deleted))}], "
            f"new partition replica assignment [{len(new_partitions)} partitions]"
        )
        if new_partitions:
            await self.on_new_partition_creation(sorted(new_partitions))

    async def on_new_partition_creation(self, partitions: list[TopicPartition]) -> None:
        """New → Online for partitions and replicas; the first live assigned replica leads (spec §9.4)."""
        self.log.info(f"New partition creation callback for {', '.join(str(tp) for tp in partitions)}")
        replicas = self._replicas_of(partitions)
        await self.partition_state_machine.handle_state_changes(partitions, PartitionState.NEW)
        await self.replica_state_machine.handle_state_changes(replicas, ReplicaState.NEW)
        await self.partition_state_machine.handle_state_changes(
            partitions, PartitionState.ONLINE, OfflinePartitionLeaderElectionStrategy(allow_unclean=False)
        )
        await self.replica_state_machine.handle_state_changes(replicas, ReplicaState.ONLINE)

    def _replicas_of(self, partitions: list[TopicPartition]) -> list[PartitionAndReplica]:
        return [PartitionAndReplica(tp, r) for tp in partitions for r in self.context.partition_replica_assignment(tp)]

    # ---------------------------------------------------------------- PartitionModifications

    async def process_partition_modifications(self, event: PartitionModifications) -> None:
        if not self.is_active:
            return
        topic = event.topic
        read = await self.read_topic_assignments([topic])
        if not read:
            return
        assignment = read[0].assignment
        to_add = {tp: a for tp, a in assignment.items() if not self.context.partition_replica_assignment(tp)}
        if self.context.is_topic_queued_up_for_deletion(topic):
            if to_add:
                self.log.warn(
                    f"Skipping adding partitions {','.join(str(tp.partition) for tp in sorted(to_add))} for topic "
                    f"{topic} since it is currently being deleted"
                )
            else:
                self.log.info("Ignoring partition change during topic deletion as no new partitions are added")
            return
        if to_add:
            self.log.info(f"New partitions to be added {sorted(str(tp) for tp in to_add)}")
            for tp, a in sorted(to_add.items()):
                self.context.update_partition_full_replica_assignment(tp, a)
            await self.on_new_partition_creation(sorted(to_add))
