"""``zkcontroller reassign``: Kafka 2.8's ``kafka-reassign-partitions.sh --zookeeper`` (generate, execute, verify,
cancel, list) with its JSON and messages.

Against ZooKeeper the legacy ``/admin/reassign_partitions`` znode is the entry point; the controller turns it into
a KIP-455 reassignment (RS, adding, removing in the topic znode). Cancelling writes each partition's original
replicas (RS − adding) as its target, which the controller treats exactly as an API cancellation. Every input is
checked before anything is written: a bad file, an unknown topic, partition or broker, an empty or duplicated
replica list is an `AdminError` naming it, and ZooKeeper is left as it was.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from zkcontroller.admin.errors import AdminError, corrupt_registration_error
from zkcontroller.admin.java_numbers import is_json_int, parse_int_list
from zkcontroller.admin.metadata_client import MetadataUnavailableError, partition_replicas
from zkcontroller.admin.repeats import repeated
from zkcontroller.admin.replica_assignment import (
    BrokerMetadata,
    RackAwareMode,
    assign_replicas_to_brokers,
    broker_metadatas_for,
)
from zkcontroller.admin.topics import change_topic_config
from zkcontroller.model import Broker, ReplicaAssignment, TopicPartition, sorted_partitions
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.fencing import NO_FENCING
from zkcontroller.zk.java_text import jackson_text
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.paths import ConfigType, parse_broker_id

ROLLBACK_NOTE = "Save this to use as the --reassignment-json-file option during rollback"
EXISTING = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override this and "
    "create a new partition assignment in addition to the existing one. The --additional flag can also be used to "
    "change the throttle by resubmitting the current reassignment.")
"""ReassignPartitionsCommand.cannotExecuteBecauseOfExistingMessage (both paths; its two spaces included)."""
VERIFY_PERIODICALLY = ("Warning: You must run --verify periodically, until the reassignment completes, to ensure "
                       "the throttle is removed.")
"""ReassignPartitionsCommand.youMustRunVerifyPeriodicallyMessage, printed before a throttle is set."""


BrokerView = Callable[[TopicPartition], Sequence[int] | None] | str
"""A broker's metadata (partition -> replicas it lists, None if unknown), or why the broker could not be asked
(``reassign --verify --check-brokers``)."""


class ReassignmentInputError(AdminError):
    """A reassignment or topics-to-move file that cannot be used (what and where)."""


def _load(text: str, source: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ReassignmentInputError(
            f"{source}: malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None


ANY_LOG_DIR = "any"
"""ReassignPartitionsCommand.AnyLogDir: the log_dirs entry that leaves the replica's directory to the broker."""
LOG_DIRS_NEED_BOOTSTRAP = "bootstrap-server needs to be provided when replica reassignments are present."
"""executeAssignment/verifyAssignment's (ZooKeeper) refusal of a file naming a log dir other than "any"."""


def _scala_list(values: Sequence[object]) -> str:
    """Scala's ``List(...).toString`` (strings unquoted), as Kafka's messages print a parsed list."""
    return f"List({', '.join(map(str, values))})"


def _check_version(data: dict[str, object], source: str) -> None:
    """Kafka's ``version`` field: absent means 1, otherwise ``to[Int]`` (its JSON error) and 1 only."""
    if "version" not in data:
        return
    version = data["version"]
    if not is_json_int(version):
        raise ReassignmentInputError(
            f"{source}: \"version\": Expected `Int` value, received {jackson_text(version)}")
    if version != 1:
        raise ReassignmentInputError(f"Not supported version field value {version}")


def parse_reassignment_json(text: str, source: str = "reassignment JSON") -> dict[TopicPartition, tuple[int, ...]]:
    """The target replicas of a reassignment file (`parse_reassignment_file` without its log dirs)."""
    return parse_reassignment_file(text, source)[0]


