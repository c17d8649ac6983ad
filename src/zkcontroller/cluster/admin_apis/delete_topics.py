"""DeleteTopics from an admin client (Kafka 2.8's ``KafkaApis.handleDeleteTopicsRequest`` with
``ZkAdminManager.deleteTopics`` and ``DelayedDeleteTopics``), for a broker process or an in-process listener.

Only the active controller acts (others answer NOT_CONTROLLER); with ``delete.topic.enable=false`` every topic
gets TOPIC_DELETION_DISABLED (INVALID_REQUEST before v3). A v6 entry with both a name and an id makes the whole
request INVALID_REQUEST; an id the controller does not know is UNKNOWN_TOPIC_ID, a name this broker's metadata
cache does not know UNKNOWN_TOPIC_OR_PARTITION. The rest are marked through the admin layer
(``/admin/delete_topics/<t>``; already marked is fine) and the answer waits, up to the request's timeout, until
they are gone from this broker's metadata cache; those still there get REQUEST_TIMED_OUT, as do all of them for a
timeout <= 0.

As in Kafka's ZooKeeper mode (unlike its KRaft controller), a name given twice is not an error: it is deleted once,
the outcome goes to its first entry and the second keeps NONE (``DeletableTopicResultCollection.find``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from zkcontroller.admin.admin_manager_log import AdminManagerLog
from zkcontroller.admin.errors import AdminError, TopicAlreadyMarkedForDeletionError, UnknownTopicError
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.broker.client_quota_manager import mark_local_complete
from zkcontroller.broker.controller_mutation_quota import (
    THROTTLING_QUOTA_EXCEEDED,
    UNBOUNDED,
    ControllerMutationQuota,
    ThrottlingQuotaExceeded,
    scala_hash_order,
)
from zkcontroller.broker.delayed_delete_topics import wait_until_deleted
from zkcontroller.broker.kafka_apis import DeleteTopicsHandler
from zkcontroller.cluster.admin_apis.create_topics import NOT_CONTROLLER, UNKNOWN_SERVER_ERROR, error_code
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.model import TopicId
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.wire.client_apis import TopicDeleted, TopicToDelete
from zkcontroller.protocol.wire.record_sets import RequestFailed

TOPIC_DELETION_DISABLED = 73
UNKNOWN_TOPIC_ID = 100


def delete_topics_handler(server: Callable[[], KafkaServer | None]) -> DeleteTopicsHandler:
    async def delete(topics: list[TopicToDelete], timeout_ms: int, version: int,
                     quota: ControllerMutationQuota = UNBOUNDED) -> list[TopicDeleted]:
        def all_with(error: int) -> list[TopicDeleted]:
            return [TopicDeleted(t.name, t.topic_id, error) for t in topics]

        current = server()
        controller = current.active_controller if current is not None else None
        if current is None or controller is None or current.zk is None or current.control_plane is None:
            return all_with(NOT_CONTROLLER)
        if not current.config.controller_config.delete_topic_enable:
            return all_with(Errors.INVALID_REQUEST if version < 3 else TOPIC_DELETION_DISABLED)
        if any(t.name is not None and t.topic_id is not None for t in topics):
            raise RequestFailed("Topic name and topic ID can not both be specified.",
                                "org.apache.kafka.common.errors.InvalidRequestException", Errors.INVALID_REQUEST)
        cache = current.control_plane.metadata_cache
        context = controller.context
        results = [TopicDeleted(t.name if t.topic_id is None else context.topic_name(_topic_id(t.topic_id)),
                                t.topic_id) for t in topics]
        errors: dict[int, int] = {}
        to_delete: dict[str, int] = {}
        """Each name to delete, with the index of its first entry (the one its outcome goes to)."""
        added: list[str] = []
        """Every entry's name as Kafka adds it to ``toDelete`` (repeats too: they count toward the set's growth)."""
        for i, r in enumerate(results):
            if r.name is None:
                errors[i] = UNKNOWN_TOPIC_ID
            elif not cache.contains_topic(r.name):
                errors[i] = Errors.UNKNOWN_TOPIC_OR_PARTITION
            else:
                to_delete.setdefault(r.name, i)
                added.append(r.name)
        if to_delete:
            outcome = await _delete(current, added, timeout_ms, quota)
            errors.update({to_delete[name]: error for name, error in outcome.items()})
        return [TopicDeleted(r.name, r.topic_id, errors.get(i, 0)) for i, r in enumerate(results)]

    return delete


def _topic_id(value: uuid.UUID) -> TopicId:
    return TopicId(value.bytes)


async def _delete(server: KafkaServer, topics: list[str], timeout_ms: int,
                  quota: ControllerMutationQuota = UNBOUNDED) -> dict[str, int]:
    """``ZkAdminManager.deleteTopics``: mark each topic (in the order of Kafka's ``toDelete``, a Scala HashSet,
    which decides what a strict quota lets through; its partitions counted first), then wait for the marked ones to
    leave the cache."""
    assert server.zk is not None and server.control_plane is not None
    admin = TopicAdmin(server.zk, server.runtime.rng)
    log = AdminManagerLog(server.broker_id)
    marked: list[str] = []
    errors: dict[str, int] = {}
    for topic in scala_hash_order(topics):
        try:
            quota.record(len(server.control_plane.metadata_cache.partitions_of(topic)))
            await admin.delete_topic(topic)
            marked.append(topic)
        except TopicAlreadyMarkedForDeletionError:  # still waited for: several requests may wait on one deletion
            marked.append(topic)
        except ThrottlingQuotaExceeded as e:  # the error code alone: KafkaApis sets no message for DeleteTopics
            log.debug("Topic deletion not allowed because quota is violated. Delay time: %d", e.throttle_time_ms)
            errors[topic] = THROTTLING_QUOTA_EXCEEDED
        except AdminError as e:  # ZkAdminManager logs every one (a topic gone since the cache check too)
            log.error("Error processing delete topic request for topic %s: %s", topic, e)
            errors[topic] = Errors.UNKNOWN_TOPIC_OR_PARTITION if isinstance(e, UnknownTopicError) else error_code(e)
        except Exception:
            log.exception("Error processing delete topic request for topic %s", topic)
            errors[topic] = UNKNOWN_SERVER_ERROR
    mark_local_complete(server.runtime.now_ms())  # the wait is DelayedDeleteTopics': no request handling time
    remaining = set(marked) if timeout_ms <= 0 or not marked else await wait_until_deleted(
        server.control_plane.metadata_cache, marked, timeout_ms, server.runtime)
    errors.update({t: Errors.REQUEST_TIMED_OUT if t in remaining else Errors.NONE for t in marked})
    return errors
