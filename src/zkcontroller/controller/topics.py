"""Topics (spec §9.4–§9.5): ``TopicChange`` (creation, topic ids) and ``PartitionModifications`` (added
partitions), and at failover the topics, assignments and partition states read into the context.

A topic znode that is not JSON at all is read as Kafka 2.8 reads it: a topic with no partitions (and no topic
id), kept in the context so that it can be deleted; it is reported with its path and the parse error, and not
rewritten (Kafka's processTopicIds would write an id, and the empty assignment, over it). A topic whose znode
cannot be used — well-formed JSON of the wrong shape (Kafka throws there), or a topic id another topic already
has (two clusters that shared a random seed once wrote such ids) — is logged with its path and the reason and
left out of the context; the other topics are served. Either is read again when its znode changes, so fixing it
by hand brings it in: partitions that already have a state znode are loaded as a failover loads them, the rest
are created as new partitions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zkcontroller.controller.assignment import render_assignment
from zkcontroller.controller.core import ControllerCore, NodeHandler
from zkcontroller.controller.election import OfflinePartitionLeaderElectionStrategy
from zkcontroller.controller.events import ControllerEvent, PartitionModifications, TopicChange
from zkcontroller.controller.families import EventFamily, Handler
from zkcontroller.controller.scala_render import scala_map
from zkcontroller.controller.states import PartitionAndReplica, PartitionState, ReplicaState
from zkcontroller.coordination.api import EventType
from zkcontroller.java_hash import scala_hash_order
from zkcontroller.model import (
    ReplicaAssignment,
    TopicId,
    TopicIdReplicaAssignment,
    TopicPartition,
    sorted_by_partition,
    sorted_partitions,
)
from zkcontroller.protocol.ibp import uses_topic_ids
from zkcontroller.scala_sets import immutable_set, int_hash, java_string_hash, mutable_hash_set
from zkcontroller.zk import paths


def _partition_modifications_handler(topic: str) -> NodeHandler:
    def handle(event_type: EventType) -> ControllerEvent | None:
        return PartitionModifications(topic=topic) if event_type is EventType.NODE_DATA_CHANGED else None

    return handle


class TopicEvents(EventFamily):
    def __init__(self, core: ControllerCore) -> None:
        super().__init__(core)
        self.context = core.context
        self._malformed_reported: dict[str, int | None] = {}
        """Topic znodes TopicChange found malformed, by path, with the mzxid reported (see `_topic_change`)."""

    def handlers(self) -> Mapping[type[ControllerEvent], Handler]:
        return {TopicChange: self.process_topic_change, PartitionModifications: self.process_partition_modifications}

    # ---------------------------------------------------------------- failover steps

    async def register_watches(self) -> None:
        self.core.watches.register_child_handler(paths.TOPICS, TopicChange)

    async def load_context(self) -> None:
        """Topics, their assignments and ids, then every partition's leadership (arming the watches)."""
        topics = await self.core.zk.get_all_topics_in_cluster(self.core.on_watch)
        self.register_partition_modifications_handlers(sorted(topics))
        assignments = await self.admit_topics(*await self.read_topic_assignments(topics))
        self.context.set_all_topics(t.topic for t in assignments)
        self._record_ids(assignments)
        for t in assignments:
            for tp, assignment in sorted_by_partition(t.assignment.items()):
                self.context.update_partition_full_replica_assignment(tp, assignment)
                if assignment.is_being_reassigned:
                    self.context.partitions_being_reassigned.add(tp)
        self.context.clear_partition_leadership_info()
        await self.update_leader_and_isr_cache()
        # the end of Kafka's initializeControllerContext (the brokers' part ran first): its three summary lines
        log, context = self.core.log, self.context
        # ``liveBrokerEpochs.keySet.diff(..)``: an immutable Set built in the mutable map's (hash) order; the other
        # two are the context's mutable sets
        live = scala_hash_order(sorted(context.live_broker_ids), int_hash)
        log.info(f"Currently active brokers in the cluster: {immutable_set(live, int_hash)}")
        log.info(f"Currently shutting brokers in the cluster: "
                 f"{mutable_hash_set(sorted(context.shutting_down_broker_ids), int_hash)}")
        log.info(f"Current list of topics in the cluster: "
                 f"{mutable_hash_set(sorted(context.all_topics), java_string_hash)}")

    def on_resignation(self) -> None:
        self.core.watches.unregister_child_handler(paths.TOPICS)
        self.unregister_partition_modifications_handlers(sorted(self.context.all_topics))

    async def update_leader_and_isr_cache(self) -> None:
        """Read every partition's state znode; malformed ones are logged and treated as "no state"."""
        read = await self.core.zk.get_topic_partition_states(self.context.all_partitions)
        for path, error in sorted(read.malformed.items()):
            self.core.log.error(f"Ignoring malformed partition state at {path}: {error.reason}")
        for tp, leadership in sorted_by_partition(read.values.items()):
            self.context.put_partition_leadership_info(tp, leadership)

    # ---------------------------------------------------------------- watches and reads

    def register_partition_modifications_handlers(self, topics: Iterable[str]) -> None:
        for topic in topics:
            self.core.watches.register_node_handler(paths.topic_path(topic), _partition_modifications_handler(topic))

    def unregister_partition_modifications_handlers(self, topics: Iterable[str]) -> None:
        for topic in topics:
            self.core.watches.unregister_node_handler(paths.topic_path(topic))

    async def read_topic_assignments(self, topics: Iterable[str], *, reported: dict[str, int | None] | None = None
                                     ) -> tuple[list[TopicIdReplicaAssignment], set[str]]:
        """Read topic znodes (arming their data watches), as Kafka reads them: one that is not JSON is an empty
        assignment, reported with a warning; malformed ones are logged with their path and skipped, so one bad
        topic never stops the controller serving the others (each write of one once, given ``reported``: path
        -> the mzxid already logged, updated here). Returns the assignments and the topics read as empty."""
        read = await self.core.zk.get_topic_assignments(topics, self.core.on_watch, lenient=True)
        for path, error in sorted(read.read_as_empty.items()):
            self.core.log.warn(f"Reading the topic znode {path} as a topic with no partitions (as Kafka does): "
                               f"{error.reason}")
        for path, error in sorted(read.malformed.items()):
            if reported is not None:
                if error.mzxid is not None and reported.get(path) == error.mzxid:
                    continue
                reported[path] = error.mzxid
            self.core.log.error(f"Skipping topic with malformed assignment at {path}: {error.reason}")
        unparseable = {t for t in read.values if paths.topic_path(t) in read.read_as_empty}
        return [read.values[t] for t in sorted(read.values)], unparseable

    async def admit_topics(self, topics: list[TopicIdReplicaAssignment], unparseable: set[str]
                           ) -> list[TopicIdReplicaAssignment]:
        """Give topics without an id a new one, written back fenced, if the IBP uses topic ids (>= 2.8-IV0, as
        Kafka's processTopicIds); below it ids already in ZooKeeper are kept (a reassignment or a later upgrade
        must not lose them) but none are created and no topic znode is rewritten. A topic whose znode was
        ``unparseable`` (read as empty) gets no id: its znode is left as it is for the operator to repair.

        A topic whose id is already another topic's is skipped with an error naming its znode (the topic
        known first, or first by name, keeps the id); the rest are returned in name order.
        """
        if uses_topic_ids(self.core.config.inter_broker_protocol_version):
            parsed = [t for t in topics if t.topic not in unparseable]
            given = await self.core.zk.assign_topic_ids(parsed, self.context.fencing.epoch_zk_version)
            with_ids = sorted([*given, *(t for t in topics if t.topic in unparseable)], key=lambda t: t.topic)
        else:
            with_ids = topics
        owners: dict[TopicId, str] = dict(self.context.topic_names)
        admitted = []
        for t in with_ids:
            owner = owners.get(t.topic_id) if t.topic_id is not None else None
            if owner is not None and owner != t.topic:
                self.core.log.error(
                    f"Skipping topic {t.topic} at {paths.topic_path(t.topic)}: its topic id {t.topic_id} is "
                    f"already the id of topic {owner}; give one of them a new id (or delete it) to resolve")
                continue
            if t.topic_id is not None:
                owners[t.topic_id] = t.topic
            admitted.append(t)
        return admitted

    def _record_ids(self, topics: Iterable[TopicIdReplicaAssignment]) -> None:
        for t in topics:
            if t.topic_id is not None and t.topic in self.context.all_topics:
                self.context.add_topic_id(t.topic, t.topic_id)

    # ---------------------------------------------------------------- TopicChange

    async def process_topic_change(self, _event: TopicChange) -> None:
        if not self.core.is_active:
            return
        await self._topic_change(repaired=frozenset())

    async def _topic_change(self, repaired: frozenset[str]) -> None:
        """``processTopicChange``; the new partitions of ``repaired`` topics (skipped earlier for a bad znode,
        now rewritten) may already have state znodes, which are loaded rather than created."""
        topics = await self.core.zk.get_all_topics_in_cluster(self.core.on_watch)
        new_topics = topics - self.context.all_topics
        deleted = self.context.all_topics - topics
        self.register_partition_modifications_handlers(sorted(topics))
        self.unregister_partition_modifications_handlers(sorted(deleted))
        for topic in sorted(deleted):  # first, as Kafka: a new topic may carry the id of one deleted by hand
            self.context.remove_topic(topic)
        # A malformed topic stays out of all_topics, so that a repair is picked up: every TopicChange reads it
        # again, and it is reported once per write of its znode, not on every later create.
        reported = self._malformed_reported
        read, unparseable = await self.read_topic_assignments(new_topics, reported=reported)
        still_bad = {paths.topic_path(t) for t in new_topics} - {paths.topic_path(t.topic) for t in read}
        for path in [p for p in reported if p not in still_bad]:  # repaired or deleted
            del reported[path]
        assignments = await self.admit_topics(read, unparseable)
        self.context.set_all_topics(self.context.all_topics | {t.topic for t in assignments})
        self._record_ids(assignments)
        new_partitions: dict[TopicPartition, ReplicaAssignment] = {}
        for t in assignments:
            for tp, assignment in sorted(t.assignment.items()):
                self.context.update_partition_full_replica_assignment(tp, assignment)
                new_partitions[tp] = assignment
        self.core.log.info(topic_change_line(new_topics, deleted, read, len(topics)))
        new = sorted(new_partitions)
        if repaired:
            new = await self.load_existing_partitions(new, {tp for tp in new if tp.topic in repaired})
        if new:
            await self.on_new_partition_creation(new)

    async def load_existing_partitions(self, partitions: list[TopicPartition], candidates: set[TopicPartition]
                                       ) -> list[TopicPartition]:
        """Beyond Kafka: of ``candidates`` (partitions of a topic whose znode was unusable, then repaired), those
        with a state znode are brought in as a failover brings partitions in — leadership read, partition and
        replica states derived from it, UpdateMetadata, replicas moved Online or Offline, offline partitions
        elected — instead of failing as new partitions on NODEEXISTS and staying leaderless until the next
        failover. Returns the rest of ``partitions``, which are new."""
        if not candidates:
            return partitions
        read = await self.core.zk.get_topic_partition_states(candidates)
        for path, error in sorted(read.malformed.items()):
            self.core.log.error(f"Ignoring malformed partition state at {path}: {error.reason}")
        loaded = sorted_partitions(read.values)
        if not loaded:
            return partitions
        context, psm, rsm = self.context, self.core.partition_state_machine, self.core.replica_state_machine
        self.core.log.info(f"Loading the existing partition states of {','.join(str(tp) for tp in loaded)}")
        for tp in loaded:
            context.put_partition_leadership_info(tp, read.values[tp])
        psm.initialize_partition_state(loaded)
        rsm.initialize_replica_state(loaded)
        self.core.send_update_metadata_request(context.live_or_shutting_down_broker_ids, loaded)
        replicas = [PartitionAndReplica(tp, r) for tp in loaded for r in context.partition_replica_assignment(tp)]
        online = {r for r in replicas if context.is_replica_online(r.replica, r.topic_partition)}
        await rsm.handle_state_changes([r for r in replicas if r in online], ReplicaState.ONLINE)
        await rsm.handle_state_changes([r for r in replicas if r not in online], ReplicaState.OFFLINE)
        offline = [tp for tp in loaded if context.partition_state(tp) is PartitionState.OFFLINE]
        await psm.handle_state_changes(offline, PartitionState.ONLINE, OfflinePartitionLeaderElectionStrategy(False))
        return [tp for tp in partitions if tp not in read.values]

    async def on_new_partition_creation(self, partitions: list[TopicPartition]) -> None:
        """New → Online for partitions and replicas; the first live assigned replica leads (spec §9.4)."""
        self.core.log.info(f"New partition creation callback for {','.join(str(tp) for tp in partitions)}")
        replicas = [PartitionAndReplica(tp, r) for tp in partitions
                    for r in self.context.partition_replica_assignment(tp)]
        psm, rsm = self.core.partition_state_machine, self.core.replica_state_machine
        await psm.handle_state_changes(partitions, PartitionState.NEW)
        await rsm.handle_state_changes(replicas, ReplicaState.NEW)
        await psm.handle_state_changes(
            partitions, PartitionState.ONLINE, OfflinePartitionLeaderElectionStrategy(allow_unclean=False)
        )
        await rsm.handle_state_changes(replicas, ReplicaState.ONLINE)

    # ---------------------------------------------------------------- PartitionModifications

    async def process_partition_modifications(self, event: PartitionModifications) -> None:
        if not self.core.is_active:
            return
        topic = event.topic  # a rewrite of a malformed topic znode: reported here once, not again by TopicChange
        read, _unparseable = await self.read_topic_assignments([topic], reported=self._malformed_reported)
        if not read:
            return
        if topic not in self.context.all_topics:  # a topic skipped earlier, whose znode was rewritten
            await self._topic_change(repaired=frozenset({topic}))
            return
        assignment = read[0].assignment
        to_add = {tp: a for tp, a in assignment.items() if not self.context.partition_replica_assignment(tp)}
        repaired = not self.context.partitions_for_topic(topic)  # read as empty before (its znode was not JSON)
        if self.context.is_topic_queued_up_for_deletion(topic):
            if to_add:
                self.core.log.warn(
                    f"Skipping adding partitions {','.join(str(tp.partition) for tp in sorted(to_add))} for topic "
                    f"{topic} since it is currently being deleted"
                )
                await self.restore_partition_replica_assignment(topic, assignment)
            else:
                self.core.log.info("Ignoring partition change during topic deletion as no new partitions are added")
            return
        if to_add:
            added = {tp: render_assignment(a) for tp, a in sorted_by_partition(to_add.items())}
            self.core.log.info(f"New partitions to be added {scala_map(added, built_from=len(assignment))}")
            for tp, a in sorted(to_add.items()):
                self.context.update_partition_full_replica_assignment(tp, a)
            new = sorted(to_add)
            if repaired:
                new = await self.load_existing_partitions(new, set(new))
            if new:
                await self.on_new_partition_creation(new)

    async def restore_partition_replica_assignment(
        self, topic: str, new_assignment: Mapping[TopicPartition, ReplicaAssignment]
    ) -> None:
        """Undo partitions added to a topic being deleted: write back the context's assignment of the
        partitions that exist under ``/brokers/topics/<t>/partitions`` (fenced), as Kafka does."""
        self.core.log.info(f"Restoring the partition replica assignment for topic {topic}")
        existing = set(await self.core.zk.get_children(paths.topic_partitions_path(topic)))
        restored = {tp: self.context.partition_full_replica_assignment(tp)
                    for tp in sorted(new_assignment) if str(tp.partition) in existing}
        await self.core.zk.set_topic_assignment(topic, self.context.topic_ids.get(topic), restored,
                                                self.context.fencing.epoch_zk_version)