def parse_reassignment_file(text: str, source: str = "reassignment JSON"
                            ) -> tuple[dict[TopicPartition, tuple[int, ...]], dict[tuple[TopicPartition, int], str]]:
    """``{"version":1,"partitions":[{"topic":..,"partition":..,"replicas":[..],"log_dirs":[..]}]}`` as Kafka's
    parsePartitionReassignmentData reads it: the targets, and each replica's log dir other than "any" (an absent
    ``log_dirs`` is all "any"; one whose length differs from ``replicas`` is refused with Kafka's message)."""
    data = _load(text, source)
    if isinstance(data, dict):
        _check_version(data, source)
    entries = data.get("partitions") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ReassignmentInputError(f"{source}: expected an object with a \"partitions\" list")
    if not entries:
        raise ReassignmentInputError("Partition reassignment list cannot be empty")  # parseExecuteAssignmentArgs
    out: dict[TopicPartition, tuple[int, ...]] = {}
    log_dirs: dict[tuple[TopicPartition, int], str] = {}
    duplicates: list[TopicPartition] = []
    for i, entry in enumerate(entries):
        where = f"{source}: partitions[{i}]"
        if not isinstance(entry, dict):
            raise ReassignmentInputError(f"{where}: expected an object")
        topic, partition, replicas = entry.get("topic"), entry.get("partition"), entry.get("replicas")
        if not isinstance(topic, str) or not topic:
            raise ReassignmentInputError(f"{where}: \"topic\" must be a non-empty string")
        if not is_json_int(partition) or partition < 0:
            raise ReassignmentInputError(f"{where}: \"partition\" must be a non-negative 32-bit integer")
        if not isinstance(replicas, list) or not all(is_json_int(r) for r in replicas):  # to[Seq[Int]]
            raise ReassignmentInputError(f"{where}: \"replicas\" must be a list of broker ids (32-bit integers)")
        tp = TopicPartition(topic, partition)
        dirs = entry.get("log_dirs", [ANY_LOG_DIR] * len(replicas))
        if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):  # to[Seq[String]]
            raise ReassignmentInputError(f"{where}: \"log_dirs\" must be a list of strings")
        if len(dirs) != len(replicas):
            raise ReassignmentInputError(f"Size of replicas list {_scala_list(replicas)} is different from size of "
                                         f"log dirs list {_scala_list(dirs)} for partition {tp}")
        log_dirs.update(((tp, r), d) for r, d in zip(replicas, dirs, strict=True) if d != ANY_LOG_DIR)
        if tp in out:
            duplicates.append(tp)
        out[tp] = tuple(replicas)
    if duplicates:
        raise ReassignmentInputError("Partition reassignment contains duplicate topic partitions: "
                                     f"{','.join(str(tp) for tp in duplicates)}")
    empty = [tp for tp, r in out.items() if not r]
    if empty:
        raise ReassignmentInputError(f"Empty replica list specified in partition reassignment for "
                                     f"{','.join(str(tp) for tp in empty)}")
    repeats = {tp: rs for tp, rs in ((tp, sorted(repeated(rs))) for tp, rs in out.items()) if rs}
    if repeats:
        msg = ". ".join(f"{tp} contains multiple entries for {','.join(map(str, rs))}" for tp, rs in repeats.items())
        raise ReassignmentInputError(f"Partition replica lists may not contain duplicate entries: {msg}")
    return out, log_dirs


def parse_topics_to_move_json(text: str, source: str = "topics-to-move JSON") -> list[str]:
    """``{"topics":[{"topic":"foo"}],"version":1}`` (the version checked as Kafka's parseTopicsData does)."""
    data = _load(text, source)
    if isinstance(data, dict):
        _check_version(data, source)
    entries = data.get("topics") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ReassignmentInputError(f"{source}: expected an object with a non-empty \"topics\" list")
    topics = []
    for i, entry in enumerate(entries):
        topic = entry.get("topic") if isinstance(entry, dict) else None
        if not isinstance(topic, str) or not topic:
            raise ReassignmentInputError(f"{source}: topics[{i}]: \"topic\" must be a non-empty string")
        topics.append(topic)
    duplicates = sorted(repeated(topics))
    if duplicates:
        raise ReassignmentInputError(f"List of topics to reassign contains duplicate entries: {','.join(duplicates)}")
    return topics


def parse_broker_list(text: str) -> list[int]:
    """``--broker-list`` as ReassignPartitionsCommand.parseGenerateAssignmentArgs reads it: Java's
    ``split(',')`` (trailing empty pieces dropped), each piece ``toInt`` (``+1``, ``01`` pass; `` 1``, ``1_0``
    do not), with Kafka's messages."""
    try:
        brokers = parse_int_list(text, ",")
    except ValueError as e:
        raise ReassignmentInputError(str(e)) from None
    duplicates = sorted(repeated(brokers))
    if duplicates:
        raise ReassignmentInputError(f"Broker list contains duplicate entries: {','.join(map(str, duplicates))}")
    return brokers


