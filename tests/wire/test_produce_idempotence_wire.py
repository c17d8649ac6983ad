"""Produce (API 0) from an idempotent producer through `KafkaApis.handle`, as a Kafka 2.8 leader answers it
(``Log.analyzeAndValidateProducerState``): a retried batch is not appended twice and answers its original offset,
an out-of-order sequence is OUT_OF_ORDER_SEQUENCE_NUMBER, a fenced epoch INVALID_PRODUCER_EPOCH; both logged as
failures with log start offset 0 and no message. A broker keeps its producer state when it follows in between (a
follower builds it from the batches it replicates: `tests/unit/broker/test_replicated_producer_state.py`)."""

from __future__ import annotations

import asyncio
import struct

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder
from tests.helpers import until_idle

from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.broker.partition import Partition
from zkcontroller.protocol.wire import codec
from zkcontroller.protocol.wire.client_apis import PRODUCE, PRODUCE_RESPONSE
from zkcontroller.protocol.wire.frames import decode_response_header
from zkcontroller.protocol.wire.record_sets import crc32c

from .server_fixture import BROKER_EPOCH, seed_metadata
from .test_produce_wire import (
    BOUND_S,
    INVALID_RECORD,
    NONE,
    NOT_LEADER_OR_FOLLOWER,
    ORDERS_0,
    ORDERS_1,
    UNKNOWN_TOPIC_OR_PARTITION,
    Replicas,
    _until,
    batch,
    frame,
    leader,
    legacy_answers,
    legacy_frame,
    messages,
    send,
    timed_answers,
)

OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH = 45, 47
PID = 4000


@pytest.fixture
def apis() -> tuple[KafkaApis, Replicas]:
    """Broker 1 leading orders-0 (LEO 10, follower 2 caught up), as test_produce_wire's fixture."""
    plane = BrokerControlPlane(1, BROKER_EPOCH)
    seed_metadata(plane, 9092)
    replicas = Replicas()
    replicas.parts[ORDERS_0] = leader(ORDERS_0, 10)
    replicas.parts[ORDERS_0].on_high_watermark_increase = replicas.waiters.wake
    return KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: plane.metadata_cache,
                     cluster_id=lambda: "c", replica_manager=lambda: replicas), replicas  # type: ignore[arg-type,return-value]


def idempotent(n: int, seq: int, epoch: int = 0, pid: int = PID, transactional: bool = False,
               compression: int = 0) -> bytes:
    """A v2 batch of ``n`` records from producer ``pid`` at ``epoch``, starting at sequence ``seq``."""
    b = MemoryRecordsBuilder(magic=2, compression_type=compression, batch_size=1 << 20, transactional=transactional,
                             producer_id=pid, producer_epoch=epoch, base_sequence=seq)
    for i in range(n):
        b.append(timestamp=1_000 + i, key=None, value=b"line %d" % i)
    b.close()
    return bytes(b.buffer())


async def send_timed(api: KafkaApis, version: int, acks: int, topics: list[tuple[str, list[tuple[int, bytes]]]]
                     ) -> list[tuple[str, int, int, int, int | None, int]]:
    return timed_answers(await api.handle(frame(version, acks, topics)), version)


@pytest.mark.parametrize("version", [3, 8])
async def test_a_retried_batch_answers_its_original_offset_and_is_not_appended_again(apis, version: int) -> None:
    """The retry answers the original batch's metadata: its base offset, and its max timestamp as log append time
    (Kafka's ``Log.append`` sets ``logAppendTime`` from the duplicate's ``BatchMetadata`` even for CreateTime)."""
    api, replicas = apis
    log_start = 0 if version >= 5 else None
    first = idempotent(3, 0)  # timestamps 1000-1002
    assert await send(api, version, 1, [("orders", [(0, first)])]) == [("orders", 0, NONE, 10, log_start)]
    assert await send(api, version, 1, [("orders", [(0, idempotent(2, 3))])]) == [("orders", 0, NONE, 13, log_start)]
    assert await send_timed(api, version, 1, [("orders", [(0, first)])]) == [
        ("orders", 0, NONE, 10, log_start, 1_002)]
    assert await send_timed(api, version, 1, [("orders", [(0, idempotent(2, 3))])]) == [
        ("orders", 0, NONE, 13, log_start, 1_001)]
    assert replicas.parts[ORDERS_0].log_end_offset == 15
    assert await send(api, version, 1, [("orders", [(0, idempotent(1, 5))])]) == [("orders", 0, NONE, 15, log_start)]
    assert replicas.parts[ORDERS_0].log_end_offset == 16


