"""CreateTopics from an admin client (Kafka's ``ZkAdminManager.createTopics``), for a broker process.

Only the active controller creates topics (others answer NOT_CONTROLLER, and clients retry on the controller
their Metadata names). Creation is a ZooKeeper write through the admin layer, as ``kafka-topics
--zookeeper`` does; the controller then elects leaders as for any new topic, and the answer waits for them as
Kafka's ``DelayedCreatePartitions`` does (up to the request's timeout).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

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
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.broker.delayed_elect_leader import wait_for_any_leader
from zkcontroller.broker.request_handler import CreateTopicsHandler, TopicAutoCreator
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire.client_apis import ERROR_MESSAGES, TopicCreated, TopicToCreate

NOT_CONTROLLER = 41
INVALID_REQUEST = 42
REQUEST_TIMED_OUT = 7
UNKNOWN_SERVER_ERROR = -1
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
ERROR_CODES: dict[type[AdminError], int] = {
    InvalidTopicError: 17, TopicExistsError: 36, InvalidPartitionsError: 37, InvalidReplicationFactorError: 38,
    InvalidReplicaAssignmentError: 39, InvalidConfigError: 40, BrokerNotAvailableError: 8,
}
JAVA_EXCEPTIONS: dict[type[AdminError], str] = {
    InvalidTopicError: "InvalidTopicException", TopicExistsError: "TopicExistsException",
    InvalidPartitionsError: "InvalidPartitionsException", InvalidReplicationFactorError:
    "InvalidReplicationFactorException", InvalidReplicaAssignmentError: "InvalidReplicaAssignmentException",
    InvalidConfigError: "InvalidConfigurationException", BrokerNotAvailableError: "BrokerNotAvailableException",
}
"""The ``org.apache.kafka.common.errors`` exception each error stands for, as the log line names it."""


def error_code(e: AdminError) -> int:
    """The Kafka error code a CreateTopics or auto-creating Metadata answer gives for ``e``."""
    return next((c for cls, c in ERROR_CODES.items() if isinstance(e, cls)), UNKNOWN_SERVER_ERROR)


def creatable_topic(name: str, partitions: int, rf: int, assignment: dict[int, list[int]],
                     configs: dict[str, str]) -> str:
    """A request's topic entry as Kafka's generated ``CreatableTopic.toString`` prints it in ZkAdminManager's
    lines."""
    replicas = ", ".join(f"CreatableReplicaAssignment(partitionIndex={p}, brokerIds=[{', '.join(map(str, ids))}])"
                         for p, ids in assignment.items())
    entries = ", ".join(f"CreateableTopicConfig(name='{k}', value='{v}')" for k, v in configs.items())
    return (f"CreatableTopic(name='{name}', numPartitions={partitions}, replicationFactor={rf}, "
            f"assignments=[{replicas}], configs=[{entries}])")


def log_creation_failure(log: AdminManagerLog, topic: str, e: BaseException) -> None:
    """``ZkAdminManager.createTopics``' catch: DEBUG for a topic that exists, INFO for a client's error, ERROR
    (with the traceback for Kafka's stack trace) for anything else. ``topic``: `creatable_topic`'s rendering."""
    if isinstance(e, TopicExistsError):
        log.debug("Topic creation failed since topic '%s' already exists.\n"
                  "org.apache.kafka.common.errors.TopicExistsException: %s", topic.split("'")[1], e)
    elif isinstance(e, AdminError) and type(e) in JAVA_EXCEPTIONS:
        log.info("Error processing create topic request %s\norg.apache.kafka.common.errors.%s: %s", topic,
                 JAVA_EXCEPTIONS[type(e)], e)
    else:
        log.error("Error processing create topic request %s", topic, exc_info=e)


def create_topics_handler(server: Callable[[], KafkaServer | None]) -> CreateTopicsHandler:
    async def create(topics: list[TopicToCreate], validate_only: bool, timeout_ms: int) -> list[TopicCreated]:
        current = server()
        if current is None or current.active_controller is None or current.zk is None:
            return [TopicCreated(t.name, NOT_CONTROLLER, ERROR_MESSAGES[NOT_CONTROLLER]) for t in topics]
        admin = TopicAdmin(current.zk, current.runtime.rng)
        log = AdminManagerLog(current.broker_id)
        named = Counter(t.name for t in topics)
        results = []
        for t in topics:
            if named[t.name] > 1:  # KafkaApis: every entry of a repeated name, none created
                results.append(TopicCreated(t.name, INVALID_REQUEST, "Found multiple entries for this topic."))
                continue
            defaults = current.config.auto_create  # num.partitions, default.replication.factor
            partitions = t.num_partitions if t.num_partitions > 0 or t.assignment else defaults.num_partitions
            rf = t.replication_factor if t.replication_factor > 0 or t.assignment \
                else defaults.default_replication_factor
            try:
                if validate_only:
                    results.append(TopicCreated(t.name, 0, None, partitions, rf))
                    continue
                if t.assignment:
                    await admin.create_topic_with_assignment(t.name, t.assignment, t.configs)
                    partitions, rf = len(t.assignment), len(next(iter(t.assignment.values())))
                else:
                    await admin.create_topic(t.name, partitions, rf, t.configs)
                results.append(TopicCreated(t.name, 0, None, partitions, rf))
            except AdminError as e:
                log_creation_failure(log, creatable_topic(t.name, t.num_partitions, t.replication_factor,
                                                          t.assignment, t.configs), e)
                results.append(TopicCreated(t.name, error_code(e), str(e)))
        if validate_only:
            return results
        return await _await_leaders(current, results, timeout_ms)

    return create


async def _await_leaders(server: KafkaServer, results: list[TopicCreated], timeout_ms: int) -> list[TopicCreated]:
    """``ZkAdminManager.createTopics``' last step: with a timeout, wait as ``DelayedCreatePartitions`` until every
    partition of the created topics has a leader in this broker's metadata cache, and answer REQUEST_TIMED_OUT
    for a topic still missing one; without (<= 0), answer REQUEST_TIMED_OUT for every created topic at once (the
    creation goes on; librdkafka reads that answer to a non-blocking request as success)."""
    created = {r.name: r.num_partitions for r in results if r.error == 0}
    if not created:
        return results
    if timeout_ms <= 0:
        late = set(created)
    else:
        partitions = [TopicPartition(t, p) for t, count in created.items() for p in range(count)]
        missing = await wait_for_any_leader(server.control_plane.metadata_cache, partitions, timeout_ms,
                                            server.runtime)
        late = {tp.topic for tp in missing}
    return [TopicCreated(r.name, REQUEST_TIMED_OUT) if r.error == 0 and r.name in late else r for r in results]


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

    async def create(self, topics: list[str]) -> dict[str, int]:
        current = self._server()
        if current is None or current.zk is None:
            return {t: UNKNOWN_TOPIC_OR_PARTITION for t in topics}
        admin = TopicAdmin(current.zk, current.runtime.rng)
        log = AdminManagerLog(current.broker_id)
        answers = {}
        for topic in topics:
            partitions, rf, configs = current.config.auto_create.creatable_topic(topic)
            try:
                await admin.create_topic(topic, partitions, rf, configs)
                answers[topic] = LEADER_NOT_AVAILABLE
            except Exception as e:
                log_creation_failure(log, creatable_topic(topic, partitions, rf, {}, configs), e)
                answers[topic] = LEADER_NOT_AVAILABLE if isinstance(e, TopicExistsError) else \
                    error_code(e) if isinstance(e, AdminError) else UNKNOWN_SERVER_ERROR
        return answers
