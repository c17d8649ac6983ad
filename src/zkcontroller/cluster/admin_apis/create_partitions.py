"""CreatePartitions from an admin client (Kafka 2.8's ``KafkaApis.handleCreatePartitionsRequest``,
``ZkAdminManager.createPartitions`` and ``DelayedCreatePartitions``), for a broker process or an in-process
listener.

Only the active controller acts (others answer NOT_CONTROLLER for every topic). A topic named twice is
INVALID_REQUEST (once in the answer), one queued for deletion INVALID_TOPIC_EXCEPTION; for the rest Kafka's checks
run in its order (REASSIGNMENT_IN_PROGRESS, UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS for no increase,
INVALID_REPLICA_ASSIGNMENT for unknown brokers or a wrong number of assignments) before the admin layer's
``add_partitions`` places and writes them (as ``zkcontroller topics alter --partitions``). With ``validate_only``
nothing is written and the answer is immediate; otherwise it waits, up to the request's timeout, until every
partition of the grown topics has a leader in this broker's metadata cache, and answers REQUEST_TIMED_OUT for a
topic still missing one (for all of them at once with a timeout <= 0).

The topic znode is read as Kafka reads it (``getFullReplicaAssignmentForTopics`` → ``TopicZNode.decode``): data
that is not JSON is a topic without partitions, hence UNKNOWN_TOPIC_OR_PARTITION, with a WARN naming the znode.
JSON of the wrong shape throws there, outside the exceptions ``createPartitions`` turns into a topic's error, and
fails the whole request (``KafkaApis.handleError``, logged by the request handler as Kafka's
``RequestHandlerHelper`` logs it): every topic of the request is answered UNKNOWN_SERVER_ERROR without a message,
the topics before it keeping what was already written for them. Any other unexpected error does the same; the
broker keeps serving. A topic's own error (Kafka's ``ApiException`` and ``AdminOperationException``) is answered,
not logged, as ``ZkAdminManager.createPartitions`` does.
"""

from __future__ import annotations

from collections.abc import Callable

from zkcontroller.admin.admin_manager_log import AdminManagerLog
from zkcontroller.admin.errors import AdminError, AdminOperationError, UnknownTopicError
from zkcontroller.admin.replica_assignment import MAX_PARTITIONS
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.broker.client_quota_manager import mark_local_complete
from zkcontroller.broker.controller_mutation_quota import (
    THROTTLING_QUOTA_EXCEEDED,
    UNBOUNDED,
    ControllerMutationQuota,
    ThrottlingQuotaExceeded,
)
from zkcontroller.broker.delayed_elect_leader import wait_for_any_leader
from zkcontroller.broker.kafka_apis import CreatePartitionsHandler
from zkcontroller.cluster.admin_apis.create_topics import UNKNOWN_SERVER_ERROR, error_code
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.coordination.errors import ErrorCode, ZkError
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.wire.client_apis import PartitionsCreated, PartitionsToCreate
from zkcontroller.protocol.wire.record_sets import RequestFailed
from zkcontroller.runtime.log_lines import qualified_name
from zkcontroller.zk import paths
from zkcontroller.zk.errors import UnparseableZnodeError, ZnodeDecodeError

REASSIGNMENT_IN_PROGRESS = 60
INVALID_PARTITIONS = 37
JSON_MAPPING_EXCEPTION = "com.fasterxml.jackson.databind.JsonMappingException"
"""What Kafka's JSON decoding (``DecodeJson.decode``, ``JsonValue.asJsonObject``) throws for a wrong shape."""
_KEEPER_NAMES = {ErrorCode.API_ERROR: "APIError", ErrorCode.INVALID_ACL: "InvalidACL"}
"""ZooKeeper's ``KeeperException`` subclasses not spelt as the code's name in CamelCase."""


def java_exception(e: BaseException) -> str:
    """The Java class Kafka's ``handleError`` line would name for ``e``, a failure that fails a CreatePartitions
    request as a whole: a ZooKeeper error as its ``KeeperException`` subclass, a malformed topic znode as what
    ``TopicZNode.decode`` throws (``partition.toInt``'s NumberFormatException, ``Uuid.fromString``'s
    IllegalArgumentException, else Jackson's JsonMappingException), a malformed broker registration as what
    ``BrokerIdZNode.decode`` throws (KafkaException for data that is not JSON). Anything else, a fault of ours
    with no Java counterpart, keeps its Python name (`qualified_name`)."""
    if isinstance(e, ZkError):
        name = _KEEPER_NAMES.get(e.code) or "".join(part.capitalize() for part in e.code.name.split("_"))
        return f"org.apache.zookeeper.KeeperException${name}Exception"
    if isinstance(e, ZnodeDecodeError):
        if e.path.startswith(f"{paths.BROKER_IDS}/"):
            return "org.apache.kafka.common.KafkaException" if isinstance(e, UnparseableZnodeError) \
                else JSON_MAPPING_EXCEPTION
        if e.reason.startswith("partitions key "):
            return "java.lang.NumberFormatException"
        if e.reason.startswith("topic_id: ") and not e.reason.startswith("topic_id: expected "):
            return "java.lang.IllegalArgumentException"
        return JSON_MAPPING_EXCEPTION
    return qualified_name(e)


class _Refused(Exception):
    def __init__(self, error: int, message: str) -> None:
        super().__init__(message)
        self.error = error