def stamped(n: int, seq: int, max_timestamp: int) -> bytes:
    """``idempotent`` with its first and max timestamps moved so that its records' largest is ``max_timestamp``
    (CRC-32C recomputed): the max LogValidator writes in the batch, which a duplicate answers (a header's own max
    is not kept: Kafka rewrites it from the records)."""
    data = bytearray(idempotent(n, seq))
    struct.pack_into(">qq", data, 27, max_timestamp - (n - 1), max_timestamp)  # records' deltas are 0..n-1
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    return bytes(data)


@pytest.mark.parametrize("max_timestamp", [2**63 - 1, 253_402_300_800_000])
async def test_a_duplicates_log_append_time_is_any_int64_its_batch_carried(apis, max_timestamp: int) -> None:
    """Values kio's datetime field cannot carry (beyond year 9999, up to Long.MaxValue): the response is written by
    our own table, so each reaches the wire as Kafka writes it. (A duplicate's time is at least -1: LogValidator's
    max starts there, whatever the records' timestamps.)"""
    api, replicas = apis
    first = stamped(2, 0, max_timestamp)
    assert await send(api, 8, 1, [("orders", [(0, first)])]) == [("orders", 0, NONE, 10, 0)]
    for version in (2, 5, 8):
        timed = await send_timed(api, version, 1, [("orders", [(0, first)])]) if version >= 3 else [
            (*a, None, max_timestamp) for a in legacy_answers(await api.handle(legacy_frame(2, 1, [
                ("orders", [(0, first)])])), 2, append_time=max_timestamp)]
        assert timed == [("orders", 0, NONE, 10, 0 if version >= 5 else None, max_timestamp)]
    assert replicas.parts[ORDERS_0].log_end_offset == 12


async def test_a_log_append_time_topic_answers_the_append_time_and_its_duplicate_the_same(apis) -> None:
    """``message.timestamp.type=LogAppendTime``: Kafka's ``Log.append`` answers its clock's time, and LogValidator
    stamps the batch with it, so the producer state keeps that time and a later retry answers it, not the
    producer's own timestamps nor the clock's new time."""
    api, replicas = apis
    replicas.log_append_time_topics.add("orders")
    replicas.runtime.advance(5_000)
    first = idempotent(2, 0)  # the producer's timestamps: 1000-1001
    assert await send_timed(api, 8, 1, [("orders", [(0, first)])]) == [("orders", 0, NONE, 10, 0, 5_000)]
    assert await send_timed(api, 8, 1, [("orders", [(0, batch(1))])]) == [("orders", 0, NONE, 12, 0, 5_000)]
    replicas.runtime.advance(2_000)
    assert await send_timed(api, 8, 1, [("orders", [(0, first)])]) == [("orders", 0, NONE, 10, 0, 5_000)]
    assert await send_timed(api, 8, 1, [("orders", [(0, idempotent(1, 2))])]) == [("orders", 0, NONE, 13, 0, 7_000)]
    assert legacy_answers(await api.handle(legacy_frame(2, 1, [("orders", [(0, batch(1))])])), 2,
                          append_time=7_000) == [("orders", 0, NONE, 14)]
    assert replicas.parts[ORDERS_0].log_end_offset == 15


async def test_out_of_order_and_fenced_epochs_are_refused_logged_and_append_nothing(apis, caplog) -> None:
    api, replicas = apis
    caplog.set_level("ERROR", logger="kafka.server.ReplicaManager")
    assert await send(api, 8, 1, [("orders", [(0, idempotent(3, 0, epoch=2))])]) == [("orders", 0, NONE, 10, 0)]
    answered = [messages(await api.handle(frame(8, 1, [("orders", [(0, r)])])))[0]
                for r in (idempotent(1, 5, epoch=2), idempotent(1, 3, epoch=1), idempotent(1, 1, epoch=3))]
    assert answered == [(OUT_OF_ORDER_SEQUENCE_NUMBER, 0, None), (INVALID_PRODUCER_EPOCH, 0, None),
                        (OUT_OF_ORDER_SEQUENCE_NUMBER, 0, None)]
    assert replicas.parts[ORDERS_0].log_end_offset == 13
    assert [r.getMessage() for r in caplog.records] == [
        "[ReplicaManager broker=1] Error processing append operation on partition orders-0\n"
        "org.apache.kafka.common.errors.OutOfOrderSequenceException: Out of order sequence number for producer 4000 "
        "at offset 13 in partition orders-0: 5 (incoming seq. number), 2 (current end sequence number)",
        "[ReplicaManager broker=1] Error processing append operation on partition orders-0\n"
        "org.apache.kafka.common.errors.InvalidProducerEpochException: Epoch of producer 4000 at offset 13 in "
        "orders-0 is 1, which is smaller than the last seen epoch 2",
        "[ReplicaManager broker=1] Error processing append operation on partition orders-0\n"
        "org.apache.kafka.common.errors.OutOfOrderSequenceException: Invalid sequence number for new epoch of "
        "producer 4000 at offset 13 in partition orders-0: 3 (request epoch), 1 (seq. number), 2 (current producer "
        "epoch)"]
    assert await send(api, 8, 1, [("orders", [(0, idempotent(1, 3, epoch=2))])]) == [("orders", 0, NONE, 13, 0)]
    assert await send(api, 8, 1, [("orders", [(0, idempotent(1, 0, epoch=3))])]) == [("orders", 0, NONE, 14, 0)]


