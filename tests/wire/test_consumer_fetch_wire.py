"""A consumer's Fetch (replica id -1) at the end of a partition, as Kafka 2.8 answers it: no records and no error
(``LocalLog.read`` up to the high watermark reads nothing there), held for the request's ``max_wait_ms``
(``DelayedFetch``) so a consumer at the end polls at that pace. Below the high watermark the brokers still answer
UNSUPPORTED_FOR_MESSAGE_FORMAT (offsets are kept, records are not).

Before, every consumer fetch got UNSUPPORTED_FOR_MESSAGE_FORMAT: a consumer that started at the end
(``auto_offset_reset='latest'``, ``kcat -o end``) failed on its first poll with nothing to read."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Coroutine
from types import SimpleNamespace
from typing import Any

import pytest
from tests.helpers import until_idle, wait_until
from tests.integration.listening import Cluster

from zkcontroller.broker.delayed_produce import ProduceWaiters
from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import FetchPartition, FetchPartitionResult, FetchRequest, FetchResponse
from zkcontroller.protocol.wire import fetch_codec
from zkcontroller.protocol.wire.frames import RequestHeader, encode_request_header

from .admin_fixture import address, admin_cluster_fixture, create, leader  # noqa: F401 (the fixture)

TP = TopicPartition("t", 0)
FETCH, VERSION = 1, 12


class RecordedSleeps:
    """The broker runtime's ``sleep_ms``, recorded instead of waited."""

    def __init__(self) -> None:
        self.slept: list[int] = []

    async def sleep_ms(self, ms: int) -> None:
        self.slept.append(ms)

    def now_ms(self) -> int:
        return 0

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        return asyncio.get_running_loop().create_task(coro, name=name)


class HeldRuntime(RecordedSleeps):
    """A runtime whose sleeps never end (until cancelled): a held fetch ends only by being woken."""

    async def sleep_ms(self, ms: int) -> None:
        self.slept.append(ms)
        await asyncio.Event().wait()


def fake_manager(runtime: RecordedSleeps, partition: SimpleNamespace, answers: list[FetchPartitionResult]) -> Any:
    """A replica manager holding ``TP`` (``partition``) whose fetches answer ``answers`` in turn."""
    return SimpleNamespace(runtime=runtime, produce_waiters=ProduceWaiters(), partition=lambda _tp: partition,
                           handle_fetch=lambda _request, **_options: FetchResponse(partitions=(answers.pop(0),)))


def leading(high_watermark: int = 5, leader_epoch: int = 3) -> SimpleNamespace:
    return SimpleNamespace(is_leader=True, leader_epoch=leader_epoch, high_watermark=high_watermark)


def fetch_payload(replica_id: int, max_wait_ms: int, min_bytes: int) -> bytes:
    """A Fetch v12 request (header and body) for ``TP`` from ``replica_id``, with ``max_wait_ms`` and ``min_bytes``
    written over the encoder's (they follow the replica id)."""
    body = bytearray(fetch_codec.encode_request(FetchRequest(replica_id, (FetchPartition(TP, -1, 5),)), VERSION))
    body[4:12] = max_wait_ms.to_bytes(4, "big", signed=True) + min_bytes.to_bytes(4, "big", signed=True)
    return encode_request_header(RequestHeader(FETCH, VERSION, 7, "consumer")) + bytes(body)


async def slept_for(answer: FetchPartitionResult, replica_id: int = -1, max_wait_ms: int = 300,
                    min_bytes: int = 1) -> list[int]:
    """How long KafkaApis held a Fetch whose handler answered ``answer``; the answer was sent all the same."""
    runtime = RecordedSleeps()
    manager = fake_manager(runtime, leading(), [])
    apis = KafkaApis(1, control_handler=lambda: lambda _request: FetchResponse(partitions=(answer,)),
                     metadata_cache=lambda: None, cluster_id=lambda: "c", replica_manager=lambda: manager)
    assert await apis.handle(fetch_payload(replica_id, max_wait_ms, min_bytes))
    return runtime.slept


async def test_an_empty_consumer_fetch_is_held_for_its_max_wait() -> None:
    assert await slept_for(FetchPartitionResult(TP, Errors.NONE, 5, 0, 5)) == [300]


