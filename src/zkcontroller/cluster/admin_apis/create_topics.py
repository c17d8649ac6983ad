"""CreateTopics from an admin client (Kafka's ``ZkAdminManager.createTopics``), for a broker process.

Only the active controller creates topics (others answer NOT_CONTROLLER, and clients retry on the controller
their Metadata names). Creation is a ZooKeeper write through the admin layer, as ``kafka-topics
--zookeeper`` does, after ``createTopics``' checks in its order (``validate_only`` runs them too and writes
nothing); the controller then elects leaders as for any new topic, and the answer waits for them as Kafka's
``DelayedCreatePartitions`` does (up to the request's timeout).
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Mapping

from zkcontroller.admin.admin_manager_log import AdminManagerLog
from zkcontroller.admin.errors import (
    AdminError,
    BrokerNotAvailableError,
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    TopicExistsError,
)
from zkcontroller.admin.java_hash_map import hash_map_order
from zkcontroller.admin.replica_assignment import BrokerMetadata, assign_replicas_to_brokers
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.broker.client_quota_manager import mark_local_complete
from zkcontroller.broker.config_helper import describe_topic
from zkcontroller.broker.controller_mutation_quota import (
    THROTTLING_QUOTA_EXCEEDED,
    UNBOUNDED,
    ControllerMutationQuota,
    ThrottlingQuotaExceeded,
    scala_hash_order,
)
from zkcontroller.broker.delayed_elect_leader import wait_for_any_leader
from zkcontroller.broker.kafka_apis import CreateTopicsHandler, TopicAutoCreator
from zkcontroller.cluster.admin_apis.describe_configs import topic_log_defaults
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.ibp import uses_topic_ids
from zkcontroller.protocol.wire.client_apis import CreatedTopicConfig, TopicCreated, TopicToCreate
from zkcontroller.zk.log_config_def import TOPIC_CONFIG_RULES

NOT_CONTROLLER = 41
INVALID_REQUEST = 42
REQUEST_TIMED_OUT = 7
UNKNOWN_SERVER_ERROR = -1
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5


class InvalidCreateRequestError(AdminError):
    """A topic entry ``ZkAdminManager.createTopics`` refuses with INVALID_REQUEST before placing it."""


ERROR_CODES: dict[type[AdminError], int] = {
    InvalidCreateRequestError: INVALID_REQUEST, InvalidTopicError: 17, TopicExistsError: 36,
    InvalidPartitionsError: 37, InvalidReplicationFactorError: 38, InvalidReplicaAssignmentError: 39,
    InvalidConfigError: 40, BrokerNotAvailableError: 8,
}
JAVA_EXCEPTIONS: dict[type[AdminError], str] = {
    InvalidCreateRequestError: "InvalidRequestException", InvalidTopicError: "InvalidTopicException",
    TopicExistsError: "TopicExistsException", InvalidPartitionsError: "InvalidPartitionsException",
    InvalidReplicationFactorError: "InvalidReplicationFactorException",
    InvalidReplicaAssignmentError: "InvalidReplicaAssignmentException",
    InvalidConfigError: "InvalidConfigurationException", BrokerNotAvailableError: "BrokerNotAvailableException",
}
"""The ``org.apache.kafka.common.errors`` exception (an ``ApiException``) each error stands for, as the log line
names it; any other error is not an ApiException in Kafka (``AdminOperationException``, a bug)."""


def error_code(e: AdminError) -> int:
    """The Kafka error code a CreateTopics or auto-creating Metadata answer gives for ``e``."""
    return next((c for cls, c in ERROR_CODES.items() if isinstance(e, cls)), UNKNOWN_SERVER_ERROR)


NO_NUM_PARTITIONS = -1
NO_REPLICATION_FACTOR = -1


def creatable_topic(name: str, partitions: int, rf: int, assignment: Mapping[int, list[int]],
                    configs: Mapping[str, str | None]) -> str:
    """A request's topic entry as Kafka's generated ``CreatableTopic.toString`` prints it in ZkAdminManager's
    lines."""
    replicas = ", ".join(f"CreatableReplicaAssignment(partitionIndex={p}, brokerIds=[{', '.join(map(str, ids))}])"
                         for p, ids in assignment.items())
    entries = ", ".join(f"CreateableTopicConfig(name='{k}', value={_quoted(v)})" for k, v in configs.items())
    return (f"CreatableTopic(name='{name}', numPartitions={partitions}, replicationFactor={rf}, "
            f"assignments=[{replicas}], configs=[{entries}])")


def _quoted(value: str | None) -> str:
    """A string field as the generated ``toString`` shows it: quoted, or ``null``."""
    return "null" if value is None else f"'{value}'"


def log_creation_failure(log: AdminManagerLog, topic: str, name: str, e: BaseException) -> None:
    """``ZkAdminManager.createTopics``' catch: DEBUG for a topic that exists, INFO for a client's error (an
    ApiException), ERROR with the traceback (Kafka's stack trace) for anything else. ``topic``: the entry as
    `creatable_topic` renders it."""
    if isinstance(e, TopicExistsError):
        log.debug("Topic creation failed since topic '%s' already exists.\n"
                  "org.apache.kafka.common.errors.TopicExistsException: %s", name, e)
    elif type(e) in JAVA_EXCEPTIONS:
        log.info("Error processing create topic request %s\norg.apache.kafka.common.errors.%s: %s", topic,
                 JAVA_EXCEPTIONS[type(e)], e)  # type: ignore[index]
    else:
        log.error("Error processing create topic request %s", topic, exc_info=e)


def create_topics_handler(server: Callable[[], KafkaServer | None]) -> CreateTopicsHandler:
    async def create(topics: list[TopicToCreate], validate_only: bool, timeout_ms: int,
                     quota: ControllerMutationQuota = UNBOUNDED) -> list[TopicCreated]:
        current = server()
        if current is None or current.active_controller is None or current.zk is None:
            return [TopicCreated(t.name, NOT_CONTROLLER) for t in topics]  # KafkaApis sets the code alone
        admin = _topic_admin(current)
        log = AdminManagerLog(current.broker_id)
        named = Counter(t.name for t in topics)
        described: dict[frozenset[tuple[str, str]], tuple[CreatedTopicConfig, ...]] = {}
        outcome: dict[str, TopicCreated] = {}
        # created in the order of Kafka's toCreate (a Scala HashMap), which decides what a strict quota lets through
        by_name = {t.name: t for t in topics if named[t.name] == 1}
        for name in scala_hash_order(list(by_name)):
            t = by_name[name]
            try:
                assignment = await _checked_assignment(current, admin, t)
                configs = {k: v for k, v in t.configs.items() if v is not None}  # none is null once checked
                partitions, rf = len(assignment), len(assignment[0])
                key = frozenset(configs.items())  # most topics of a request share their configs (often none)
                created = described.get(key)
                if created is None:
                    created = described[key] = _configs(current, configs)
                topic_id = None
                if not validate_only:
                    quota.record(partitions)  # ZkAdminManager: the partitions created, before the write
                    # Kafka's createTopics does not check an explicit assignment's brokers are registered: a replica
                    # on an absent broker starts offline (the admin CLI refuses it, as a likely typo); nor does it
                    # validate again what _checked_assignment has just validated (validate = false).
                    written = await admin.create_topic_with_assignment(t.name, assignment, configs,
                                                                       check_brokers=False, validate=False)
                    # Kafka's populateIds reads the id back from the znode just created: the id written is that id
                    topic_id = None if written is None else uuid.UUID(bytes=written.raw)
                outcome[name] = TopicCreated(t.name, 0, None, partitions, rf, created, topic_id)
            except ThrottlingQuotaExceeded as e:
                log.debug("Topic creation not allowed because quota is violated. Delay time: %d", e.throttle_time_ms)
                outcome[name] = TopicCreated(t.name, THROTTLING_QUOTA_EXCEEDED, str(e))
            except Exception as e:  # Kafka catches every Throwable per topic; the others are still answered
                log_creation_failure(log, creatable_topic(t.name, t.num_partitions, t.replication_factor,
                                                          t.assignment, t.configs), t.name, e)
                code = error_code(e) if isinstance(e, AdminError) else UNKNOWN_SERVER_ERROR
                # ApiError.fromThrowable keeps no message for what is not an ApiException (AdminOperationException)
                outcome[name] = TopicCreated(t.name, code) if code == UNKNOWN_SERVER_ERROR \
                    else TopicCreated(t.name, code, str(e))
        results = [outcome[t.name] if t.name in outcome  # KafkaApis: every entry of a repeated name, none created
                   else TopicCreated(t.name, INVALID_REQUEST, "Found multiple entries for this topic.") for t in topics]
        if validate_only:
            return results
        return await _await_leaders(current, results, timeout_ms)

    return create


def _topic_admin(server: KafkaServer) -> TopicAdmin:
    """The admin layer as ``ZkAdminManager.createTopics`` writes: a new topic gets its id in its znode when the IBP
    uses topic ids (``config.usesTopicId``), rather than from the controller afterwards."""
    assert server.zk is not None
    ids = uses_topic_ids(server.config.controller_config.inter_broker_protocol_version)
    return TopicAdmin(server.zk, server.runtime.rng, topic_id_rng=server.runtime.rng if ids else None)


async def _checked_assignment(server: KafkaServer, admin: TopicAdmin, t: TopicToCreate) -> dict[int, list[int]]:
    """One topic through ``ZkAdminManager.createTopics``' checks, in its order, with ``validate_only`` too: known to
    this broker's cache, null config values, partitions or replication factor beside an explicit assignment, the
    placement (a count of 0 or below other than -1, the broker default, is refused, not defaulted), then
    ``AdminZkClient.validateTopicCreate`` (name, existence, collisions, assignment shape, configs)."""
    if server.control_plane is not None and server.control_plane.metadata_cache.contains_topic(t.name):
        raise TopicExistsError(f"Topic '{t.name}' already exists.")
    nulls = [name for name, value in t.configs.items() if value is None]
    if nulls:
        raise InvalidCreateRequestError(f"Null value not supported for topic configs : {','.join(nulls)}")
    if t.assignment:
        if t.num_partitions != NO_NUM_PARTITIONS or t.replication_factor != NO_REPLICATION_FACTOR:
            raise InvalidCreateRequestError("Both numPartitions or replicationFactor and replicasAssignments were "
                                            "set. Both cannot be used at the same time.")
        assignment = {p: list(replicas) for p, replicas in t.assignment.items()}
    else:
        defaults = server.config.auto_create  # num.partitions, default.replication.factor
        partitions = defaults.num_partitions if t.num_partitions == NO_NUM_PARTITIONS else t.num_partitions
        rf = defaults.default_replication_factor if t.replication_factor == NO_REPLICATION_FACTOR \
            else t.replication_factor
        assignment = assign_replicas_to_brokers(await _alive_brokers(server, admin), partitions, rf,
                                                rng=server.runtime.rng)
    await admin.validate_topic_create(t.name, assignment, {k: v for k, v in t.configs.items() if v is not None})
    return assignment


async def _alive_brokers(server: KafkaServer, admin: TopicAdmin) -> list[BrokerMetadata]:
    """The placement input as Kafka's createTopics takes it: the cache's alive brokers with their racks as they are
    (racks on some brokers only fail in ``assignReplicasToBrokers``, not with the admin tool's
    ``--disable-rack-aware`` advice), sorted by id."""
    if server.control_plane is None:
        return await admin.broker_metadatas()
    return sorted((BrokerMetadata(b.id, b.rack) for b in server.control_plane.metadata_cache.alive_brokers()),
                  key=lambda b: b.id)


def _configs(server: KafkaServer, configs: Mapping[str, str]) -> tuple[CreatedTopicConfig, ...]:
    """A created topic's configs as a v5+ answer lists them (``maybePopulateMetadataAndConfigs``): each of
    ``LogConfig.values`` (the defined topic configs, not a custom key given) with its value and source, as
    DescribeConfigs describes it, without synonyms, in that ``java.util.HashMap``'s order."""
    entries = {e.name: e for e in describe_topic(topic_log_defaults(server), configs, include_synonyms=False)}
    return tuple(CreatedTopicConfig(e.name, e.value, e.read_only, e.source, e.is_sensitive)
                 for e in (entries[name] for name in hash_map_order(TOPIC_CONFIG_RULES)))


async def _await_leaders(server: KafkaServer, results: list[TopicCreated], timeout_ms: int) -> list[TopicCreated]:
    """``ZkAdminManager.createTopics``' last step: with a timeout, wait as ``DelayedCreatePartitions`` until every
    partition of the created topics has a leader in this broker's metadata cache, and answer REQUEST_TIMED_OUT
    for a topic still missing one; without (<= 0), answer REQUEST_TIMED_OUT for every created topic at once (the
    creation goes on; librdkafka reads that answer to a non-blocking request as success)."""
    created = {r.name: r.num_partitions for r in results if r.error == 0}
    if not created:
        return results
    mark_local_complete(server.runtime.now_ms())  # the wait is DelayedCreatePartitions': no request handling time
    if timeout_ms <= 0:
        late = set(created)
    else:
        partitions = [TopicPartition(t, p) for t, count in created.items() for p in range(count)]
        assert server.control_plane is not None  # requests are handled only while the broker runs
        missing = await wait_for_any_leader(server.control_plane.metadata_cache, partitions, timeout_ms,
                                            server.runtime)
        late = {tp.topic for tp in missing}
    # KafkaApis resets a failed topic's configs and counts, not the id populateIds set
    return [TopicCreated(r.name, REQUEST_TIMED_OUT, topic_id=r.topic_id) if r.error == 0 and r.name in late else r
            for r in results]


class MetadataTopicCreator(TopicAutoCreator):
    """Auto-creation for Metadata (``AutoTopicCreationManager.createTopicsInZk`` through ``ZkAdminManager``, with
    forwarding off as 2.8 runs on ZooKeeper): any broker, not only the controller, writes the topic to
    ZooKeeper with Kafka's replica placement over the registered brokers. Created, or there already (a race
    with another creator), answers LEADER_NOT_AVAILABLE: the controller has yet to elect leaders. Too few
    brokers for the replication factor answers INVALID_REPLICATION_FACTOR."""

    def __init__(self, server: Callable[[], KafkaServer | None]) -> None:
        self._server = server

    def enabled(self) -> bool:
        current = self._server()
        return current is not None and current.config.auto_create.enable

    async def create(self, topics: list[str], quota: ControllerMutationQuota = UNBOUNDED) -> dict[str, int]:
        current = self._server()
        if current is None or current.zk is None:
            return {t: UNKNOWN_TOPIC_OR_PARTITION for t in topics}
        admin = _topic_admin(current)  # through createTopics in Kafka: written with an id at IBP 2.8-IV0+
        log = AdminManagerLog(current.broker_id)
        answers = {}
        for topic in topics:
            partitions, rf, configs = current.config.auto_create.creatable_topic(topic)
            try:
                await admin.create_topic(topic, partitions, rf, configs)
                quota.record(partitions)  # permissive (Kafka records just before the write: the same bucket)
                answers[topic] = LEADER_NOT_AVAILABLE
            except Exception as e:
                log_creation_failure(log, creatable_topic(topic, partitions, rf, {}, configs), topic, e)
                answers[topic] = LEADER_NOT_AVAILABLE if isinstance(e, TopicExistsError) else \
                    error_code(e) if isinstance(e, AdminError) else UNKNOWN_SERVER_ERROR
        return answers
