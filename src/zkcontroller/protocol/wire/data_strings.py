"""Kafka's ``toString`` of a request body, for the lines that print one (``[KafkaApi-N] Error when handling request:
..., body=...``): Kafka prints ``AbstractRequest.toString``, which is ``data().toString()`` for every request we serve
but Produce (its own form, `broker.produce.request_text`), and a ``*Data`` class's ``toString`` is generated
(``MessageDataGenerator.generateToString``, Kafka 2.8.2) from the message's JSON schema:

- ``ClassName(field=value, ...)``, every field of the class in schema order, also those absent at the request's
  version (the Java object keeps their default: ``0``, ``false``, ``''``, ``[]``, or the schema's ``default``);
  field names are the schema's in camelCase (``TimeoutMs`` -> ``timeoutMs``); nested structs print their own
  class name (the schema's ``[]CreatableTopic`` -> ``CreatableTopic(...)``).
- strings in single quotes, ``null`` for a null string or array; booleans ``true``/``false``; numbers plain;
  uuids as ``Uuid.toString`` (URL-safe base64 without padding); bytes as ``Arrays.toString`` (``[1, 2]``).
- arrays through ``MessageUtil.deepToString``: ``[a, b]``, each element's ``toString`` (so strings unquoted).

The tables below are the 2.8.2 request schemas (``clients/src/main/resources/common/message/*Request.json``) of
the APIs a broker here answers, reduced to what ``toString`` needs. A value is read by attribute: kio's dataclasses
(snake_case names; an ``...Ms`` field is kio's timedelta without the suffix) or our own query types (`ALIASES`).
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from zkcontroller.java_double import java_double
from zkcontroller.protocol.wire.schema import in_versions

NULL: Any = type("_Null", (), {"__repr__": lambda self: "NULL"})()
"""A schema's ``"default": "null"`` (a nullable field whose Java default is null, not empty)."""


@dataclass(frozen=True, slots=True)
class Member:
    """One field of a generated ``*Data`` class: Java name, the schema's type (``"[]"``/``"{}"`` for a struct
    array/struct, else a primitive or ``"[]int32"``-style array), versions, nullable versions, default."""

    name: str
    type: str
    versions: str = "0+"
    nullable: str = ""
    default: Any = None
    tagged: str = ""
    struct: Struct | None = None


@dataclass(frozen=True, slots=True)
class Struct:
    """A generated class: its Java name and fields in schema order."""

    name: str
    fields: tuple[Member, ...]


S, M = Struct, Member

