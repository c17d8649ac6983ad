"""A real client (kafka-python, Produce v9) producing a v2 batch LogValidator refuses, over in-process brokers: a
small batch gets Kafka 2.8's answer exactly (INVALID_RECORD or INVALID_TIMESTAMP, its error message, one record
error per refused record), which kafka-python turns into Kafka's per-record exceptions: the refused records their
own text, the others "part of a batch which had one or more invalid records". A batch of more refused records than
`record_errors.RECORD_ERRORS_KEPT` (a deliberate bound) keeps the first ones: the records beyond get the client's
generic error instead of their own. Before, every refused record was listed, however many."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from tests.integration.listening import Cluster

from zkcontroller.protocol.wire.record_errors import RECORD_ERRORS_KEPT

from .admin_fixture import admin_cluster_fixture  # noqa: F401 (the fixture)
from .test_list_offsets_time_index_codecs import led_topic

KEYLESS = "Compacted topic cannot accept message without key in topic partition {}-0."
PART_OF_A_BATCH = "Failed to append record because it was part of a batch"


def produce_one_batch(at: str, topic: str, records: list[tuple[bytes | None, int | None]]) -> list[Exception | None]:
    """kafka-python sending ``records`` (key, timestamp) in one batch (long linger, large batch, flushed once):
    each record's outcome, its exception or None."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=at, acks=1, linger_ms=60_000, batch_size=1 << 20,
                             request_timeout_ms=20_000, max_block_ms=30_000)
    try:
        futures = [producer.send(topic, b"v", key=key, partition=0, timestamp_ms=ts) for key, ts in records]
        producer.flush(30)
        outcomes: list[Exception | None] = []
        for future in futures:
            try:
                future.get(timeout=30)
                outcomes.append(None)
            except Exception as e:  # each record's own failure is the point
                outcomes.append(e)
        return outcomes
    finally:
        producer.close()


async def in_thread(call: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.to_thread(call, *args)


def described(outcome: Exception | None) -> tuple[str, str] | None:
    """A record's exception: its class name and message (kafka-python's first argument)."""
    return None if outcome is None else (type(outcome).__name__, str(outcome.args[0]) if outcome.args else "")


async def test_a_small_refused_batch_gets_kafkas_errors(admin_cluster: Cluster) -> None:
    """Keyless records to a compacted topic: INVALID_RECORD, each keyless record its key error, the keyed one the
    generic error; a lone record out of a CreateTime topic's timestamp range: INVALID_TIMESTAMP with its own text
    (a single record error takes the partition's error class). Nothing is appended: a good batch after starts at
    offset 0."""
    from kafka.errors import InvalidRecordError, InvalidTimestampError

    at = await led_topic(admin_cluster, "keyed", {"cleanup.policy": "compact"})
    outcomes = await in_thread(produce_one_batch, at, "keyed", [(b"k", None), (None, None), (None, None)])
    assert [described(o) for o in outcomes[1:]] == [("InvalidRecordError", KEYLESS.format("keyed"))] * 2
    assert isinstance(outcomes[1], InvalidRecordError) and PART_OF_A_BATCH in str(outcomes[0])

    at = await led_topic(admin_cluster, "bounded", {"message.timestamp.difference.max.ms": "3600000"})
    outcomes = await in_thread(produce_one_batch, at, "bounded", [(None, 2**62)])
    assert isinstance(outcomes[0], InvalidTimestampError)
    assert str(outcomes[0].args[0]).startswith(f"Timestamp {2**62} of message with offset 0 is out of range.")
    now = int(time.time() * 1000)
    assert await in_thread(produce_one_batch, at, "bounded", [(None, now)]) == [None]


async def test_a_batch_of_more_refused_records_than_kept_lists_the_first_ones(admin_cluster: Cluster) -> None:
    """1,500 keyless records in one batch: the first `RECORD_ERRORS_KEPT` get their key error (Kafka's first
    record errors), the rest kafka-python's generic error (Kafka 2.8 would list them too)."""
    at = await led_topic(admin_cluster, "bulk", {"cleanup.policy": "compact"})
    n = RECORD_ERRORS_KEPT + 500
    outcomes = await in_thread(produce_one_batch, at, "bulk", [(None, None)] * n)
    assert [described(o) for o in outcomes[:RECORD_ERRORS_KEPT]] == [
        ("InvalidRecordError", KEYLESS.format("bulk"))] * RECORD_ERRORS_KEPT
    assert all(PART_OF_A_BATCH in str(o) for o in outcomes[RECORD_ERRORS_KEPT:]), described(outcomes[-1])
