"""Produce (API 0) through `KafkaApis.handle`, as Kafka 2.8's ``handleProduceRequest`` / ``appendRecords`` /
``DelayedProduce`` answer it, over real `Partition` state and a real metadata cache: each partition error in
Kafka's order, acks=1 answering after the leader's append, acks=0 answering nothing (or closing the connection on
an error), acks=-1 waiting for the high watermark, an ISR shrink, a lost leadership or the request's timeout (on
a runtime whose clock the test moves), and malformed requests closing the connection."""

from __future__ import annotations

import asyncio
import io
import struct
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder
from kio.serial import entity_reader, entity_writer
from tests.helpers import ManualRuntime, until_idle

from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.delayed_produce import ProduceWaiters
from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.broker.partition import Partition
from zkcontroller.broker.produce import ProducePartition, ProduceTarget, produce
from zkcontroller.model import LeaderAndIsr, TopicPartition
from zkcontroller.protocol.wire import codec
from zkcontroller.protocol.wire.client_apis import (
    PRODUCE,
    PRODUCE_REQUEST,
    PRODUCE_RESPONSE,
    decode_produce_request,
    schema_module,
)
from zkcontroller.protocol.wire.codec import WireFormatError
from zkcontroller.protocol.wire.frames import decode_response_header
from zkcontroller.protocol.wire.record_sets import crc32c

from .server_fixture import BROKER_EPOCH, request_frame, seed_metadata

ORDERS_0, ORDERS_1 = TopicPartition("orders", 0), TopicPartition("orders", 1)
NONE, CORRUPT_MESSAGE, UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER = 0, 2, 3, 6
REQUEST_TIMED_OUT, INVALID_TOPIC_EXCEPTION, NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND = 7, 17, 19, 20
INVALID_REQUIRED_ACKS, KAFKA_STORAGE_ERROR, UNSUPPORTED_COMPRESSION_TYPE, INVALID_RECORD = 21, 56, 76, 87
UNKNOWN_SERVER_ERROR = -1
BOUND_S = 5.0
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Replicas:
    """What `KafkaApis` reads from a replica manager for Produce: `produce_target`."""

    def __init__(self) -> None:
        self.parts: dict[TopicPartition, Partition] = {}
        self.offline: frozenset[TopicPartition] = frozenset()
        self.runtime = ManualRuntime()
        self.waiters = ProduceWaiters()
        self.min_isr = 1
        self.log_append_time_topics: set[str] = set()
        """Topics whose ``message.timestamp.type`` is LogAppendTime."""

    def produce_target(self) -> ProduceTarget:
        return ProduceTarget(partition=self.parts.get, runtime=self.runtime, offline=lambda: self.offline,  # type: ignore[arg-type]
                             waiters=self.waiters, min_insync_replicas=lambda _t: self.min_isr, broker_id=1,
                             log_append_time=lambda t: t in self.log_append_time_topics)


def leader(tp: TopicPartition, leo: int) -> Partition:
    """Broker 1 leading ``tp`` with follower 2 in the ISR, both at ``leo``."""
    p = Partition(tp, 1)
    p.make_leader(4, (1, 2), (1, 2), 0, 1, now_ms=0)
    p.append_as_leader(leo, now_ms=0)
    p.record_follower_fetch(2, leo, now_ms=0)
    return p


@pytest.fixture
def apis() -> tuple[KafkaApis, Replicas]:
    plane = BrokerControlPlane(1, BROKER_EPOCH)
    seed_metadata(plane, 9092)  # orders-0 led by 1, orders-1 led by 2
    replicas = Replicas()
    replicas.parts[ORDERS_0] = leader(ORDERS_0, 10)
    replicas.parts[ORDERS_0].on_high_watermark_increase = replicas.waiters.wake
    return KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: plane.metadata_cache,
                     cluster_id=lambda: "c", replica_manager=lambda: replicas), replicas  # type: ignore[arg-type,return-value]


def batch(n: int, magic: int = 2) -> bytes:
    b = MemoryRecordsBuilder(magic=magic, compression_type=0, batch_size=1 << 20)
    for i in range(n):
        b.append(timestamp=1_000, key=None, value=b"line %d" % i)
    b.close()
    return bytes(b.buffer())


def _build(cls: type, **values: Any) -> Any:
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in values.items() if k in names})


