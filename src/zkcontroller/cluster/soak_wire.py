"""The chaos soak's questions to one broker over Kafka's wire protocol: its Metadata view (leader, leader epoch and
ISR per partition, Metadata v7) and its high watermarks (ListOffsets v4, latest, as a consumer asks), each on a
fresh connection bounded by a timeout, so a paused or dying broker costs the soak at most that."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterable, Mapping
from typing import Any

from kio.serial import entity_reader, entity_writer

from zkcontroller.admin.metadata_client import exchange
from zkcontroller.cluster.soak_checks import BrokerPartitionView
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire.client_apis import LIST_OFFSETS, METADATA, schema_module
from zkcontroller.protocol.wire.codec import WireFormatError
from zkcontroller.protocol.wire.frames import RequestHeader, decode_response_header, encode_request_header, frame

METADATA_VERSION = 7
LIST_OFFSETS_VERSION = 4
LATEST_TIMESTAMP = -1
CONSUMER = -1


class BrokerUnavailable(OSError):
    """The broker did not answer (refused, timed out, closed) or answered bytes we cannot read."""


async def _ask(port: int, api_key: int, version: int, body: Any, timeout_s: float) -> Any:
    buf = io.BytesIO()
    entity_writer(type(body))(buf, body)
    header = encode_request_header(RequestHeader(api_key, version, 1, "zkcontroller-soak"))
    try:
        payload = await exchange("127.0.0.1", port, frame(header, buf.getvalue()), timeout_s)
    except TimeoutError:
        raise BrokerUnavailable(f"no answer from 127.0.0.1:{port} within {timeout_s:g} s") from None
    except (OSError, asyncio.IncompleteReadError) as e:
        raise BrokerUnavailable(f"127.0.0.1:{port}: {e}") from None
    except WireFormatError as e:
        raise BrokerUnavailable(f"127.0.0.1:{port} answered unreadable bytes: {e}") from None
    try:
        _, offset = decode_response_header(payload, api_key, version)
        cls = schema_module(api_key, version, "response")
        name = "MetadataResponse" if api_key == METADATA else "ListOffsetsResponse"
        response, _ = entity_reader(getattr(cls, name))(memoryview(payload)[offset:], 0)
    except Exception as e:  # kio's reader raises several types for bad bytes
        raise BrokerUnavailable(f"127.0.0.1:{port} answered unreadable bytes: {e}") from None
    return response


async def metadata_view(port: int, topics: Iterable[str], timeout_s: float = 3.0
                        ) -> dict[TopicPartition, BrokerPartitionView]:
    """Leader, leader epoch and ISR of every partition of ``topics`` the broker knows (leaderless ones too)."""
    m = schema_module(METADATA, METADATA_VERSION, "request")
    body = m.MetadataRequest(topics=tuple(m.MetadataRequestTopic(name=t) for t in sorted(set(topics))),
                             allow_auto_topic_creation=False)
    response = await _ask(port, METADATA, METADATA_VERSION, body, timeout_s)
    return {TopicPartition(str(t.name), int(p.partition_index)):
            BrokerPartitionView(int(p.leader_id), int(p.leader_epoch), tuple(int(b) for b in p.isr_nodes))
            for t in response.topics if int(t.error_code) == 0 for p in t.partitions}


async def high_watermarks(port: int, partitions: Mapping[TopicPartition, int], timeout_s: float = 3.0
                          ) -> dict[TopicPartition, int]:
    """The latest offset (the high watermark, as a consumer reads it) of each of ``partitions`` (tp → the leader
    epoch ZooKeeper gives) this broker answers without an error: it leads them at that epoch (a leader at another
    answers FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH) and its watermark is usable."""
    m = schema_module(LIST_OFFSETS, LIST_OFFSETS_VERSION, "request")
    by_topic: dict[str, list[tuple[int, int]]] = {}
    for tp, epoch in partitions.items():
        by_topic.setdefault(tp.topic, []).append((tp.partition, epoch))
    body = m.ListOffsetsRequest(replica_id=CONSUMER, isolation_level=0, topics=tuple(
        m.ListOffsetsTopic(name=t, partitions=tuple(
            m.ListOffsetsPartition(partition_index=p, current_leader_epoch=e, timestamp=LATEST_TIMESTAMP)
            for p, e in sorted(ps))) for t, ps in sorted(by_topic.items())))
    response = await _ask(port, LIST_OFFSETS, LIST_OFFSETS_VERSION, body, timeout_s)
    return {TopicPartition(str(t.name), int(p.partition_index)): int(p.offset)
            for t in response.topics for p in t.partitions if int(p.error_code) == 0}


async def active_controller(metrics_port: int, timeout_s: float = 3.0) -> bool:
    """The broker's ActiveControllerCount gauge (its Prometheus endpoint) is 1; raises when it cannot be read."""
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_connection("127.0.0.1", metrics_port)
            try:
                writer.write(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                await writer.drain()
                text = (await reader.read()).decode(errors="replace")
            finally:
                writer.close()
    except (TimeoutError, OSError) as e:
        raise BrokerUnavailable(f"metrics 127.0.0.1:{metrics_port}: {e or 'timed out'}") from None
    for line in text.splitlines():
        if line.startswith("kafka_controller_kafkacontroller_activecontrollercount"):
            return float(line.split()[-1]) >= 1
    raise BrokerUnavailable(f"metrics 127.0.0.1:{metrics_port}: no ActiveControllerCount")