async def test_acks_all_retry_of_a_duplicate_waits_for_the_original_batch_to_be_replicated(apis) -> None:
    """Kafka's DelayedProduce waits for the duplicate's last offset + 1, as for a fresh append."""
    api, replicas = apis
    p = replicas.parts[ORDERS_0]
    first = idempotent(4, 0)
    assert await send(api, 8, 1, [("orders", [(0, first)])]) == [("orders", 0, NONE, 10, 0)]
    assert await send(api, 8, 1, [("orders", [(0, idempotent(1, 4))])]) == [("orders", 0, NONE, 14, 0)]
    task = asyncio.create_task(send_timed(api, 8, -1, [("orders", [(0, first)])]))
    await _until(lambda: replicas.waiters.waiting() == 1)
    p.record_follower_fetch(2, 13, now_ms=0)  # not yet the end of the original batch
    await until_idle()  # the wake-up handled: the request checked the HW (13) and waits on
    assert not task.done() and replicas.waiters.waiting() == 1
    p.record_follower_fetch(2, 14, now_ms=0)  # its end; the later batch at 14 need not be replicated
    assert await asyncio.wait_for(task, BOUND_S) == [("orders", 0, NONE, 10, 0, 1_003)]
    assert p.log_end_offset == 15


def v2_answers(payload: bytes | None) -> list[tuple[str, int, int, int, int]]:
    """(topic, partition, error, base offset, log append time) per partition of a Produce v2 answer."""
    assert payload is not None
    _, offset = decode_response_header(payload, PRODUCE, 2)
    value = codec.decode(PRODUCE_RESPONSE, 2, payload, offset)
    return [(t["name"], p["index"], p["error_code"], p["base_offset"], p["log_append_time_ms"])
            for t in value["responses"] for p in t["partitions"]]


@pytest.mark.parametrize("version", [2, 8])
async def test_a_duplicate_is_answered_for_its_own_partition_beside_a_fresh_batch(apis, version: int) -> None:
    """One batch per partition, as Kafka takes it (Produce v2 through our table, v8 through kio's): the retry on
    orders-0 answers its original batch and appends nothing, the new producer's batch on orders-1 appends."""
    api, replicas = apis
    replicas.parts[ORDERS_1] = leader(ORDERS_1, 0)
    dup = idempotent(2, 0)  # timestamps 1000-1001
    fresh = idempotent(1, 0, pid=9)
    ask = [("orders", [(0, dup), (1, fresh)])]
    first = [("orders", [(0, dup)])]
    if version == 2:
        assert v2_answers(await api.handle(legacy_frame(2, 1, first))) == [("orders", 0, NONE, 10, -1)]
        assert v2_answers(await api.handle(legacy_frame(2, 1, ask))) == [
            ("orders", 0, NONE, 10, 1_001), ("orders", 1, NONE, 0, -1)]
    else:
        assert await send_timed(api, 8, 1, first) == [("orders", 0, NONE, 10, 0, -1)]
        assert await send_timed(api, 8, 1, ask) == [("orders", 0, NONE, 10, 0, 1_001), ("orders", 1, NONE, 0, 0, -1)]
    assert (replicas.parts[ORDERS_0].log_end_offset, replicas.parts[ORDERS_1].log_end_offset) == (12, 1)
    assert await send(api, 8, 1, [("orders", [(0, idempotent(1, 2)), (1, idempotent(1, 1, pid=9))])]) == [
        ("orders", 0, NONE, 12, 0), ("orders", 1, NONE, 1, 0)]


