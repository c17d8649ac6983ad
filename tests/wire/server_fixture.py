"""A broker's protocol server (SocketServer + KafkaApis over a real control plane) on a loopback port, run on
its own event loop in a background thread so blocking-socket and Hypothesis tests can talk to it."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.model import Broker, EndPoint, TopicId
from zkcontroller.protocol.control_requests import Errors, UpdateMetadataPartitionState, UpdateMetadataRequest
from zkcontroller.protocol.inter_broker import (
    AlterIsrRequest,
    AlterIsrResponse,
    ControlledShutdownRequest,
    ControlledShutdownResponse,
)
from zkcontroller.protocol.wire.frames import RequestHeader, encode_request_header
from zkcontroller.runtime.socket_server import SocketServer

BROKER_EPOCH = 10
CLUSTER_ID = "xHt2Jr6KQo-JrbyLhxuvqg"


def seed_metadata(control_plane: BrokerControlPlane, port: int) -> None:
    brokers = tuple(Broker(i, (EndPoint("127.0.0.1", port, "PLAINTEXT", "PLAINTEXT"),), f"rack{i}") for i in (1, 2))
    control_plane.handle(UpdateMetadataRequest(
        2, 1, BROKER_EPOCH, live_brokers=brokers, topic_ids=(("orders", TopicId(bytes(range(1, 17)))),),
        partition_states=(UpdateMetadataPartitionState("orders", 0, 1, 1, 4, (1, 2), 0, (1, 2, 3), (3,)),
                          UpdateMetadataPartitionState("orders", 1, 1, 2, 0, (2,), 0, (2, 1)))))


def seeded_apis(**handlers: Any) -> KafkaApis:
    """Broker 1's `KafkaApis` over a metadata cache holding `seed_metadata`'s cluster, with ``handlers``."""
    plane = BrokerControlPlane(1, BROKER_EPOCH)
    seed_metadata(plane, 9092)
    return KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: plane.metadata_cache,
                     cluster_id=lambda: "c", **handlers)


class ServerThread:
    def __init__(self) -> None:
        self.control_plane = BrokerControlPlane(1, BROKER_EPOCH)
        self.apis = KafkaApis(1, control_handler=lambda: self.handle,
                              metadata_cache=lambda: self.control_plane.metadata_cache,
                              cluster_id=lambda: CLUSTER_ID)
        self.server = SocketServer("127.0.0.1", 0, self.apis.handle, max_request_bytes=1 << 20,
                                   close_on=(CloseConnection,))
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def handle(self, request: Any) -> Any:
        """As `KafkaServer.handle_request` routes: controller-bound requests to a controller (here one that
        is not active, so NOT_CONTROLLER, as a non-controller broker answers), the rest to the control plane."""
        if isinstance(request, ControlledShutdownRequest):
            return ControlledShutdownResponse(Errors.NOT_CONTROLLER)
        if isinstance(request, AlterIsrRequest):
            return AlterIsrResponse(Errors.NOT_CONTROLLER)
        return self.control_plane.handle(request)

    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)
        self.port = self.server.port
        self.loop.call_soon_threadsafe(seed_metadata, self.control_plane, self.port)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


@contextmanager
def running_server() -> Iterator[ServerThread]:
    s = ServerThread()
    s.start()
    try:
        yield s
    finally:
        s.stop()


def request_frame(api_key: int, version: int, correlation_id: int, body: bytes, client_id: str = "test") -> bytes:
    payload = encode_request_header(RequestHeader(api_key, version, correlation_id, client_id)) + body
    return struct.pack(">i", len(payload)) + payload


def read_frame(sock: socket.socket) -> bytes | None:
    """One response frame's payload, or None if the server closed the connection."""
    head = _read_exactly(sock, 4)
    if head is None:
        return None
    return _read_exactly(sock, struct.unpack(">i", head)[0])


def _read_exactly(sock: socket.socket, n: int) -> bytes | None:
    chunks = b""
    while len(chunks) < n:
        chunk = sock.recv(n - len(chunks))
        if not chunk:
            return None
        chunks += chunk
    return chunks


def connect(port: int, timeout_s: float = 30.0) -> socket.socket:
    """A socket to the server, whose connect and reads give up after ``timeout_s``: generous, as it only bounds a
    failing test (the server thread shares two cores with everything else in CI)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
    return sock