def topic_change_line(new_topics: Iterable[str], deleted: Iterable[str],
                      read: Iterable[TopicIdReplicaAssignment], topics_read: int | None = None) -> str:
    """Kafka 2.8's ``processTopicChange`` line, with its Scala renderings: the new topics an immutable ``Set``
    (``topics -- allTopics``, a part of the ``topics_read`` topics ZooKeeper listed: a ``HashSet`` past four
    however few are new; ZooKeeper's child order, which decides a small one's, is not reproduced: sorted), the
    deleted ones a ``mutable.HashSet`` (a diff of the context's mutable set), and the assignments as read from
    ZooKeeper (ids before any are created: ``None`` for a topic znode without one) a ``Set`` of
    ``TopicIdReplicaAssignment``s (by topic: a case class's hash order is not reproduced), each partition map a
    ``Map``/``HashMap`` by size."""
    topics = [f"TopicIdReplicaAssignment({t.topic},{'None' if t.topic_id is None else f'Some({t.topic_id})'},"
              f"{scala_map({tp: render_assignment(a) for tp, a in t.assignment.items()})})"
              for t in sorted(read, key=lambda t: t.topic)]
    return (f"New topics: [{immutable_set(sorted(new_topics), java_string_hash, topics_read)}], "
            f"deleted topics: [{mutable_hash_set(sorted(deleted), java_string_hash)}], "
            f"new partition replica assignment [{immutable_set(topics, None)}]")