def create_partitions_handler(server: Callable[[], KafkaServer | None]) -> CreatePartitionsHandler:
    async def create(topics: list[PartitionsToCreate], timeout_ms: int, validate_only: bool,
                     quota: ControllerMutationQuota = UNBOUNDED) -> list[PartitionsCreated]:
        names = list(dict.fromkeys(t.name for t in topics))
        current = server()
        controller = current.active_controller if current is not None else None
        if current is None or controller is None or current.zk is None or current.control_plane is None:
            return [PartitionsCreated(n, Errors.NOT_CONTROLLER) for n in names]  # ApiError(NOT_CONTROLLER, null)
        try:  # createPartitions reads the brokers first (getBrokerMetadatas, rack-aware Enforced): racks on some
            await TopicAdmin(current.zk, current.runtime.rng).broker_metadatas()  # only fail the whole request
        except AdminOperationError as e:  # thrown: handleError logs it, every topic UNKNOWN_SERVER_ERROR, no message
            raise RequestFailed(str(e), "kafka.admin.AdminOperationException") from None
        except Exception as e:  # ZooKeeper gone, a registration unreadable: thrown there too, answered the same
            raise RequestFailed(str(e), java_exception(e)) from e
        counts: dict[str, int] = {}
        for t in topics:
            counts[t.name] = counts.get(t.name, 0) + 1
        context = controller.context
        results: dict[str, PartitionsCreated] = {}
        grown: dict[str, int] = {}
        for t in topics:
            if counts[t.name] > 1:
                results[t.name] = PartitionsCreated(t.name, Errors.INVALID_REQUEST, "Duplicate topic in request.")
            elif context.is_topic_queued_up_for_deletion(t.name):
                results[t.name] = PartitionsCreated(t.name, Errors.INVALID_TOPIC_EXCEPTION,
                                                    "The topic is queued for deletion.")
            else:
                results[t.name] = await _grow(current, t, validate_only, quota)
                if results[t.name].error == Errors.NONE:
                    grown[t.name] = t.count
        if grown and not validate_only:
            mark_local_complete(current.runtime.now_ms())  # the wait is DelayedCreatePartitions'
            partitions = [TopicPartition(n, p) for n, count in grown.items() for p in range(count)]
            late = partitions if timeout_ms <= 0 else await wait_for_any_leader(
                current.control_plane.metadata_cache, partitions, timeout_ms, current.runtime)
            for topic in {tp.topic for tp in late}:
                results[topic] = PartitionsCreated(topic, Errors.REQUEST_TIMED_OUT)
        return [results[n] for n in names]

    return create


async def _grow(server: KafkaServer, t: PartitionsToCreate, validate_only: bool,
                quota: ControllerMutationQuota = UNBOUNDED) -> PartitionsCreated:
    """One topic through Kafka's checks and the admin layer; its error, if any. Raises `RequestFailed` for an error
    Kafka's ``createPartitions`` does not catch: the request fails as a whole."""
    assert server.zk is not None
    try:
        read = await server.zk.get_topic_assignments([t.name], lenient=True)
        if read.malformed:
            error = next(iter(read.malformed.values()))
            raise RequestFailed(str(error), java_exception(error))
        for path, ignored in read.read_as_empty.items():
            AdminManagerLog(server.broker_id).warning("Reading the topic znode %s as no partitions (as Kafka does): %s",
                                                      path, ignored.reason)
        current = read.values.get(t.name)
        existing = current.assignment if current is not None else {}
        if any(a.is_being_reassigned for a in existing.values()):
            raise _Refused(REASSIGNMENT_IN_PROGRESS, f"A partition reassignment is in progress for the topic "
                                                     f"'{t.name}'.")
        if not existing:
            raise _Refused(Errors.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{t.name}' does not exist.")
        increment = t.count - len(existing)
        if increment < 0:
            raise _Refused(INVALID_PARTITIONS, f"Topic currently has {len(existing)} partitions, which is "
                                                      f"higher than the requested {t.count}.")
        if increment == 0:
            raise _Refused(INVALID_PARTITIONS, f"Topic already has {len(existing)} partitions.")
        if t.count > MAX_PARTITIONS:
            raise _Refused(INVALID_PARTITIONS, f"Topic cannot have {t.count} partitions: a topic znode lists at "
                                               f"most {MAX_PARTITIONS}.")
        if t.assignments is not None:
            registered = set(await server.zk.get_sorted_broker_list())
            unknown = sorted({b for a in t.assignments for b in a} - registered)
            if unknown:
                raise _Refused(Errors.INVALID_REPLICA_ASSIGNMENT,
                               f"Unknown broker(s) in replica assignment: {', '.join(map(str, unknown))}.")
        # ZkAdminManager charges the quota with the partitions added once they are placed, just before the write
        await TopicAdmin(server.zk, server.runtime.rng).add_partitions(t.name, t.count, t.assignments,
                                                                       validate_only=validate_only,
                                                                       before_write=quota.record)
    except ThrottlingQuotaExceeded as e:
        AdminManagerLog(server.broker_id).debug("Partition(s) creation not allowed because quota is violated. "
                                                "Delay time: %d", e.throttle_time_ms)
        return PartitionsCreated(t.name, THROTTLING_QUOTA_EXCEEDED, str(e))
    except _Refused as e:
        return PartitionsCreated(t.name, e.error, str(e))
    except UnknownTopicError as e:
        return PartitionsCreated(t.name, Errors.UNKNOWN_TOPIC_OR_PARTITION, str(e))
    except AdminError as e:  # an AdminOperationException is UNKNOWN_SERVER_ERROR with no message (fromThrowable)
        code = error_code(e)
        return PartitionsCreated(t.name, code, None if code == UNKNOWN_SERVER_ERROR else str(e))
    except RequestFailed:
        raise
    except ZnodeDecodeError as e:  # a znode the admin layer reads (brokers...), malformed
        raise RequestFailed(str(e), java_exception(e)) from None
    except Exception as e:
        raise RequestFailed(str(e), java_exception(e)) from e
    return PartitionsCreated(t.name)
