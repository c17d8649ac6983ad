"""Ask one broker, over Kafka's wire protocol, which replicas its metadata lists for some partitions.

`zkcontroller reassign --verify --check-brokers` uses it: Kafka 2.8's tool (and plain ``--verify``) reports a
reassignment complete from ZooKeeper alone; with the flag a user can also confirm every broker already serves the
new replica set. Metadata v1 is enough (replicas per partition) and every Kafka broker since 0.10 answers it.
"""

from __future__ import annotations

import asyncio
import io
import struct
from collections.abc import Iterable

from kio.serial import entity_reader, entity_writer

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire.client_apis import METADATA, schema_module
from zkcontroller.protocol.wire.codec import WireFormatError
from zkcontroller.protocol.wire.frames import RequestHeader, decode_response_header, encode_request_header, frame

METADATA_VERSION = 1
_SIZE = struct.Struct(">i")
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


class MetadataUnavailableError(OSError):
    """The broker could not be asked (refused, timed out, closed, or answered with bytes we cannot read)."""


async def exchange(host: str, port: int, request_frame: bytes, timeout_s: float) -> bytes:
    """One request frame sent on a fresh connection and its answer's payload, all within ``timeout_s``. Raises
    TimeoutError, OSError, `asyncio.IncompleteReadError`, or `WireFormatError` for a size prefix outside
    1..`MAX_RESPONSE_BYTES`, so a bad answer never makes us allocate what it claims."""
    async with asyncio.timeout(timeout_s):
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(request_frame)
            await writer.drain()
            return await read_response(reader)
        finally:
            writer.close()


async def read_response(reader: asyncio.StreamReader) -> bytes:
    """One size-prefixed response's payload; `WireFormatError` for a size outside 1..`MAX_RESPONSE_BYTES`, read
    before anything is allocated for it."""
    size = _SIZE.unpack(await reader.readexactly(4))[0]
    if not 0 < size <= MAX_RESPONSE_BYTES:
        raise WireFormatError(f"response size {size}")
    return await reader.readexactly(size)


def _request(topics: Iterable[str], correlation_id: int) -> bytes:
    m = schema_module(METADATA, METADATA_VERSION, "request")
    body = m.MetadataRequest(topics=tuple(m.MetadataRequestTopic(name=t) for t in sorted(set(topics))))
    buf = io.BytesIO()
    entity_writer(type(body))(buf, body)
    header = encode_request_header(RequestHeader(METADATA, METADATA_VERSION, correlation_id, "zkcontroller-reassign"))
    return frame(header, buf.getvalue())


def _replicas(payload: bytes, correlation_id: int) -> dict[TopicPartition, tuple[int, ...]]:
    got, offset = decode_response_header(payload, METADATA, METADATA_VERSION)
    if got != correlation_id:
        raise WireFormatError(f"correlation id {got}, expected {correlation_id}")
    cls = schema_module(METADATA, METADATA_VERSION, "response").MetadataResponse
    try:
        response, _ = entity_reader(cls)(memoryview(payload)[offset:], 0)
    except Exception as e:  # kio's reader raises several types for bad bytes
        raise WireFormatError(f"MetadataResponse v{METADATA_VERSION}: {e}") from None
    return {TopicPartition(str(t.name), int(p.partition_index)): tuple(int(r) for r in p.replica_nodes)
            for t in response.topics if int(t.error_code) == 0
            for p in t.partitions if int(p.error_code) == 0}


async def partition_replicas(host: str, port: int, topics: Iterable[str], timeout_ms: int = 5000
                             ) -> dict[TopicPartition, tuple[int, ...]]:
    """Replicas per partition of ``topics`` as the broker at ``host:port`` reports them (partitions it does not
    know are absent). Raises `MetadataUnavailableError` saying why when it cannot be asked."""
    correlation_id = 1
    try:
        return _replicas(await exchange(host, port, _request(topics, correlation_id), timeout_ms / 1000),
                         correlation_id)
    except TimeoutError:
        raise MetadataUnavailableError(f"no answer from {host}:{port} within {timeout_ms} ms") from None
    except (OSError, asyncio.IncompleteReadError) as e:
        raise MetadataUnavailableError(f"{host}:{port}: {e}") from None
    except WireFormatError as e:
        raise MetadataUnavailableError(f"{host}:{port} answered with unreadable bytes: {e}") from None
