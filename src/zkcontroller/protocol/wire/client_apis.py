"""The client-facing APIs a broker answers — ApiVersions, Metadata, DescribeCluster, CreateTopics, DeleteTopics,
ListOffsets, CreatePartitions, ElectLeaders, AlterPartitionReassignments, ListPartitionReassignments,
InitProducerId, FindCoordinator (always a refusal: no coordinator here) and Produce — through `kio`, whose types
are generated from Kafka's own JSON schemas (ApiVersions, Metadata v0–v13, DescribeCluster v0–v2, ...);
ListOffsets v0, older than kio's schemas, and Produce (every version, for speed and for values kio cannot hold)
through our generic codec. The config and client quota APIs have modules of their own (`describe_configs`,
`alter_configs`, `client_quotas`).

What versions we advertise is Kafka 2.8's list for the APIs we serve, with one deliberate difference:
DescribeCluster goes to v1 (2.8 has v0 only). kafka-python 3.0.12's ``describe_cluster()`` reads v1's
``endpoint_type`` even from a v0 answer and fails; v1 adds nothing a 2.8 broker could not say, and clients
that want v0 (librdkafka) still ask for it.

Inputs are plain values (`model.Broker`) and anything shaped like the metadata cache's topic view
(`TopicView`), so the protocol layer does not depend on the broker's modules.
"""

from __future__ import annotations

import importlib
import io
import re
import typing
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import timedelta
from functools import cache
from itertools import groupby
from operator import attrgetter
from typing import Any, Protocol, TypeVar

from kio.schema.errors import ErrorCode
from kio.serial import entity_reader, entity_writer
from kio.static.primitive import i16, i64

from zkcontroller.model import Broker, TopicId
from zkcontroller.protocol.wire import codec
from zkcontroller.protocol.wire.codec import WireFormatError
from zkcontroller.protocol.wire.kio_guard import check_lengths
from zkcontroller.protocol.wire.schema import Field, MessageSpec

API_VERSIONS, METADATA, DESCRIBE_CLUSTER, CREATE_TOPICS, DELETE_TOPICS, LIST_OFFSETS = 18, 3, 60, 19, 20, 2
CREATE_PARTITIONS, ELECT_LEADERS, ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS = 37, 43, 45, 46
FIND_COORDINATOR = 10
GROUP_AUTHORIZATION_FAILED, TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 30, 53
UNSUPPORTED_VERSION = 35
NO_AUTHORIZED_OPERATIONS = -(2**31)
"""``Integer.MIN_VALUE``: authorized operations not requested."""

# AclOperation codes (org.apache.kafka.common.acl.AclOperation)
READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = (
    3, 4, 5, 6, 7, 8, 9, 10, 11, 12)


def to_32_bit_field(codes: Iterable[int]) -> int:
    """``Utils.to32BitField``: bit ``code`` set for each operation code."""
    value = 0
    for code in codes:
        value |= 1 << code
    return value


TOPIC_AUTHORIZED_OPERATIONS = to_32_bit_field(
    (READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS))
"""What Kafka answers for a topic with no authorizer configured (``AuthHelper.authorizedOperations``: every
operation ``AclEntry.supportedOperations(TOPIC)`` lists): 3576. We never have an authorizer."""
CLUSTER_AUTHORIZED_OPERATIONS = to_32_bit_field(
    (CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE))
"""The same for the cluster (``AclEntry.supportedOperations(CLUSTER)``): 8096."""

CLIENT_API_VERSIONS: dict[int, tuple[int, int]] = {API_VERSIONS: (0, 3), METADATA: (0, 11), DESCRIBE_CLUSTER: (0, 1)}
LIST_OFFSETS_VERSIONS = (0, 6)
"""Kafka 2.8's ListOffsets 0–6: v1+ through kio, v0 (not in kio's schemas) through our own table below."""
DELETE_TOPICS_VERSIONS = (1, 6)
"""Kafka 2.8 serves DeleteTopics 0–6; kio has 1–6 (v0 is v1 without the throttle time)."""
CREATE_TOPICS_VERSIONS = (2, 7)
"""Kafka 2.8 serves CreateTopics 0–7; kio (Kafka 4.x schemas) has 2–7, and every client here asks >= 2."""
CREATE_PARTITIONS_VERSIONS = (0, 3)
"""Kafka 2.8's CreatePartitions 0–3, all in kio."""
ELECT_LEADERS_VERSIONS = (0, 2)
"""Kafka 2.8's ElectLeaders 0–2 (v0: preferred only, no top-level error code; v2 flexible)."""
ALTER_PARTITION_REASSIGNMENTS_VERSIONS = (0, 0)
LIST_PARTITION_REASSIGNMENTS_VERSIONS = (0, 0)
"""Kafka 2.8 has v0 only of both (kio's AlterPartitionReassignments v1 is Kafka 4's)."""
FIND_COORDINATOR_VERSIONS = (0, 3)
"""Kafka 2.8's FindCoordinator 0–3 (v3 flexible), all in kio; answered without a coordinator
(`find_coordinator_response`)."""
_MODULES = {API_VERSIONS: "api_versions", METADATA: "metadata", DESCRIBE_CLUSTER: "describe_cluster",
            CREATE_TOPICS: "create_topics", DELETE_TOPICS: "delete_topics", LIST_OFFSETS: "list_offsets",
            CREATE_PARTITIONS: "create_partitions", ELECT_LEADERS: "elect_leaders",
            ALTER_PARTITION_REASSIGNMENTS: "alter_partition_reassignments",
            LIST_PARTITION_REASSIGNMENTS: "list_partition_reassignments", FIND_COORDINATOR: "find_coordinator"}
