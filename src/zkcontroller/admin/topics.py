"""Topic administration as Kafka's ZooKeeper-based tools do it (``AdminZkClient``, ``kafka-topics --zookeeper``).

An admin tool never talks to the controller: it writes znodes and the controller reacts to its watches.
Creating a topic writes ``/config/topics/<t>`` (always, as Kafka does, even with no overrides) and then the
assignment ``/brokers/topics/<t>``; adding partitions rewrites the assignment; deleting a topic creates
``/admin/delete_topics/<t>``. None of these writes is fenced: admin tools hold no controller epoch.

Like Kafka's ``AdminZkClient.createTopicWithAssignment``, a topic's creation writes no config-change
notification: brokers read ``/config/topics/<t>`` when they create the log. Altering a topic's configs (and
writing the notification) is `change_topic_config`'s alone.
"""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncIterator, Callable, Mapping, Sequence

from zkcontroller.admin.describe import select_topics
from zkcontroller.admin.errors import (
    BrokerNotAvailableError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidTopicError,
    TopicAlreadyMarkedForDeletionError,
    TopicExistsError,
    UnknownTopicError,
    corrupt_registration_error,
)
from zkcontroller.admin.replica_assignment import (
    BrokerMetadata,
    RackAwareMode,
    assign_replicas_to_brokers,
    broker_metadatas_for,
)
from zkcontroller.admin.topic_rules import (
    has_collision,
    has_collision_chars,
    unavailable_brokers,
    validate_assignment_shape,
    validate_topic_configs,
    validate_topic_name,
)
from zkcontroller.controller.scala_render import scala_collection
from zkcontroller.coordination.errors import NodeExistsError
from zkcontroller.model import ReplicaAssignment, TopicId, TopicPartition, is_internal
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import NO_FENCING, KafkaZkClient
from zkcontroller.zk.znodes import TopicZNode

log = logging.getLogger("kafka.zk.AdminZkClient")

Assignment = dict[int, list[int]]


