"""KafkaApis: one broker's dispatch of requests off the wire (Kafka's ``KafkaApis`` and ``RequestChannel``).

A frame's header says which API and version; ApiVersions, Metadata and DescribeCluster are answered from
the metadata cache through `kio`; LeaderAndIsr, UpdateMetadata and StopReplica (to the control plane, which
fences by controller and broker epoch, spec §8) and ControlledShutdown and AlterIsr (to this broker's
controller candidate) are decoded with our 2.8 table and handed to the broker's request handler, the one
`KafkaServer` registers; so is a follower's Fetch, answered from the replica manager's offsets-only logs.

Bad input follows Kafka: an ApiVersions request of a version we do not know gets UNSUPPORTED_VERSION in the
v0 layout with our API list; an unknown API key, an unsupported version of any other API, or a malformed
header or body closes the connection (`CloseConnection`), never the broker.

ListOffsets is answered from the replica manager's logs (`list_offsets`), Produce by appending to them
(`produce`: offsets only, with acks, idempotent producers and the produce quota), InitProducerId from a block of
producer ids allocated in ZooKeeper (`producer_ids`, injected). FindCoordinator is always refused (no group or
transaction coordinator here: `_find_coordinator` says why). DeleteTopics, like CreateTopics, needs
the admin layer and is a callable the process assembly injects; it waits on this broker's metadata cache
(`delayed_delete_topics`). So are CreatePartitions (admin layer), ElectLeaders and Alter/ListPartitionReassignments
(this broker's controller), and DescribeClientQuotas/AlterClientQuotas (ZooKeeper): `AdminHandlers`.
DescribeConfigs reads ZooKeeper: also injected (`describe_configs`); AlterConfigs and IncrementalAlterConfigs
write it: one injected handler for both (`alter_configs`). An API whose handler is not injected is not
advertised (`_optional_apis`).

Metadata auto-creates the topics it names that do not exist, when the request allows it and the broker's
``auto.create.topics.enable`` is on (Kafka's ``AutoTopicCreationManager``): the creation itself (replica placement
and ZooKeeper writes, the admin layer's) is the `TopicAutoCreator` the process assembly injects.

Metadata responses for all topics are cached, encoded, per (version, listener) until the cache's snapshot
changes: a metadata storm costs one encode per version per update, not one per request.
"""

from __future__ import annotations

import inspect
import logging
import struct
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard

from zkcontroller.broker import delayed_fetch
from zkcontroller.broker.client_quota_manager import (
    ANONYMOUS,
    ClientQuotaManager,
    ClientRequestQuotaManager,
    current_request,
    mark_local_complete,
    start_request,
)
from zkcontroller.broker.controller_mutation_quota import ControllerMutationQuota, ControllerMutationQuotaManager
from zkcontroller.broker.delayed_produce import PurgatoryShutDown
from zkcontroller.broker.feature_cache import SUPPORTED_FEATURES
from zkcontroller.broker.list_offsets import legacy_list_offsets, list_offsets
from zkcontroller.broker.metadata_cache import MetadataCache, MetadataSnapshot, TopicMetadata, is_valid_topic_name
from zkcontroller.broker.produce import (
    ProducePartition,
    failed_request_answers,
    produce,
    request_text,
)
from zkcontroller.broker.producer_ids import UNKNOWN_SERVER_ERROR, ProducerIdManager, error_result, init_producer_id
from zkcontroller.protocol.control_requests import ApiKey, ControlResponse, Errors
from zkcontroller.protocol.error_names import error_name
from zkcontroller.protocol.inter_broker import AlterIsrResponse, ControlledShutdownResponse, FetchRequest, FetchResponse
from zkcontroller.protocol.wire import alter_configs as alter_configs_wire
from zkcontroller.protocol.wire import client_apis, control_codec
from zkcontroller.protocol.wire import client_quotas as client_quotas_wire
from zkcontroller.protocol.wire import describe_configs as describe_configs_wire
from zkcontroller.protocol.wire.client_apis import (
    ALTER_PARTITION_REASSIGNMENTS,
    API_VERSIONS,
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    DESCRIBE_CLUSTER,
    ELECT_LEADERS,
    FIND_COORDINATOR,
    LIST_OFFSETS,
    LIST_PARTITION_REASSIGNMENTS,
    METADATA,
    UNSUPPORTED_VERSION,
    OngoingReassignment,
    PartitionError,
    PartitionsCreated,
    PartitionsToCreate,
    TopicCreated,
    TopicDeleted,
    TopicToCreate,
    TopicToDelete,
)
from zkcontroller.protocol.wire.codec import WireFormatError
from zkcontroller.protocol.wire.data_strings import api_name, request_string
from zkcontroller.protocol.wire.frames import RequestHeader, decode_request_header, encode_response_header
from zkcontroller.protocol.wire.messages import INTER_BROKER_APIS
from zkcontroller.protocol.wire.record_sets import RequestFailed
from zkcontroller.runtime.log_lines import exception_line
from zkcontroller.runtime.socket_server import ThrottledResponse

if TYPE_CHECKING:
    from zkcontroller.broker.replica_manager import ReplicaManager

log = logging.getLogger("kafka.server.KafkaApis")
request_helper_log = logging.getLogger("kafka.server.RequestHandlerHelper")
groups_log = logging.getLogger("zkcontroller.broker.KafkaApis")
"""Our own line (no Kafka counterpart): a client asking for a coordinator, which this broker cannot give."""
MAX_WARNED_CLIENTS = 1000
"""Clients (id, key type, key) told about the missing coordinator are remembered up to this many (then each is told
again)."""
NO_GROUPS_MESSAGE = ("Consumer groups and transactions are not implemented by this broker (zkcontroller): no "
                     "coordinator. Consume a partition without a group (kcat -C -t TOPIC -p PARTITION -o end); it "
                     "keeps offsets, not records (kcat -Q -t TOPIC:PARTITION:-1).")
"""Where Kafka's ``handleError`` logs a request that failed as a whole (with KafkaApis' ``[KafkaApi-<id>] ``)."""

CONTROL_APIS = (ApiKey.LEADER_AND_ISR, ApiKey.STOP_REPLICA, ApiKey.UPDATE_METADATA, ApiKey.CONTROLLED_SHUTDOWN,
                ApiKey.ALTER_ISR, ApiKey.FETCH)