_ZERO = timedelta(0)
_T = TypeVar("_T")
_TOPIC = attrgetter("topic")
_TOPIC_PARTITION = attrgetter("topic", "partition")
_ZERO_UUID = uuid.UUID(int=0)
INVALID_REQUEST = 42


class PartitionView(Protocol):
    """One partition as Metadata answers it. Read-only members, so the cache's frozen dataclasses fit."""

    @property
    def partition(self) -> int: ...
    @property
    def error(self) -> int: ...
    @property
    def leader(self) -> int: ...
    @property
    def leader_epoch(self) -> int: ...
    @property
    def replicas(self) -> Sequence[int]: ...
    @property
    def isr(self) -> Sequence[int]: ...
    @property
    def offline_replicas(self) -> Sequence[int]: ...


class TopicView(Protocol):
    """One topic as Metadata answers it (read-only, as `PartitionView`)."""

    @property
    def topic(self) -> str: ...
    @property
    def error(self) -> int: ...
    @property
    def topic_id(self) -> TopicId | None: ...
    @property
    def is_internal(self) -> bool: ...
    @property
    def partitions(self) -> Sequence[PartitionView]: ...


@cache
def _types(api_key: int, version: int, kind: str) -> Any:
    return importlib.import_module(f"kio.schema.{_MODULES[api_key]}.v{version}.{kind}")


def schema_module(api_key: int, version: int, kind: str) -> Any:
    """kio's module of request or response types for one API version (``kind``: "request" / "response")."""
    return _types(api_key, version, kind)


@cache
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in fields(cls))


def _build(cls: type, **values: Any) -> Any:
    """An instance of a kio type with the values its version has (others are not in that version)."""
    names = _field_names(cls)
    return cls(**{k: v for k, v in values.items() if k in names})


def _write(value: Any) -> bytes:
    buf = io.BytesIO()
    entity_writer(type(value))(buf, value)
    return buf.getvalue()


def decode_body(api_key: int, version: int, buf: bytes | memoryview, offset: int) -> Any:
    """A client request's body as kio's type; `WireFormatError` for anything malformed."""
    cls = getattr(_types(api_key, version, "request"), _REQUEST_NAMES[api_key])
    check_lengths(cls, buf, offset)  # kio's native reader aborts the process on a huge announced length
    try:
        value, _size = entity_reader(cls)(memoryview(buf)[offset:], 0)
    except Exception as e:  # kio's native reader raises several types for bad bytes
        raise WireFormatError(f"{cls.__name__} v{version}: {e}") from None
    _refuse_nulls(value)
    return value  # trailing bytes are ignored, as Kafka's request parsing does (librdkafka 2.x sends some)


def _refuse_nulls(value: Any) -> None:
    """kio reads a null (-1 length) array or string into a field that is not nullable at this version as None;
    Kafka's generated reader refuses it ("non-nullable field ... was serialized as null"), and so do we, before
    a handler iterates it."""
    cls: type = type(value)
    for name in _non_nullable(cls):
        if getattr(value, name) is None:
            raise WireFormatError(f"non-nullable field {name} of {type(value).__name__} was serialized as null")
    for f in fields(value):  # a nullable array's entries have non-nullable fields too (ElectLeaders' partitions)
        field_value = getattr(value, f.name)
        if isinstance(field_value, tuple):
            for item in field_value:
                if hasattr(item, "__dataclass_fields__"):
                    _refuse_nulls(item)


@cache
def _non_nullable(cls: type) -> tuple[str, ...]:
    hints = typing.get_type_hints(cls)
    return tuple(f.name for f in fields(cls)
                 if type(None) not in typing.get_args(hints[f.name]) and hints[f.name] is not type(None))


_REQUEST_NAMES = {API_VERSIONS: "ApiVersionsRequest", METADATA: "MetadataRequest",
                  DESCRIBE_CLUSTER: "DescribeClusterRequest", CREATE_TOPICS: "CreateTopicsRequest",
                  DELETE_TOPICS: "DeleteTopicsRequest", LIST_OFFSETS: "ListOffsetsRequest",
                  CREATE_PARTITIONS: "CreatePartitionsRequest", ELECT_LEADERS: "ElectLeadersRequest",
                  ALTER_PARTITION_REASSIGNMENTS: "AlterPartitionReassignmentsRequest",
                  LIST_PARTITION_REASSIGNMENTS: "ListPartitionReassignmentsRequest",
                  FIND_COORDINATOR: "FindCoordinatorRequest"}


# ---------------------------------------------------------------------------------------------- ApiVersions