@pytest.mark.parametrize(("answer", "replica_id", "max_wait_ms", "min_bytes"), [
    (FetchPartitionResult(TP, Errors.NONE, 5, 0, 5), -1, 300, 0),  # min_bytes 0: at once
    (FetchPartitionResult(TP, Errors.NONE, 5, 0, 5), -1, 0, 1),  # no wait asked for
    (FetchPartitionResult(TP, Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT, 5), -1, 300, 1),  # an error: at once
    (FetchPartitionResult(TP, Errors.NOT_LEADER_OR_FOLLOWER), -1, 300, 1),
    (FetchPartitionResult(TP, Errors.NONE, 9, 4, 5), -1, 300, 1),  # records (a follower's kind of answer)
    (FetchPartitionResult(TP, Errors.NONE, 5, 0, 5), 2, 300, 1),  # a follower's: held by its handler, not here
])
async def test_what_is_answered_at_once(answer: FetchPartitionResult, replica_id: int, max_wait_ms: int,
                                        min_bytes: int) -> None:
    assert await slept_for(answer, replica_id, max_wait_ms, min_bytes) == []


async def test_an_incremental_fetch_of_an_empty_session_is_answered_at_once() -> None:
    """KafkaApis calls the replica manager only with the partitions of interest (``interesting.isEmpty``: answer
    now): an incremental fetch whose session holds no partition is not held. Before, it slept its whole
    ``max_wait_ms``, and nothing (not even the broker's shutdown) woke it."""
    runtime = HeldRuntime()
    session = SimpleNamespace(partitions={})
    manager = fake_manager(runtime, leading(), [])
    manager.fetch_manager = SimpleNamespace(cache=SimpleNamespace(get=lambda sid: session if sid == 9 else None))
    apis = KafkaApis(1, control_handler=lambda: lambda _request: FetchResponse(Errors.NONE, (), 9),
                     metadata_cache=lambda: None, cluster_id=lambda: "c", replica_manager=lambda: manager)
    body = bytearray(fetch_codec.encode_request(FetchRequest(-1, (), session_id=9, session_epoch=1), VERSION))
    body[4:12] = (60_000).to_bytes(4, "big") + (1).to_bytes(4, "big")
    frame = await asyncio.wait_for(
        apis.handle(encode_request_header(RequestHeader(FETCH, VERSION, 7, "consumer")) + bytes(body)), 10)
    assert isinstance(frame, bytes)
    answer = decoded(frame)
    assert (answer.error, answer.session_id, answer.partitions) == (Errors.NONE, 9, ())
    assert runtime.slept == [] and manager.produce_waiters.waiting() == 0


def decoded(frame: bytes) -> FetchResponse:
    """The Fetch v12 response in ``frame`` (after its correlation id and tagged fields)."""
    return fetch_codec.decode_response(VERSION, frame, 5)


@pytest.mark.parametrize(("change", "expected"), [
    ({"high_watermark": 6}, FetchPartitionResult(TP, Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT, 6)),  # case G
    ({"is_leader": False}, FetchPartitionResult(TP, Errors.NOT_LEADER_OR_FOLLOWER)),  # case A
])
async def test_a_held_fetch_completes_when_woken_with_news(change: dict[str, Any],
                                                           expected: FetchPartitionResult) -> None:
    """DelayedFetch.tryComplete: once the HW passes the fetch offset or leadership moves, the fetch is read
    again and answered, not held to its max_wait_ms (the runtime's sleep here never ends)."""
    runtime, partition = HeldRuntime(), leading()
    manager = fake_manager(runtime, partition, [expected])
    apis = KafkaApis(1, control_handler=lambda: lambda _request: FetchResponse(
                         partitions=(FetchPartitionResult(TP, Errors.NONE, 5, 0, 5),)),
                     metadata_cache=lambda: None, cluster_id=lambda: "c", replica_manager=lambda: manager)
    looked_up: list[TopicPartition] = []
    manager.partition = lambda tp: looked_up.append(tp) or partition  # counts DelayedFetch's checks
    held = asyncio.ensure_future(apis.handle(fetch_payload(-1, 60_000, 1)))
    await wait_until(lambda: manager.produce_waiters.waiting() == 1, timeout_s=10, what="the fetch held")
    await until_idle()
    checks = len(looked_up)
    manager.produce_waiters.wake(TP)  # a wake-up with nothing new keeps it held
    await until_idle()
    assert len(looked_up) > checks, "the wake-up was not checked"
    assert not held.done() and manager.produce_waiters.waiting() == 1
    for name, value in change.items():
        setattr(partition, name, value)
    manager.produce_waiters.wake(TP)
    frame = await asyncio.wait_for(held, 10)
    assert isinstance(frame, bytes)
    (answer,) = decoded(frame).partitions
    assert (answer.error, answer.high_watermark) == (expected.error, expected.high_watermark)
    assert manager.produce_waiters.waiting() == 0 and runtime.slept == [60_000]