def format_reassignment_json(assignment: Mapping[TopicPartition, Sequence[int]]) -> str:
    """Kafka's ``formatAsReassignmentJson`` (log_dirs all "any"): ``Json.encodeAsString``, Jackson's text, so a
    topic read from ZooKeeper with characters past ASCII prints them as they are (`jackson_text`)."""
    partitions = [{"topic": tp.topic, "partition": tp.partition, "replicas": list(r),
                   "log_dirs": ["any"] * len(r)} for tp, r in sorted(assignment.items())]
    return jackson_text({"version": 1, "partitions": partitions})


@dataclass(frozen=True)
class PartitionStatus:
    tp: TopicPartition
    target: tuple[int, ...]
    complete: bool
    in_isr: int
    """Target replicas already in the ISR (the progress bar's numerator)."""
    message: str


TOPIC_THROTTLES = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
"""The topic configs a reassignment's throttle sets (ReassignPartitionsCommand.topicLevelThrottles)."""
BROKER_THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                    "replica.alter.log.dirs.io.max.bytes.per.second")
"""The broker configs a reassignment's throttle sets (ReassignPartitionsCommand.brokerLevelThrottles)."""


MoveMap = dict[str, dict[int, tuple[frozenset[int], frozenset[int]]]]
"""Topic -> partition -> (source brokers, destination brokers): Kafka's ``MoveMap`` of ``PartitionMove``s."""


def proposed_move_map(ongoing: Mapping[tuple[str, int], tuple[Sequence[int], Sequence[int]]],
                      targets: Mapping[TopicPartition, Sequence[int]],
                      current: Mapping[TopicPartition, Sequence[int]]) -> MoveMap:
    """calculateProposedMoveMap: every ongoing reassignment's move (``ongoing``: its replicas and adding replicas;
    sources are the replicas less the adding ones, destinations the adding ones), then each target's, whose
    sources are the ongoing move's if the partition is moving, else its current replicas, and whose destinations
    are the target replicas not among them. The ZooKeeper path passes no ongoing moves, as Kafka's does."""
    moves: MoveMap = {}
    for (topic, partition), (replicas, adding) in ongoing.items():
        moves.setdefault(topic, {})[partition] = (frozenset(replicas) - set(adding), frozenset(adding))
    for tp, replicas in targets.items():
        parts = moves.setdefault(tp.topic, {})
        sources = parts[tp.partition][0] if tp.partition in parts else frozenset(current.get(tp, ()))
        if not sources:
            raise AdminError(f"Trying to reassign a topic partition {tp} with 0 replicas")
        parts[tp.partition] = (sources, frozenset(replicas) - sources)
    return moves


def throttled_replicas(moves: MoveMap) -> dict[str, tuple[str, str]]:
    """calculateLeaderThrottles and calculateFollowerThrottles: per topic, the ``partition:broker`` pairs of the
    sources (leader) and of the destinations that are not sources (follower), each sorted as strings (a Scala
    ``TreeSet[String]``) and joined by commas."""
    return {topic: (",".join(sorted(f"{p}:{b}" for p, (sources, _) in parts.items() for b in sources)),
                    ",".join(sorted(f"{p}:{b}" for p, (sources, dests) in parts.items()
                                    for b in dests if b not in sources)))
            for topic, parts in moves.items()}


def reassigning_brokers(moves: MoveMap) -> list[int]:
    """calculateReassigningBrokers: every source and destination, sorted."""
    return sorted({b for parts in moves.values() for sources, dests in parts.values() for b in sources | dests})


def throttle_set_line(throttle: int) -> str:
    return f"The inter-broker throttle limit was set to {throttle} B/s"


PartitionStatuses = list[PartitionStatus]
"""`ReassignCommand.verify`'s answer (named outside the class, where ``list`` is its method)."""


