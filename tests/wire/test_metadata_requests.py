"""Metadata and DescribeCluster answered as Kafka 2.8.2's ``KafkaApis`` does for what clients ask: invalid topic
names, authorized operations with no authorizer, duplicate and null topic names; through kafka-python's admin
client and raw frames on a real socket."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from kafka.admin import KafkaAdminClient
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


def metadata(port: int, version: int, **fields):
    """One Metadata request of ``version`` on a fresh connection; the decoded response."""
    req = schema_module(3, version, "request").MetadataRequest
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


def topic_request(version: int, name: str | None):
    return schema_module(3, version, "request").MetadataRequestTopic(name=name)


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
