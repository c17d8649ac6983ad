"""Hypothesis over the protocol server: arbitrary bytes and valid frames with mutations never crash or wedge
the broker. After every input, a fresh connection still gets an ApiVersions answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from zkcontroller.protocol.inter_broker import AlterIsrPartition, AlterIsrRequest, ControlledShutdownRequest
from zkcontroller.protocol.wire import control_codec

from .server_fixture import ServerThread, connect, read_frame, request_frame, running_server

VALID_FRAMES = [
    request_frame(18, 3, 1, b"\x05kcat\x061.7.1\x00"),
    request_frame(18, 0, 1, b""),
    request_frame(3, 11, 2, b"\x00\x00\x00\x00"),
    request_frame(3, 1, 2, b"\xff\xff\xff\xff"),
    request_frame(60, 1, 3, b"\x00\x01\x00"),
    request_frame(4, 5, 4, control_codec.encode_request(LeaderAndIsrRequest(1, 1, 10, partition_states=(
        LeaderAndIsrPartitionState("t", 0, 1, 1, 1, (1,), 0, (1, 2)),)), 5)),
    request_frame(6, 7, 5, control_codec.encode_request(UpdateMetadataRequest(1, 1, 10), 7)),
    request_frame(5, 3, 6, control_codec.encode_request(StopReplicaRequest(1, 1, 10, partition_states=(
        StopReplicaPartitionState("t", 0, 1, True),)), 3)),
    request_frame(6, 0, 5, control_codec.encode_request(UpdateMetadataRequest(1, 1, 10), 0)),
    request_frame(7, 3, 7, control_codec.encode_request(ControlledShutdownRequest(2, 10), 3)),
    request_frame(7, 0, 7, control_codec.encode_request(ControlledShutdownRequest(2, 10), 0)),
    request_frame(56, 0, 8, control_codec.encode_request(AlterIsrRequest(1, 10, (
        AlterIsrPartition(TopicPartition("t", 0), 3, (1, 2), 4),)), 0)),
]


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    with running_server() as s:
        yield s


def _throw(port: int, data: bytes) -> None:
    """Send ``data``, read whatever comes back until the server closes or goes quiet, then hang up."""
    with connect(port) as sock:
        try:
            sock.sendall(data)
            sock.settimeout(0.05)
            while sock.recv(65536):
                pass
        except (TimeoutError, ConnectionError):
            pass


def _still_serving(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(request_frame(18, 0, 42, b""))
        payload = read_frame(sock)
    assert payload is not None and payload[:4] == (42).to_bytes(4, "big")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200))
def test_arbitrary_bytes(server, data):
    _throw(server.port, data)
    _still_serving(server.port)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    frame = bytearray(draw(st.sampled_from(VALID_FRAMES)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "truncate", "insert", "size"]))
        if kind == "flip" and frame:
            i = draw(st.integers(0, len(frame) - 1))
            frame[i] = draw(st.integers(0, 255))
        elif kind == "truncate" and frame:
            del frame[draw(st.integers(0, len(frame) - 1)):]
        elif kind == "insert":
            i = draw(st.integers(0, len(frame)))
            frame[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "size" and len(frame) >= 4:
            frame[:4] = draw(st.integers(-(2**31), 2**31 - 1)).to_bytes(4, "big", signed=True)
    return bytes(frame)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutated())
def test_valid_then_mutated_frames(server, data):
    _throw(server.port, data)
    _still_serving(server.port)


def test_every_valid_frame_is_answered(server):
    for frame in VALID_FRAMES:
        with connect(server.port) as sock:
            sock.sendall(frame)
            assert read_frame(sock) is not None, frame[:12].hex()