class ReassignCommand:
    """What the CLI does, over one `KafkaZkClient` (tests run it against both backends)."""

    def __init__(self, zk: KafkaZkClient, rng: random.Random | None = None) -> None:
        self._zk = zk
        self._rng = rng or random.Random()
        """Placement randomness for --generate (Kafka's random start index); seeded in tests."""

    async def _assignments(self, topics: Iterable[str]) -> dict[TopicPartition, ReplicaAssignment]:
        read = await self._zk.get_full_replica_assignment_for_topics(topics)
        if read.malformed:
            path, error = sorted(read.malformed.items())[0]
            raise AdminError(f"Cannot read the assignment at {path}: {error.reason}")
        return dict(read.values)

    async def generate(self, topics: Sequence[str], brokers: Sequence[int], *, rack_aware: bool = True
                       ) -> tuple[str, str]:
        """(current, proposed) JSON: each topic's partitions re-placed on ``brokers`` with its replication.

        As Kafka's ``getBrokerMetadatas(Enforced or Disabled, brokers)``: the registered racks of the brokers
        named are used unless ``rack_aware`` is off, and only some of them having a rack is an error then.

        A topic that does not exist is skipped, as Kafka's ZooKeeper path reads the assignments with
        ``getReplicaAssignmentForTopics`` (a missing topic znode reads as no partitions): it is in neither JSON,
        and when no topic named exists both are ``{"version":1,"partitions":[]}``. Likewise a broker named that is
        not registered is left out (``getBrokerMetadatas(mode, Some(brokers))`` filters the registered ones), so
        a topic's replication factor is checked against the brokers found.

        A topic znode or a broker registration that cannot be read fails the command, naming it, as Kafka's
        ``getReplicaAssignmentForTopics`` and ``getAllBrokersInCluster`` throw there (a topic znode that is not
        JSON reads as no partitions in Kafka, which would leave the topic out of both JSONs without a word)."""
        current = await self._assignments(topics)
        proposed: dict[TopicPartition, tuple[int, ...]] = {}
        read = await self._zk.get_all_brokers_and_epochs()
        if read.malformed:  # getBrokerMetadatas → getAllBrokersInCluster throws on it
            raise corrupt_registration_error(read.malformed)
        registered = read.values.values()
        metadata = broker_metadatas_for(
            (BrokerMetadata(r.broker.id, r.broker.rack) for r in registered if r.broker.id in set(brokers)),
            RackAwareMode.ENFORCED if rack_aware else RackAwareMode.DISABLED)
        for topic in topics:
            parts = {tp: a for tp, a in current.items() if tp.topic == topic}
            if not parts:
                continue
            rf = len(next(iter(parts.values())).target_replicas)
            placed = assign_replicas_to_brokers(metadata, len(parts), rf, rng=self._rng)
            for tp in parts:
                proposed[tp] = tuple(placed[tp.partition])
        shown = {tp: a.replicas for tp, a in current.items()}
        return format_reassignment_json(shown), format_reassignment_json(proposed)

    async def _check_brokers(self, brokers: Iterable[int]) -> None:
        live = set(await self._zk.get_sorted_broker_list())
        unknown = sorted(set(brokers) - live)
        if unknown:
            raise AdminError(f"The proposed assignment contains non-existent brokerIDs: {','.join(map(str, unknown))}")

    async def execute(self, targets: Mapping[TopicPartition, Sequence[int]], throttle: int = -1) -> str:
        """Validate everything, set the throttles if ``throttle`` >= 0, then create the znode; returns the
        rollback JSON (the current replicas).

        Kafka 2.8's order (``verifyReplicasAndBrokersInAssignment``, then the in-progress check): unknown
        partitions, unknown brokers, then a reassignment already pending. Kafka prints the partitions as a Scala
        ``List(t-7, t-8)``; we list them without the wrapper."""
        current = await self._assignments({tp.topic for tp in targets})
        unknown = [tp for tp in sorted_partitions(targets) if tp not in current]
        if unknown:
            raise AdminError("The proposed assignment contains non-existent partitions: "
                             f"{', '.join(str(tp) for tp in unknown)}")
        await self._check_brokers(b for r in targets.values() for b in r)
        if await self._zk.reassign_partitions_in_progress():
            raise AdminError(EXISTING)
        rollback = {tp: current[tp].replicas for tp in targets}
        if throttle >= 0:
            await self._set_throttles(proposed_move_map({}, targets, rollback), throttle)
        await self._zk.create_partition_reassignment(targets)
        return format_reassignment_json(rollback)

    async def _set_throttles(self, moves: MoveMap, throttle: int) -> None:
        """The ZooKeeper path's modifyTopicThrottles (each topic's overrides plus its throttled replicas, through
        ``changeTopicConfig``) and modifyBrokerThrottles (each reassigning broker's dynamic configs plus both
        rates, written with their notification as ``changeBrokerConfig`` does)."""
        leader, follower = TOPIC_THROTTLES
        for topic, (leaders, followers) in throttled_replicas(moves).items():
            configs = await self._zk.get_entity_configs(ConfigType.TOPIC, topic)
            await change_topic_config(self._zk, topic, {**configs, leader: leaders, follower: followers})
        for broker in reassigning_brokers(moves):
            configs = await self._zk.get_entity_configs(ConfigType.BROKER, str(broker))
            configs.update(dict.fromkeys(BROKER_THROTTLES[:2], str(throttle)))
            await self._zk.set_or_create_entity_configs(ConfigType.BROKER, str(broker), configs)
            await self._zk.create_config_change_notification(f"{ConfigType.BROKER}/{broker}")

    async def cancel(self, targets: Iterable[TopicPartition]) -> list[TopicPartition]:
        """Target each given partition being reassigned back to its original replicas (RS − adding).

        The controller watches only the znode's creation, so a pending znode is replaced (deleted, then created
        with its other entries unchanged; re-submitting those is idempotent for the controller)."""
        wanted = set(targets)
        current = await self._assignments({tp.topic for tp in wanted})
        moving = {tp: a.origin_replicas for tp, a in current.items() if tp in wanted and a.is_being_reassigned}
        if moving:
            pending = await self._zk.get_partition_reassignment() or {}
            if pending:
                await self._zk.delete_partition_reassignment(NO_FENCING)
            await self._zk.create_partition_reassignment(
                {**{tp: r for tp, r in pending.items() if tp not in moving}, **moving})
        return sorted_partitions(moving)

    async def clear_throttles(self, targets: Mapping[TopicPartition, Sequence[int]]
                              ) -> tuple[list[int], list[str], list[ZnodeDecodeError]]:
        """Kafka's ``clearAllThrottles`` (ZooKeeper), run by ``--verify`` once no reassignment is pending: drop
        the throttle configs of every registered or target broker and of every target topic, rewriting (and
        notifying) only an entity that had one. Returns the brokers and topics it looked at, and the config nodes
        it could not read: those are left as they are and the others still cleared (Kafka reads a node that is
        not JSON as having no throttle, and stops at one whose value is not a string)."""
        unreadable: list[ZnodeDecodeError] = []

        async def configs_of(entity_type: str, name: str) -> dict[str, str] | None:
            try:
                return await self._zk.get_entity_configs(entity_type, name)
            except ZnodeDecodeError as e:
                unreadable.append(e)
                return None

        brokers = sorted(set(await self._zk.get_sorted_broker_list()) | {b for r in targets.values() for b in r})
        for broker in brokers:
            found = await configs_of(ConfigType.BROKER, str(broker))
            if found is None:
                continue
            kept = {k: v for k, v in found.items() if k not in BROKER_THROTTLES}
            if kept != found:  # AdminZkClient.changeBrokerConfig: the write, then the notification
                await self._zk.set_or_create_entity_configs(ConfigType.BROKER, str(broker), kept)
                await self._zk.create_config_change_notification(f"{ConfigType.BROKER}/{broker}")
        topics = sorted({tp.topic for tp in targets})
        for topic in topics:
            found = await configs_of(ConfigType.TOPIC, topic)
            if found is None:
                continue
            kept = {k: v for k, v in found.items() if k not in TOPIC_THROTTLES}
            if kept != found:
                await change_topic_config(self._zk, topic, kept)
        return brokers, topics, unreadable

    async def list(self) -> dict[TopicPartition, ReplicaAssignment]:
        """The partitions being reassigned; the first topic znode that cannot be read raises `AdminError`."""
        topics = await self._zk.get_all_topics_in_cluster()
        return {tp: a for tp, a in sorted((await self._assignments(topics)).items()) if a.is_being_reassigned}

    async def list_readable(self) -> tuple[dict[TopicPartition, ReplicaAssignment], dict[str, ZnodeDecodeError]]:
        """`list` over every topic znode that can be read, and the others by path (``--list``: Kafka 2.8 has it
        only through the admin client, whose brokers' metadata has no such topic; here a corrupt topic must not
        hide the reassignments of the others, nor be left unsaid)."""
        read = await self._zk.get_full_replica_assignment_for_topics(await self._zk.get_all_topics_in_cluster())
        moving = {tp: a for tp, a in sorted(read.values.items()) if a.is_being_reassigned}
        return moving, dict(sorted(read.malformed.items()))

    async def not_yet_started(self, started: Iterable[TopicPartition]) -> dict[TopicPartition, tuple[int, ...]]:
        """Partitions ``/admin/reassign_partitions`` asks to move that no controller has begun (none is active,
        or it has not read the znode yet): `list` alone, which reads what controllers wrote, said "No partition
        reassignments found" for them. A malformed znode lists nothing here (`not_yet_started_or_error` says why)."""
        return (await self.not_yet_started_or_error(started))[0]

    async def not_yet_started_or_error(self, started: Iterable[TopicPartition]
                                       ) -> tuple[dict[TopicPartition, tuple[int, ...]], ZnodeDecodeError | None]:
        """`not_yet_started`, and the error when ``/admin/reassign_partitions`` cannot be read (``--list`` reports
        it; the controller reads a JSON error as no reassignment, with Kafka's WARN, and fails on null data or the
        nulls Kafka's decoder dereferences, as Kafka's throws: docs/coordination.md)."""
        try:
            pending = await self._zk.get_partition_reassignment()
        except ZnodeDecodeError as e:
            return {}, e
        begun = set(started)
        return {tp: target for tp, target in sorted((pending or {}).items()) if tp not in begun}, None

    async def broker_views(self, topics: Iterable[str], timeout_ms: int = 5000) -> dict[int, BrokerView]:
        """Every registered broker's metadata for ``topics``, asked over Kafka's wire protocol (Metadata v1 on the
        broker's first advertised endpoint), all at once, each bounded by ``timeout_ms``; a broker that cannot be
        asked maps to the reason why, a corrupt registration among them (it is a broker that did not confirm)."""
        read = await self._zk.get_all_brokers_and_epochs()
        wanted = sorted(set(topics))

        async def ask(broker: Broker) -> BrokerView:
            if not broker.endpoints:
                return "it advertises no endpoint"
            e = broker.endpoints[0]
            try:
                found = await partition_replicas(e.host or "localhost", e.port, wanted, timeout_ms)
            except MetadataUnavailableError as err:
                return str(err)
            return found.get

        brokers = [b.broker for _, b in sorted(read.values.items())]
        answers = await asyncio.gather(*(ask(b) for b in brokers))
        views: dict[int, BrokerView] = {b.id: answer for b, answer in zip(brokers, answers, strict=True)}
        for path, error in read.malformed.items():  # registered, but where it listens cannot be read
            views[parse_broker_id(path.rsplit("/", 1)[-1])] = f"its registration cannot be read: {error.reason}"
        return dict(sorted(views.items()))

    async def verify(self, targets: Mapping[TopicPartition, Sequence[int]],
                     broker_views: Mapping[int, BrokerView] | None = None) -> PartitionStatuses:
        """Kafka 2.8's ``verifyPartitionAssignments`` over ZooKeeper: complete = the topic znode's RS is the
        target with nothing adding or removing and the reassign znode no longer lists the partition. Only when
        ``broker_views`` are given (``--check-brokers``) must every broker's metadata also list the target; a
        view that is a string is a broker that could not be asked, so the partition is not confirmed complete
        (`unreachable_brokers_line` says why, once).

        A target topic's znode that cannot be read fails it (`AdminError` naming the znode), as Kafka's
        ``getReplicaAssignmentForTopics`` throws there; so does an ``/admin/reassign_partitions`` that cannot be
        read (`ZnodeDecodeError`), where Kafka, for a JSON error, warns "Ignoring partition reassignment due to
        invalid json" and reads no pending partitions, which could call a partition still listed there complete
        (for null data Kafka's read throws too)."""
        current = await self._assignments({tp.topic for tp in targets})
        pending = await self._zk.get_partition_reassignment() or {}
        states = (await self._zk.get_topic_partition_states(targets)).values
        out = []
        for tp in sorted_partitions(targets):
            target = tuple(targets[tp])
            a = current.get(tp)
            isr = set(states[tp].leader_and_isr.isr) if tp in states else set()
            in_isr = len(set(target) & isr)
            if a is None:
                out.append(PartitionStatus(tp, target, False, 0, f"Unable to find partition: {tp}"))
                continue
            lagging = _brokers_not_agreeing(tp, target, broker_views or {})
            if tp in pending or a.is_being_reassigned:
                done, msg = False, f"Reassignment of partition {tp} is still in progress."
            elif a.replicas == target and not lagging:
                done, msg = True, f"Reassignment of partition {tp} is complete."
            elif a.replicas == target:
                done, msg = False, f"Reassignment of partition {tp} is still in progress ({'; '.join(lagging)})."
            else:
                done, msg = False, (f"There is no active reassignment of partition {tp}, but replica set is "
                                    f"{','.join(map(str, a.replicas))} rather than {','.join(map(str, target))}.")
            out.append(PartitionStatus(tp, target, done, in_isr, msg))
        return out