RESPONSE_TYPES = (ControlResponse, ControlledShutdownResponse, AlterIsrResponse, FetchResponse)
FETCH_WAIT_FIELDS = struct.Struct(">ii")
"""Fetch's ``MaxWaitMs`` and ``MinBytes``, right after ``ReplicaId`` in every version (fixed-width, flexible or not)."""


class CreateTopicsHandler(Protocol):
    """(topics, validate_only, timeout in ms) -> one result per topic entry, in order. ``quota``: passed (by
    keyword) once the broker keeps controller mutation quotas (`controller_mutation_quota`), for the partitions
    created; absent, the handler counts nothing (``UNBOUNDED``). So for the next two."""

    def __call__(self, topics: list[TopicToCreate], validate_only: bool, timeout_ms: int, /, *,
                 quota: ControllerMutationQuota = ...) -> Awaitable[list[TopicCreated]]: ...


class DeleteTopicsHandler(Protocol):
    """(topics, timeout in ms, request version) -> one result per topic entry, in order; ``quota`` for the
    partitions of the topics deleted."""

    def __call__(self, topics: list[TopicToDelete], timeout_ms: int, version: int, /, *,
                 quota: ControllerMutationQuota = ...) -> Awaitable[list[TopicDeleted]]: ...


class CreatePartitionsHandler(Protocol):
    """(topics, timeout in ms, validate_only) -> one result per distinct topic; ``quota`` for the partitions
    added."""

    def __call__(self, topics: list[PartitionsToCreate], timeout_ms: int, validate_only: bool, /, *,
                 quota: ControllerMutationQuota = ...) -> Awaitable[list[PartitionsCreated]]: ...


ElectLeadersHandler = Callable[[int, list[tuple[str, int]] | None, int], Awaitable[list[PartitionError]]]
"""(election type, partitions or None for all, timeout in ms) -> one result per partition."""
AlterReassignmentsHandler = Callable[[dict[tuple[str, int], list[int] | None]],
                                     Awaitable[list[PartitionError] | PartitionError]]
"""Targets per partition (None cancels) -> one result per partition, or a top-level error (topic and partition
unused)."""
ListReassignmentsHandler = Callable[[list[tuple[str, int]] | None],
                                    Awaitable[list[OngoingReassignment] | PartitionError]]
"""Partitions or None for all -> those being reassigned, or a top-level error."""
DescribeConfigsHandler = Callable[[describe_configs_wire.DescribeConfigsQuery],
                                  Awaitable[list[describe_configs_wire.ConfigResourceResult]]]
"""A DescribeConfigs request -> one result per resource, in order (`cluster.admin_apis.describe_configs`)."""
AlterConfigsHandler = Callable[[alter_configs_wire.AlterConfigsQuery], Awaitable[list[alter_configs_wire.AlterResult]]]
"""An AlterConfigs or IncrementalAlterConfigs request -> one result per distinct resource
(`cluster.admin_apis.alter_configs`)."""
DescribeClientQuotasHandler = Callable[[client_quotas_wire.DescribeQuotasQuery],
                                       Awaitable[client_quotas_wire.DescribedQuotas]]
"""A DescribeClientQuotas request -> its answer (`admin.client_quota_admin`)."""
AlterClientQuotasHandler = Callable[[client_quotas_wire.AlterQuotasQuery],
                                    Awaitable[list[client_quotas_wire.AlteredQuota]]]
"""An AlterClientQuotas request -> one result per distinct entity (`admin.client_quota_admin`)."""


@dataclass(frozen=True)
class AdminHandlers:
    """The admin APIs that need the controller or the admin layer, both above brokers: the process assembly
    provides them (`cluster.listener`); an absent one is not served (nor advertised)."""

    create_partitions: CreatePartitionsHandler | None = None
    elect_leaders: ElectLeadersHandler | None = None
    alter_reassignments: AlterReassignmentsHandler | None = None
    list_reassignments: ListReassignmentsHandler | None = None
    describe_client_quotas: DescribeClientQuotasHandler | None = None
    alter_client_quotas: AlterClientQuotasHandler | None = None


class CorrelatedControlHandler(Protocol):
    """A control handler that also takes the wire header's correlation id (the broker's ``handle_request``), which
    Kafka's state-change lines name."""

    def __call__(self, request: Any, correlation_id: int = ..., /) -> Any: ...


ControlHandler = Callable[[Any], Any] | CorrelatedControlHandler
"""What handles the requests KafkaApis passes on (control requests, ControlledShutdown, AlterIsr, Fetch): the
request alone, or with the correlation id (`_takes_correlation_id` tells which)."""


class TopicAutoCreator(Protocol):
    """Creates the topics a Metadata request names (``AutoTopicCreationManager.createTopicsInZk``); provided by
    the process assembly, as creation needs the admin layer."""

    def enabled(self) -> bool:
        """``auto.create.topics.enable`` of the broker now running."""
        ...

    async def create(self, topics: list[str]) -> dict[str, int]:
        """Create valid, unknown ``topics`` with the broker's defaults; the Metadata error code for each:
        LEADER_NOT_AVAILABLE when created or already there, else why not (INVALID_REPLICATION_FACTOR...). With
        controller mutation quotas kept, a ``quota`` keyword too (permissive) for the partitions created."""
        ...


class CloseConnection(Exception):
    """The request cannot be answered (Kafka's InvalidRequestException): drop this client's connection."""

    log_level = logging.WARNING
    """How loudly the socket server reports the close."""


class NotReadyYet(CloseConnection):
    """A control request before the broker has registered: the controller retries every back-off until it has
    (a restarted broker waits out its old registration), so each close is routine, not worth a warning. Kafka's
    broker accepts no connection before then."""

    log_level = logging.DEBUG