class TopicAdmin:
    """Create, grow and delete topics through one `KafkaZkClient` session.

    ``rng`` draws the random start of Kafka's replica placement. ``topic_id_rng``, when given, gives new
    topics an id at creation (as 2.8's CreateTopics API does with IBP >= 2.8); without it the topic is
    written without one and the controller assigns it (as ``kafka-topics --zookeeper`` leaves it).

    ``strict_brokers``: a broker registration that cannot be read fails placement (`corrupt_registration_error`),
    as ``AdminZkClient.getBrokerMetadatas`` throws in ``kafka-topics --zookeeper`` ("Failed to parse ZooKeeper
    registration for broker N"), rather than placing replicas on the other brokers only; the admin CLI sets it.
    Without it (a broker serving CreateTopics, which Kafka places from its metadata cache) the registration is
    logged and left out.
    """

    def __init__(self, zk: KafkaZkClient, rng: random.Random, *, topic_id_rng: random.Random | None = None,
                 strict_brokers: bool = False):
        self._zk = zk
        self._rng = rng
        self._topic_id_rng = topic_id_rng
        self._strict_brokers = strict_brokers

    async def broker_metadatas(self, mode: RackAwareMode = RackAwareMode.ENFORCED) -> list[BrokerMetadata]:
        """Registered brokers as placement input (``AdminZkClient.getBrokerMetadatas``)."""
        read = await self._zk.get_all_brokers_and_epochs()
        if self._strict_brokers and read.malformed:
            raise corrupt_registration_error(read.malformed)
        for path, error in sorted(read.malformed.items()):
            log.warning("Ignoring malformed broker registration %s: %s", path, error.reason)
        return broker_metadatas_for(
            (BrokerMetadata(b.broker.id, b.broker.rack) for b in read.values.values()), mode)

    # ------------------------------------------------------------------ create

    async def create_topic(
        self,
        topic: str,
        partitions: int,
        replication_factor: int,
        configs: Mapping[str, str] | None = None,
        *,
        rack_aware_mode: RackAwareMode = RackAwareMode.ENFORCED,
    ) -> Assignment:
        """Place replicas with Kafka's algorithm over the registered brokers and create the topic."""
        validate_topic_name(topic)
        brokers = await self.broker_metadatas(rack_aware_mode)
        assignment = assign_replicas_to_brokers(brokers, partitions, replication_factor, rng=self._rng)
        await self.create_topic_with_assignment(topic, assignment, configs, check_brokers=False)
        return assignment

    async def create_topic_with_assignment(
        self,
        topic: str,
        assignment: Mapping[int, Sequence[int]],
        configs: Mapping[str, str] | None = None,
        *,
        check_brokers: bool = True,
        validate: bool = True,
    ) -> TopicId | None:
        """Create a topic with an explicit assignment (partition → replicas, first is the preferred leader);
        returns the id written into its znode (None without ``topic_id_rng``), so that a caller answering with it
        need not read the znode back.

        ``check_brokers``: refuse brokers that are not registered. Kafka's own create path does not check
        (a partition on an absent broker simply starts offline); we check by default because that is
        almost always a typo. ``validate=False``: the caller has just run `validate_topic_create` (Kafka's
        ``createTopicWithAssignment(validate = false)`` from ``ZkAdminManager``), which is not repeated.
        """
        configs = dict(configs or {})
        if validate:
            await self.validate_topic_create(topic, assignment, configs)
        if check_brokers:
            await self._check_brokers_registered(assignment)
        if log.isEnabledFor(logging.INFO):
            log.info(creating_topic_line(topic, configs, assignment))
        # Not transactional with the assignment, as in Kafka: the config goes first so that brokers creating
        # the log already find it. Kafka tries a setData first, which fails for a topic not yet created; the
        # create is tried first here (then a setData if a config znode is there after all): the same znode.
        await self._zk.create_or_set_entity_configs(paths.ConfigType.TOPIC, topic, configs)
        topic_id = TopicId.generate(self._topic_id_rng) if self._topic_id_rng is not None else None
        try:
            await self._zk.create_topic_assignment(topic, topic_id, _to_model(topic, assignment))
        except NodeExistsError:
            raise TopicExistsError(f"Topic '{topic}' already exists.") from None
        return topic_id

    async def validate_topic_create(
        self, topic: str, assignment: Mapping[int, Sequence[int]], configs: Mapping[str, str]
    ) -> None:
        """``AdminZkClient.validateTopicCreate``: name, existence, collisions, assignment shape, configs."""
        validate_topic_name(topic)
        # a topic queued for deletion still has its znode (a halted deletion keeps it): it "already exists", as
        # Kafka says; no check of /admin/delete_topics of its own
        if await self._zk.path_exists(TopicZNode.path(topic)):
            raise TopicExistsError(f"Topic '{topic}' already exists.")
        if has_collision_chars(topic):
            all_topics = await self._zk.get_all_topics_in_cluster()
            if topic in all_topics:  # created meanwhile: it would collide with itself
                raise TopicExistsError(f"Topic '{topic}' already exists.")
            colliding = sorted(t for t in all_topics if has_collision(topic, t))
            if colliding:
                raise InvalidTopicError(f"Topic '{topic}' collides with existing topics: {', '.join(colliding)}")
        validate_assignment_shape(assignment)
        validate_topic_configs(configs)

    async def _check_brokers_registered(self, assignment: Mapping[int, Sequence[int]]) -> None:
        live = await self._zk.get_sorted_broker_list()
        missing = unavailable_brokers(assignment, live)
        if missing:
            partition, _ = next(iter(missing.items()))
            raise BrokerNotAvailableError(
                f"Some brokers specified for partition id {partition} are not available. Specified brokers: "
                f"{', '.join(map(str, assignment[partition]))}, available brokers: {', '.join(map(str, live))}.")

    # ------------------------------------------------------------------ add partitions

    async def add_partitions(
        self,
        topic: str,
        num_partitions: int,
        new_assignment: Sequence[Sequence[int]] | None = None,
        *,
        rack_aware_mode: RackAwareMode = RackAwareMode.ENFORCED,
        validate_only: bool = False,
        before_write: Callable[[int], None] | None = None,
    ) -> Assignment:
        """Grow ``topic`` to ``num_partitions``; ``new_assignment`` lists the new partitions' replicas in order
        (default: Kafka's placement, continuing from partition 0's first replica). Returns the full assignment;
        ``validate_only`` (CreatePartitions' flag) checks and places but writes nothing. ``before_write`` is called
        with the number of partitions added once they are placed, just before the write (not with
        ``validate_only``): CreatePartitions charges its controller mutation quota there, as ``ZkAdminManager``
        does; what it raises stops the write.

        A topic znode that cannot be read raises its `ZnodeDecodeError` (path and reason). Kafka's ``--alter``
        throws the Jackson error for the wrong shape or no data, and says "The topic T does not exist" for data
        that is not JSON, which would send the user looking for a missing topic.
        """
        if is_internal(topic):
            raise InvalidPartitionsError(f"The number of partitions for the internal topic {topic} cannot be changed.")
        read = await self._zk.get_topic_assignments([topic])
        if read.malformed:  # Kafka's getFullReplicaAssignmentForTopics throws, or (not JSON) "does not exist"
            raise next(iter(read.malformed.values()))
        current = read.values.get(topic)
        if current is None or not current.assignment:
            raise UnknownTopicError(f"The topic {topic} does not exist")
        existing = {tp.partition: ra for tp, ra in current.assignment.items()}
        if 0 not in existing:
            raise InvalidReplicaAssignmentError(
                f"Unexpected existing replica assignment for topic '{topic}', partition id 0 is missing.")
        to_add = num_partitions - len(existing)
        if to_add <= 0:
            raise InvalidPartitionsError(
                f"The number of partitions for a topic can only be increased. Topic {topic} currently has "
                f"{len(existing)} partitions, {num_partitions} would not be an increase.")
        brokers = await self.broker_metadatas(rack_aware_mode)
        added = self._new_partitions(existing, brokers, to_add, new_assignment)
        combined = {**existing, **{p: ReplicaAssignment(tuple(r)) for p, r in added.items()}}
        if validate_only:
            return {p: list(ra.replicas) for p, ra in sorted(combined.items())}
        if before_write is not None:
            before_write(to_add)
        log.info("Creating %d partitions for '%s' with the following replica assignment: %s.", to_add, topic, added)
        model = {TopicPartition(topic, p): ra for p, ra in combined.items()}
        await self._zk.set_topic_assignment(topic, current.topic_id, model, NO_FENCING)
        return {p: list(ra.replicas) for p, ra in sorted(combined.items())}

    @staticmethod
    def _new_partitions(
        existing: Mapping[int, ReplicaAssignment],
        brokers: list[BrokerMetadata],
        to_add: int,
        new_assignment: Sequence[Sequence[int]] | None,
    ) -> Assignment:
        partition0 = existing[0].replicas
        if new_assignment is None:
            ids = [b.id for b in brokers]
            start = next((i for i, b in enumerate(ids) if b >= partition0[0]), 0)
            return assign_replicas_to_brokers(brokers, to_add, len(partition0), fixed_start_index=start,
                                              start_partition_id=len(existing))
        if len(new_assignment) != to_add:
            raise InvalidReplicaAssignmentError(
                f"Increasing the number of partitions by {to_add} but {len(new_assignment)} assignments provided.")
        added = {len(existing) + i: list(r) for i, r in enumerate(new_assignment)}
        _validate_new_partitions(added, len(partition0), [b.id for b in brokers])
        return added

    # ------------------------------------------------------------------ delete

    async def delete_topic(self, topic: str) -> None:
        """Mark for deletion (``/admin/delete_topics/<t>``); the controller deletes it if deletion is enabled."""
        if is_internal(topic):
            raise InvalidTopicError(
                f"Topic {topic} is a kafka internal topic and is not allowed to be marked for deletion.")
        if not await self._zk.path_exists(TopicZNode.path(topic)):
            raise UnknownTopicError(f"Topic `{topic}` to delete does not exist")
        try:
            await self._zk.create_delete_topic_path(topic)
        except NodeExistsError:
            raise TopicAlreadyMarkedForDeletionError(f"topic {topic} is already marked for deletion") from None

    async def delete_topics_matching(self, include: str, *, exclude_internal: bool = False, if_exists: bool = False
                                     ) -> AsyncIterator[tuple[str, bool]]:
        """``kafka-topics --delete --topic INCLUDE``: mark each topic the regular expression matches (commas mean
        "or"; sorted), yielding it and whether it was marked now (False: it already was). Nothing matched is
        Kafka's "does not exist as expected" unless ``if_exists``; an internal topic raises, ending the run there,
        as Kafka's loop does. The ``topics delete`` command and the cluster prompt's ``delete`` both come here,
        so NAME means the same at either (the prompt took it literally)."""
        for topic in await select_topics(self._zk, include, exclude_internal=exclude_internal,
                                         must_exist=not if_exists):
            try:
                await self.delete_topic(topic)
            except TopicAlreadyMarkedForDeletionError:
                yield topic, False
                continue
            yield topic, True