async def test_a_held_fetch_at_a_named_epoch_completes_when_the_epoch_moves() -> None:
    """Case E: a fetch that named leader epoch 3 is fenced once the partition's epoch is 4 (a fetch naming
    none, -1, is not: `can_complete`)."""
    from zkcontroller.broker.delayed_fetch import HeldPartition, can_complete
    assert not can_complete(HeldPartition(TP, 3, 5), leading(5, 3))
    assert can_complete(HeldPartition(TP, 3, 5), leading(5, 4))
    assert not can_complete(HeldPartition(TP, -1, 5), leading(5, 4))
    assert not can_complete(HeldPartition(TP, -1, 7), leading(5, 4))  # ahead of the HW: keeps waiting
    assert can_complete(HeldPartition(TP, -1, 5), None)


async def test_a_held_fetch_is_dropped_when_the_broker_stops() -> None:
    runtime = HeldRuntime()
    manager = fake_manager(runtime, leading(), [])
    apis = KafkaApis(1, control_handler=lambda: lambda _request: FetchResponse(
                         partitions=(FetchPartitionResult(TP, Errors.NONE, 5, 0, 5),)),
                     metadata_cache=lambda: None, cluster_id=lambda: "c", replica_manager=lambda: manager)
    held = asyncio.ensure_future(apis.handle(fetch_payload(-1, 60_000, 1)))
    await wait_until(lambda: manager.produce_waiters.waiting() == 1, timeout_s=10, what="the fetch held")
    manager.produce_waiters.shutdown()
    with pytest.raises(CloseConnection):
        await asyncio.wait_for(held, 10)


@pytest.fixture
async def led_topic(admin_cluster: Cluster) -> AsyncIterator[tuple[Any, str, KafkaApis]]:
    """Topic ``t`` (one partition, replication factor 2): its leader's server, listener address and KafkaApis."""
    cluster, zk = admin_cluster
    await create(cluster, zk, TP.topic, partitions=1)
    (server,) = [s for s in cluster.running_brokers() if leader(s, TP.topic, 0) == s.broker_id]
    await wait_until(lambda: server.replica_manager.partition(TP) is not None, timeout_s=30, what="t-0 hosted")
    yield server, address(cluster, server), cluster.listeners[server.broker_id].apis


async def test_the_leader_answers_a_consumer_at_the_high_watermark_with_no_records(
        led_topic: tuple[Any, str, KafkaApis]) -> None:
    server, _, _ = led_topic
    manager = server.replica_manager
    manager.append(TP, 3)
    await wait_until(lambda: manager.high_watermark(TP) == 3, timeout_s=30, what="the HW at 3")
    for offset, error in ((3, Errors.NONE), (2, Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT)):
        (answer,) = manager.handle_fetch(FetchRequest(-1, (FetchPartition(TP, -1, offset),))).partitions
        assert (answer.error, answer.records, answer.high_watermark) == (error, 0, 3)


async def test_a_consumer_held_at_the_end_is_answered_once_records_arrive(
        led_topic: tuple[Any, str, KafkaApis]) -> None:
    """The held fetch completes when the HW passes its offset (replicated to the follower), long before its
    max_wait_ms of a minute: it is read again, below the HW now, so UNSUPPORTED_FOR_MESSAGE_FORMAT."""
    server, _, apis = led_topic
    manager = server.replica_manager
    await wait_until(lambda: manager.high_watermark(TP) == 0, timeout_s=30, what="t-0 led")
    body = bytearray(fetch_codec.encode_request(FetchRequest(-1, (FetchPartition(TP, -1, 0),)), VERSION))
    body[4:12] = (60_000).to_bytes(4, "big") + (1).to_bytes(4, "big")
    held = asyncio.ensure_future(apis.handle(encode_request_header(RequestHeader(FETCH, VERSION, 7, "c"))
                                             + bytes(body)))
    await wait_until(lambda: manager.produce_waiters.waiting() >= 1, timeout_s=30, what="the fetch held")
    assert not held.done()
    manager.append(TP, 2)
    frame = await asyncio.wait_for(held, 30)
    assert isinstance(frame, bytes)
    (answer,) = decoded(frame).partitions
    assert (answer.error, answer.high_watermark) == (Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT, 2)