METADATA_REQUEST = S('MetadataRequestData', (  # 0-11
    M('topics', '[]', nullable='1+', struct=S('MetadataRequestTopic', (
        M('topicId', 'uuid', '10+'),
        M('name', 'string', nullable='10+'),
    ))),
    M('allowAutoTopicCreation', 'bool', '4+', default=True),
    M('includeClusterAuthorizedOperations', 'bool', '8-10'),
    M('includeTopicAuthorizedOperations', 'bool', '8+'),
))
CREATE_TOPICS_REQUEST = S('CreateTopicsRequestData', (  # 0-7
    M('topics', '[]', struct=S('CreatableTopic', (
        M('name', 'string'),
        M('numPartitions', 'int32'),
        M('replicationFactor', 'int16'),
        M('assignments', '[]', struct=S('CreatableReplicaAssignment', (
            M('partitionIndex', 'int32'),
            M('brokerIds', '[]int32'),
        ))),
        M('configs', '[]', struct=S('CreateableTopicConfig', (
            M('name', 'string'),
            M('value', 'string', nullable='0+'),
        ))),
    ))),
    M('timeoutMs', 'int32', default=60000),
    M('validateOnly', 'bool', '1+', default=False),
))
DELETE_TOPICS_REQUEST = S('DeleteTopicsRequestData', (  # 0-6
    M('topics', '[]', '6+', struct=S('DeleteTopicState', (
        M('name', 'string', '6+', nullable='6+'),
        M('topicId', 'uuid', '6+'),
    ))),
    M('topicNames', '[]string', '0-5'),
    M('timeoutMs', 'int32'),
))
CREATE_PARTITIONS_REQUEST = S('CreatePartitionsRequestData', (  # 0-3
    M('topics', '[]', struct=S('CreatePartitionsTopic', (
        M('name', 'string'),
        M('count', 'int32'),
        M('assignments', '[]', nullable='0+', struct=S('CreatePartitionsAssignment', (
            M('brokerIds', '[]int32'),
        ))),
    ))),
    M('timeoutMs', 'int32'),
    M('validateOnly', 'bool'),
))
ELECT_LEADERS_REQUEST = S('ElectLeadersRequestData', (  # 0-2
    M('electionType', 'int8', '1+'),
    M('topicPartitions', '[]', nullable='0+', struct=S('TopicPartitions', (
        M('topic', 'string'),
        M('partitionId', '[]int32'),
    ))),
    M('timeoutMs', 'int32', default=60000),
))
INIT_PRODUCER_ID_REQUEST = S('InitProducerIdRequestData', (  # 0-4
    M('transactionalId', 'string', nullable='0+'),
    M('transactionTimeoutMs', 'int32'),
    M('producerId', 'int64', '3+', default=-1),
    M('producerEpoch', 'int16', '3+', default=-1),
))
ALTER_CONFIGS_REQUEST = S('AlterConfigsRequestData', (  # 0-2
    M('resources', '[]', struct=S('AlterConfigsResource', (
        M('resourceType', 'int8'),
        M('resourceName', 'string'),
        M('configs', '[]', struct=S('AlterableConfig', (
            M('name', 'string'),
            M('value', 'string', nullable='0+'),
        ))),
    ))),
    M('validateOnly', 'bool'),
))
INCREMENTAL_ALTER_CONFIGS_REQUEST = S('IncrementalAlterConfigsRequestData', (  # 0-1
    M('resources', '[]', struct=S('AlterConfigsResource', (
        M('resourceType', 'int8'),
        M('resourceName', 'string'),
        M('configs', '[]', struct=S('AlterableConfig', (
            M('name', 'string'),
            M('configOperation', 'int8'),
            M('value', 'string', nullable='0+'),
        ))),
    ))),
    M('validateOnly', 'bool'),
))
API_VERSIONS_REQUEST = S('ApiVersionsRequestData', (  # 0-3
    M('clientSoftwareName', 'string', '3+'),
    M('clientSoftwareVersion', 'string', '3+'),
))
DESCRIBE_CLUSTER_REQUEST = S('DescribeClusterRequestData', (  # 0
    M('includeClusterAuthorizedOperations', 'bool'),
))
LIST_OFFSETS_REQUEST = S('ListOffsetsRequestData', (  # 0-6
    M('replicaId', 'int32'),
    M('isolationLevel', 'int8', '2+'),
    M('topics', '[]', struct=S('ListOffsetsTopic', (
        M('name', 'string'),
        M('partitions', '[]', struct=S('ListOffsetsPartition', (
            M('partitionIndex', 'int32'),
            M('currentLeaderEpoch', 'int32', '4+', default=-1),
            M('timestamp', 'int64'),
            M('maxNumOffsets', 'int32', '0', default=1),
        ))),
    ))),
))
ALTER_PARTITION_REASSIGNMENTS_REQUEST = S('AlterPartitionReassignmentsRequestData', (  # 0
    M('timeoutMs', 'int32', default=60000),
    M('topics', '[]', struct=S('ReassignableTopic', (
        M('name', 'string'),
        M('partitions', '[]', struct=S('ReassignablePartition', (
            M('partitionIndex', 'int32'),
            M('replicas', '[]int32', nullable='0+', default=NULL),
        ))),
    ))),
))
LIST_PARTITION_REASSIGNMENTS_REQUEST = S('ListPartitionReassignmentsRequestData', (  # 0
    M('timeoutMs', 'int32', default=60000),
    M('topics', '[]', nullable='0+', default=NULL, struct=S('ListPartitionReassignmentsTopics', (
        M('name', 'string'),
        M('partitionIndexes', '[]int32'),
    ))),
))
DESCRIBE_CONFIGS_REQUEST = S('DescribeConfigsRequestData', (  # 0-4
    M('resources', '[]', struct=S('DescribeConfigsResource', (
        M('resourceType', 'int8'),
        M('resourceName', 'string'),
        M('configurationKeys', '[]string', nullable='0+'),
    ))),
    M('includeSynonyms', 'bool', '1+', default=False),
    M('includeDocumentation', 'bool', '3+', default=False),
))
DESCRIBE_CLIENT_QUOTAS_REQUEST = S('DescribeClientQuotasRequestData', (  # 0-1
    M('components', '[]', struct=S('ComponentData', (
        M('entityType', 'string'),
        M('matchType', 'int8'),
        M('match', 'string', nullable='0+'),
    ))),
    M('strict', 'bool'),
))