DELETE_TOPIC_NOTE = "Note: This will have no impact if delete.topic.enable is not set to true."


def deletion_lines(topic: str, marked_now: bool) -> list[str]:
    """kafka-topics' lines for a topic ``delete_topics_matching`` yielded (``ZookeeperTopicService.deleteTopic``):
    a topic marked now gets the note on delete.topic.enable after its line, one already marked does not."""
    if marked_now:
        return [f"Topic {topic} is marked for deletion.", DELETE_TOPIC_NOTE]
    return [f"Topic {topic} is already marked for deletion."]


async def change_topic_config(zk: KafkaZkClient, topic: str, configs: Mapping[str, str]) -> None:
    """``AdminZkClient.changeTopicConfig``: the one place a topic's overrides are replaced (``configs --alter``
    and ``topics alter --config`` both come here).

    Validates as ``validateTopicConfig`` does (name, existence, then the whole set, not just the additions: a
    cross-config rule such as min.compaction.lag.ms <= max.compaction.lag.ms can be broken by either side),
    writes ``/config/topics/<t>`` and the change notification brokers and the controller react to."""
    validate_topic_name(topic)
    if not await zk.path_exists(TopicZNode.path(topic)):
        raise UnknownTopicError(f"Topic '{topic}' does not exist.")
    validate_topic_configs(configs)
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, topic, dict(configs))
    await zk.create_config_change_notification(f"{paths.ConfigType.TOPIC}/{topic}")