class KafkaApis:
    """Answers one broker's requests. ``control_handler`` and ``metadata_cache`` are looked up per request
    (they exist only once the broker has registered); before that, control requests close the connection
    and Metadata answers with what an empty cache knows."""

    def __init__(self, broker_id: int, *, control_handler: Callable[[], ControlHandler | None],
                 metadata_cache: Callable[[], MetadataCache | None], cluster_id: Callable[[], str | None],
                 listener_name: str = "PLAINTEXT", create_topics: CreateTopicsHandler | None = None,
                 auto_create_topics: TopicAutoCreator | None = None,
                 delete_topics: DeleteTopicsHandler | None = None, admin: AdminHandlers = AdminHandlers(),
                 replica_manager: Callable[[], ReplicaManager | None] = lambda: None,
                 producer_ids: ProducerIdManager | None = None,
                 describe_configs: DescribeConfigsHandler | None = None,
                 alter_configs: AlterConfigsHandler | None = None,
                 produce_quotas: Callable[[], ClientQuotaManager | None] = lambda: None,
                 controller_mutation_quotas: Callable[[], ControllerMutationQuotaManager | None] = lambda: None,
                 request_quotas: Callable[[], ClientRequestQuotaManager | None] = lambda: None) -> None:
        self.broker_id = broker_id
        self._control_handler = control_handler
        self._metadata_cache = metadata_cache
        self._cluster_id = cluster_id
        self.listener_name = listener_name
        self.create_topics = create_topics
        """CreateTopics needs the admin layer, above brokers: the process assembly provides it (or not)."""
        self.auto_create_topics = auto_create_topics
        self.delete_topics = delete_topics
        """DeleteTopics marks topics through the admin layer: provided by the process assembly (or not)."""
        self.admin = admin
        self._replica_manager = replica_manager
        self.producer_ids = producer_ids
        """InitProducerId's id blocks, claimed in ZooKeeper: provided by the process assembly (or not)."""
        self.describe_configs = describe_configs
        """DescribeConfigs reads topic configs from ZooKeeper: provided by the process assembly (or not)."""
        self.alter_configs = alter_configs
        """(Incremental)AlterConfigs write config nodes in ZooKeeper: provided by the process assembly (or not)."""
        self.produce_quotas = produce_quotas
        """The broker's produce quotas (`client_quota_manager`), looked up per Produce; None: no throttling."""
        self.controller_mutation_quotas = controller_mutation_quotas
        """Its ``controller_mutation_rate`` quotas (`controller_mutation_quota`), for CreateTopics, CreatePartitions
        and DeleteTopics: given to their handler as ``quota`` (not given when None: nothing is counted)."""
        self.request_quotas = request_quotas
        """Its ``request_percentage`` quotas (`client_quota_manager.ClientRequestQuotaManager`); None: none."""
        self._topics_being_created: set[str] = set()
        """Kafka's ``inflightTopics``: another Metadata naming one of them meanwhile gets UNKNOWN_TOPIC_OR_PARTITION."""
        self._metadata_cache_key: tuple[MetadataSnapshot, str | None] | None = None
        self._encoded_metadata: dict[tuple[int, bool, bool], bytes] = {}
        self.requests_by_api: dict[int, int] = {}
        self._told_no_coordinator: set[tuple[str | None, int, str]] = set()
        """(client id, key type, key) warned about FindCoordinator: one WARN per client and group, not per retry."""
        self._served: tuple[bool, ...] = ()
        self._supported: Mapping[int, tuple[int, int]] = MappingProxyType({})

    # ------------------------------------------------------------------ versions

    def supported_versions(self) -> Mapping[int, tuple[int, int]]:
        """What ApiVersions advertises: Kafka 2.8's ranges for what we serve (see `client_apis` on
        DescribeCluster) and the inter-broker APIs at every 2.8 version.

        Every request is checked against it, so it is built once per set of optional handlers present (about
        8 % of a Produce's cost when built per request: docs/benchmarks.md, Produce); read-only."""
        optional = self._optional_apis()
        served = tuple(handler is not None for handler, _ in optional)
        if served != self._served:
            versions = dict(client_apis.CLIENT_API_VERSIONS)
            versions[FIND_COORDINATOR] = client_apis.FIND_COORDINATOR_VERSIONS
            versions[LIST_OFFSETS] = client_apis.LIST_OFFSETS_VERSIONS
            versions[client_apis.PRODUCE] = client_apis.PRODUCE_VERSIONS
            for handler, apis in optional:
                if handler is not None:
                    versions.update(apis)
            for key in CONTROL_APIS:
                spec = INTER_BROKER_APIS[key]
                versions[key] = (spec.min_version, spec.max_version)
            self._served, self._supported = served, MappingProxyType(versions)
        return self._supported

    def _optional_apis(self) -> list[tuple[object | None, tuple[tuple[int, tuple[int, int]], ...]]]:
        """Each optional handler (the process assembly provides it, or not) with the APIs it serves."""
        admin = self.admin
        return [
            (self.create_topics, ((CREATE_TOPICS, client_apis.CREATE_TOPICS_VERSIONS),)),
            (self.delete_topics, ((DELETE_TOPICS, client_apis.DELETE_TOPICS_VERSIONS),)),
            (admin.create_partitions, ((CREATE_PARTITIONS, client_apis.CREATE_PARTITIONS_VERSIONS),)),
            (admin.elect_leaders, ((ELECT_LEADERS, client_apis.ELECT_LEADERS_VERSIONS),)),
            (admin.alter_reassignments,
             ((ALTER_PARTITION_REASSIGNMENTS, client_apis.ALTER_PARTITION_REASSIGNMENTS_VERSIONS),)),
            (admin.list_reassignments,
             ((LIST_PARTITION_REASSIGNMENTS, client_apis.LIST_PARTITION_REASSIGNMENTS_VERSIONS),)),
            (admin.describe_client_quotas, ((client_quotas_wire.DESCRIBE_CLIENT_QUOTAS,
                                             client_quotas_wire.DESCRIBE_CLIENT_QUOTAS_VERSIONS),)),
            (admin.alter_client_quotas, ((client_quotas_wire.ALTER_CLIENT_QUOTAS,
                                          client_quotas_wire.ALTER_CLIENT_QUOTAS_VERSIONS),)),
            (self.producer_ids, ((client_apis.INIT_PRODUCER_ID, client_apis.INIT_PRODUCER_ID_VERSIONS),)),
            (self.describe_configs,
             ((describe_configs_wire.DESCRIBE_CONFIGS, describe_configs_wire.DESCRIBE_CONFIGS_VERSIONS),)),
            (self.alter_configs, ((alter_configs_wire.ALTER_CONFIGS, alter_configs_wire.ALTER_CONFIGS_VERSIONS),
                                  (alter_configs_wire.INCREMENTAL_ALTER_CONFIGS,
                                   alter_configs_wire.INCREMENTAL_ALTER_CONFIGS_VERSIONS))),
        ]

    # ------------------------------------------------------------------ dispatch

    def _request_failed(self, header: RequestHeader, body: object, throwable: str,
                        cause: BaseException | None = None) -> None:
        """``RequestHandlerHelper.handleError``'s ERROR line (KafkaApis' log prefix) for a request that failed as a
        whole: the header's fields, ``body`` as Kafka's ``AbstractRequest.toString`` (`request_body_string`), then
        ``throwable``, the exception's first line; ``cause``'s traceback, if given, stands for Kafka's stack
        trace."""
        request_helper_log.error(
            "[KafkaApi-%d] Error when handling request: clientId=%s, correlationId=%d, api=%s, version=%d, body=%s\n%s",
            self.broker_id, "null" if header.client_id is None else header.client_id, header.correlation_id,
            api_name(header.api_key), header.api_version, request_body_string(header, body), throwable, exc_info=cause)

    def _find_coordinator(self, header: RequestHeader, request: Any) -> bytes:
        """FindCoordinator, for which there is no coordinator here (consumer groups and transactions are not
        implemented). Answered as a Kafka 2.8 broker whose authorizer denies the group (or transactional id)
        answers: GROUP_AUTHORIZATION_FAILED (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and no node, with our own
        message (v1+) saying why and what to use instead, where Kafka's is the error's text; and one WARN per client
        and group at the broker. Kafka's answer for a missing coordinator, COORDINATOR_NOT_AVAILABLE, is one
        clients retry for ever in silence (``kcat -G`` waited for a rebalance, kafka-python's consumer read
        nothing); the authorization errors end them at once, and librdkafka prints the message (kcat: ``% ERROR:
        Consumer error: FindCoordinator response error: Consumer groups ... (kcat -C -t TOPIC -p PARTITION -o
        end) ...``).
        docs/wire-protocol.md, "Not done", says why. An unknown key type is Kafka's InvalidRequestException:
        logged by ``handleError``, answered INVALID_REQUEST."""
        version = header.api_version
        key_type = getattr(request, "key_type", 0) if version >= 1 else 0
        if key_type not in (0, 1):
            self._request_failed(header, request, "org.apache.kafka.common.errors.InvalidRequestException: Unknown "
                                 f"coordinator type received: {key_type}")
            return client_apis.find_coordinator_response(version, client_apis.INVALID_REQUEST, _INVALID_REQUEST_TEXT)
        asker = (header.client_id, key_type, request.key)
        if asker not in self._told_no_coordinator:
            if len(self._told_no_coordinator) >= MAX_WARNED_CLIENTS:
                self._told_no_coordinator.clear()
            self._told_no_coordinator.add(asker)
            what = "consumer group" if key_type == 0 else "transactional id"
            groups_log.warning(
                "[KafkaApi-%d] FindCoordinator for %s '%s' from client %s: consumer groups and transactions are not "
                "implemented here, so there is no coordinator; answered %s. Consume a partition without a group "
                "instead: kcat -C -b HOST:PORT -t TOPIC -p PARTITION -o end (offsets are kept, records are not)",
                self.broker_id, what, request.key,
                header.client_id, "GROUP_AUTHORIZATION_FAILED" if key_type == 0 else
                "TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
        error = client_apis.GROUP_AUTHORIZATION_FAILED if key_type == 0 else \
            client_apis.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        return client_apis.find_coordinator_response(version, error, NO_GROUPS_MESSAGE)

    def _handler_failed(self, header: RequestHeader, body: object, e: RequestFailed) -> None:
        """`_request_failed` for an exception a handler let through (`RequestFailed`), with the request as Kafka's
        ``handleError`` names it."""
        self._request_failed(header, body, f"{e.exception}: {e}", cause=e.__cause__)

    async def handle(self, payload: bytes) -> bytes | None:
        """One request frame (without its size) in; the response frame's payload out. Raises
        `CloseConnection` when the connection should be closed instead."""
        try:
            header, offset = decode_request_header(payload)
        except WireFormatError as e:
            raise CloseConnection(f"malformed request header: {e}") from None
        self.requests_by_api[header.api_key] = self.requests_by_api.get(header.api_key, 0) + 1
        supported = self.supported_versions()
        unsupported_api_versions = header.api_key == API_VERSIONS and header.api_version > supported[API_VERSIONS][1]
        if unsupported_api_versions:  # RequestContext: handled as a v0 request, answered in v0 (no throttle field)
            header = replace(header, api_version=0)
        lo_hi = supported.get(header.api_key)
        if lo_hi is None:
            raise CloseConnection(f"unknown or unserved API key {header.api_key} from client {header.client_id}")
        if not lo_hi[0] <= header.api_version <= lo_hi[1]:
            raise CloseConnection(f"unsupported version {header.api_version} of API key {header.api_key} "
                                  f"(supported {lo_hi[0]}-{lo_hi[1]}) from client {header.client_id}")
        request_quotas = self.request_quotas()
        if request_quotas is not None and not request_quotas.quotas_enabled:
            request_quotas = None  # no client quota node was ever read here: nothing to time (Kafka records nothing)
        if request_quotas is not None:  # the handling time starts (Kafka: when a handler thread dequeues it)
            start_request(request_quotas.runtime.now_ms())
        try:
            if header.api_key == client_apis.PRODUCE:  # the one API that may send no response
                return await self._produce(header, payload, offset)
            body: bytes | None
            if unsupported_api_versions:  # getErrorResponse: the error, and ApiVersions' own versions (KIP-511)
                body = client_apis.api_versions_response(0, {API_VERSIONS: supported[API_VERSIONS]},
                                                         UNSUPPORTED_VERSION)
            else:
                body = await self._dispatch(header, payload, offset)
        except WireFormatError as e:
            raise CloseConnection(f"malformed request (api key {header.api_key} v{header.api_version}, "
                                  f"correlation id {header.correlation_id}): {e}") from None
        except PurgatoryShutDown as e:  # an acks=-1 Produce dropped: unanswered, as Kafka's closed socket server
            dropped = CloseConnection(f"{e} (correlation id {header.correlation_id})")
            dropped.log_level = logging.DEBUG
            raise dropped from None
        if body is None:
            raise NotReadyYet("the broker is not ready for control requests yet")
        if request_quotas is not None:
            body = self._request_throttled(request_quotas, header, body)
        response = encode_response_header(header.correlation_id, header.api_key, header.api_version) + body
        return ThrottledResponse(response, body.throttle) if isinstance(body, ThrottledResponse) else response

    async def _dispatch(self, header: RequestHeader, payload: bytes, offset: int) -> bytes | None:
        key, version = header.api_key, header.api_version
        if key == API_VERSIONS:
            versions_request = client_apis.decode_body(key, version, payload, offset)
            if not client_apis.valid_api_versions_request(versions_request, version):  # getErrorResponse: no API list
                return client_apis.api_versions_response(version, {}, client_apis.INVALID_REQUEST)
            return client_apis.api_versions_response(version, self.supported_versions(),
                                                     **(await self._features() if version >= 3 else {}))
        if key == METADATA:
            metadata_request = client_apis.decode_body(key, version, payload, offset)
            invalid = client_apis.invalid_metadata_request(metadata_request, version)
            if invalid is not None:  # Kafka's handleError: logged, then the request's error response
                self._request_failed(header, metadata_request,
                                     f"org.apache.kafka.common.errors.InvalidRequestException: {invalid}")
                return client_apis.metadata_error_response(version, metadata_request, client_apis.INVALID_REQUEST)
            names = client_apis.requested_topics(metadata_request, version)
            auto_created = await self._auto_create(names, header) \
                if names and getattr(metadata_request, "allow_auto_topic_creation", True) else {}
            return self._metadata(version, names, *client_apis.authorized_operations_asked(metadata_request, version),
                                  created=auto_created)
        if key == FIND_COORDINATOR:
            return self._find_coordinator(header, client_apis.decode_body(key, version, payload, offset))
        if key == DESCRIBE_CLUSTER:
            cluster_request = client_apis.decode_body(key, version, payload, offset)
            cache = self._metadata_cache()
            return client_apis.describe_cluster_response(
                version, cache.alive_brokers() if cache else [], self.listener_name, self._cluster_id() or "",
                cache.controller_id if cache else None, bool(cluster_request.include_cluster_authorized_operations))
        if key == CREATE_TOPICS and self.create_topics is not None:
            to_create, validate_only, timeout_ms = client_apis.topics_to_create(
                client_apis.decode_body(key, version, payload, offset))
            quota = self._mutation_quota(header, strict_since_version=6)
            topics_created = await self.create_topics(to_create, validate_only, timeout_ms, **quota)
            return self._mutation_throttled(
                quota, lambda ms: client_apis.create_topics_response(version, topics_created, ms))
        if key == DELETE_TOPICS and self.delete_topics is not None:
            delete_request = client_apis.decode_body(key, version, payload, offset)
            to_delete, timeout_ms = client_apis.topics_to_delete(delete_request, version)
            quota = self._mutation_quota(header, strict_since_version=5)
            try:
                deleted = await self.delete_topics(to_delete, timeout_ms, version, **quota)
            except RequestFailed as e:  # KafkaApis.handle's catch: handleError logs it, answers every topic
                self._handler_failed(header, delete_request, e)
                deleted = [TopicDeleted(t.name, t.topic_id, e.error) for t in to_delete]
                quota = {}  # thrown before any mutation; handleError throttles by the request quota alone
            return self._mutation_throttled(quota, lambda ms: client_apis.delete_topics_response(version, deleted, ms))
        if key in (CREATE_PARTITIONS, ELECT_LEADERS, ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS):
            return await self._admin(header, client_apis.decode_body(key, version, payload, offset))
        if key == LIST_OFFSETS and version == 0:
            return self._legacy_list_offsets(payload, offset)
        if key == LIST_OFFSETS:
            return self._list_offsets(version, client_apis.decode_body(key, version, payload, offset))
        if key == client_apis.INIT_PRODUCER_ID and self.producer_ids is not None:
            return await self._init_producer_id(header, client_apis.decode_body(key, version, payload, offset))
        if key == describe_configs_wire.DESCRIBE_CONFIGS and self.describe_configs is not None:
            query = describe_configs_wire.decode_request(version, payload, offset)
            try:
                configs = await self.describe_configs(query)
            except RequestFailed as e:  # KafkaApis.handle's catch: handleError logs it, answers every resource
                self._handler_failed(header, query, e)
                configs = [describe_configs_wire.ConfigResourceResult(r.resource_type, r.resource_name, e.error,
                                                                      e.answer_message) for r in query.resources]
            return describe_configs_wire.encode_response(version, configs)
        if key == client_quotas_wire.DESCRIBE_CLIENT_QUOTAS and self.admin.describe_client_quotas is not None:
            quotas_query = client_quotas_wire.decode_describe_request(version, payload, offset)
            described = await self.admin.describe_client_quotas(quotas_query)
            return client_quotas_wire.encode_describe_response(version, described)
        if key == client_quotas_wire.ALTER_CLIENT_QUOTAS and self.admin.alter_client_quotas is not None:
            alterations = client_quotas_wire.decode_alter_request(version, payload, offset)
            return client_quotas_wire.encode_alter_response(version, await self.admin.alter_client_quotas(alterations))
        if key in (alter_configs_wire.ALTER_CONFIGS, alter_configs_wire.INCREMENTAL_ALTER_CONFIGS) \
                and self.alter_configs is not None:
            alter_query = alter_configs_wire.decode_request(key, version, payload, offset)
            try:
                altered = await self.alter_configs(alter_query)
            except RequestFailed as e:  # KafkaApis.handle's catch: handleError logs it, answers every resource
                self._handler_failed(header, alter_query, e)
                altered = [alter_configs_wire.AlterResult(r.resource_type, r.resource_name, e.error, e.answer_message)
                           for r in alter_query.resources]
            return alter_configs_wire.encode_response(key, version, altered)
        return await self._control(header, payload, offset)

    async def _features(self) -> dict[str, Any]:
        """ApiVersions v3+'s features (Kafka's ``handleApiVersionsRequest``): the supported ones and, when the
        broker's `FinalizedFeatureCache` holds ``/feature``, the finalized ones with their epoch."""
        manager = self._replica_manager()
        cache = None if manager is None else getattr(manager, "features", None)
        if cache is None:
            return {}
        await cache.ensure_started()
        return {"supported_features": SUPPORTED_FEATURES, "finalized_features_epoch": cache.epoch,
                "finalized_features": tuple((name, r.min_version_level, r.max_version_level)
                                            for name, r in cache.features)}

    async def _init_producer_id(self, header: RequestHeader, request: Any) -> bytes:
        """InitProducerId (`producer_ids`); a failed id allocation (ZooKeeper unreachable, a malformed
        ``/latest_producer_id_block``, ids exhausted) is logged and answered as Kafka's handleError does:
        UNKNOWN_SERVER_ERROR, and the broker carries on."""
        assert self.producer_ids is not None
        try:
            result = await init_producer_id(self.producer_ids, *client_apis.init_producer_id_request(request))
        except Exception as e:
            self._request_failed(header, request, exception_line(e))
            result = error_result(UNKNOWN_SERVER_ERROR)
        return client_apis.init_producer_id_response(header.api_version, result.producer_id, result.producer_epoch,
                                                     result.error)

    async def _control(self, header: RequestHeader, payload: bytes, offset: int) -> bytes | None:
        handler = self._control_handler()
        if handler is None:
            return None
        request = control_codec.decode_request(header.api_key, header.api_version, payload, offset)
        response = handler(request, header.correlation_id) if _takes_correlation_id(handler) else handler(request)
        if inspect.isawaitable(response):
            response = await response
        if not isinstance(response, RESPONSE_TYPES):
            raise TypeError(f"request handler returned {type(response).__name__} for {type(request).__name__}")
        if isinstance(request, FetchRequest) and isinstance(response, FetchResponse):
            response = await self._hold_empty_consumer_fetch(request, response, payload, offset)
        return control_codec.encode_response(response, header.api_version, request)

    async def _hold_empty_consumer_fetch(self, request: FetchRequest, response: FetchResponse, payload: bytes,
                                         offset: int) -> FetchResponse:
        """Kafka's DelayedFetch for a consumer with nothing to read (every partition at its high watermark): the
        answer waits up to the request's ``max_wait_ms``, so a consumer at the end polls at that pace rather than in
        a busy loop, and is read again as soon as a partition has news (the HW passed the fetch offset, leadership
        changed: `delayed_fetch`). Kafka answers at once when ``min_bytes`` <= 0, a partition has an error, or
        nothing was asked (a full fetch of no partition, or an incremental one whose session holds none); so
        here. A follower's fetch was held already, by the handler (`ReplicaManager.fetch_messages`)."""
        manager = self._replica_manager()
        if request.replica_id >= 0 or manager is None or response.error is not Errors.NONE:
            return response
        if not delayed_fetch.may_hold(request, response):
            return response
        max_wait_ms, min_bytes = FETCH_WAIT_FIELDS.unpack_from(payload, offset + 4)  # after the replica id
        if max_wait_ms <= 0 or min_bytes <= 0:
            return response
        mark_local_complete(manager.runtime.now_ms())  # a purgatory wait, not request handling time
        held = delayed_fetch.held_partitions(manager, request, response)
        if not held:  # an incremental fetch whose session holds no partition: KafkaApis' `interesting.isEmpty`
            return response
        if await delayed_fetch.hold(manager.produce_waiters, held, manager.partition, max_wait_ms, manager.runtime):
            return delayed_fetch.read_again(manager, request, response, held)
        return response

    # ------------------------------------------------------------------ admin APIs

    async def _admin(self, header: RequestHeader, request: Any) -> bytes:
        """CreatePartitions, ElectLeaders, Alter/ListPartitionReassignments (advertised only with a handler, so
        the handler is there: `handle` closes the connection for an unadvertised API)."""
        admin = self.admin
        key, version = header.api_key, header.api_version
        if key == CREATE_PARTITIONS:
            assert admin.create_partitions is not None
            topics, timeout_ms, validate_only = client_apis.partitions_to_create(request)
            quota = self._mutation_quota(header, strict_since_version=3)
            try:
                created = await admin.create_partitions(topics, timeout_ms, validate_only, **quota)
            except RequestFailed as e:  # KafkaApis.handle's catch: handleError logs it, answers every topic entry
                self._handler_failed(header, request, e)
                created = [PartitionsCreated(t.name, e.error, e.answer_message) for t in topics]
                quota = {}  # handleError throttles by the request quota alone, not the mutations counted
            return self._mutation_throttled(quota, lambda ms: client_apis.create_partitions_response(version, created,
                                                                                                     ms))
        if key == ELECT_LEADERS:
            assert admin.elect_leaders is not None
            election_type, partitions, timeout_ms = client_apis.elect_leaders_request(request, version)
            if election_type not in (0, 1):  # ElectionType.valueOf throws: handleError's UNKNOWN_SERVER_ERROR
                self._request_failed(header, request, "java.lang.IllegalArgumentException: "
                                     f"Value {election_type} must be one of [PREFERRED, UNCLEAN]")
                failed = [PartitionError(t, p, Errors.UNKNOWN_SERVER_ERROR) for t, p in partitions or ()]
                return client_apis.elect_leaders_response(version, failed, Errors.UNKNOWN_SERVER_ERROR)
            results = await admin.elect_leaders(election_type, partitions, timeout_ms)
            if partitions is None:  # all partitions: those that needed no election are left out, as Kafka does
                results = [r for r in results if r.error != Errors.ELECTION_NOT_NEEDED]
            return client_apis.elect_leaders_response(version, results)
        if key == ALTER_PARTITION_REASSIGNMENTS:
            assert admin.alter_reassignments is not None
            altered = await admin.alter_reassignments(client_apis.reassignments_to_alter(request))
            if isinstance(altered, PartitionError):
                return client_apis.alter_reassignments_response((), altered.error, altered.message)
            return client_apis.alter_reassignments_response(altered)
        assert admin.list_reassignments is not None
        listed = await admin.list_reassignments(client_apis.reassignments_to_list(request))
        if isinstance(listed, PartitionError):
            return client_apis.list_reassignments_response((), listed.error, listed.message)
        return client_apis.list_reassignments_response(listed)

    # ------------------------------------------------------------------ ListOffsets

    def _list_offsets(self, version: int, request: Any) -> bytes:
        """Answered from the replica manager's partitions; before the broker has one, from the cache alone (every
        partition is then not hosted here)."""
        replica_id, isolation_level, queries = client_apis.offset_queries(request)
        manager = self._replica_manager()
        answers = list_offsets(
            version, replica_id, isolation_level, queries, cache=self._metadata_cache(),
            partition=manager.partition if manager is not None else lambda _tp: None,
            offline=manager.control_plane.offline_partitions if manager is not None else (),
            timestamps_unsupported=manager.topic_configs.timestamps_unsupported if manager is not None
            else lambda _topic: False)
        return client_apis.list_offsets_response(version, answers)

    def _legacy_list_offsets(self, payload: bytes, offset: int) -> bytes:
        """v0's old offsets arrays, which kio has no schema for (`client_apis.LIST_OFFSETS_V0_REQUEST`)."""
        replica_id, queries = client_apis.legacy_offset_queries(payload, offset)
        manager = self._replica_manager()
        answers = legacy_list_offsets(
            replica_id, queries, manager.runtime.now_ms() if manager is not None else 0,
            cache=self._metadata_cache(), partition=manager.partition if manager is not None else lambda _tp: None,
            offline=manager.control_plane.offline_partitions if manager is not None else ())
        return client_apis.legacy_list_offsets_response(answers)

    # ------------------------------------------------------------------ Produce

    async def _produce(self, header: RequestHeader, payload: bytes, offset: int) -> bytes | None:
        """Kafka's ``handleProduceRequest`` (`produce`): None for acks=0, whose producer reads no response; an
        error then closes the connection instead, so the producer refreshes its metadata."""
        request = client_apis.decode_produce_request(header.api_version, payload, offset)
        manager = self._replica_manager()
        partitions = [ProducePartition(*p) for p in request.partitions]
        try:
            answers = await produce(header.api_version, request.acks, request.timeout_ms, header.client_id,
                                    partitions, cache=self._metadata_cache(),
                                    target=manager.produce_target() if manager is not None else None,
                                    transactional_id=request.transactional_id)
        except RequestFailed as e:  # KafkaApis.handle's catch: handleError logs it, answers every partition
            if e.logged:
                self._handler_failed(header, request_text(request.acks, request.timeout_ms, partitions), e)
            if request.acks == 0:  # getErrorResponse answers nothing: the connection is closed, unlogged
                close = CloseConnection(f"Produce request with correlation id {header.correlation_id} failed: "
                                        f"{e or e.exception}")
                close.log_level = logging.DEBUG
                raise close from None
            answers = failed_request_answers(partitions, e)
        throttle_ms = self._produce_throttle_ms(header, len(payload), request.acks)
        if request.acks == 0:
            failed = [f"{a.topic}-{a.partition} -> {error_name(a.error)}" for a in answers if a.error]
            if failed:
                close = CloseConnection(f"Closing connection due to error during produce request with correlation id "
                                        f"{header.correlation_id} from client id {header.client_id} with ack=0\n"
                                        f"Topic and partition to exceptions: {', '.join(failed)}")
                close.log_level = logging.INFO
                raise close
            return self._throttled(b"", throttle_ms) if throttle_ms > 0 else None  # muted all the same
        body = client_apis.produce_response(header.api_version, answers, throttle_ms)
        response = encode_response_header(header.correlation_id, header.api_key, header.api_version) + body
        return self._throttled(response, throttle_ms) if throttle_ms > 0 else response

    def _produce_throttle_ms(self, header: RequestHeader, size: int, acks: int) -> int:
        """Kafka's ``quotas.produce.maybeRecordAndGetThrottleTimeMs`` once the Produce is answered: the request's
        size against the client's ``producer_byte_rate`` (`client_quota_manager`), as the user ``ANONYMOUS``
        (no authentication here); the max with the request quota's throttle, which acks=0 is exempt from."""
        quotas = self.produce_quotas()
        bandwidth = 0 if quotas is None else \
            quotas.maybe_record_and_get_throttle_time_ms(ANONYMOUS, header.client_id or "", size)
        request_quotas = self.request_quotas()
        if request_quotas is None or not request_quotas.quotas_enabled:
            return max(0, bandwidth)  # a negative bandwidth throttle counts as none
        if acks == 0:  # sendNoOpResponseExemptThrottle
            request_quotas.maybe_record_exempt(self._handling_ms(request_quotas))
            return max(0, bandwidth)
        requested = request_quotas.maybe_record_request(ANONYMOUS, header.client_id or "",
                                                        self._handling_ms(request_quotas))
        return max(bandwidth, requested, 0)

    @staticmethod
    def _handling_ms(quotas: ClientRequestQuotaManager) -> int:
        """``requestThreadTimeNanos``, in ms: from `start_request` to the handler's local completion (or now)."""
        timing = current_request()
        return 0 if timing is None else timing.handling_ms(quotas.runtime.now_ms())

    def _request_throttled(self, quotas: ClientRequestQuotaManager, header: RequestHeader, body: bytes) -> bytes:
        """``sendResponseMaybeThrottle`` (and the request-quota half of the controller mutation one): the handling
        time recorded against the client's ``request_percentage``; above it the answer carries the larger of that
        throttle and the one already in it, and the connection is muted for it. Inter-broker requests are exempt
        (``sendResponseExemptThrottle``)."""
        if header.api_key in CONTROL_APIS:
            quotas.maybe_record_exempt(self._handling_ms(quotas))
            return body
        throttle_ms = quotas.maybe_record_request(ANONYMOUS, header.client_id or "", self._handling_ms(quotas))
        if throttle_ms <= 0:
            return body
        at = throttle_field_offset(header.api_key, header.api_version, body)
        if at is not None and throttle_ms <= struct.unpack_from(">i", body, at)[0]:
            return body  # the controller mutation throttle is the larger: the answer has it, and its mute
        if at is not None:
            body = body[:at] + struct.pack(">i", throttle_ms) + body[at + 4:]
        return ThrottledResponse(body, quotas.throttle(throttle_ms))

    def _mutation_quota(self, header: RequestHeader,
                        strict_since_version: int | None) -> dict[str, ControllerMutationQuota]:
        """``quotas.controllerMutation.newQuotaFor(request, strictSinceVersion)`` as the handler's ``quota`` keyword:
        strict from that version, permissive before (always with None: ``newPermissiveQuotaFor``); nothing when the
        broker keeps no such quotas."""
        quotas = self.controller_mutation_quotas()
        if quotas is None:
            return {}
        client = header.client_id or ""
        if strict_since_version is None:
            return {"quota": quotas.new_quota_for(ANONYMOUS, client, 0, 1)}
        return {"quota": quotas.new_quota_for(ANONYMOUS, client, header.api_version, strict_since_version)}

    def _mutation_throttled(self, quota: Mapping[str, ControllerMutationQuota],
                            encode: Callable[[int], bytes]) -> bytes:
        """``sendResponseMaybeThrottleWithControllerQuota``: the quota's throttle time, at the answer, in the answer
        and muting the channel after it (`ThrottledResponse`); `handle` then takes the request quota's if larger."""
        throttle_ms = quota["quota"].throttle_time() if quota else 0
        quotas = self.controller_mutation_quotas()
        if throttle_ms <= 0 or quotas is None:
            return encode(0)
        return ThrottledResponse(encode(throttle_ms), quotas.throttle(throttle_ms))

    def _throttled(self, response: bytes, throttle_ms: int) -> ThrottledResponse:
        """The answer, sent at once for every version (KIP-219, Kafka 2.0+), and then the channel muted until
        ``throttle_ms`` has passed on the broker's runtime clock (v6+ clients also back off by themselves)."""
        quotas = self.produce_quotas() or self.request_quotas()
        assert quotas is not None
        return ThrottledResponse(response, quotas.throttle(throttle_ms))

    # ------------------------------------------------------------------ Metadata

    async def _auto_create(self, topics: list[str], header: RequestHeader) -> dict[str, int]:
        """Kafka's ``getTopicMetadata`` with auto-creation allowed: the unknown topics among ``topics`` are
        created (an invalid name answers INVALID_TOPIC_EXCEPTION as without it); the error code to answer for
        each. Nothing when auto-creation is off or the broker has no cache yet."""
        creator, cache = self.auto_create_topics, self._metadata_cache()
        if creator is None or cache is None or not creator.enabled():
            return {}
        missing = [t for t in topics if not cache.contains_topic(t) and is_valid_topic_name(t)]
        answers = {t: int(Errors.UNKNOWN_TOPIC_OR_PARTITION) for t in missing if t in self._topics_being_created}
        creatable = [t for t in missing if t not in answers]
        if not creatable:
            return answers
        self._topics_being_created.update(creatable)
        try:
            # newPermissiveQuotaFor: the partitions counted, never refused, the Metadata answer not throttled by it
            answers.update(await creator.create(creatable, **self._mutation_quota(header, None)))
        finally:
            self._topics_being_created.difference_update(creatable)
        return answers

    def _metadata(self, version: int, topics: list[str] | None, topic_operations: bool = False,
                  cluster_operations: bool = False, created: dict[str, int] | None = None) -> bytes:
        cache = self._metadata_cache()
        cluster_id = self._cluster_id()
        operations = {"include_topic_operations": topic_operations, "include_cluster_operations": cluster_operations}
        if cache is None:
            return client_apis.metadata_response(version, [], self.listener_name, cluster_id, None, [], **operations)
        if topics is not None:
            views = cache.topic_metadata(topics, self.listener_name, error_unavailable_endpoints=version == 0)
            if created:  # a topic created meanwhile may be in the cache already: Kafka answers as it decided
                views = [TopicMetadata(v.topic, created[v.topic], None, v.is_internal)
                         if v.topic in created else v for v in views]
            return client_apis.metadata_response(version, cache.alive_brokers(), self.listener_name, cluster_id,
                                                 cache.controller_id, views, **operations)
        key = (cache.snapshot, cluster_id)
        if self._metadata_cache_key is None or self._metadata_cache_key[0] is not key[0] \
                or self._metadata_cache_key[1] != cluster_id:
            self._metadata_cache_key = key
            self._encoded_metadata = {}
        encoded_key = (version, topic_operations, cluster_operations)
        encoded = self._encoded_metadata.get(encoded_key)
        if encoded is None:
            encoded = self._encoded_metadata[encoded_key] = client_apis.metadata_response(
                version, cache.alive_brokers(), self.listener_name, cluster_id, cache.controller_id,
                cache.topic_metadata(None, self.listener_name, error_unavailable_endpoints=version == 0), **operations)
        return encoded


_INVALID_REQUEST_TEXT = ("This most likely occurs because of a request being malformed by the client library or the "
                         "message was sent to an incompatible broker. See the broker logs for more details.")
"""Kafka's ``Errors.INVALID_REQUEST.message``."""


def request_body_string(header: RequestHeader, body: object) -> str:
    """A request body as Kafka's error line prints it (``request.body[AbstractRequest]``): a ready string (Produce's
    own ``toString``, `produce.request_text`) as is, else the generated ``*Data`` ``toString`` (`data_strings`)."""
    if isinstance(body, str):
        return body
    try:
        return request_string(header.api_key, header.api_version, body)
    except Exception:  # no table for the API, or one out of step: handleError's line is still written
        return repr(body)


def _takes_correlation_id(handler: ControlHandler) -> TypeGuard[CorrelatedControlHandler]:
    """The control plane's ``handle(request, correlation_id)`` logs the id as Kafka does; plain handlers take
    the request alone."""
    try:
        return "correlation_id" in inspect.signature(handler).parameters
    except (TypeError, ValueError):
        return False


THROTTLE_FIRST_SINCE: Mapping[int, int] = MappingProxyType({
    METADATA: 3, DESCRIBE_CLUSTER: 0, CREATE_TOPICS: 2, DELETE_TOPICS: 1, CREATE_PARTITIONS: 0, ELECT_LEADERS: 0,
    ALTER_PARTITION_REASSIGNMENTS: 0, LIST_PARTITION_REASSIGNMENTS: 0, LIST_OFFSETS: 2,
    client_apis.INIT_PRODUCER_ID: 0, describe_configs_wire.DESCRIBE_CONFIGS: 0, alter_configs_wire.ALTER_CONFIGS: 0,
    alter_configs_wire.INCREMENTAL_ALTER_CONFIGS: 0, client_quotas_wire.DESCRIBE_CLIENT_QUOTAS: 0,
    client_quotas_wire.ALTER_CLIENT_QUOTAS: 0,
})
"""The responses whose first field is ``ThrottleTimeMs``, from the version that has it (Kafka 2.8's message JSON)."""


def throttle_field_offset(api_key: int, version: int, body: bytes) -> int | None:
    """Where a response body's ``throttle_time_ms`` is, None if its version has none (ApiVersions v1+ has it after
    its API list: int16 error, then the list as an int32 count, or from v3 a compact one with tagged fields)."""
    since = THROTTLE_FIRST_SINCE.get(api_key)
    if since is not None:
        return 0 if version >= since else None
    if api_key != API_VERSIONS or version < 1:
        return None
    if version < 3:
        return 2 + 4 + 6 * struct.unpack_from(">i", body, 2)[0]
    count, at, shift = 0, 2, 0
    while True:  # unsigned varint: the count + 1
        byte = body[at]
        at += 1
        count |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    return at + 7 * max(count - 1, 0)  # ApiKey, MinVersion, MaxVersion and an empty tagged-field section each
