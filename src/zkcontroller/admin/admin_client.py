"""A small asyncio admin client over Kafka's wire protocol, for ``--bootstrap-server`` on ``zkcontroller topics``,
``leader-election``, ``reassign``, ``configs``, ``brokers list`` and ``controller show``.

It does what Kafka 2.8's ``KafkaAdminClient`` does for the calls our tools need, so a cluster on the embedded
store (which no other process can reach through ZooKeeper) can be administered from another shell:

- bootstrap from a comma-separated ``host:port`` list, trying each address in turn;
- ApiVersions on every new connection, then the highest version both sides have for each call;
- Metadata to learn the brokers and the controller; CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders,
  AlterPartitionReassignments and ListPartitionReassignments go to the controller, and a ``NOT_CONTROLLER`` answer
  (or a lost connection) refreshes the metadata and retries; a broker's own config resource goes to that broker
  (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs), other resources to any node, as are
  DescribeCluster (Metadata from a broker without it) and DescribeClientQuotas/AlterClientQuotas;
- every call is bounded by ``default.api.timeout.ms`` (60 s, as Kafka), each exchange by ``request.timeout.ms``;
  when no broker could be reached the call fails with Kafka's words, ``Timed out waiting for a node assignment.
  Call: <name>``.

Request and response types are kio's (generated from Kafka's schemas); the config and client quota APIs go through
our own tables (`describe_configs`, `alter_configs`, `client_quotas`), which the brokers use too. Errors a broker
returns become `KafkaApiError` with the broker's message, or Kafka's default message for the code when the broker
sent none.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import timedelta
from typing import Any, TypeVar

from kio.serial import entity_reader, entity_writer

from zkcontroller.admin.metadata_client import read_response
from zkcontroller.model import TopicId
from zkcontroller.protocol.wire import alter_configs as ac
from zkcontroller.protocol.wire import client_quotas as cq
from zkcontroller.protocol.wire import describe_configs as dc
from zkcontroller.protocol.wire.client_apis import (
    ALTER_PARTITION_REASSIGNMENTS,
    API_VERSIONS,
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    DESCRIBE_CLUSTER,
    ELECT_LEADERS,
    LIST_PARTITION_REASSIGNMENTS,
    METADATA,
    schema_module,
)
from zkcontroller.protocol.wire.codec import WireFormatError
from zkcontroller.protocol.wire.frames import RequestHeader, decode_response_header, encode_request_header, frame

T = TypeVar("T")

NOT_CONTROLLER = 41
BROKER_RESOURCE = 4
UNSUPPORTED_VERSION = 35
CLIENT_SOFTWARE_NAME = "zkcontroller"

CLIENT_VERSIONS: dict[int, tuple[int, int]] = {
    API_VERSIONS: (0, 3), METADATA: (1, 11), CREATE_TOPICS: (2, 7), DELETE_TOPICS: (1, 6),
    CREATE_PARTITIONS: (0, 3), ELECT_LEADERS: (0, 2), ALTER_PARTITION_REASSIGNMENTS: (0, 0),
    LIST_PARTITION_REASSIGNMENTS: (0, 0), dc.DESCRIBE_CONFIGS: (1, 4), ac.INCREMENTAL_ALTER_CONFIGS: (0, 1),
    ac.ALTER_CONFIGS: (0, 2), DESCRIBE_CLUSTER: (0, 0), cq.DESCRIBE_CLIENT_QUOTAS: (0, 1),
    cq.ALTER_CLIENT_QUOTAS: (0, 1),
}
"""What this client can speak (kio's schemas, DescribeConfigs from our table; Metadata v1+ for the controller id)."""

ERROR_MESSAGES: dict[int, str] = {
    -1: "The server experienced an unexpected error when processing the request.",
    3: "This server does not host this topic-partition.",
    5: "There is no leader for this topic-partition as we are in the middle of a leadership election.",
    7: "The request timed out.",
    17: "The request attempted to perform an operation on an invalid topic.",
    31: "Cluster authorization failed.",
    35: "The version of API is not supported.",
    36: "Topic with this name already exists.",
    37: "Number of partitions is below 1.",
    38: "Replication factor is below 1 or larger than the number of available brokers.",
    39: "Replica assignment is invalid.",
    40: "Configuration is invalid.",
    41: "This is not the correct controller for this cluster.",
    42: "This most likely occurs because of a request being malformed by the client library or the message was "
        "sent to an incompatible broker. See the broker logs for more details.",
    44: "Request parameters do not satisfy the configured policy.",
    60: "A partition reassignment is in progress.",
    73: "Topic deletion is disabled.",
    80: "The preferred leader was not available.",
    83: "Eligible topic partition leaders are not available.",
    84: "Leader election not needed for topic partition.",
    85: "No partition reassignment is in progress.",
    89: "The throttling quota has been exceeded.",
}
"""Kafka 2.8.2's ``Errors`` default messages for the codes these calls can answer: what the Java client's
exception says when the broker sent no message of its own."""


EXCEPTION_NAMES: dict[int, str] = {
    -1: "UnknownServerException", 3: "UnknownTopicOrPartitionException", 5: "LeaderNotAvailableException",
    7: "TimeoutException", 31: "ClusterAuthorizationException", 41: "NotControllerException",
    42: "InvalidRequestException", 60: "ReassignmentInProgressException", 80: "PreferredLeaderNotAvailableException",
    83: "EligibleLeadersNotAvailableException", 84: "ElectionNotNeededException",
    85: "NoReassignmentInProgressException", 39: "InvalidReplicaAssignmentException",
}
"""The Java exception each code becomes (``org.apache.kafka.common.errors``), for tools that print one whole."""


def exception_string(code: int, message: str | None) -> str:
    """What Java's ``Throwable.toString`` prints for the exception a per-item error code becomes."""
    name = EXCEPTION_NAMES.get(code, "ApiException")
    return f"org.apache.kafka.common.errors.{name}: {message or ERROR_MESSAGES.get(code, f'Error code {code}.')}"


class AdminClientError(Exception):
    """A call failed; the message is what Kafka's tools would print after their prefix."""


class AdminTimeoutError(AdminClientError):
    """The call's deadline passed (Kafka's TimeoutException)."""


class KafkaApiError(AdminClientError):
    """A broker answered with an error code (``code``) for a call or one of its items."""

    def __init__(self, code: int, message: str | None) -> None:
        self.code = code
        super().__init__(message or ERROR_MESSAGES.get(code, f"Error code {code}."))


def check(code: int, message: str | None = None) -> None:
    """Raise `KafkaApiError` for a non-zero error code."""
    if code:
        raise KafkaApiError(code, message)


@dataclass(frozen=True, slots=True)
class Node:
    id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    partition: int
    leader: int  # -1: none
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    error: int = 0


@dataclass(frozen=True, slots=True)
class TopicInfo:
    name: str
    topic_id: str | None  # Kafka's base64 form; None for the zero id or before Metadata v10
    internal: bool
    partitions: tuple[PartitionInfo, ...]
    error: int = 0


@dataclass(frozen=True, slots=True)
class ClusterMetadata:
    brokers: tuple[Node, ...]
    controller_id: int
    topics: tuple[TopicInfo, ...] = ()


@dataclass(frozen=True, slots=True)
class ClusterDescription:
    """What Kafka's ``describeCluster`` gives: the live brokers, the controller's id (-1: none known) and the
    cluster id (None when a Metadata answer had none)."""

    brokers: tuple[Node, ...]
    controller_id: int
    cluster_id: str | None


@dataclass(frozen=True, slots=True)
class Reassignment:
    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


def parse_bootstrap(servers: str) -> list[tuple[str, int]]:
    """``host:port[,host:port...]`` (IPv6 hosts in brackets) as Kafka's ``ClientUtils.parseAndValidateAddresses``
    takes it; `ValueError` with Kafka's wording for a bad entry or an empty list."""
    out: list[tuple[str, int]] = []
    for raw in servers.split(","):
        url = raw.strip()
        if not url:
            continue
        host, sep, port = url.rpartition(":")
        host = host.removeprefix("[").removesuffix("]")
        if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ValueError(f"Invalid url in bootstrap.servers: {url}")
        out.append((host, int(port)))
    if not out:
        raise ValueError("No resolvable bootstrap urls given in bootstrap.servers")
    return out


def build(cls: type, **values: Any) -> Any:
    """An instance of a kio type with the values its version has (others are not in that version)."""
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in values.items() if k in names})