def _brokers_not_agreeing(tp: TopicPartition, target: tuple[int, ...], views: Mapping[int, BrokerView]
                          ) -> list[str]:
    """Why the brokers whose metadata does not (or may not) list ``target`` for ``tp`` keep verify from
    completing; the brokers that could not be asked are one reason, by id (their errors are said once)."""
    out = []
    unreachable = [broker_id for broker_id, view in sorted(views.items()) if isinstance(view, str)]
    for broker_id, view in sorted(views.items()):
        if isinstance(view, str):
            continue
        seen = view(tp)
        if seen is None:
            out.append(f"broker {broker_id} does not know {tp} yet")
        elif tuple(seen) != target:
            out.append(f"broker {broker_id} still lists replicas {','.join(map(str, seen))}")
    if unreachable:
        out.append(f"could not ask {_brokers(unreachable)}")
    return out


def _brokers(ids: Sequence[int]) -> str:
    return f"broker{'s' if len(ids) > 1 else ''} {','.join(map(str, ids))}"


def unreachable_brokers_line(views: Mapping[int, BrokerView]) -> str | None:
    """One line naming every broker that could not be asked and why (None when all answered)."""
    why = {broker_id: view for broker_id, view in sorted(views.items()) if isinstance(view, str)}
    if not why:
        return None
    return (f"Could not ask {_brokers(list(why))} for {'their' if len(why) > 1 else 'its'} metadata: "
            + "; ".join(f"broker {broker_id}: {reason}" for broker_id, reason in why.items()))