@pytest.mark.parametrize("compression", [0, 1])
async def test_v0_to_v2_refuse_two_v2_batches_in_one_partitions_set(apis, compression: int, caplog) -> None:
    """Kafka 2.8's LogValidator takes one batch when the first is of magic 2, compressed or not ("Compressed outer
    record has more than one batch", an InvalidRecordException in appendToLocalLog's Throwable branch: logged, the
    log start offset): nothing is appended and the producer state is untouched, so the next sequence is still 0."""
    api, replicas = apis
    caplog.set_level("ERROR", logger="kafka.server.ReplicaManager")
    one = idempotent(1, 0)
    two = idempotent(1, 0, compression=compression) + idempotent(1, 1)
    assert legacy_answers(await api.handle(legacy_frame(2, 1, [("orders", [(0, two)])])), 2) == [
        ("orders", 0, INVALID_RECORD, -1)]
    assert [r.getMessage() for r in caplog.records] == [
        "[ReplicaManager broker=1] Error processing append operation on partition orders-0\n"
        "org.apache.kafka.common.InvalidRecordException: Compressed outer record has more than one batch"]
    assert replicas.parts[ORDERS_0].log_end_offset == 10
    assert replicas.parts[ORDERS_0].producer_state.producers == {}
    assert legacy_answers(await api.handle(legacy_frame(2, 1, [("orders", [(0, one)])])), 2) == [
        ("orders", 0, NONE, 10)]


async def test_transactional_and_plain_batches_are_appended_as_before(apis) -> None:
    """Transactions are not served: a transactional batch is neither checked nor recorded (appended again on a
    retry), and a batch without a producer id is never a duplicate. Only its request's transactional id is
    checked, as ``handleProduceRequest`` does first (no authorizer: any id is authorized)."""
    api, replicas = apis
    txn = idempotent(2, 7, transactional=True)
    for base in (10, 12):
        assert await send(api, 8, 1, [("orders", [(0, txn)])], transactional_id="tx") == [
            ("orders", 0, NONE, base, 0)]
    for base in (14, 15):
        assert await send(api, 8, 1, [("orders", [(0, batch(1))])]) == [("orders", 0, NONE, base, 0)]
    assert replicas.parts[ORDERS_0].producer_state.producers == {}


async def test_a_broker_that_follows_in_between_keeps_its_producers(apis) -> None:
    """As Kafka's log keeps its producer state across leadership changes (a follower builds it from the batches
    it replicates): after leading, following and leading again, a retry is answered with its original offsets and
    a gap is refused. Before, the broker forgot the producer and took both."""
    api, replicas = apis
    p: Partition = replicas.parts[ORDERS_0]
    first = idempotent(2, 0)
    assert await send(api, 8, 1, [("orders", [(0, first)])]) == [("orders", 0, NONE, 10, 0)]
    p.record_follower_fetch(2, 12, now_ms=0)  # replicated: the follower's truncation to the HW keeps it all
    p.make_follower(2, 5, (2, 1), (1, 2), 1, 1)
    p.make_leader(6, (1, 2), (1, 2), 2, 1, now_ms=0)
    assert await send_timed(api, 8, 1, [("orders", [(0, first)])]) == [
        ("orders", 0, NONE, 10, 0, 1_001)]  # its original offset (and, as Kafka's, its batch's timestamp)
    assert await send(api, 8, 1, [("orders", [(0, idempotent(1, 9))])]) == [
        ("orders", 0, OUT_OF_ORDER_SEQUENCE_NUMBER, -1, 0)]  # a gap
    assert await send(api, 8, 1, [("orders", [(0, idempotent(1, 2))])]) == [("orders", 0, NONE, 12, 0)]


async def test_acks_0_out_of_order_closes_the_connection_naming_the_error(apis) -> None:
    api, replicas = apis
    assert await api.handle(frame(8, 0, [("orders", [(0, idempotent(1, 0))])])) is None
    with pytest.raises(CloseConnection, match="orders-0 -> OUT_OF_ORDER_SEQUENCE_NUMBER"):
        await api.handle(frame(8, 0, [("orders", [(0, idempotent(1, 2))])]))
    assert replicas.parts[ORDERS_0].log_end_offset == 11


async def test_a_transactional_batch_without_a_transactional_id_fails_the_whole_request(apis, caplog) -> None:
    """``handleProduceRequest`` first: a transactional batch needs the request's transactional id (with no
    authorizer, any id passes); without one, every partition is TRANSACTIONAL_ID_AUTHORIZATION_FAILED with no
    message, nothing is appended, nothing logged (``sendErrorResponseMaybeThrottle``); acks=0 closes."""
    api, replicas = apis
    caplog.set_level("ERROR", logger="kafka.server.RequestHandlerHelper")
    ask = [("orders", [(0, batch(1)), (1, idempotent(2, 0, transactional=True))]), ("nope", [(0, batch(1))])]
    assert messages(await api.handle(frame(8, 1, ask))) == [(53, -1, None)] * 3
    assert replicas.parts[ORDERS_0].log_end_offset == 10 and caplog.records == []
    with pytest.raises(CloseConnection):
        await api.handle(frame(8, 0, ask))
    assert [a[2] for a in await send(api, 8, 1, ask, transactional_id="tx")] == [NONE, NOT_LEADER_OR_FOLLOWER,
                                                                                  UNKNOWN_TOPIC_OR_PARTITION]
