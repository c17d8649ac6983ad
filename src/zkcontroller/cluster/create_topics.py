"""CreateTopics from an admin client (Kafka's ``ZkAdminManager.createTopics``), for a broker process.

Only the active controller creates topics (others answer NOT_CONTROLLER, and clients retry on the controller
their Metadata names). Creation is a ZooKeeper write through the admin layer, as ``kafka-topics
--zookeeper`` does; the controller then elects leaders as for any new topic. We answer once the znodes are
written, not once leaders exist (Kafka waits up to the request's timeout for that).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

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
from zkcontroller.broker.request_handler import CreateTopicsHandler
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.protocol.wire.client_apis import TopicCreated, TopicToCreate

log = logging.getLogger("kafka.server.ZkAdminManager")

NOT_CONTROLLER = 41
UNKNOWN_SERVER_ERROR = -1
ERROR_CODES: dict[type[AdminError], int] = {
    InvalidTopicError: 17, TopicExistsError: 36, InvalidPartitionsError: 37, InvalidReplicationFactorError: 38,
    InvalidReplicaAssignmentError: 39, InvalidConfigError: 40, BrokerNotAvailableError: 8,
}
DEFAULT_NUM_PARTITIONS = 1
DEFAULT_REPLICATION_FACTOR = 1
"""``num.partitions`` and ``default.replication.factor``: Kafka's defaults, used when a request sends -1."""


def create_topics_handler(server: Callable[[], KafkaServer | None]) -> CreateTopicsHandler:
    async def create(topics: list[TopicToCreate], validate_only: bool) -> list[TopicCreated]:
        current = server()
        if current is None or current.controller is None or not current.controller.is_active \
                or current.zk is None:
            return [TopicCreated(t.name, NOT_CONTROLLER, "This is not the correct controller for this cluster.")
                    for t in topics]
        admin = TopicAdmin(current.zk, current.runtime.rng)
        results = []
        for t in topics:
            partitions = t.num_partitions if t.num_partitions > 0 or t.assignment else DEFAULT_NUM_PARTITIONS
            rf = t.replication_factor if t.replication_factor > 0 or t.assignment else DEFAULT_REPLICATION_FACTOR
            try:
                if validate_only:
                    results.append(TopicCreated(t.name, 0, None, partitions, rf))
                    continue
                if t.assignment:
                    await admin.create_topic_with_assignment(t.name, t.assignment, t.configs)
                    partitions, rf = len(t.assignment), len(next(iter(t.assignment.values())))
                else:
                    await admin.create_topic(t.name, partitions, rf, t.configs)
                log.info("[Admin] Created topic %s with %d partitions and replication factor %d", t.name,
                         partitions, rf)
                results.append(TopicCreated(t.name, 0, None, partitions, rf))
            except AdminError as e:
                code = next((c for cls, c in ERROR_CODES.items() if isinstance(e, cls)), UNKNOWN_SERVER_ERROR)
                results.append(TopicCreated(t.name, code, str(e)))
        return results

    return create
