"""The broker's protocol server on a real socket: ApiVersions negotiation as Kafka does it, Metadata from the
cache, the control requests fenced by epoch on the wire, and bad input closing only its own connection."""

from __future__ import annotations

import io
import socket
import struct
from collections.abc import Iterator

import pytest
from kio.schema.api_versions.v0.response import ApiVersionsResponse as ApiVersionsV0
from kio.schema.api_versions.v3.response import ApiVersionsResponse as ApiVersionsV3
from kio.schema.metadata.v11.request import MetadataRequest as MetadataRequestV11
from kio.schema.metadata.v11.response import MetadataResponse as MetadataV11
from kio.serial import entity_reader, entity_writer

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import (
    ApiKey,
    Errors,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from zkcontroller.protocol.inter_broker import (
    AlterIsrPartition,
    AlterIsrRequest,
    AlterIsrResponse,
    ControlledShutdownRequest,
    ControlledShutdownResponse,
)
from zkcontroller.protocol.wire import control_codec
from zkcontroller.protocol.wire.frames import decode_response_header

from .server_fixture import BROKER_EPOCH, CLUSTER_ID, ServerThread, connect, read_frame, request_frame, running_server


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    with running_server() as s:
        yield s


def _round_trip(port: int, frame: bytes) -> bytes | None:
    with connect(port) as sock:
        sock.sendall(frame)
        return read_frame(sock)


def test_api_versions_v3_lists_our_apis(server):
    payload = _round_trip(server.port, request_frame(18, 3, 7, b"\x05kcat\x061.7.1\x00"))
    assert payload is not None and payload[:4] == struct.pack(">i", 7)
    response, _ = entity_reader(ApiVersionsV3)(payload[4:], 0)  # response header v0: no tagged fields
    versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert response.error_code == 0
    assert versions[3] == (0, 11) and versions[18] == (0, 3)
    assert versions[ApiKey.LEADER_AND_ISR] == (0, 5) and versions[ApiKey.UPDATE_METADATA] == (0, 7)
    assert versions[ApiKey.STOP_REPLICA] == (0, 3)


def test_api_versions_too_new_gets_unsupported_version_in_the_v0_layout(server):
    """kafka-python asks with v4 first; Kafka answers UNSUPPORTED_VERSION in v0's layout with ApiVersions' own
    versions alone (``ApiVersionsRequest.getErrorResponse``, KIP-511)."""
    payload = _round_trip(server.port, request_frame(18, 4, 9, b"\x00\x00\x00"))
    assert payload is not None
    response, size = entity_reader(ApiVersionsV0)(payload[4:], 0)
    assert response.error_code == 35
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(18, 0, 3)]
    assert size == len(payload) - 4


@pytest.mark.parametrize(("name", "version", "valid"), [
    ("kcat", "1.7.1", True), ("confluent-kafka-python", "2.16.1-rdkafka-2.12.0", True), ("a", "1", True),
    ("kcat!", "1.7.1", False), ("kcat", "1.7.1 beta", False), ("", "1.0", False), ("kcat", "-1", False),
    ("kcat", "1.", False), ("kcat_x", "1", False)])
def test_api_versions_v3_checks_the_client_software_name_and_version(server, name, version, valid):
    """``ApiVersionsRequest.isValid``: otherwise INVALID_REQUEST (42) with no API list."""
    body = bytes([len(name) + 1]) + name.encode() + bytes([len(version) + 1]) + version.encode() + b"\x00"
    payload = _round_trip(server.port, request_frame(18, 3, 8, body))
    assert payload is not None
    response, _ = entity_reader(ApiVersionsV3)(payload[4:], 0)
    assert (response.error_code, bool(response.api_keys)) == ((0, True) if valid else (42, False))


def test_metadata_v11_from_the_cache(server):
    buf = io.BytesIO()
    entity_writer(MetadataRequestV11)(buf, MetadataRequestV11(topics=None, allow_auto_topic_creation=False,
                                                              include_topic_authorized_operations=False))
    payload = _round_trip(server.port, request_frame(3, 11, 1, buf.getvalue()))
    assert payload is not None
    correlation_id, offset = decode_response_header(payload, 3, 11)
    response, _ = entity_reader(MetadataV11)(payload[offset:], 0)
    assert correlation_id == 1 and response.controller_id == 2 and response.cluster_id == CLUSTER_ID
    assert [(b.node_id, b.rack) for b in response.brokers] == [(1, "rack1"), (2, "rack2")]
    (topic,) = response.topics
    assert topic.name == "orders" and topic.topic_id.bytes == bytes(range(1, 17))
    p0 = topic.partitions[0]
    assert (p0.leader_id, p0.leader_epoch, p0.replica_nodes, p0.isr_nodes, p0.offline_replicas) == \
        (1, 4, (1, 2, 3), (1, 2), (3,))