def _validate_new_partitions(added: Mapping[int, Sequence[int]], replication_factor: int, live: list[int]) -> None:
    """``AdminZkClient.validateReplicaAssignment`` for new partitions."""
    for partition, replicas in sorted(added.items()):
        if not replicas:
            raise InvalidReplicaAssignmentError(f"Cannot have replication factor of 0 for partition id {partition}.")
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(
                f"Duplicate brokers not allowed in replica assignment: {', '.join(map(str, replicas))} "
                f"for partition id {partition}.")
        if not set(replicas) <= set(live):
            raise BrokerNotAvailableError(
                f"Some brokers specified for partition id {partition} are not available. Specified brokers: "
                f"{', '.join(map(str, replicas))}, available brokers: {', '.join(map(str, live))}.")
    bad = {p: len(r) for p, r in sorted(added.items()) if len(r) != replication_factor}
    if bad:
        raise InvalidReplicaAssignmentError(
            f"Inconsistent replication factor between partitions, partition 0 has {replication_factor} while "
            f"partitions [{', '.join(map(str, bad))}] have replication factors "
            f"[{', '.join(map(str, bad.values()))}], respectively.")


def _to_model(topic: str, assignment: Mapping[int, Sequence[int]]) -> dict[TopicPartition, ReplicaAssignment]:
    return {TopicPartition(topic, p): ReplicaAssignment(tuple(r)) for p, r in assignment.items()}


def creating_topic_line(topic: str, configs: Mapping[str, str], assignment: Mapping[int, Sequence[int]]) -> str:
    """AdminZkClient's line, as a broker's CreateTopics or auto-creation prints it in server.log: the configs a
    ``java.util.Properties`` (``{}``, ``{k=v, ...}``), the assignment the ``mutable.HashMap`` of ``ArrayBuffer``s
    that ``AdminUtils.assignReplicasToBrokers`` and ``ZkAdminManager`` build (small int keys iterate in order)."""
    props = "{" + ", ".join(f"{k}={v}" for k, v in sorted(configs.items())) + "}"
    parts = scala_collection("HashMap", (f"{p} -> {scala_collection('ArrayBuffer', replicas)}"
                                         for p, replicas in sorted(assignment.items())))
    return f"Creating topic {topic} with configuration {props} and initial partition assignment {parts}"
