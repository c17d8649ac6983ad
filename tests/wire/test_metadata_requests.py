"""Metadata and DescribeCluster answered as Kafka 2.8.2's ``KafkaApis`` does for what clients ask: invalid topic
names, authorized operations with no authorizer, duplicate and null topic names; through kafka-python's admin
client and raw frames on a real socket."""

from __future__ import annotations

import dataclasses
import io
import logging
import uuid
from collections.abc import Iterator

import pytest
from kafka.admin import ACLOperation, KafkaAdminClient
from kio.serial import entity_reader, entity_writer

from zkcontroller.protocol.wire.client_apis import schema_module
from zkcontroller.protocol.wire.frames import decode_response_header

from .server_fixture import ServerThread, connect, read_frame, request_frame, running_server


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    with running_server() as s:
        yield s


@pytest.fixture(scope="module")
def admin(server: ServerThread) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{server.port}", request_timeout_ms=10000)
    try:
        yield client
    finally:
        client.close()


ZERO_UUID = uuid.UUID(int=0)


def metadata(port: int, version: int, **fields):
    """One Metadata request of ``version`` on a fresh connection; the decoded response."""
    req = schema_module(3, version, "request").MetadataRequest
    for name in ("include_cluster_authorized_operations", "include_topic_authorized_operations"):
        if name in {f.name for f in dataclasses.fields(req)}:
            fields.setdefault(name, False)
    buf = io.BytesIO()
    entity_writer(req)(buf, req(**fields))
    with connect(port) as sock:
        sock.sendall(request_frame(3, version, 11, buf.getvalue()))
        payload = read_frame(sock)
    assert payload is not None, "the broker closed the connection"
    cid, offset = decode_response_header(payload, 3, version)
    assert cid == 11
    response, _ = entity_reader(schema_module(3, version, "response").MetadataResponse)(payload[offset:], 0)
    return response


def topic_request(version: int, name: str | None, topic_id: uuid.UUID = ZERO_UUID):
    cls = schema_module(3, version, "request").MetadataRequestTopic
    return cls(name=name, topic_id=topic_id) if version >= 10 else cls(name=name)


@pytest.mark.parametrize("name", ["", ".", "..", "a" * 250, "bad/name", "a b", "tópico"])
def test_an_invalid_topic_name_gets_invalid_topic_exception(admin, name):
    """``getTopicMetadata``: ``Topic.validate`` failing answers INVALID_TOPIC_EXCEPTION (17), not
    UNKNOWN_TOPIC_OR_PARTITION."""
    (topic,) = admin.describe_topics([name])
    assert (topic["name"], topic["error_code"], topic["partitions"]) == (name, 17, [])


def test_a_valid_unknown_topic_still_gets_unknown_topic_or_partition(admin):
    (topic,) = admin.describe_topics(["a" * 249])
    assert topic["error_code"] == 3
    (topic,) = admin.describe_topics(["no-such_topic.1"])
    assert topic["error_code"] == 3