def api_versions_response(version: int, supported: Mapping[int, tuple[int, int]], error: int = 0, *,
                          supported_features: tuple[tuple[str, int, int], ...] = (),
                          finalized_features: tuple[tuple[str, int, int], ...] = (),
                          finalized_features_epoch: int = -1) -> bytes:
    """The body of an ApiVersions response. For a version we do not support, call with ``version=0``,
    ``error=UNSUPPORTED_VERSION`` and ApiVersions' own entry alone: Kafka answers in the v0 layout with that
    entry (``ApiVersionsRequest.getErrorResponse``, KIP-511), so the client can retry with a version we have.
    From v3, the tagged features (KIP-584): supported and finalized ones as (name, min, max) and the finalized
    features' epoch (-1 unknown: not written, its default)."""
    m = _types(API_VERSIONS, version, "response")
    keys = tuple(_build(m.ApiVersion, api_key=k, min_version=lo, max_version=hi)
                 for k, (lo, hi) in sorted(supported.items()))
    features: dict[str, Any] = {}
    if version >= 3:
        features = {"supported_features": tuple(m.SupportedFeatureKey(name=n, min_version=i16(lo), max_version=i16(hi))
                                                for n, lo, hi in supported_features),
                    "finalized_features": tuple(m.FinalizedFeatureKey(name=n, min_version_level=i16(lo),
                                                                      max_version_level=i16(hi))
                                                for n, lo, hi in finalized_features),
                    "finalized_features_epoch": i64(finalized_features_epoch)}
    return _write(_build(m.ApiVersionsResponse, error_code=ErrorCode(error), api_keys=keys, throttle_time=_ZERO,
                         **features))


def api_versions_request(version: int, software_name: str, software_version: str) -> bytes:
    """The body of an ApiVersions request, a client's first on a new connection (from v3 it names the client's
    software, which must match ``_SOFTWARE_NAME_VERSION``)."""
    m = _types(API_VERSIONS, version, "request")
    return _write(_build(m.ApiVersionsRequest, client_software_name=software_name,
                         client_software_version=software_version))


def api_versions_answer(version: int, buf: bytes | memoryview, offset: int) -> tuple[int, dict[int, tuple[int, int]]]:
    """An ApiVersions response to a request of ``version``: its error code and the (min, max) versions by API key.
    An answer that does not read at ``version`` is read as v0, as Kafka's ``ApiVersionsResponse.parse`` does: a
    broker answers a version it lacks in v0's layout (UNSUPPORTED_VERSION and its own ApiVersions range).
    `WireFormatError` when neither reads."""
    error: Exception | None = None
    for attempt in dict.fromkeys((version, 0)):
        cls = _types(API_VERSIONS, attempt, "response").ApiVersionsResponse
        try:
            check_lengths(cls, buf, offset)  # kio's native reader aborts the process on a huge announced length
            value, _ = entity_reader(cls)(memoryview(buf)[offset:], 0)
        except Exception as e:  # kio's reader raises several types for bad bytes
            error = e
            continue
        return int(value.error_code), {int(k.api_key): (int(k.min_version), int(k.max_version))
                                       for k in value.api_keys}
    raise WireFormatError(f"ApiVersionsResponse v{version}: {error}")


_SOFTWARE_NAME_VERSION = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def valid_api_versions_request(request: Any, version: int) -> bool:
    """``ApiVersionsRequest.isValid``: from v3, the client's software name and version must each match
    ``_SOFTWARE_NAME_VERSION``; Kafka answers INVALID_REQUEST otherwise."""
    if version < 3:
        return True
    return all(_SOFTWARE_NAME_VERSION.fullmatch(getattr(request, f) or "") is not None
               for f in ("client_software_name", "client_software_version"))


# ---------------------------------------------------------------------------------------------- Metadata

def requested_topics(request: Any, version: int) -> list[str] | None:
    """Topic names a Metadata request asks for, each once (Kafka makes them a set), in the order first asked;
    None for all (v0: an empty list; v1+: null). Call `invalid_metadata_request` first."""
    topics = request.topics
    if topics is None or (version == 0 and not topics):
        return None
    return list(dict.fromkeys(t.name for t in topics if t.name is not None))


def invalid_metadata_request(request: Any, version: int) -> str | None:
    """Why Kafka 2.8 refuses a Metadata request as a whole (``InvalidRequestException`` in
    ``handleTopicMetadataRequest``), or None: v10–11 let a topic's name be null and carry a topic id, but 2.8
    takes neither."""
    if request.topics is None:
        return None
    for t in request.topics:
        if t.name is None:
            return f"Topic name can not be null for version {version}"
        if getattr(t, "topic_id", None) not in (None, _ZERO_UUID):
            return f"Topic IDs are not supported in requests for version {version}"
    return None