def list_lines(found: Mapping[TopicPartition, ReplicaAssignment]) -> list[str]:
    """Kafka's ``curReassignmentsToString``."""
    if not found:
        return ["No partition reassignments found."]
    lines = ["Current partition reassignments:"]
    for tp, a in sorted(found.items()):
        adding = f" adding: {','.join(map(str, a.adding_replicas))}." if a.adding_replicas else ""
        removing = f" removing: {','.join(map(str, a.removing_replicas))}." if a.removing_replicas else ""
        lines.append(f"{tp}: replicas: {','.join(map(str, a.replicas))}.{adding}{removing}")
    return lines


def list_output(found: Mapping[TopicPartition, ReplicaAssignment], pending: Mapping[TopicPartition, tuple[int, ...]],
                corrupt: Mapping[str, ZnodeDecodeError], submission: ZnodeDecodeError | None) -> list[str]:
    """``--list``: `list_lines` (Kafka's ``curReassignmentsToString``) for what controllers began, then
    `not_yet_started_lines` and `corrupt_lines`. Kafka's "No partition reassignments found." is left out when a
    submitted move waits for a controller: Kafka's tool asks the controller, which has begun every move it read, so
    it never prints that line above a move still to come. (A submission that cannot be read keeps the line: the
    controller ignores it, as Kafka's does, so nothing will begin.)"""
    lines = list_lines(found) if found or not pending else []
    return [*lines, *not_yet_started_lines(pending), *corrupt_lines(corrupt, submission)]


def corrupt_lines(topics: Mapping[str, ZnodeDecodeError], submission: ZnodeDecodeError | None) -> list[str]:
    """After `list_lines` and `not_yet_started_lines`: each topic znode, and the submission, that cannot be read
    (what is being reassigned there is unknown)."""
    lines = [f"Topic: {path.rsplit('/', 1)[-1]}\tCorrupt: {path}: {e.reason}" for path, e in topics.items()]
    if submission is not None:
        lines.append(f"Submitted in {submission.path}, which cannot be read\tCorrupt: {submission.path}: "
                     f"{submission.reason}")
    return lines


def not_yet_started_lines(pending: Mapping[TopicPartition, tuple[int, ...]]) -> list[str]:
    """After `list_lines`: what ``/admin/reassign_partitions`` asks for that no controller has begun."""
    if not pending:
        return []
    return ["Submitted in /admin/reassign_partitions, not yet begun by a controller (is one running?):",
            *(f"{tp}: target replicas: {','.join(map(str, target))}." for tp, target in sorted(pending.items()))]