TOPIC_OPS = {"READ", "WRITE", "CREATE", "DESCRIBE", "DELETE", "ALTER", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"}
CLUSTER_OPS = {"CREATE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "ALTER", "DESCRIBE"}


def _operations(bits: int) -> set[str]:
    return {op.name for op in ACLOperation if op.value < 32 and bits & (1 << op.value)}


def test_admin_clients_get_every_supported_operation_as_with_no_authorizer(admin):
    """kafka-python asks for both: Kafka with no authorizer answers ``AclEntry.supportedOperations`` as
    ``Utils.to32BitField`` — 3576 for a topic (known or not), 8096 for the cluster."""
    topics = admin.describe_topics(["orders", "missing"])
    assert [set(t["authorized_operations"]) for t in topics] == [TOPIC_OPS, TOPIC_OPS]
    assert _operations(3576) == TOPIC_OPS
    assert set(admin.describe_cluster()["authorized_operations"]) == CLUSTER_OPS
    assert _operations(8096) == CLUSTER_OPS


@pytest.mark.parametrize("version", [8, 9, 10])
def test_metadata_v8_to_v10_answers_each_flag(server, version):
    for topic_flag, cluster_flag in ((True, True), (True, False), (False, True), (False, False)):
        r = metadata(server.port, version, topics=(topic_request(version, "orders"),), allow_auto_topic_creation=False,
                     include_topic_authorized_operations=topic_flag,
                     include_cluster_authorized_operations=cluster_flag)
        assert r.cluster_authorized_operations == (8096 if cluster_flag else -2**31)
        assert r.topics[0].topic_authorized_operations == (3576 if topic_flag else -2**31)
        everything = metadata(server.port, version, topics=None, allow_auto_topic_creation=False,
                              include_topic_authorized_operations=topic_flag,
                              include_cluster_authorized_operations=cluster_flag)
        assert everything.cluster_authorized_operations == (8096 if cluster_flag else -2**31)
        assert everything.topics[0].topic_authorized_operations == (3576 if topic_flag else -2**31)


def test_metadata_v11_answers_the_topic_flag(server):
    for flag in (True, False, True):
        r = metadata(server.port, 11, topics=None, allow_auto_topic_creation=False,
                     include_topic_authorized_operations=flag)
        assert r.topics[0].topic_authorized_operations == (3576 if flag else -2**31)


def test_describe_cluster_answers_its_flag(server):
    req = schema_module(60, 0, "request").DescribeClusterRequest
    for flag in (False, True):
        buf = io.BytesIO()
        entity_writer(req)(buf, req(include_cluster_authorized_operations=flag))
        with connect(server.port) as sock:
            sock.sendall(request_frame(60, 0, 3, buf.getvalue()))
            payload = read_frame(sock)
        assert payload is not None
        _, offset = decode_response_header(payload, 60, 0)
        response, _ = entity_reader(schema_module(60, 0, "response").DescribeClusterResponse)(payload[offset:], 0)
        assert response.cluster_authorized_operations == (8096 if flag else -2**31)


def test_a_topic_named_twice_is_answered_once(server):
    """Kafka makes the requested names a set."""
    for version in (1, 4, 9, 11):
        names = ("orders", "missing", "orders", "missing", "orders")
        r = metadata(server.port, version, topics=tuple(topic_request(version, n) for n in names),
                     **({"allow_auto_topic_creation": False} if version >= 4 else {}))
        assert sorted(t.name for t in r.topics) == ["missing", "orders"]


@pytest.mark.parametrize("version", [10, 11])
def test_a_null_topic_name_or_a_topic_id_gets_invalid_request(server, version, caplog):
    """2.8 takes neither (``InvalidRequestException`` in ``handleTopicMetadataRequest``): the answer is
    ``MetadataRequest.getErrorResponse``, every asked topic with INVALID_REQUEST (42), no brokers; ``handleError``
    logs the request, its body as MetadataRequest.json's generated ``toString`` (v11 has no
    IncludeClusterAuthorizedOperations: the Java field keeps false)."""
    some_id = uuid.UUID(bytes=bytes(range(1, 17)))
    for topics in ((topic_request(version, "orders"), topic_request(version, None)),
                   (topic_request(version, "orders"), topic_request(version, "x", topic_id=some_id))):
        caplog.clear()
        with caplog.at_level(logging.ERROR, "kafka.server.RequestHandlerHelper"):
            r = metadata(server.port, version, topics=topics, allow_auto_topic_creation=False,
                         include_topic_authorized_operations=True,
                         **({"include_cluster_authorized_operations": True} if version == 10 else {}))
        second = "name=null" if topics[1].name is None else "name='x'"
        logged_id = "AQIDBAUGBwgJCgsMDQ4PEA" if topics[1].name else "AAAAAAAAAAAAAAAAAAAAAA"  # base64url(01..10)
        [line] = [rec.getMessage() for rec in caplog.records if rec.name == "kafka.server.RequestHandlerHelper"]
        body = ("MetadataRequestData(topics=[MetadataRequestTopic(topicId=AAAAAAAAAAAAAAAAAAAAAA, name='orders'), "
                f"MetadataRequestTopic(topicId={logged_id}, {second})], allowAutoTopicCreation=false, "
                f"includeClusterAuthorizedOperations={str(version == 10).lower()}, "
                "includeTopicAuthorizedOperations=true)")
        assert f"api=METADATA, version={version}, body={body}\n" \
               "org.apache.kafka.common.errors.InvalidRequestException: " in line
        second_id = None if topics[1].topic_id == ZERO_UUID else some_id  # kio reads the zero UUID as None
        assert [(t.name, t.error_code, t.topic_id, t.is_internal, t.partitions) for t in r.topics] == \
            [("orders", 42, None, False, ()), (topics[1].name or "", 42, second_id, False, ())]
        assert (r.brokers, r.cluster_id, r.controller_id) == ((), None, -1)
        assert r.topics[0].topic_authorized_operations == -2**31
    # the connection stays usable: a good request right after is answered from the cache
    r = metadata(server.port, version, topics=(topic_request(version, "orders"),), allow_auto_topic_creation=False,
                 include_topic_authorized_operations=False,
                 **({"include_cluster_authorized_operations": False} if version == 10 else {}))
    assert r.topics[0].error_code == 0


def test_metadata_v0_keeps_only_live_replicas_and_says_replica_not_available(server):
    """``maybeFilterAliveReplicas`` with ``errorUnavailableEndpoints = requestVersion == 0``: orders-0 lists
    replicas (1, 2, 3) with broker 3 not alive, so v0 drops it and answers REPLICA_NOT_AVAILABLE (9); v1+ keep
    the lists whole with no error."""
    for topics in ((), (topic_request(0, "orders"),)):  # v0: an empty list means all topics
        r = metadata(server.port, 0, topics=topics)
        (topic,) = r.topics
        parts = {p.partition_index: (p.error_code, p.leader_id, p.replica_nodes, p.isr_nodes) for p in topic.partitions}
        assert parts == {0: (9, 1, (1, 2), (1, 2)), 1: (0, 2, (2, 1), (2,))}
    r = metadata(server.port, 1, topics=None)
    p0 = r.topics[0].partitions[0]
    assert (p0.error_code, p0.replica_nodes, p0.isr_nodes) == (0, (1, 2, 3), (1, 2))