def _control(port: int, request, version: int, correlation_id: int = 5):
    body = control_codec.encode_request(request, version)
    payload = _round_trip(port, request_frame(int(request.api_key), version, correlation_id, body))
    assert payload is not None, "the broker closed the connection instead of answering"
    cid, offset = decode_response_header(payload, int(request.api_key), version)
    assert cid == correlation_id
    return control_codec.decode_response(request, version, payload, offset)


def test_control_requests_fenced_on_the_wire(server):
    """Spec §8: a stale broker epoch gets STALE_BROKER_EPOCH, an older controller epoch STALE_CONTROLLER_EPOCH,
    for each of the three control requests, at the versions a 2.8 controller sends."""
    state = LeaderAndIsrPartitionState("orders", 0, 5, 1, 9, (1, 2), 3, (1, 2))
    assert _control(server.port, UpdateMetadataRequest(2, 5, BROKER_EPOCH), 7).error is Errors.NONE
    assert _control(server.port, UpdateMetadataRequest(2, 5, BROKER_EPOCH - 1), 7).error is Errors.STALE_BROKER_EPOCH
    assert _control(server.port, UpdateMetadataRequest(3, 4, BROKER_EPOCH), 7).error is \
        Errors.STALE_CONTROLLER_EPOCH
    stale_lai = _control(server.port, LeaderAndIsrRequest(3, 4, BROKER_EPOCH, partition_states=(state,)), 5)
    assert stale_lai.error is Errors.STALE_CONTROLLER_EPOCH
    lai = _control(server.port, LeaderAndIsrRequest(2, 5, BROKER_EPOCH - 3, partition_states=(state,)), 5)
    assert lai.error is Errors.STALE_BROKER_EPOCH
    accepted = _control(server.port, LeaderAndIsrRequest(2, 5, BROKER_EPOCH, partition_states=(state,)), 5)
    assert accepted.error is Errors.NONE and accepted.partition_error_map() == {state.topic_partition: Errors.NONE}
    stop = StopReplicaRequest(3, 4, BROKER_EPOCH, partition_states=(StopReplicaPartitionState("orders", 0, -1, False),))
    assert _control(server.port, stop, 3).error is Errors.STALE_CONTROLLER_EPOCH
    assert _control(server.port, StopReplicaRequest(2, 5, 1), 3).error is Errors.STALE_BROKER_EPOCH


def test_unknown_api_key_closes_only_that_connection(server):
    with connect(server.port) as idle:
        assert _round_trip(server.port, request_frame(999, 0, 1, b"")) is None
        assert _round_trip(server.port, request_frame(3, 12, 1, b"\x00\x00\x00\x00")) is None  # v12: not ours
        idle.sendall(request_frame(18, 0, 3, b""))
        assert read_frame(idle) is not None


def test_oversized_and_negative_sizes_close_the_connection(server):
    for size in (-5, (1 << 20) + 1):
        with connect(server.port) as sock:
            sock.sendall(struct.pack(">i", size) + b"\x00" * 8)
            assert read_frame(sock) is None
    assert _round_trip(server.port, request_frame(18, 0, 1, b"")) is not None


def test_malformed_control_body_closes_the_connection(server):
    assert _round_trip(server.port, request_frame(6, 7, 1, b"\x00\x00\x00\x01\xff")) is None
    with connect(server.port) as sock:
        sock.sendall(request_frame(18, 0, 1, b""))
        assert read_frame(sock) is not None
        with pytest.raises(socket.timeout):
            sock.settimeout(0.2)
            sock.recv(1)  # nothing more is said unasked


def test_controller_bound_requests_reach_the_brokers_handler(server):
    """ControlledShutdown (header v0 at v0) and AlterIsr go to the broker's handler; this one is no controller."""
    for version in (0, 3):
        answer = _control(server.port, ControlledShutdownRequest(2, BROKER_EPOCH), version)
        assert answer == ControlledShutdownResponse(Errors.NOT_CONTROLLER)
    alter = AlterIsrRequest(1, BROKER_EPOCH, (AlterIsrPartition(TopicPartition("orders", 0), 4, (1,), 0),))
    assert _control(server.port, alter, 0) == AlterIsrResponse(Errors.NOT_CONTROLLER)