async def test_a_follower_fetch_on_the_wire_is_held_until_records_are_appended(
        led_topic: tuple[Any, str, KafkaApis]) -> None:
    """A follower's Fetch as our fetcher sends it (``max_wait_ms`` = ``replica.fetch.wait.max.ms``, here a minute),
    through the leader's KafkaApis and its server's handler (`ReplicaManager.fetch_messages`): held while the log
    ends at its offset, then answered with the records appended (the log end moved; the HW need not), long before
    its max wait. Before, the leader answered it at once, empty."""
    server, _, apis = led_topic
    manager = server.replica_manager
    partition = manager.partition(TP)
    await wait_until(lambda: manager.high_watermark(TP) == 0 and partition.is_leader, timeout_s=30, what="t-0 led")
    (follower,) = [r for r in partition.replicas if r != server.broker_id]
    request = FetchRequest(follower, (FetchPartition(TP, partition.leader_epoch, 0),), max_wait_ms=60_000)
    assert fetch_codec.decode_request(VERSION, fetch_codec.encode_request(request, VERSION), 0).max_wait_ms == 60_000
    held = asyncio.ensure_future(apis.handle(encode_request_header(RequestHeader(FETCH, VERSION, 7, "replica"))
                                             + fetch_codec.encode_request(request, VERSION)))
    await wait_until(lambda: held.done() or manager.produce_waiters.waiting() >= 1, timeout_s=30,
                     what="the fetch held")
    assert not held.done(), "answered at once"
    manager.append(TP, 2)
    frame = await asyncio.wait_for(held, 30)
    assert isinstance(frame, bytes)
    (answer,) = decoded(frame).partitions
    assert (answer.error, answer.records, answer.base_offset) == (Errors.NONE, 2, 0)


async def test_kafka_python_polls_at_the_end_then_is_told_records_are_not_kept(
        led_topic: tuple[Any, str, KafkaApis]) -> None:
    """A consumer from the end sees nothing (no error), in a few held fetches (not a busy loop); records appended
    after that are below the high watermark it fetches at, and are refused."""
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KafkaTopicPartition
    from kafka.errors import UnsupportedForMessageFormatError

    server, at, apis = led_topic
    tp = KafkaTopicPartition(TP.topic, 0)
    consumer = await asyncio.to_thread(KafkaConsumer, bootstrap_servers=at, auto_offset_reset="latest",
                                       enable_auto_commit=False, fetch_max_wait_ms=400, request_timeout_ms=20000)
    try:
        def poll_at_the_end() -> tuple[dict[Any, Any], int, int]:
            consumer.assign([tp])
            fetches = apis.requests_by_api.get(FETCH, 0)
            polled = consumer.poll(1200)
            return polled, apis.requests_by_api.get(FETCH, 0) - fetches, consumer.position(tp)
        polled, fetched, position = await asyncio.to_thread(poll_at_the_end)
        assert (polled, position) == ({}, 0)
        assert 1 <= fetched <= 20, fetched  # held 400 ms each, not a busy loop (a follower's on the wire count too)
        server.replica_manager.append(TP, 2)
        await wait_until(lambda: server.replica_manager.high_watermark(TP) == 2, timeout_s=30, what="the HW at 2")

        def poll_until_refused() -> BaseException | None:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    consumer.poll(500)
                except UnsupportedForMessageFormatError as e:
                    return e
            return None
        assert isinstance(await asyncio.to_thread(poll_until_refused), UnsupportedForMessageFormatError)
    finally:
        await asyncio.to_thread(consumer.close)


async def test_kafka_python_offsets_for_times_finds_the_produced_batches(
        led_topic: tuple[Any, str, KafkaApis]) -> None:
    """ListOffsets by timestamp on the leader: each produced batch's timestamps are kept in its time index, so
    ``offsets_for_times`` finds the first batch reaching the target, and None past the last."""
    from kafka import KafkaConsumer, KafkaProducer
    from kafka import TopicPartition as KafkaTopicPartition

    _, at, _ = led_topic
    tp = KafkaTopicPartition(TP.topic, 0)

    def produce_then_look_up() -> list[Any]:
        producer = KafkaProducer(bootstrap_servers=at, acks=-1, linger_ms=0, request_timeout_ms=20000)
        try:
            for timestamp in (1_000, 2_000, 3_000):
                producer.send(TP.topic, b"v", partition=0, timestamp_ms=timestamp).get(timeout=30)
        finally:
            producer.close()
        consumer = KafkaConsumer(bootstrap_servers=at, request_timeout_ms=20000)
        try:
            return [consumer.offsets_for_times({tp: target})[tp] for target in (1_500, 3_000, 3_001)]
        finally:
            consumer.close()
    found = await asyncio.to_thread(produce_then_look_up)
    assert [(f.offset, f.timestamp) if f is not None else None for f in found] == [(1, 2_000), (2, 3_000), None]