def frame(version: int, acks: int, topics: list[tuple[str, list[tuple[int, bytes | None]]]],
          timeout_ms: int = 30_000, client_id: str = "test", transactional_id: str | None = None) -> bytes:
    m = schema_module(PRODUCE, version, "request")
    request = _build(m.ProduceRequest, transactional_id=transactional_id, acks=acks,
                     timeout=timedelta(milliseconds=timeout_ms),
                     topic_data=tuple(_build(m.TopicProduceData, name=name, partition_data=tuple(
                         _build(m.PartitionProduceData, index=p, records=records) for p, records in parts))
                                      for name, parts in topics))
    buf = io.BytesIO()
    entity_writer(type(request))(buf, request)
    return request_frame(PRODUCE, version, 7, buf.getvalue(), client_id)[4:]


def timed_answers(payload: bytes | None, version: int) -> list[tuple[str, int, int, int, int | None, int]]:
    """(topic, partition, error, base offset, log start offset: None before v5, log append time: -1 before v2)
    per answered partition, read with kio's own reader (whose datetime cannot hold every int64) when it can."""
    assert payload is not None
    correlation_id, offset = decode_response_header(payload, PRODUCE, version)
    assert correlation_id == 7
    value = codec.decode(PRODUCE_RESPONSE, version, payload, offset)
    timed = [(t["name"], p["index"], p["error_code"], p["base_offset"], p["log_start_offset"] if version >= 5 else None,
              p["log_append_time_ms"]) for t in value["responses"] for p in t["partitions"]]
    if version >= 3 and all(-1 <= a[-1] < 2**40 for a in timed):  # the same answers through kio's reader
        m = schema_module(PRODUCE, version, "response")
        response, _ = entity_reader(m.ProduceResponse)(memoryview(payload)[offset:], 0)
        assert [(t.name, p.index, int(p.error_code), p.base_offset, getattr(p, "log_start_offset", None),
                 -1 if p.log_append_time is None else (p.log_append_time - EPOCH) // timedelta(milliseconds=1))
                for t in response.responses for p in t.partition_responses] == timed
    return timed


def answers(payload: bytes | None, version: int) -> list[tuple[str, int, int, int, int | None]]:
    """(topic, partition, error, base offset, log start offset: None before v5) per answered partition; every log
    append time -1 (CreateTime)."""
    timed = timed_answers(payload, version)
    assert all(a[-1] == -1 for a in timed)
    return [a[:-1] for a in timed]


async def send(api: KafkaApis, version: int, acks: int, topics: list[tuple[str, list[tuple[int, bytes | None]]]],
               **kw: Any) -> list[tuple[str, int, int, int, int | None]]:
    return answers(await api.handle(frame(version, acks, topics, **kw)), version)


@pytest.mark.parametrize("version", [3, 5, 8, 9])
async def test_acks_1_appends_and_answers_the_base_offset(apis, version: int) -> None:
    api, replicas = apis
    log_start = 0 if version >= 5 else None  # the field's first version
    assert await send(api, version, 1, [("orders", [(0, batch(5))])]) == [("orders", 0, NONE, 10, log_start)]
    assert await send(api, version, 1, [("orders", [(0, batch(2))])]) == [("orders", 0, NONE, 15, log_start)]
    assert replicas.parts[ORDERS_0].log_end_offset == 17
    assert replicas.parts[ORDERS_0].high_watermark == 10  # the follower has not fetched


async def test_versions_advertised_are_kafka_2_8s(apis) -> None:
    api, _ = apis
    assert api.supported_versions()[PRODUCE] == (0, 9)


def legacy_frame(version: int, acks: int, topics: list[tuple[str, list[tuple[int, bytes | None]]]]) -> bytes:
    """A Produce v0-v2 request payload, through our table (kio has no schema for these versions)."""
    body = codec.encode(PRODUCE_REQUEST, version, {"acks": acks, "timeout_ms": 30_000, "topics": [
        {"name": name, "partitions": [{"index": p, "records": r} for p, r in parts]} for name, parts in topics]})
    return request_frame(PRODUCE, version, 7, body)[4:]


def legacy_answers(payload: bytes | None, version: int,
                   append_time: int = -1) -> list[tuple[str, int, int, int]]:
    """(topic, partition, error, base offset) per answered partition; v2's log append times all ``append_time``."""
    assert payload is not None
    correlation_id, offset = decode_response_header(payload, PRODUCE, version)
    assert correlation_id == 7
    value = codec.decode(PRODUCE_RESPONSE, version, payload, offset)
    assert version < 1 or value["throttle_time_ms"] == 0
    assert version < 2 or all(p["log_append_time_ms"] == append_time
                              for t in value["responses"] for p in t["partitions"])
    return [(t["name"], p["index"], p["error_code"], p["base_offset"])
            for t in value["responses"] for p in t["partitions"]]


def legacy_set(n: int, magic: int, compression: int = 0) -> bytes:
    b = MemoryRecordsBuilder(magic=magic, compression_type=compression, batch_size=1 << 20)
    for i in range(n):
        b.append(timestamp=None if magic == 0 else 1_000, key=None, value=b"line %d" % i)
    b.close()
    return bytes(b.buffer())


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_v0_to_v2_take_legacy_message_sets_and_v2_batches(apis, version: int) -> None:
    """Gzip wrappers are opened and their messages counted; several entries may come in one set; a set mixing
    magics is INVALID_RECORD; a corrupt legacy message CORRUPT_MESSAGE."""
    api, replicas = apis
    corrupt_legacy = bytearray(legacy_set(2, 1))
    corrupt_legacy[-1] ^= 1
    sets = [(0, legacy_set(3, 0)), (0, legacy_set(4, 1, compression=1)), (0, legacy_set(2, 1) + legacy_set(2, 1)),
            (0, batch(5)), (0, legacy_set(1, 1) + batch(1)), (0, bytes(corrupt_legacy)), (1, legacy_set(1, 0))]
    answered = [legacy_answers(await api.handle(legacy_frame(version, 1, [("orders", [one])])), version)[0]
                for one in sets]  # one request each: a partition named twice in one request is answered once
    assert answered == [
        ("orders", 0, NONE, 10), ("orders", 0, NONE, 13), ("orders", 0, NONE, 17), ("orders", 0, NONE, 21),
        ("orders", 0, INVALID_RECORD, -1), ("orders", 0, CORRUPT_MESSAGE, -1),
        ("orders", 1, NOT_LEADER_OR_FOLLOWER, -1)]
    assert replicas.parts[ORDERS_0].log_end_offset == 26


async def test_v0_acks_0_sends_nothing(apis) -> None:
    api, replicas = apis
    assert await api.handle(legacy_frame(0, 0, [("orders", [(0, legacy_set(3, 0))])])) is None
    assert replicas.parts[ORDERS_0].log_end_offset == 13


async def test_unknown_and_unhosted_partitions(apis) -> None:
    """Not in the cache: UNKNOWN_TOPIC_OR_PARTITION; known but not hosted here, or followed:
    NOT_LEADER_OR_FOLLOWER."""
    api, replicas = apis
    assert await send(api, 8, 1, [("nope", [(0, batch(1))]), ("orders", [(1, batch(1)), (9, batch(1))])]) == [
        ("nope", 0, UNKNOWN_TOPIC_OR_PARTITION, -1, -1), ("orders", 1, NOT_LEADER_OR_FOLLOWER, -1, -1),
        ("orders", 9, UNKNOWN_TOPIC_OR_PARTITION, -1, -1)]
    follower = Partition(ORDERS_1, 1)
    follower.make_follower(2, 3, (2, 1), (2, 1), 0, 1)
    replicas.parts[ORDERS_1] = follower
    assert await send(api, 8, 1, [("orders", [(1, batch(1))])]) == [("orders", 1, NOT_LEADER_OR_FOLLOWER, -1, -1)]
    assert follower.log_end_offset == 0


async def test_an_offline_partition_is_kafka_storage_error(apis) -> None:
    api, replicas = apis
    replicas.offline = frozenset({ORDERS_0})
    assert await send(api, 8, 1, [("orders", [(0, batch(1))])]) == [("orders", 0, KAFKA_STORAGE_ERROR, -1, -1)]
    assert replicas.parts[ORDERS_0].log_end_offset == 10


async def test_acks_all_below_min_insync_replicas_is_not_enough_replicas_and_appends_nothing(apis) -> None:
    api, replicas = apis
    replicas.min_isr = 3
    assert await send(api, 8, -1, [("orders", [(0, batch(1))])]) == [("orders", 0, NOT_ENOUGH_REPLICAS, -1, 0)]
    assert replicas.parts[ORDERS_0].log_end_offset == 10
    assert await send(api, 8, 1, [("orders", [(0, batch(1))])]) == [("orders", 0, NONE, 10, 0)]  # acks=1: no check


async def test_acks_outside_the_three_values_is_invalid_required_acks_after_the_cache_check(apis) -> None:
    api, replicas = apis
    assert await send(api, 8, 2, [("orders", [(0, batch(1))]), ("nope", [(0, batch(1))])]) == [
        ("orders", 0, INVALID_REQUIRED_ACKS, -1, -1), ("nope", 0, UNKNOWN_TOPIC_OR_PARTITION, -1, -1)]
    assert replicas.parts[ORDERS_0].log_end_offset == 10


async def test_internal_topics_take_appends_from_the_admin_client_only(apis) -> None:
    _, replicas = apis
    tp = TopicPartition("__consumer_offsets", 0)
    replicas.parts[tp] = leader(tp, 0)
    everything = SimpleNamespace(contains=lambda _tp: True)
    ask = [ProducePartition("__consumer_offsets", 0, batch(2))]
    answered = await produce(8, 1, 1_000, "app", ask, cache=everything, target=replicas.produce_target())  # type: ignore[arg-type]
    assert [(a.error, a.base_offset) for a in answered] == [(INVALID_TOPIC_EXCEPTION, -1)]
    answered = await produce(8, 1, 1_000, "__admin_client", ask, cache=everything,  # type: ignore[arg-type]
                             target=replicas.produce_target())
    assert [(a.error, a.base_offset) for a in answered] == [(NONE, 0)]


def corrupt(data: bytes) -> bytes:
    out = bytearray(data)
    out[-1] ^= 1
    return bytes(out)


async def test_record_set_errors_in_kafkas_order(apis) -> None:
    """Structure and versions are checked before the partition (even on a follower), the CRC at the append (a
    follower then answers NOT_LEADER_OR_FOLLOWER first)."""
    api, replicas = apis
    short = batch(1)[:8] + struct.pack(">i", 5) + batch(1)[12:]
    zstd = bytearray(batch(2))
    zstd[22] = 4
    sets = [(0, corrupt(batch(3))), (1, corrupt(batch(3))), (0, short), (1, batch(2, magic=1)), (0, b""),
            (0, batch(1) + batch(1)), (0, bytes(zstd)), (1, short)]
    assert [(await send(api, 5, 1, [("orders", [one])]))[0] for one in sets] == [
        ("orders", 0, CORRUPT_MESSAGE, -1, -1), ("orders", 1, NOT_LEADER_OR_FOLLOWER, -1, -1),
        ("orders", 0, CORRUPT_MESSAGE, -1, -1), ("orders", 1, INVALID_RECORD, -1, -1),
        ("orders", 0, INVALID_RECORD, -1, -1), ("orders", 0, INVALID_RECORD, -1, -1),
        ("orders", 0, UNSUPPORTED_COMPRESSION_TYPE, -1, -1), ("orders", 1, CORRUPT_MESSAGE, -1, -1)]
    assert replicas.parts[ORDERS_0].log_end_offset == 10
    # and the broker keeps answering
    assert await send(api, 5, 1, [("orders", [(0, batch(4))])]) == [("orders", 0, NONE, 10, 0)]


def messages(payload: bytes | None) -> list[tuple[int, int, str | None]]:
    """(error, log start offset, error message) per partition of a v8 answer."""
    assert payload is not None
    _, offset = decode_response_header(payload, PRODUCE, 8)
    response, _ = entity_reader(schema_module(PRODUCE, 8, "response").ProduceResponse)(memoryview(payload)[offset:], 0)
    return [(int(p.error_code), p.log_start_offset, p.error_message)
            for t in response.responses for p in t.partition_responses]


async def test_append_failures_answer_the_log_start_offset_and_are_logged_without_a_message(apis, caplog) -> None:
    """As Kafka 2.8.2: LogValidator.validateBatch's InvalidRecordException (INVALID_RECORD at the append) is none of
    appendToLocalLog's known exceptions nor a RecordValidationException: answered with the log start offset and no
    message, logged at ERROR, as NOT_ENOUGH_REPLICAS; validateRecords' and the CRC's errors answer the code alone.
    (Only record errors carry a message: `test_a_legacy_wrapper_refused_unexpectedly_...`.)"""
    api, replicas = apis
    control = bytearray(batch(1))
    control[22] |= 0x20
    control[17:21] = crc32c(bytes(control[21:])).to_bytes(4, "big")
    offset_5 = bytearray(batch(1))
    offset_5[0:8] = (5).to_bytes(8, "big")  # outside the CRC
    replicas.min_isr = 3
    caplog.set_level("ERROR", logger="kafka.server.ReplicaManager")
    answered = [messages(await api.handle(frame(8, acks, [("orders", [(0, r)])])))[0]
                for acks, r in ((1, bytes(control)), (1, bytes(offset_5)), (1, corrupt(batch(1))), (1, b""),
                                (-1, batch(1)))]
    assert answered == [(INVALID_RECORD, 0, None), (INVALID_RECORD, 0, None),
                        (CORRUPT_MESSAGE, -1, None), (INVALID_RECORD, -1, None), (NOT_ENOUGH_REPLICAS, 0, None)]
    errors = [r.getMessage() for r in caplog.records]
    assert errors == [  # Kafka's messages, which name the partition again
        "[ReplicaManager broker=1] Error processing append operation on partition orders-0\n"
        "org.apache.kafka.common.InvalidRecordException: Clients are not allowed to write control records in topic "
        "partition orders-0.",
        "[ReplicaManager broker=1] Error processing append operation on partition orders-0\n"
        "org.apache.kafka.common.InvalidRecordException: The baseOffset of the record batch in the append to "
        "orders-0 should be 0, but it is 5",
        "[ReplicaManager broker=1] Error processing append operation on partition orders-0\n"
        "org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR Set(1, 2) is "
        "insufficient to satisfy the min.isr requirement of 3 for partition orders-0"]


async def test_a_partition_named_twice_is_appended_once_with_its_last_records(apis) -> None:
    api, replicas = apis
    assert await send(api, 8, 1, [("orders", [(0, batch(3)), (1, batch(1)), (0, batch(5))])]) == [
        ("orders", 0, NONE, 10, 0), ("orders", 1, NOT_LEADER_OR_FOLLOWER, -1, -1)]
    assert replicas.parts[ORDERS_0].log_end_offset == 15


async def test_null_records_fail_at_the_append_as_kafkas_null_pointer_does(apis) -> None:
    api, _ = apis
    assert await send(api, 8, 1, [("orders", [(0, None)])]) == [("orders", 0, -1, -1, 0)]


async def test_acks_0_sends_no_response_and_closes_the_connection_on_an_error(apis) -> None:
    api, replicas = apis
    assert await api.handle(frame(8, 0, [("orders", [(0, batch(3))])])) is None
    assert replicas.parts[ORDERS_0].log_end_offset == 13
    with pytest.raises(CloseConnection, match="ack=0"):
        await api.handle(frame(8, 0, [("orders", [(0, batch(3)), (1, batch(1))])]))
    assert replicas.parts[ORDERS_0].log_end_offset == 16  # the good partition was appended, as in Kafka


async def test_acks_all_waits_for_the_high_watermark(apis) -> None:
    api, replicas = apis
    p = replicas.parts[ORDERS_0]
    task = asyncio.create_task(send(api, 8, -1, [("orders", [(0, batch(5))])]))
    await _until(lambda: replicas.waiters.waiting() == 1)
    assert not task.done() and p.log_end_offset == 15
    p.record_follower_fetch(2, 12, now_ms=0)  # part of the way: still waiting
    await until_idle()  # the wake-up handled: the request checked the HW (12) and waits on
    assert not task.done() and replicas.waiters.waiting() == 1
    p.record_follower_fetch(2, 15, now_ms=0)
    assert await asyncio.wait_for(task, BOUND_S) == [("orders", 0, NONE, 10, 0)]
    assert replicas.waiters.waiting() == 0


async def test_acks_all_times_out_on_the_runtime_clock(apis) -> None:
    api, replicas = apis
    task = asyncio.create_task(send(api, 8, -1, [("orders", [(0, batch(5))])], timeout_ms=1_000))
    await _until(lambda: replicas.waiters.waiting() == 1)
    await until_idle()
    assert replicas.runtime.sleeping() == [1_000]  # the request's timeout, from its start at 0
    replicas.runtime.advance(999)
    await until_idle()
    assert not task.done()
    replicas.runtime.advance(1)
    assert await asyncio.wait_for(task, BOUND_S) == [("orders", 0, REQUEST_TIMED_OUT, 10, 0)]
    assert replicas.waiters.waiting() == 0


async def test_acks_all_with_a_zero_timeout_completes_if_already_replicated_else_times_out(apis) -> None:
    api, replicas = apis
    p = replicas.parts[ORDERS_0]
    task = asyncio.create_task(send(api, 8, -1, [("orders", [(0, batch(2))])], timeout_ms=0))
    assert await asyncio.wait_for(task, BOUND_S) == [("orders", 0, REQUEST_TIMED_OUT, 10, 0)]
    p.record_follower_fetch(2, 12, now_ms=0)
    p.isr = (1,)  # a lone leader: its HW moves on its own append, so the first check completes the request
    p.followers = {}
    assert await asyncio.wait_for(send(api, 8, -1, [("orders", [(0, batch(2))])], timeout_ms=0), BOUND_S) == [
        ("orders", 0, NONE, 12, 0)]


async def test_acks_all_after_the_isr_shrank_below_min_insync_is_not_enough_replicas_after_append(apis) -> None:
    api, replicas = apis
    replicas.min_isr = 2
    p = replicas.parts[ORDERS_0]
    task = asyncio.create_task(send(api, 8, -1, [("orders", [(0, batch(5))])]))
    await _until(lambda: replicas.waiters.waiting() == 1)
    proposal = p.maybe_shrink_isr(now_ms=p.replica_lag_time_max_ms + 1, max_lag_ms=p.replica_lag_time_max_ms)
    assert proposal is not None
    p.on_isr_update(proposal, LeaderAndIsr(1, 4, (1,), 1), now_ms=p.replica_lag_time_max_ms + 1)
    assert p.high_watermark == 15  # the shrink moved the HW to the leader's LEO
    assert await asyncio.wait_for(task, BOUND_S) == [("orders", 0, NOT_ENOUGH_REPLICAS_AFTER_APPEND, 10, 0)]


async def test_acks_all_on_a_leader_that_loses_leadership_is_not_leader_or_follower(apis) -> None:
    api, replicas = apis
    p = replicas.parts[ORDERS_0]
    task = asyncio.create_task(send(api, 8, -1, [("orders", [(0, batch(5))])]))
    await _until(lambda: replicas.waiters.waiting() == 1)
    p.make_follower(2, 5, (2, 1), (1, 2), 1, 1)
    replicas.waiters.wake(ORDERS_0)  # what the replica manager does after a LeaderAndIsr
    assert await asyncio.wait_for(task, BOUND_S) == [("orders", 0, NOT_LEADER_OR_FOLLOWER, 10, 0)]


async def test_acks_all_with_every_partition_failed_answers_at_once(apis) -> None:
    api, replicas = apis
    assert await asyncio.wait_for(send(api, 8, -1, [("orders", [(1, batch(1))])]), BOUND_S) == [
        ("orders", 1, NOT_LEADER_OR_FOLLOWER, -1, -1)]
    assert replicas.waiters.waiting() == 0


async def test_a_records_length_beyond_the_request_closes_the_connection(apis) -> None:
    api, replicas = apis
    good = frame(8, 1, [("orders", [(0, batch(1))])])
    records_at = good.index(batch(1)) - 4
    bad = good[:records_at] + struct.pack(">i", 1 << 30) + good[records_at + 4:]
    with pytest.raises(CloseConnection):
        await api.handle(bad)
    with pytest.raises(CloseConnection):
        await api.handle(good[:-10])
    assert replicas.parts[ORDERS_0].log_end_offset == 10


async def _until(condition: Any) -> None:
    """Yield to the loop until ``condition()`` holds, at most 1,000 times (no wall time involved)."""
    for _ in range(1_000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition not reached")


@pytest.mark.parametrize("version", [0, 2])
async def test_snappy_and_lz4_wrappers_take_an_offset_per_inner_message_and_a_corrupt_one_is_refused(
        apis, version: int, caplog) -> None:
    """As Kafka's LogValidator assigns offsets for magic < 2: one per inner message of a snappy (xerial stream) or
    lz4 (frame) wrapper, up to a partial last one; a wrapper that cannot be decompressed is UNKNOWN_SERVER_ERROR
    (Kafka's KafkaException), one with no inner message or beside another entry INVALID_RECORD, both logged at
    ERROR; a bad inner CRC is CORRUPT_MESSAGE, not logged. None appends, and the broker answers the next request."""
    from tests.unit.broker.test_legacy_compression import inner_set, lz4_frame, wrapper, xerial

    api, replicas = apis
    caplog.set_level("ERROR", logger="kafka.server.ReplicaManager")
    magic = 0 if version == 0 else 1
    snappy = wrapper(xerial(inner_set(4, magic)), magic, 2)
    lz4 = wrapper(lz4_frame(inner_set(3, magic)), magic, 3)
    partial = wrapper(xerial(inner_set(4, magic)[:-3]), magic, 2)
    unreadable = wrapper(xerial(inner_set(4, magic))[:-3], magic, 2)
    empty = wrapper(xerial(b""), magic, 2)
    bad_crc = bytearray(inner_set(2, magic))
    bad_crc[-1] ^= 1
    answered = [legacy_answers(await api.handle(legacy_frame(version, 1, [("orders", [(0, one)])])), version)[0]
                for one in (snappy, lz4, partial, unreadable, empty, snappy + lz4,
                            wrapper(xerial(bytes(bad_crc)), magic, 2), lz4)]
    assert answered == [("orders", 0, NONE, 10), ("orders", 0, NONE, 14), ("orders", 0, NONE, 17),
                        ("orders", 0, UNKNOWN_SERVER_ERROR, -1), ("orders", 0, INVALID_RECORD, -1),
                        ("orders", 0, INVALID_RECORD, -1), ("orders", 0, CORRUPT_MESSAGE, -1),
                        ("orders", 0, NONE, 20)]
    assert replicas.parts[ORDERS_0].log_end_offset == 23
    head = "[ReplicaManager broker=1] Error processing append operation on partition orders-0\n"
    logged = [r.getMessage() for r in caplog.records]
    assert logged[0] == head + "org.apache.kafka.common.KafkaException: java.io.IOException: failed to read chunk"
    assert logged[1:] == [
        head + "org.apache.kafka.common.InvalidRecordException: Found invalid compressed record set with no inner "
               "records",
        head + "org.apache.kafka.common.InvalidRecordException: Compressed outer record has more than one batch"]


async def test_a_legacy_wrapper_refused_unexpectedly_answers_the_log_start_offset_without_a_message(apis) -> None:
    """appendToLocalLog's Throwable branch (what v5+ answers would show): the log start offset, no error message;
    LogValidator's record errors (an inner message of another magic) carry theirs."""
    from tests.unit.broker.test_legacy_compression import inner_set, wrapper, xerial

    _api, replicas = apis
    everything = SimpleNamespace(contains=lambda _tp: True)
    sets = [wrapper(xerial(inner_set(2, 1))[:-3], 1, 2), wrapper(xerial(b""), 1, 2),
            wrapper(xerial(inner_set(2, 1)), 1, 2) + inner_set(1, 1),
            wrapper(xerial(inner_set(1, 1) + inner_set(1, 0)), 1, 2)]
    answered = [(await produce(2, 1, 1_000, "app", [ProducePartition("orders", 0, one)], cache=everything,  # type: ignore[arg-type]
                               target=replicas.produce_target()))[0] for one in sets]
    assert [(a.error, a.log_start_offset, a.error_message) for a in answered] == [
        (UNKNOWN_SERVER_ERROR, 0, None), (INVALID_RECORD, 0, None), (INVALID_RECORD, 0, None),
        (INVALID_RECORD, 0, "One or more records have been rejected")]  # LogValidator's record errors: a message
    assert replicas.parts[ORDERS_0].log_end_offset == 10


def with_codec(data: bytes, codec: int) -> bytes:
    """A v2 batch whose attributes name codec ``codec``, its CRC-32C recomputed (the append checks it first)."""
    out = bytearray(data)
    out[22] = (out[22] & ~0x07) | codec
    out[17:21] = crc32c(bytes(out[21:])).to_bytes(4, "big")
    return bytes(out)


@pytest.mark.parametrize("version", [3, 5, 6])
async def test_a_codec_id_above_zstd_fails_the_whole_request_before_v7(apis, version: int, caplog) -> None:
    """ProduceRequest.validateRecords reads the batch's CompressionType before v7 (to refuse zstd): forId's
    IllegalArgumentException is no ApiException, so it leaves handleProduceRequest; KafkaApis.handle's handleError
    logs the request and answers every partition UNKNOWN_SERVER_ERROR with no message (ApiError keeps none for it),
    in the order of the request's partitionSizes HashMap. Nothing is appended, even on a good partition; a partition
    led elsewhere is validated too (the cache knows it)."""
    api, replicas = apis
    caplog.set_level("ERROR", logger="kafka.server.RequestHandlerHelper")
    bad = with_codec(batch(2), 5)
    ask = [("orders", [(0, batch(1)), (1, bad)]), ("nope", [(0, batch(1))])]
    log_start = -1 if version >= 5 else None
    assert timed_answers(await api.handle(frame(version, 1, ask)), version) == [
        ("nope", 0, UNKNOWN_SERVER_ERROR, -1, log_start, -1), ("orders", 0, UNKNOWN_SERVER_ERROR, -1, log_start, -1),
        ("orders", 1, UNKNOWN_SERVER_ERROR, -1, log_start, -1)]
    assert replicas.parts[ORDERS_0].log_end_offset == 10
    one, two = len(batch(1)), len(bad)
    assert [r.getMessage() for r in caplog.records] == [
        f"[KafkaApi-1] Error when handling request: clientId=test, correlationId=7, api=PRODUCE, version={version}, "
        f"body={{acks=1,timeout=30000,partitionSizes=[nope-0={one},orders-0={one},orders-1={two}]}}\n"
        f"java.lang.IllegalArgumentException: Unknown compression type id: 5"]
    with pytest.raises(CloseConnection):  # acks=0: getErrorResponse answers nothing, the connection is closed
        await api.handle(frame(version, 0, ask))
    assert await send(api, version, 1, [("orders", [(0, batch(1))])]) == [("orders", 0, NONE, 10, 0 if version >= 5
                                                                           else None)]


async def test_from_v7_a_codec_id_above_zstd_fails_its_partition_at_the_append(apis, caplog) -> None:
    """v7+ skips that read: Log.analyzeAndValidateRecords' CompressionType.forId fails the append, in
    appendToLocalLog's Throwable branch (logged; the log start offset, no message); the other partitions append."""
    api, replicas = apis
    caplog.set_level("ERROR", logger="kafka.server.ReplicaManager")
    replicas.parts[ORDERS_1] = leader(ORDERS_1, 0)
    answered = messages(await api.handle(frame(8, 1, [("orders", [(0, with_codec(batch(2), 6)), (1, batch(1))])])))
    assert answered == [(UNKNOWN_SERVER_ERROR, 0, None), (NONE, 0, None)]
    assert (replicas.parts[ORDERS_0].log_end_offset, replicas.parts[ORDERS_1].log_end_offset) == (10, 1)
    assert [r.getMessage() for r in caplog.records] == [
        "[ReplicaManager broker=1] Error processing append operation on partition orders-0\n"
        "java.lang.IllegalArgumentException: Unknown compression type id: 6"]


@pytest.mark.parametrize("version", range(3, 10))
def test_our_request_table_reads_what_kios_writer_wrote_and_refuses_every_truncation(version: int) -> None:
    """Every version is read by `PRODUCE_REQUEST` (kio's schemas serve only to write the test's requests)."""
    m = schema_module(PRODUCE, version, "request")
    request = _build(m.ProduceRequest, transactional_id="tx-1", acks=-1, timeout=timedelta(milliseconds=1_234),
                     topic_data=(_build(m.TopicProduceData, name="orders", partition_data=(
                         _build(m.PartitionProduceData, index=0, records=batch(2)),
                         _build(m.PartitionProduceData, index=1, records=None))),
                                 _build(m.TopicProduceData, name="ünïcode", partition_data=())))
    buf = io.BytesIO()
    entity_writer(type(request))(buf, request)
    body = buf.getvalue()
    read = decode_produce_request(version, body, 0)
    assert (read.acks, read.timeout_ms, read.transactional_id) == (-1, 1_234, "tx-1")
    assert read.partitions == [("orders", 0, batch(2)), ("orders", 1, None)]
    for cut in range(len(body)):
        with pytest.raises(WireFormatError):
            decode_produce_request(version, body[:cut], 0)


def _announcing(size: int, magic: int | None = None, total: int = 17) -> bytes:
    """An entry header announcing ``size`` bytes (and ``magic``), ``total`` bytes in all."""
    head = struct.pack(">qi", 0, size) + (b"" if magic is None else bytes(4) + bytes([magic & 0xFF]))
    return (head + bytes(total))[:total]


@pytest.mark.parametrize(("records", "message"), [
    (_announcing(3, total=12), "Record size 3 is less than the minimum record overhead (14)"),
    (_announcing(80, magic=5), "Invalid magic found in record: 5"),  # a partial entry: its header is read
    (_announcing(80, magic=-1), "Invalid magic found in record: -1"),
])
async def test_a_corrupt_first_entry_fails_the_whole_request_with_its_message(apis, caplog, records: bytes,
                                                                             message: str) -> None:
    """``RequestUtils.hasTransactionalRecords`` reads every partition's first batch header, known topic or not,
    before anything else: the iterator's CorruptRecordException leaves ``handleProduceRequest``, and
    ``handleError`` logs it and answers every partition CORRUPT_MESSAGE, keeping the exception's message
    (``ApiError.fromThrowable``: it is not the error's default)."""
    api, replicas = apis
    caplog.set_level("ERROR", logger="kafka.server.RequestHandlerHelper")
    ask = [("orders", [(0, batch(1))]), ("nope", [(0, records)])]
    assert messages(await api.handle(frame(8, 1, ask))) == [(CORRUPT_MESSAGE, -1, message)] * 2
    assert replicas.parts[ORDERS_0].log_end_offset == 10
    assert [r.getMessage().splitlines()[-1] for r in caplog.records] == [
        f"org.apache.kafka.common.errors.CorruptRecordException: {message}"]


async def test_a_later_entry_of_unknown_magic_is_its_partitions_corrupt_message(apis) -> None:
    """Only the first batch is read before the partitions are: a later entry's header fails its own partition
    (``validateRecords``' iteration), and the other partitions append."""
    api, replicas = apis
    replicas.parts[ORDERS_1] = leader(ORDERS_1, 0)
    ask = [("orders", [(0, batch(1) + _announcing(80, magic=9)), (1, batch(2))])]
    assert messages(await api.handle(frame(8, 1, ask))) == [(CORRUPT_MESSAGE, -1, None), (NONE, 0, None)]
    assert replicas.parts[ORDERS_1].log_end_offset == 2