def metadata_error_response(version: int, request: Any, error: int) -> bytes:
    """``MetadataRequest.getErrorResponse``: each requested topic with ``error``, its id as asked, a null name
    as "", not internal and no partitions; no brokers, no cluster id, controller -1."""
    m = _types(METADATA, version, "response")
    topics = tuple(_build(m.MetadataResponseTopic, error_code=ErrorCode(error), name=t.name or "",
                          topic_id=getattr(t, "topic_id", None) or _ZERO_UUID, is_internal=False, partitions=(),
                          topic_authorized_operations=NO_AUTHORIZED_OPERATIONS)
                   for t in request.topics or ())
    return _write(_build(m.MetadataResponse, throttle_time=_ZERO, brokers=(), cluster_id=None, controller_id=-1,
                         topics=topics, cluster_authorized_operations=NO_AUTHORIZED_OPERATIONS))


def authorized_operations_asked(request: Any, version: int) -> tuple[bool, bool]:
    """Whether a Metadata request asks for topics' and the cluster's authorized operations. Kafka reads both
    flags from v8 only, and the cluster's up to v10 (v11 dropped it for DescribeCluster)."""
    if version < 8:
        return False, False
    return (bool(getattr(request, "include_topic_authorized_operations", False)),
            version <= 10 and bool(getattr(request, "include_cluster_authorized_operations", False)))


def metadata_response(version: int, brokers: Iterable[Broker], listener_name: str, cluster_id: str | None,
                      controller_id: int | None, topics: Iterable[TopicView], *,
                      include_topic_operations: bool = False, include_cluster_operations: bool = False) -> bytes:
    """The body of a Metadata response at ``version``: live brokers on ``listener_name`` (with racks), the
    controller (-1 if none known), and per partition its leader, leader epoch, replicas, ISR and offline
    replicas; topic ids from v10. Authorized operations, when asked for (`authorized_operations_asked`),
    are every supported one, as Kafka answers with no authorizer; otherwise ``Integer.MIN_VALUE``."""
    m = _types(METADATA, version, "response")
    topic_ops = TOPIC_AUTHORIZED_OPERATIONS if include_topic_operations else NO_AUTHORIZED_OPERATIONS
    cluster_ops = CLUSTER_AUTHORIZED_OPERATIONS if include_cluster_operations else NO_AUTHORIZED_OPERATIONS
    broker_values = []
    for b in brokers:
        e = b.endpoint(listener_name)
        if e is not None:
            broker_values.append(_build(m.MetadataResponseBroker, node_id=b.id, host=e.host or "", port=e.port,
                                        rack=b.rack))
    topic_values = []
    for t in topics:
        parts = tuple(_build(m.MetadataResponsePartition, error_code=ErrorCode(int(p.error)),
                             partition_index=p.partition, leader_id=p.leader, leader_epoch=p.leader_epoch,
                             replica_nodes=tuple(p.replicas), isr_nodes=tuple(p.isr),
                             offline_replicas=tuple(p.offline_replicas)) for p in t.partitions)
        topic_values.append(_build(
            m.MetadataResponseTopic, error_code=ErrorCode(int(t.error)), name=t.topic,
            topic_id=uuid.UUID(bytes=t.topic_id.raw) if t.topic_id is not None else uuid.UUID(int=0),
            is_internal=t.is_internal, partitions=parts, topic_authorized_operations=topic_ops))
    return _write(_build(m.MetadataResponse, throttle_time=_ZERO, brokers=tuple(broker_values),
                         cluster_id=cluster_id, controller_id=-1 if controller_id is None else controller_id,
                         topics=tuple(topic_values), cluster_authorized_operations=cluster_ops))


# ---------------------------------------------------------------------------------------------- DescribeCluster

def describe_cluster_response(version: int, brokers: Iterable[Broker], listener_name: str, cluster_id: str,
                              controller_id: int | None, include_cluster_operations: bool = False) -> bytes:
    """``handleDescribeCluster``; the cluster's authorized operations as `metadata_response`'s."""
    m = _types(DESCRIBE_CLUSTER, version, "response")
    values = []
    for b in brokers:
        e = b.endpoint(listener_name)
        if e is not None:
            values.append(_build(m.DescribeClusterBroker, broker_id=b.id, host=e.host or "", port=e.port,
                                 rack=b.rack))
    return _write(_build(m.DescribeClusterResponse, throttle_time=_ZERO, error_code=ErrorCode(0),
                         error_message=None, endpoint_type=1, cluster_id=cluster_id,
                         controller_id=-1 if controller_id is None else controller_id, brokers=tuple(values),
                         cluster_authorized_operations=CLUSTER_AUTHORIZED_OPERATIONS if include_cluster_operations
                         else NO_AUTHORIZED_OPERATIONS))


# ---------------------------------------------------------------------------------------------- FindCoordinator

def find_coordinator_response(version: int, error: int, message: str | None) -> bytes:
    """``FindCoordinatorResponse.prepareResponse``: ``error``, ``Node.noNode`` (-1, "", -1), ``message`` from v1."""
    m = _types(FIND_COORDINATOR, version, "response")
    return _write(_build(m.FindCoordinatorResponse, throttle_time=_ZERO, error_code=ErrorCode(error),
                         error_message=message, node_id=-1, host="", port=-1))


# ---------------------------------------------------------------------------------------------- CreateTopics