REQUESTS: dict[int, Struct] = {
    3: METADATA_REQUEST, 19: CREATE_TOPICS_REQUEST, 20: DELETE_TOPICS_REQUEST, 37: CREATE_PARTITIONS_REQUEST,
    43: ELECT_LEADERS_REQUEST, 22: INIT_PRODUCER_ID_REQUEST, 33: ALTER_CONFIGS_REQUEST,
    44: INCREMENTAL_ALTER_CONFIGS_REQUEST, 18: API_VERSIONS_REQUEST, 60: DESCRIBE_CLUSTER_REQUEST,
    2: LIST_OFFSETS_REQUEST, 45: ALTER_PARTITION_REASSIGNMENTS_REQUEST, 46: LIST_PARTITION_REASSIGNMENTS_REQUEST,
    32: DESCRIBE_CONFIGS_REQUEST, 48: DESCRIBE_CLIENT_QUOTAS_REQUEST,
}
"""API key -> its request's ``*Data`` class (Produce is not here: ``ProduceRequest`` overrides ``toString``).
AlterClientQuotas is not either: Kafka's handler fails no request as a whole (``alterClientQuotas`` answers each
entity's error), so nothing logs its body."""

API_NAMES: dict[int, str] = {
    0: "PRODUCE", 1: "FETCH", 2: "LIST_OFFSETS", 3: "METADATA", 4: "LEADER_AND_ISR", 5: "STOP_REPLICA",
    6: "UPDATE_METADATA", 7: "CONTROLLED_SHUTDOWN", 10: "FIND_COORDINATOR",
    18: "API_VERSIONS", 19: "CREATE_TOPICS", 20: "DELETE_TOPICS",
    22: "INIT_PRODUCER_ID", 32: "DESCRIBE_CONFIGS", 33: "ALTER_CONFIGS", 37: "CREATE_PARTITIONS", 43: "ELECT_LEADERS",
    44: "INCREMENTAL_ALTER_CONFIGS", 45: "ALTER_PARTITION_REASSIGNMENTS", 46: "LIST_PARTITION_REASSIGNMENTS",
    48: "DESCRIBE_CLIENT_QUOTAS", 49: "ALTER_CLIENT_QUOTAS", 56: "ALTER_ISR", 60: "DESCRIBE_CLUSTER",
}
"""API key -> the ``ApiKeys`` constant's name, as ``s"api=${header.apiKey}"`` prints it."""


def api_name(api_key: int) -> str:
    """``ApiKeys.toString`` of the APIs served here; ``UNKNOWN(<key>)`` otherwise (never raised on a log path)."""
    return API_NAMES.get(api_key, f"UNKNOWN({api_key})")


ALIASES: dict[str, tuple[str, ...]] = {"configOperation": ("op",), "configurationKeys": ("keys",),
                                      "partitionId": ("partitions",)}
"""Java field name -> other attribute names it goes by: in our own decoded types (`alter_configs.ConfigChange`'s
``op``, `describe_configs.ConfigResourceQuery`'s ``keys``) and where kio's newer schemas renamed a field
(ElectLeaders' ``PartitionId``, ``Partitions`` in 4.x)."""

