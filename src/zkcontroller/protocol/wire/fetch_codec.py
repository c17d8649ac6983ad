"""Fetch (api key 1) between brokers on the wire, for the offsets-only data plane.

A follower's fetch names, per partition, its current leader epoch and its log end offset; the leader answers
with an error, its high watermark, and the records the follower appends. Our logs hold offsets, not payloads,
so those travel as one v2 record batch (``baseOffset`` = the fetch offset) of empty records — null key, null
value, no headers, 7–9 bytes each — which tshark's Kafka dissector reads as such. The batch CRC is left 0 (no
CRC-32C in the standard library; our followers do not check it). ``partition_max_bytes`` carries the record
limit the follower asks for.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from typing import Any

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import FetchPartition, FetchPartitionResult, FetchRequest, FetchResponse
from zkcontroller.protocol.wire import codec
from zkcontroller.protocol.wire.codec import WireFormatError
from zkcontroller.protocol.wire.messages import FETCH

_BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")
"""baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta, firstTimestamp,
maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount: Kafka's v2 record batch header (61 bytes)."""
_AFTER_LENGTH = _BATCH_HEADER.size - 12
"""batchLength counts the bytes after baseOffset and batchLength themselves."""


def _varint(value: int) -> bytes:
    """Kafka's zig-zag varint."""
    n = (value << 1) ^ (value >> 63)
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_EMPTY_RECORD_TAIL = b"\x00\x00"  # attributes, timestampDelta 0
_NULL_KEY_VALUE_NO_HEADERS = _varint(-1) + _varint(-1) + _varint(0)


def _record(offset_delta: int) -> bytes:
    body = _EMPTY_RECORD_TAIL + _varint(offset_delta) + _NULL_KEY_VALUE_NO_HEADERS
    return _varint(len(body)) + body


def encode_records(base_offset: int, count: int) -> bytes:
    """``count`` empty records from ``base_offset`` as one record batch; no bytes (not null, as Kafka) for zero."""
    if count <= 0:
        return b""
    records = b"".join(_record(i) for i in range(count))
    return _BATCH_HEADER.pack(base_offset, _AFTER_LENGTH + len(records), -1, 2, 0, 0, count - 1, -1, -1, -1, -1,
                              -1, count) + records


def decode_records(data: bytes | None) -> int:
    """How many offsets a fetched record set carries (summing every batch header in it)."""
    if not data:
        return 0
    view, total, pos = memoryview(data), 0, 0
    while pos + _BATCH_HEADER.size <= len(view):
        fields = _BATCH_HEADER.unpack_from(view, pos)
        if fields[3] != 2:
            raise WireFormatError(f"record batch at byte {pos}: magic {fields[3]}, expected 2")
        total += fields[12]
        pos += 12 + fields[1]
    return total


def _by_topic(items: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = defaultdict(list)
    for item in items:
        out[item.topic_partition.topic].append(item)
    return out


def encode_request(request: FetchRequest, version: int) -> bytes:
    return codec.encode(FETCH.request, version, {
        "cluster_id": None, "replica_id": request.replica_id, "max_wait_ms": 0, "min_bytes": 1,
        "max_bytes": 0x7FFFFFFF, "isolation_level": 0, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic": t, "partitions": [
            {"partition": p.topic_partition.partition, "current_leader_epoch": p.current_leader_epoch,
             "fetch_offset": p.fetch_offset, "last_fetched_epoch": -1, "log_start_offset": -1,
             "partition_max_bytes": request.max_records} for p in ps]}
            for t, ps in _by_topic(request.partitions).items()],
        "forgotten_topics_data": [], "rack_id": ""})


def decode_request(version: int, buf: bytes | memoryview, offset: int) -> FetchRequest:
    d = codec.decode(FETCH.request, version, buf, offset, exact=False)
    partitions = tuple(FetchPartition(TopicPartition(t["topic"], p["partition"]), p["current_leader_epoch"],
                                      p["fetch_offset"]) for t in d["topics"] for p in t["partitions"])
    limits = {p["partition_max_bytes"] for t in d["topics"] for p in t["partitions"]}
    return FetchRequest(d["replica_id"], partitions, max(limits) if limits else 10_000)


def encode_response(response: FetchResponse, version: int, request: FetchRequest | None) -> bytes:
    offsets = {p.topic_partition: p.fetch_offset for p in request.partitions} if request is not None else {}
    return codec.encode(FETCH.response, version, {
        "throttle_time_ms": 0, "error_code": int(response.error), "session_id": 0,
        "responses": [{"topic": t, "partition_responses": [
            {"partition": r.topic_partition.partition, "error_code": int(r.error),
             "high_watermark": r.high_watermark, "last_stable_offset": r.high_watermark, "log_start_offset": 0,
             "aborted_transactions": [], "preferred_read_replica": -1,
             "record_set": encode_records(offsets.get(r.topic_partition, 0), r.records)} for r in rs]}
            for t, rs in _by_topic(response.partitions).items()]})


def _error(code: int) -> Errors:
    try:
        return Errors(code)
    except ValueError:
        return Errors.UNKNOWN_SERVER_ERROR


def decode_response(version: int, buf: bytes | memoryview, offset: int) -> FetchResponse:
    d = codec.decode(FETCH.response, version, buf, offset)
    return FetchResponse(_error(d.get("error_code") or 0), tuple(
        FetchPartitionResult(TopicPartition(t["topic"], p["partition"]), _error(p["error_code"]),
                             p["high_watermark"], decode_records(p["record_set"]))
        for t in d["responses"] for p in t["partition_responses"]))