@dataclass(frozen=True, slots=True)
class TopicToCreate:
    name: str
    num_partitions: int
    """-1: the broker's default (``num.partitions``)."""
    replication_factor: int
    """-1: the broker's default (``default.replication.factor``)."""
    assignment: dict[int, list[int]]
    configs: dict[str, str | None]
    """None: a null value, which Kafka refuses (INVALID_REQUEST)."""


@dataclass(frozen=True, slots=True)
class TopicCreated:
    name: str
    error: int = 0
    message: str | None = None
    num_partitions: int = -1
    replication_factor: int = -1
    configs: tuple[CreatedTopicConfig, ...] = ()
    """v5+: the topic's configs as created (``maybePopulateMetadataAndConfigs``); empty for an error."""
    topic_id: uuid.UUID | None = None
    """v7: the created topic's id, None for the zero id."""


@dataclass(frozen=True, slots=True)
class CreatedTopicConfig:
    """One of a created topic's configs in a CreateTopics v5+ answer (``CreatableTopicConfigs``)."""

    name: str
    value: str | None
    read_only: bool
    source: int
    sensitive: bool


def topics_to_create(request: Any) -> tuple[list[TopicToCreate], bool, int]:
    """The topics a CreateTopics request asks for (duplicates kept), its ``validate_only`` flag and its timeout
    in milliseconds."""
    topics = [TopicToCreate(t.name, t.num_partitions, t.replication_factor,
                            {a.partition_index: list(a.broker_ids) for a in t.assignments},
                            {c.name: c.value for c in t.configs}) for t in request.topics]
    return topics, bool(getattr(request, "validate_only", False)), _millis(request.timeout)


def create_topics_response(version: int, results: Iterable[TopicCreated], throttle_time_ms: int = 0) -> bytes:
    m = _types(CREATE_TOPICS, version, "response")
    topics = tuple(_build(m.CreatableTopicResult, name=r.name, topic_id=r.topic_id or uuid.UUID(int=0),
                          error_code=ErrorCode(r.error),
                          error_message=r.message, num_partitions=r.num_partitions,
                          replication_factor=r.replication_factor,
                          configs=tuple(m.CreatableTopicConfigs(name=c.name, value=c.value, read_only=c.read_only,
                                                                config_source=c.source, is_sensitive=c.sensitive)
                                        for c in r.configs) if version >= 5 else ())
                   for r in results)
    return _write(_build(m.CreateTopicsResponse, throttle_time=timedelta(milliseconds=throttle_time_ms), topics=topics))


# ---------------------------------------------------------------------------------------------- DeleteTopics

@dataclass(frozen=True, slots=True)
class TopicToDelete:
    """One entry of a DeleteTopics request: a name, or (v6) a topic id; Kafka refuses both at once."""

    name: str | None
    topic_id: uuid.UUID | None = None
    """None for the zero id (none given)."""


@dataclass(frozen=True, slots=True)
class TopicDeleted:
    name: str | None
    topic_id: uuid.UUID | None = None
    error: int = 0


def topics_to_delete(request: Any, version: int) -> tuple[list[TopicToDelete], int]:
    """The topics a DeleteTopics request names, in order, duplicates kept (``DeleteTopicsRequest.topics``), and its
    timeout in milliseconds."""
    if version >= 6:
        topics = [TopicToDelete(t.name, None if t.topic_id in (None, _ZERO_UUID) else t.topic_id)
                  for t in request.topics]
    else:
        topics = [TopicToDelete(name) for name in request.topic_names]
    return topics, _millis(request.timeout)


def _millis(value: timedelta | int) -> int:
    if isinstance(value, timedelta):
        return (value.days * 86_400_000) + value.seconds * 1000 + value.microseconds // 1000
    return int(value)


def delete_topics_response(version: int, results: Iterable[TopicDeleted], throttle_time_ms: int = 0) -> bytes:
    """The body of a DeleteTopics response: per topic its name (null for an unresolved id at v6), id and error
    code; Kafka 2.8 sets no error message."""
    m = _types(DELETE_TOPICS, version, "response")
    responses = tuple(_build(m.DeletableTopicResult, name=r.name if version >= 6 else (r.name or ""),
                             topic_id=r.topic_id or _ZERO_UUID, error_code=ErrorCode(r.error), error_message=None)
                      for r in results)
    return _write(_build(m.DeleteTopicsResponse, throttle_time=timedelta(milliseconds=throttle_time_ms),
                         responses=responses))


# ---------------------------------------------------------------------------------------------- CreatePartitions

@dataclass(frozen=True, slots=True)
class PartitionsToCreate:
    """One topic of a CreatePartitions request: its new total partition count and, optionally, the new
    partitions' replicas in order."""

    name: str
    count: int
    assignments: list[list[int]] | None = None


@dataclass(frozen=True, slots=True)
class PartitionsCreated:
    name: str
    error: int = 0
    message: str | None = None


def partitions_to_create(request: Any) -> tuple[list[PartitionsToCreate], int, bool]:
    """A CreatePartitions request's topics in order (duplicates kept: Kafka answers them INVALID_REQUEST), its
    timeout in milliseconds and ``validate_only``."""
    topics = [PartitionsToCreate(t.name, int(t.count), None if t.assignments is None
                                 else [[int(b) for b in a.broker_ids] for a in t.assignments])
              for t in request.topics]
    return topics, _millis(request.timeout), bool(request.validate_only)