_MISSING = object()
_ZEROS: dict[str, Any] = {"string": "", "bool": False, "uuid": None, "bytes": b"", "records": None, "float64": 0.0}


def request_string(api_key: int, version: int, body: Any) -> str:
    """``body`` (a decoded request of ``api_key`` at ``version``) as Kafka's ``AbstractRequest.toString``;
    ``KeyError`` for an API without a table here."""
    return data_string(REQUESTS[api_key], version, body)


def data_string(struct: Struct, version: int, value: Any) -> str:
    """``struct``'s generated ``toString`` of ``value`` at ``version``. A field the version has but ``value``
    lacks is a `ValueError` (a table out of step with the decoded type), not a guess."""
    parts = []
    for member in struct.fields:
        present = in_versions(member.versions, version)
        raw = _read(value, member) if present else _MISSING
        if raw is _MISSING:
            if present:
                raise ValueError(f"{struct.name}.{member.name} (v{version}) not found on {type(value).__name__}")
            raw = _default(member)
        parts.append(f"{member.name}={_member_string(member, version, raw)}")
    return f"{struct.name}({', '.join(parts)})"


def _read(value: Any, member: Member) -> Any:
    """The member's value on ``value`` (an object or a mapping) by its snake_case name, kio's timedelta name
    without ``_ms``, or an alias."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in member.name)
    names = [snake]
    if snake.endswith("_ms"):
        names.append(snake[:-3])
    names.extend(ALIASES.get(member.name, ()))
    for name in names:
        found = value.get(name, _MISSING) if isinstance(value, dict) else getattr(value, name, _MISSING)
        if found is not _MISSING:
            return found
    return _MISSING


def _default(member: Member) -> Any:
    """What the Java object holds for a field its version does not have (the generated constructor's value)."""
    if member.default is NULL:
        return None
    if member.default is not None:
        return member.default
    if member.type.startswith("["):
        return ()
    if member.type == "{}":
        assert member.struct is not None
        return {}
    return _ZEROS.get(member.type, 0)


def _member_string(member: Member, version: int, raw: Any) -> str:
    if member.type == "[]":
        assert member.struct is not None
        struct = member.struct
        return "null" if raw is None else _list(data_string(struct, version, item) for item in raw)
    if member.type == "{}":
        assert member.struct is not None
        return data_string(member.struct, version, raw)
    if member.type.startswith("[]"):
        return "null" if raw is None else _list(_element_string(member.type[2:], item) for item in raw)
    if member.type == "string":
        return "null" if raw is None else f"'{raw}'"
    if member.type == "records":
        return "null" if raw is None else str(raw)
    return _element_string(member.type, raw)


def _element_string(kind: str, raw: Any) -> str:
    """A primitive as Java's ``toString`` of its boxed value (strings unquoted: ``deepToString``'s elements)."""
    if kind == "bool":
        return "true" if raw else "false"
    if kind == "uuid":
        return uuid_string(raw)
    if kind == "bytes":
        return "null" if raw is None else _list(str(b - 256 if b > 127 else b) for b in bytes(raw))
    if kind == "float64":
        return java_double(float(raw))
    if kind == "string":
        return "null" if raw is None else str(raw)
    if isinstance(raw, timedelta):
        return str(int(raw / timedelta(milliseconds=1)))
    return str(int(raw))


def _list(items: Any) -> str:
    return f"[{', '.join(items)}]"


def uuid_string(value: Any) -> str:
    """Kafka's ``Uuid.toString``: URL-safe base64 of the 16 bytes, unpadded; None (kio's "no id") is the zero
    uuid, ``AAAAAAAAAAAAAAAAAAAAAA``."""
    if value is None:
        raw = bytes(16)
    elif isinstance(value, uuid.UUID):
        raw = value.bytes
    else:
        raw = bytes(getattr(value, "raw", value))
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