def _write(value: Any) -> bytes:
    buf = io.BytesIO()
    entity_writer(type(value))(buf, value)
    return buf.getvalue()


def _topic_id(raw: Any) -> str | None:
    if raw is None or raw.int == 0:
        return None
    return str(TopicId(raw.bytes))


class _Connection:
    """One socket to one broker, one exchange at a time, with the versions it answered ApiVersions with."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_id: str) -> None:
        self.reader, self.writer, self.client_id = reader, writer, client_id
        self.versions: dict[int, tuple[int, int]] = {}
        self._ids = itertools.count(1)
        self._lock = asyncio.Lock()

    async def exchange(self, api_key: int, version: int, body: bytes) -> tuple[bytes, int]:
        """The response payload and where its body starts."""
        async with self._lock:
            correlation_id = next(self._ids)
            header = encode_request_header(RequestHeader(api_key, version, correlation_id, self.client_id))
            self.writer.write(frame(header, body))
            await self.writer.drain()
            payload = await read_response(self.reader)
        got, offset = decode_response_header(payload, api_key, version)
        if got != correlation_id:
            raise WireFormatError(f"correlation id {got}, expected {correlation_id}")
        return payload, offset

    def close(self) -> None:
        self.writer.close()


_RESPONSES = {API_VERSIONS: "ApiVersionsResponse", METADATA: "MetadataResponse", CREATE_TOPICS: "CreateTopicsResponse",
              DELETE_TOPICS: "DeleteTopicsResponse", CREATE_PARTITIONS: "CreatePartitionsResponse",
              ELECT_LEADERS: "ElectLeadersResponse",
              ALTER_PARTITION_REASSIGNMENTS: "AlterPartitionReassignmentsResponse",
              LIST_PARTITION_REASSIGNMENTS: "ListPartitionReassignmentsResponse",
              DESCRIBE_CLUSTER: "DescribeClusterResponse"}


def _decode(api_key: int, version: int, payload: bytes, offset: int) -> Any:
    cls = getattr(schema_module(api_key, version, "response"), _RESPONSES[api_key])
    try:
        value, _ = entity_reader(cls)(memoryview(payload)[offset:], 0)
    except Exception as e:  # kio's reader raises several types for bad bytes
        raise WireFormatError(f"{cls.__name__} v{version}: {e}") from None
    return value


@dataclass
class _Call:
    name: str
    deadline: float
    tries: int = 0
    last_error: BaseException | None = field(default=None)


class RetriableCallError(Exception):
    """Raised by a response parser for an answer worth retrying after a metadata refresh (NOT_CONTROLLER)."""


class AdminClient:
    """Use as ``async with AdminClient("host:9092") as admin: ...``; `AdminClientError` for every failure."""

    def __init__(self, bootstrap_servers: str, *, default_api_timeout_ms: int = 60_000,
                 request_timeout_ms: int = 30_000, retry_backoff_ms: int = 100,
                 client_id: str = "zkcontroller-admin") -> None:
        self.bootstrap = parse_bootstrap(bootstrap_servers)
        self.default_api_timeout_ms = default_api_timeout_ms
        self.request_timeout_ms = request_timeout_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.client_id = client_id
        self._connections: dict[tuple[str, int], _Connection] = {}
        self._metadata: ClusterMetadata | None = None

    async def __aenter__(self) -> AdminClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        for conn in self._connections.values():
            conn.close()
        self._connections.clear()

    # ------------------------------------------------------------------ plumbing

    async def _connection(self, address: tuple[str, int], call: _Call) -> _Connection:
        conn = self._connections.get(address)
        if conn is not None:
            return conn
        timeout = min(self.request_timeout_ms / 1000, max(call.deadline - time.monotonic(), 0.001))
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(*address)
            conn = _Connection(reader, writer, self.client_id)
            try:
                conn.versions = await self._api_versions(conn)
            except BaseException:
                conn.close()
                raise
        self._connections[address] = conn
        return conn

    async def _api_versions(self, conn: _Connection) -> dict[int, tuple[int, int]]:
        """ApiVersions v3, or v0 when the broker answers UNSUPPORTED_VERSION (as Kafka's NetworkClient)."""
        for version in (3, 0):
            m = schema_module(API_VERSIONS, version, "request")
            body = build(m.ApiVersionsRequest, client_software_name=CLIENT_SOFTWARE_NAME,
                         client_software_version="0.1.0")
            payload, offset = await conn.exchange(API_VERSIONS, version, _write(body))
            response = _decode(API_VERSIONS, version, payload, offset)
            if int(response.error_code) == UNSUPPORTED_VERSION and version > 0:
                continue
            check(int(response.error_code))
            return {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in response.api_keys}
        raise AdminClientError("ApiVersions failed")

    def _drop(self, address: tuple[str, int]) -> None:
        conn = self._connections.pop(address, None)
        if conn is not None:
            conn.close()

    def _version(self, conn: _Connection, api_key: int, call: _Call) -> int:
        ours = CLIENT_VERSIONS[api_key]
        theirs = conn.versions.get(api_key)
        if theirs is None or theirs[1] < ours[0] or theirs[0] > ours[1]:
            raise KafkaApiError(UNSUPPORTED_VERSION, f"The broker does not support {call.name.upper()}")
        return min(ours[1], theirs[1])

    def _addresses(self, target: str | int) -> list[tuple[str, int]]:
        md = self._metadata
        if target == "controller":
            if md is None:
                return []
            target = md.controller_id
        if isinstance(target, int):
            node = None if md is None else next((b for b in md.brokers if b.id == target), None)
            return [] if node is None else [(node.host, node.port)]
        known = [] if md is None else [(b.host, b.port) for b in md.brokers]
        return [*[a for a in self._connections if a in known or a in self.bootstrap], *known, *self.bootstrap]

    async def _call(self, name: str, api_key: int, target: str | int,
                    make: Callable[[int], bytes], parse: Callable[[int, bytes, int], T]) -> T:
        """One call: pick a node (``"any"``, ``"controller"`` or a broker id), send, parse; retry on a lost
        connection or `RetriableCallError` (after a metadata refresh) until the call's deadline."""
        call = _Call(name, time.monotonic() + self.default_api_timeout_ms / 1000)
        while True:
            no_controller = target == "controller" and (self._metadata is None or self._metadata.controller_id < 0)
            unknown_broker = isinstance(target, int) and not self._addresses(target)  # not (yet) in the metadata
            if no_controller or unknown_broker:
                self._metadata = await self._refresh(call)
            for address in dict.fromkeys(self._addresses(target)):
                if time.monotonic() >= call.deadline:
                    break
                try:
                    conn = await self._connection(address, call)
                    call.tries += 1
                    version = self._version(conn, api_key, call)
                    remaining = max(call.deadline - time.monotonic(), 0.001)
                    async with asyncio.timeout(min(self.request_timeout_ms / 1000, remaining)):
                        payload, offset = await conn.exchange(api_key, version, make(version))
                    return parse(version, payload, offset)
                except RetriableCallError as e:
                    call.last_error = e
                    self._metadata = None
                    break
                except (OSError, TimeoutError, asyncio.IncompleteReadError, WireFormatError) as e:
                    call.last_error = e
                    self._drop(address)
                    if target != "any":
                        self._metadata = None
            self._raise_if_past(call)
            await asyncio.sleep(min(self.retry_backoff_ms / 1000, max(call.deadline - time.monotonic(), 0)))
            self._raise_if_past(call)

    def _raise_if_past(self, call: _Call) -> None:
        if time.monotonic() < call.deadline:
            return
        if not call.tries:  # no node was ever ready to take the call
            raise AdminTimeoutError(f"Timed out waiting for a node assignment. Call: {call.name}")
        if isinstance(call.last_error, RetriableCallError):
            raise KafkaApiError(NOT_CONTROLLER, None)
        raise AdminTimeoutError(f"Call(callName={call.name}) timed out after {call.tries} attempt(s)")

    # ------------------------------------------------------------------ metadata

    async def _refresh(self, call: _Call) -> ClusterMetadata:
        """Brokers and controller from any reachable node; waits (bounded by ``call``) for a controller."""
        while True:
            for address in dict.fromkeys(self._addresses("any")):
                if time.monotonic() >= call.deadline:
                    break
                try:
                    conn = await self._connection(address, call)
                    md = await self._metadata_from(conn, None, call)
                except (OSError, TimeoutError, asyncio.IncompleteReadError, WireFormatError) as e:
                    call.last_error = e
                    self._drop(address)
                    continue
                if md.controller_id >= 0:
                    return md
            self._raise_if_past(call)
            await asyncio.sleep(min(self.retry_backoff_ms / 1000, max(call.deadline - time.monotonic(), 0)))
            self._raise_if_past(call)

    async def _metadata_from(self, conn: _Connection, topics: Sequence[str] | None, call: _Call) -> ClusterMetadata:
        version = self._version(conn, METADATA, call)
        remaining = max(call.deadline - time.monotonic(), 0.001)
        async with asyncio.timeout(min(self.request_timeout_ms / 1000, remaining)):
            payload, offset = await conn.exchange(METADATA, version, self._metadata_request(version, topics))
        return self._parse_metadata(version, payload, offset)

    @staticmethod
    def _metadata_request(version: int, topics: Sequence[str] | None) -> bytes:
        m = schema_module(METADATA, version, "request")
        wanted = None if topics is None else tuple(build(m.MetadataRequestTopic, name=t, topic_id=None)
                                                   for t in topics)
        return _write(build(m.MetadataRequest, topics=wanted, allow_auto_topic_creation=False,
                            include_cluster_authorized_operations=False,
                            include_topic_authorized_operations=False))

    @staticmethod
    def _parse_metadata(version: int, payload: bytes, offset: int) -> ClusterMetadata:
        r = _decode(METADATA, version, payload, offset)
        brokers = tuple(Node(int(b.node_id), str(b.host), int(b.port), b.rack) for b in r.brokers)
        topics = tuple(
            TopicInfo(str(t.name), _topic_id(getattr(t, "topic_id", None)), bool(t.is_internal), tuple(
                PartitionInfo(int(p.partition_index), int(p.leader_id), tuple(int(x) for x in p.replica_nodes),
                              tuple(int(x) for x in p.isr_nodes), int(p.error_code))
                for p in t.partitions), int(t.error_code))
            for t in r.topics)
        return ClusterMetadata(brokers, int(r.controller_id), topics)

    async def metadata(self, topics: Sequence[str] | None = None, name: str = "listTopics") -> ClusterMetadata:
        """Metadata for ``topics`` (all topics when None) from any reachable broker."""
        def make(version: int) -> bytes:
            return self._metadata_request(version, topics)
        md = await self._call(name, METADATA, "any", make, self._parse_metadata)
        self._metadata = ClusterMetadata(md.brokers, md.controller_id)
        return md

    async def list_topics(self, *, include_internal: bool = True) -> list[str]:
        md = await self.metadata(None, "listTopics")
        return sorted(t.name for t in md.topics if t.error == 0 and (include_internal or not t.internal))

    async def describe_topics(self, topics: Sequence[str]) -> list[TopicInfo]:
        """Kafka's describeTopics: an unknown topic is UNKNOWN_TOPIC_OR_PARTITION's error."""
        md = await self.metadata(list(topics), "describeTopics")
        by_name = {t.name: t for t in md.topics}
        out = []
        for name in topics:
            info = by_name.get(name)
            if info is None:
                raise KafkaApiError(3, None)
            check(info.error)
            out.append(info)
        return out

    async def live_brokers(self) -> list[Node]:
        """The brokers of a Metadata request with no topics (what the tools' ``describeCluster().nodes()`` see)."""
        return list((await self.metadata((), "describeCluster")).brokers)

    async def describe_cluster(self) -> ClusterDescription:
        """Kafka 2.8.2's ``describeCluster`` (call ``listNodes``): DescribeCluster v0 (KIP-700) to any node, or,
        when that node does not serve it, a Metadata request with no topics, as the Java client falls back."""
        def make(version: int) -> bytes:
            m = schema_module(DESCRIBE_CLUSTER, version, "request")
            return _write(build(m.DescribeClusterRequest, include_cluster_authorized_operations=False))

        def parse(version: int, payload: bytes, offset: int) -> ClusterDescription:
            r = _decode(DESCRIBE_CLUSTER, version, payload, offset)
            check(int(r.error_code), r.error_message)
            return ClusterDescription(tuple(Node(int(b.broker_id), str(b.host), int(b.port), b.rack)
                                            for b in r.brokers), int(r.controller_id), str(r.cluster_id))

        try:
            return await self._call("listNodes", DESCRIBE_CLUSTER, "any", make, parse)
        except KafkaApiError as e:
            if e.code != UNSUPPORTED_VERSION:
                raise

        def make_metadata(version: int) -> bytes:
            return self._metadata_request(version, ())

        def parse_metadata(version: int, payload: bytes, offset: int) -> ClusterDescription:
            r = _decode(METADATA, version, payload, offset)
            return ClusterDescription(tuple(Node(int(b.node_id), str(b.host), int(b.port), b.rack)
                                            for b in r.brokers), int(r.controller_id),
                                      getattr(r, "cluster_id", None))

        return await self._call("listNodes", METADATA, "any", make_metadata, parse_metadata)

    # ------------------------------------------------------------------ topics

    def _timeout(self) -> timedelta:
        return timedelta(milliseconds=self.request_timeout_ms)

    async def create_topic(self, name: str, partitions: int | None, replication_factor: int | None,
                           assignment: Mapping[int, Sequence[int]] | None = None,
                           configs: Mapping[str, str] | None = None) -> None:
        """CreateTopics for one topic (-1 partitions or factor: the broker's defaults, as NewTopic's empties)."""
        def make(version: int) -> bytes:
            m = schema_module(CREATE_TOPICS, version, "request")
            topic = build(m.CreatableTopic, name=name, num_partitions=-1 if partitions is None else partitions,
                          replication_factor=-1 if replication_factor is None else replication_factor,
                          assignments=tuple(build(m.CreatableReplicaAssignment, partition_index=p,
                                                  broker_ids=tuple(r))
                                            for p, r in (assignment or {}).items()),
                          configs=tuple(build(m.CreatableTopicConfig, name=k, value=v)
                                        for k, v in (configs or {}).items()))
            return _write(build(m.CreateTopicsRequest, topics=(topic,), timeout=self._timeout(),
                                validate_only=False))

        def parse(version: int, payload: bytes, offset: int) -> None:
            for t in _decode(CREATE_TOPICS, version, payload, offset).topics:
                code = int(t.error_code)
                if code == NOT_CONTROLLER:
                    raise RetriableCallError
                check(code, t.error_message)

        await self._call("createTopics", CREATE_TOPICS, "controller", make, parse)

    async def delete_topics(self, names: Iterable[str]) -> None:
        """DeleteTopics; the first topic's error raises (Kafka's ``all().get()``)."""
        wanted = tuple(names)

        def make(version: int) -> bytes:
            m = schema_module(DELETE_TOPICS, version, "request")
            if version >= 6:
                return _write(m.DeleteTopicsRequest(
                    topics=tuple(m.DeleteTopicState(name=n, topic_id=None) for n in wanted),
                    timeout=self._timeout()))
            return _write(build(m.DeleteTopicsRequest, topic_names=wanted, timeout=self._timeout()))

        def parse(version: int, payload: bytes, offset: int) -> None:
            results = _decode(DELETE_TOPICS, version, payload, offset).responses
            if any(int(t.error_code) == NOT_CONTROLLER for t in results):
                raise RetriableCallError
            for t in results:
                check(int(t.error_code), getattr(t, "error_message", None))

        await self._call("deleteTopics", DELETE_TOPICS, "controller", make, parse)

    async def create_partitions(self, counts: Mapping[str, tuple[int, Sequence[Sequence[int]] | None]]) -> None:
        """CreatePartitions: topic -> (new total, assignment of the new partitions or None)."""
        def make(version: int) -> bytes:
            m = schema_module(CREATE_PARTITIONS, version, "request")
            topics = tuple(m.CreatePartitionsTopic(
                name=name, count=count,
                assignments=None if new is None else tuple(m.CreatePartitionsAssignment(broker_ids=tuple(r))
                                                           for r in new))
                for name, (count, new) in counts.items())
            return _write(m.CreatePartitionsRequest(topics=topics, timeout=self._timeout(), validate_only=False))

        def parse(version: int, payload: bytes, offset: int) -> None:
            results = _decode(CREATE_PARTITIONS, version, payload, offset).results
            if any(int(t.error_code) == NOT_CONTROLLER for t in results):
                raise RetriableCallError
            for t in results:
                check(int(t.error_code), t.error_message)

        await self._call("createPartitions", CREATE_PARTITIONS, "controller", make, parse)

    async def elect_leaders(self, election_type: int, partitions: Iterable[tuple[str, int]] | None
                            ) -> dict[tuple[str, int], tuple[int, str | None]]:
        """ElectLeaders (0: preferred, 1: unclean) for ``partitions`` (None: every partition); each partition's
        error code (0: elected) and message. A top-level error fails the call."""
        wanted = None if partitions is None else sorted(set(partitions))

        def make(version: int) -> bytes:
            if version == 0 and election_type != 0:  # as Kafka's ElectLeadersRequest.Builder
                raise KafkaApiError(UNSUPPORTED_VERSION, "Attempted to write a non-default electionType at version 0")
            m = schema_module(ELECT_LEADERS, version, "request")
            topics = None if wanted is None else tuple(
                m.TopicPartitions(topic=t, partitions=tuple(p for _, p in group))
                for t, group in itertools.groupby(wanted, key=lambda tp: tp[0]))
            return _write(build(m.ElectLeadersRequest, election_type=election_type, topic_partitions=topics,
                                timeout=self._timeout()))

        def parse(version: int, payload: bytes, offset: int) -> dict[tuple[str, int], tuple[int, str | None]]:
            r = _decode(ELECT_LEADERS, version, payload, offset)
            top = int(getattr(r, "error_code", 0))
            results = {(str(t.topic), int(p.partition_id)): (int(p.error_code), p.error_message)
                       for t in r.replica_election_results for p in t.partition_result}
            if top == NOT_CONTROLLER or any(code == NOT_CONTROLLER for code, _ in results.values()):
                raise RetriableCallError
            check(top)
            return results

        return await self._call("electLeaders", ELECT_LEADERS, "controller", make, parse)

    async def alter_reassignments(self, targets: Mapping[tuple[str, int], Sequence[int] | None]
                                  ) -> dict[tuple[str, int], tuple[int, str | None]]:
        """AlterPartitionReassignments: each partition to its target replicas (None: cancel); each partition's
        error code and message. A top-level error fails the call."""
        wanted = sorted(targets.items())

        def make(version: int) -> bytes:
            m = schema_module(ALTER_PARTITION_REASSIGNMENTS, version, "request")
            topics = tuple(
                m.ReassignableTopic(name=t, partitions=tuple(
                    m.ReassignablePartition(partition_index=p, replicas=None if r is None else tuple(r))
                    for (_, p), r in group))
                for t, group in itertools.groupby(wanted, key=lambda item: item[0][0]))
            return _write(m.AlterPartitionReassignmentsRequest(timeout=self._timeout(), topics=topics))

        def parse(version: int, payload: bytes, offset: int) -> dict[tuple[str, int], tuple[int, str | None]]:
            r = _decode(ALTER_PARTITION_REASSIGNMENTS, version, payload, offset)
            if int(r.error_code) == NOT_CONTROLLER:
                raise RetriableCallError
            check(int(r.error_code), r.error_message)
            return {(str(t.name), int(p.partition_index)): (int(p.error_code), p.error_message)
                    for t in r.responses for p in t.partitions}

        return await self._call("alterPartitionReassignments", ALTER_PARTITION_REASSIGNMENTS, "controller",
                                make, parse)

    async def incremental_alter_configs(self, resources: Sequence[ac.AlterResource]) -> None:
        """IncrementalAlterConfigs, routed as Kafka's client routes it (`_route`); the first error raises."""
        routes: dict[str | int, list[ac.AlterResource]] = {}
        for r in resources:
            routes.setdefault(self._route(r.resource_type, r.resource_name), []).append(r)
        await self._ensure_metadata(routes)

        def parse(version: int, payload: bytes, offset: int) -> None:
            for r in ac.decode_response(ac.INCREMENTAL_ALTER_CONFIGS, version, payload, offset):
                check(r.error, r.message)

        for target, group in routes.items():
            query = ac.AlterConfigsQuery(group, incremental=True)

            def make(version: int, query: ac.AlterConfigsQuery = query) -> bytes:
                return ac.encode_request(ac.INCREMENTAL_ALTER_CONFIGS, version, query)

            await self._call("incrementalAlterConfigs", ac.INCREMENTAL_ALTER_CONFIGS, target, make, parse)

    async def list_reassignments(self, partitions: Iterable[tuple[str, int]] | None = None
                                 ) -> dict[tuple[str, int], Reassignment]:
        """ListPartitionReassignments (to the controller, as Kafka): ongoing ones among ``partitions``."""
        wanted = None if partitions is None else sorted(set(partitions))

        def make(version: int) -> bytes:
            m = schema_module(LIST_PARTITION_REASSIGNMENTS, version, "request")
            topics = None if wanted is None else tuple(
                m.ListPartitionReassignmentsTopics(name=t, partition_indexes=tuple(p for _, p in group))
                for t, group in itertools.groupby(wanted, key=lambda tp: tp[0]))
            return _write(m.ListPartitionReassignmentsRequest(timeout=self._timeout(), topics=topics))

        def parse(version: int, payload: bytes, offset: int) -> dict[tuple[str, int], Reassignment]:
            r = _decode(LIST_PARTITION_REASSIGNMENTS, version, payload, offset)
            if int(r.error_code) == NOT_CONTROLLER:
                raise RetriableCallError
            check(int(r.error_code), r.error_message)
            return {(str(t.name), int(p.partition_index)): Reassignment(
                        tuple(int(x) for x in p.replicas), tuple(int(x) for x in p.adding_replicas),
                        tuple(int(x) for x in p.removing_replicas))
                    for t in r.topics for p in t.partitions}

        return await self._call("listPartitionReassignments", LIST_PARTITION_REASSIGNMENTS, "controller",
                                make, parse)

    def _route(self, resource_type: int, name: str) -> str | int:
        """Kafka's client: a broker's config resource to that broker, the others to any node."""
        return int(name) if resource_type == BROKER_RESOURCE and name.isdigit() else "any"

    async def _ensure_metadata(self, targets: Iterable[str | int]) -> None:
        if any(isinstance(t, int) for t in targets) and self._metadata is None:
            await self.metadata((), "describeCluster")

    async def describe_configs(self, resources: Sequence[tuple[int, str]], *, include_synonyms: bool = False
                               ) -> dict[tuple[int, str], list[dc.ConfigEntry]]:
        """DescribeConfigs of (resource type, name) pairs (2: topic, 4: broker): every config of each resource."""
        routes: dict[str | int, list[tuple[int, str]]] = {}
        for t, n in resources:
            routes.setdefault(self._route(t, n), []).append((t, n))
        await self._ensure_metadata(routes)

        def parse(version: int, payload: bytes, offset: int) -> dict[tuple[int, str], list[dc.ConfigEntry]]:
            out = {}
            for r in dc.decode_response(version, payload, offset):
                check(r.error, r.message)
                out[(r.resource_type, r.resource_name)] = list(r.configs)
            return out

        found: dict[tuple[int, str], list[dc.ConfigEntry]] = {}
        for target, group in routes.items():
            query = dc.DescribeConfigsQuery([dc.ConfigResourceQuery(t, n) for t, n in group], include_synonyms)

            def make(version: int, query: dc.DescribeConfigsQuery = query) -> bytes:
                return dc.encode_request(version, query)

            found.update(await self._call("describeConfigs", dc.DESCRIBE_CONFIGS, target, make, parse))
        return found

    async def alter_configs(self, resource_type: int, name: str, configs: Mapping[str, str | None]) -> None:
        """AlterConfigs (the whole set of dynamic configs of one resource, as Kafka's deprecated alterConfigs)."""
        target = self._route(resource_type, name)
        await self._ensure_metadata([target])
        query = ac.AlterConfigsQuery([ac.AlterResource(resource_type, name, tuple(
            ac.ConfigChange(k, v) for k, v in configs.items()))])

        def parse(version: int, payload: bytes, offset: int) -> None:
            for r in ac.decode_response(ac.ALTER_CONFIGS, version, payload, offset):
                check(r.error, r.message)

        await self._call("alterConfigs", ac.ALTER_CONFIGS, target,
                         lambda version: ac.encode_request(ac.ALTER_CONFIGS, version, query), parse)

    async def describe_client_quotas(self, components: Sequence[cq.FilterComponent], *, strict: bool
                                     ) -> dict[cq.QuotaEntity, tuple[tuple[str, float], ...]]:
        """DescribeClientQuotas to any node (Kafka's LeastLoadedNodeProvider): each matching entity's quotas, in
        the broker's order; a request-level error raises."""
        query = cq.DescribeQuotasQuery(tuple(components), strict)

        def parse(version: int, payload: bytes, offset: int) -> dict[cq.QuotaEntity, tuple[tuple[str, float], ...]]:
            try:
                described = cq.decode_describe_response(version, payload, offset)
            except ValueError as e:
                raise WireFormatError(f"DescribeClientQuotasResponse v{version}: {e}") from None
            check(described.error, described.message)
            return dict(described.entries or ())

        return await self._call("describeClientQuotas", cq.DESCRIBE_CLIENT_QUOTAS, "any",
                                lambda version: cq.encode_describe_request(version, query), parse)

    async def alter_client_quotas(self, alterations: Sequence[cq.QuotaAlteration]) -> None:
        """AlterClientQuotas to any node; the first entity's error raises (Kafka's ``all().get()``)."""
        query = cq.AlterQuotasQuery(tuple(alterations), validate_only=False)

        def parse(version: int, payload: bytes, offset: int) -> None:
            try:
                altered = cq.decode_alter_response(version, payload, offset)
            except ValueError as e:
                raise WireFormatError(f"AlterClientQuotasResponse v{version}: {e}") from None
            for a in altered:
                check(a.error, a.message)

        await self._call("alterClientQuotas", cq.ALTER_CLIENT_QUOTAS, "any",
                         lambda version: cq.encode_alter_request(version, query), parse)