def create_partitions_response(version: int, results: Iterable[PartitionsCreated], throttle_time_ms: int = 0) -> bytes:
    m = _types(CREATE_PARTITIONS, version, "response")
    values = tuple(_build(m.CreatePartitionsTopicResult, name=r.name, error_code=ErrorCode(r.error),
                          error_message=r.message) for r in results)
    return _write(_build(m.CreatePartitionsResponse, throttle_time=timedelta(milliseconds=throttle_time_ms),
                         results=values))


# ---------------------------------------------------------------------------------------------- ElectLeaders

@dataclass(frozen=True, slots=True)
class PartitionError:
    """A per-partition admin answer (Kafka's ``ApiError``)."""

    topic: str
    partition: int
    error: int = 0
    message: str | None = None


ERROR_MESSAGES = {
    41: "This is not the correct controller for this cluster.",
    84: "Leader election not needed for topic partition.",
    85: "No partition reassignment is in progress.",
}
"""Kafka's ``Errors`` messages for the codes whose ``new ApiError(error)`` (no message given) the admin APIs
answer: that constructor fills in the error's own message; ``ApiError(error, null)`` leaves it null."""


def elect_leaders_request(request: Any, version: int) -> tuple[int, list[tuple[str, int]] | None, int]:
    """An ElectLeaders request's election type (0 preferred, 1 unclean; v0 is always preferred), its partitions
    each once (Kafka reads them into a set) in the order first named, or None for all, and its timeout (ms)."""
    election_type = int(request.election_type) if version >= 1 else 0
    partitions = None if request.topic_partitions is None else list(dict.fromkeys(
        (t.topic, int(p)) for t in request.topic_partitions for p in t.partitions))
    return election_type, partitions, _millis(request.timeout)


def elect_leaders_response(version: int, results: Iterable[PartitionError], error: int = 0) -> bytes:
    """Results grouped per topic, sorted (Kafka's come from a map, in no set order); the top-level error code
    from v1."""
    m = _types(ELECT_LEADERS, version, "response")
    topics = tuple(_build(m.ReplicaElectionResult, topic=topic, partition_result=tuple(
        _build(m.PartitionResult, partition_id=r.partition, error_code=ErrorCode(r.error), error_message=r.message)
        for r in group)) for topic, group in _by_topic(results))
    return _write(_build(m.ElectLeadersResponse, throttle_time=_ZERO, error_code=ErrorCode(error),
                         replica_election_results=topics))


def _by_topic(results: Iterable[_T]) -> list[tuple[str, list[_T]]]:
    """Results sorted by topic and partition, grouped per topic (Kafka's come from a map, in no set order)."""
    return _topic_runs(sorted(results, key=_TOPIC_PARTITION))


def _topic_runs(answers: Iterable[_T]) -> list[tuple[str, list[_T]]]:
    """Consecutive answers for one topic, each run one topic entry of a response (as the request's were)."""
    return [(topic, list(run)) for topic, run in groupby(answers, key=_TOPIC)]


# ---------------------------------------------------------------------------------------------- reassignments

def reassignments_to_alter(request: Any) -> dict[tuple[str, int], list[int] | None]:
    """Per partition its target replicas, None to cancel; a partition named twice keeps its last entry, as
    Kafka's ``toMap``."""
    return {(t.name, int(p.partition_index)): None if p.replicas is None else [int(b) for b in p.replicas]
            for t in request.topics for p in t.partitions}


def alter_reassignments_response(results: Iterable[PartitionError], error: int = 0,
                                 message: str | None = None) -> bytes:
    """AlterPartitionReassignments v0: a top-level error (then no partitions) or one result per partition."""
    m = _types(ALTER_PARTITION_REASSIGNMENTS, 0, "response")
    topics = tuple(_build(m.ReassignableTopicResponse, name=topic, partitions=tuple(
        _build(m.ReassignablePartitionResponse, partition_index=r.partition, error_code=ErrorCode(r.error),
               error_message=r.message) for r in group)) for topic, group in _by_topic(results))
    return _write(_build(m.AlterPartitionReassignmentsResponse, throttle_time=_ZERO, error_code=ErrorCode(error),
                         error_message=message, responses=topics))


@dataclass(frozen=True, slots=True)
class OngoingReassignment:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


def reassignments_to_list(request: Any) -> list[tuple[str, int]] | None:
    """The partitions a ListPartitionReassignments request asks about (each once), or None for all."""
    if request.topics is None:
        return None
    return list(dict.fromkeys((t.name, int(p)) for t in request.topics for p in t.partition_indexes))


def list_reassignments_response(ongoing: Iterable[OngoingReassignment], error: int = 0,
                                message: str | None = None) -> bytes:
    m = _types(LIST_PARTITION_REASSIGNMENTS, 0, "response")
    topics = tuple(_build(m.OngoingTopicReassignment, name=topic, partitions=tuple(
        _build(m.OngoingPartitionReassignment, partition_index=o.partition, replicas=o.replicas,
               adding_replicas=o.adding, removing_replicas=o.removing) for o in group))
        for topic, group in _by_topic(ongoing))
    return _write(_build(m.ListPartitionReassignmentsResponse, throttle_time=_ZERO, error_code=ErrorCode(error),
                         error_message=message, topics=topics))


