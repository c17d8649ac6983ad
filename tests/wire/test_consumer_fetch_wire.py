"""A consumer's Fetch (replica id -1) at the end of a partition, as Kafka 2.8 answers it: no records and no error
(``LocalLog.read`` up to the high watermark reads nothing there), held for the request's ``max_wait_ms``
(``DelayedFetch``) so a consumer at the end polls at that pace. Below the high watermark the brokers still answer
UNSUPPORTED_FOR_MESSAGE_FORMAT (offsets are kept, records are not).

Before, every consumer fetch got UNSUPPORTED_FOR_MESSAGE_FORMAT: a consumer that started at the end
(``auto_offset_reset='latest'``, ``kcat -o end``) failed on its first poll with nothing to read."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest
from tests.helpers import wait_until
from tests.integration.listening import Cluster

from zkcontroller.broker.request_handler import KafkaApis
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
    apis = KafkaApis(1, control_handler=lambda: lambda _request: FetchResponse(partitions=(answer,)),
                     metadata_cache=lambda: None, cluster_id=lambda: "c",
                     replica_manager=lambda: SimpleNamespace(runtime=runtime))  # type: ignore[arg-type, return-value]
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
    (FetchPartitionResult(TP, Errors.NONE, 5, 0, 5), 2, 300, 1),  # a follower waits on its own side
])
async def test_what_is_answered_at_once(answer: FetchPartitionResult, replica_id: int, max_wait_ms: int,
                                        min_bytes: int) -> None:
    assert await slept_for(answer, replica_id, max_wait_ms, min_bytes) == []


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