# ---------------------------------------------------------------------------------------------- ListOffsets

@dataclass(frozen=True, slots=True)
class OffsetQuery:
    """One partition of a ListOffsets request."""

    topic: str
    partition: int
    timestamp: int
    """-1 latest, -2 earliest, else a timestamp in milliseconds."""
    current_leader_epoch: int = -1
    """v4+; -1: not given (no epoch check)."""


@dataclass(frozen=True, slots=True)
class OffsetAnswer:
    topic: str
    partition: int
    error: int = 0
    timestamp: int = -1
    offset: int = -1
    leader_epoch: int = -1


def offset_queries(request: Any) -> tuple[int, int, list[OffsetQuery]]:
    """A ListOffsets request's replica id, isolation level (0 READ_UNCOMMITTED before v2) and partitions, in
    request order."""
    queries = [OffsetQuery(t.name, p.partition_index, p.timestamp, getattr(p, "current_leader_epoch", -1))
               for t in request.topics for p in t.partitions]
    return int(request.replica_id), int(getattr(request, "isolation_level", 0)), queries


def list_offsets_response(version: int, answers: Iterable[OffsetAnswer]) -> bytes:
    """The body of a ListOffsets response: consecutive answers for one topic form its entry, as the request's
    did; the leader epoch is written from v4 (the field's first version)."""
    m = _types(LIST_OFFSETS, version, "response")
    topics = tuple(_build(m.ListOffsetsTopicResponse, name=name, partitions=tuple(
        _build(m.ListOffsetsPartitionResponse, partition_index=a.partition, error_code=ErrorCode(a.error),
               timestamp=a.timestamp, offset=a.offset, leader_epoch=a.leader_epoch) for a in run))
        for name, run in _topic_runs(answers))
    return _write(_build(m.ListOffsetsResponse, throttle_time=_ZERO, topics=topics))


# ---------------------------------------------------------------------------------------------- ListOffsets v0

LIST_OFFSETS_V0_REQUEST = MessageSpec("ListOffsetsRequest", "0", "", (
    Field("replica_id", "int32"),
    Field("topics", "[]", fields=(
        Field("name", "string"),
        Field("partitions", "[]", fields=(
            Field("partition_index", "int32"),
            Field("timestamp", "int64"),
            Field("max_num_offsets", "int32", default=1),
        )),
    )),
))
"""Kafka 2.8's ListOffsetsRequest.json at v0 (kio's schemas start at v1): ``MaxNumOffsets`` is v0 only."""
LIST_OFFSETS_V0_RESPONSE = MessageSpec("ListOffsetsResponse", "0", "", (
    Field("topics", "[]", fields=(
        Field("name", "string"),
        Field("partitions", "[]", fields=(
            Field("partition_index", "int32"),
            Field("error_code", "int16"),
            Field("old_style_offsets", "[]int64"),
        )),
    )),
))


@dataclass(frozen=True, slots=True)
class LegacyOffsetQuery:
    topic: str
    partition: int
    timestamp: int
    max_num_offsets: int


@dataclass(frozen=True, slots=True)
class LegacyOffsetAnswer:
    topic: str
    partition: int
    error: int = 0
    offsets: tuple[int, ...] = ()
    """Kafka's ``old_style_offsets``, highest first."""


def legacy_offset_queries(buf: bytes | memoryview, offset: int) -> tuple[int, list[LegacyOffsetQuery]]:
    """A ListOffsets v0 request's replica id and partitions; `WireFormatError` for malformed bytes (trailing
    bytes are ignored, as for every client request)."""
    value = codec.decode(LIST_OFFSETS_V0_REQUEST, 0, buf, offset, exact=False)
    return value["replica_id"], [LegacyOffsetQuery(t["name"], p["partition_index"], p["timestamp"],
                                                   p["max_num_offsets"])
                                 for t in value["topics"] for p in t["partitions"]]


def legacy_list_offsets_response(answers: Iterable[LegacyOffsetAnswer]) -> bytes:
    """A ListOffsets v0 response body: consecutive answers for one topic form its entry."""
    topics = [{"name": name, "partitions": [{"partition_index": a.partition, "error_code": a.error,
                                             "old_style_offsets": list(a.offsets)} for a in run]}
              for name, run in _topic_runs(answers)]
    return codec.encode(LIST_OFFSETS_V0_RESPONSE, 0, {"topics": topics})


# ---------------------------------------------------------------------------------------------- Produce

PRODUCE = 0
PRODUCE_VERSIONS = (0, 9)
"""Kafka 2.8's Produce 0–9 (v9 the first flexible one): requests and responses of every version through our own
tables below."""
_MODULES[PRODUCE] = "produce"
_REQUEST_NAMES[PRODUCE] = "ProduceRequest"


@dataclass(frozen=True, slots=True)
class ProduceRequestSummary:
    """A Produce request as the broker uses it: the record sets stay bytes (`log_validator` counts them)."""

    acks: int
    timeout_ms: int
    transactional_id: str | None
    partitions: list[tuple[str, int, bytes | None]]
    """(topic, partition, records) in request order."""


PRODUCE_REQUEST = MessageSpec("ProduceRequest", "0-9", "9+", (
    Field("transactional_id", "string", versions="3+", nullable="3+"),
    Field("acks", "int16"),
    Field("timeout_ms", "int32"),
    Field("topics", "[]", fields=(
        Field("name", "string"),
        Field("partitions", "[]", fields=(
            Field("index", "int32"),
            Field("records", "records", nullable="0+"),
        )),
    )),
))
"""Kafka 2.8's ProduceRequest.json, v0–9 (v9 flexible), for every version: kio's schemas start at v3, and its
reader (with the length guard and null checks it needs) took 1.7x our table's time for a one-partition request
(docs/benchmarks.md, Produce)."""
PRODUCE_RESPONSE = MessageSpec("ProduceResponse", "0-9", "9+", (
    Field("responses", "[]", fields=(
        Field("name", "string"),
        Field("partitions", "[]", fields=(
            Field("index", "int32"),
            Field("error_code", "int16"),
            Field("base_offset", "int64"),
            Field("log_append_time_ms", "int64", versions="2+", default=-1),
            Field("log_start_offset", "int64", versions="5+", default=-1),
            Field("record_errors", "[]", versions="8+", fields=(
                Field("batch_index", "int32", versions="8+"),
                Field("batch_index_error_message", "string", versions="8+", nullable="8+"),
            )),
            Field("error_message", "string", versions="8+", nullable="8+"),
        )),
    )),
    Field("throttle_time_ms", "int32", versions="1+", default=0),
))
"""Kafka 2.8's ProduceResponse.json, v0–9 (v9 flexible), for every version: kio types ``LogAppendTimeMs`` as a
datetime, which holds neither every int64 nor -1 apart from None, and a duplicate's answer carries the original
batch's max timestamp, whatever int64 its producer wrote there."""


def decode_produce_request(version: int, buf: bytes | memoryview, offset: int) -> ProduceRequestSummary:
    """A Produce request body of any version Kafka 2.8 serves; `WireFormatError` for malformed bytes (trailing
    bytes ignored, as for every client request)."""
    value = codec.decode(PRODUCE_REQUEST, version, buf, offset, exact=False)
    transactional_id = value["transactional_id"] if version >= 3 else None  # absent before v3: Kafka's null
    return ProduceRequestSummary(value["acks"], value["timeout_ms"], transactional_id,
                                 [(t["name"], p["index"], None if p["records"] is None else bytes(p["records"]))
                                  for t in value["topics"] for p in t["partitions"]])


def produce_response(version: int, answers: Iterable[Any], throttle_time_ms: int = 0) -> bytes:
    """The body of a Produce response, any version, through `PRODUCE_RESPONSE`. ``answers`` carry topic,
    partition, error, base_offset, log_append_time, log_start_offset, error_message and record_errors (batch index,
    message) pairs; consecutive answers for one topic form its entry. ``throttle_time_ms`` (v1+) is the client's
    produce quota throttle."""
    topics = [{"name": name, "partitions": [
        {"index": a.partition, "error_code": a.error, "base_offset": a.base_offset,
         "log_append_time_ms": a.log_append_time, "log_start_offset": a.log_start_offset,
         "record_errors": [{"batch_index": i, "batch_index_error_message": m}
                           for i, m in getattr(a, "record_errors", ())],
         "error_message": a.error_message} for a in run]}
        for name, run in _topic_runs(answers)]
    return codec.encode(PRODUCE_RESPONSE, version, {"responses": topics, "throttle_time_ms": throttle_time_ms})


# ---------------------------------------------------------------------------------------------- InitProducerId

INIT_PRODUCER_ID = 22
INIT_PRODUCER_ID_VERSIONS = (0, 4)
"""Kafka 2.8's InitProducerId 0–4 (kio also has Kafka 3's v5–v6: not advertised)."""
_MODULES[INIT_PRODUCER_ID] = "init_producer_id"
_REQUEST_NAMES[INIT_PRODUCER_ID] = "InitProducerIdRequest"


def init_producer_id_request(request: Any) -> tuple[str | None, int, int, int]:
    """A kio InitProducerId request's transactional id, transaction timeout (ms), producer id and epoch (v3+;
    -1 and -1 before, as Kafka's defaults)."""
    return (request.transactional_id, _millis(request.transaction_timeout),
            int(getattr(request, "producer_id", -1)), int(getattr(request, "producer_epoch", -1)))


def init_producer_id_response(version: int, producer_id: int, producer_epoch: int, error: int = 0) -> bytes:
    """The body of an InitProducerId response."""
    m = _types(INIT_PRODUCER_ID, version, "response")
    return _write(_build(m.InitProducerIdResponse, throttle_time=_ZERO, error_code=ErrorCode(error),
                         producer_id=producer_id, producer_epoch=producer_epoch))
