"""Produce against ``message.timestamp.difference.max.ms`` and producer-set LogAppendTime, as Kafka 2.8's
``LogValidator.validateTimestamp`` per record: with a CreateTime topic, a record whose timestamp (-1 exempt) is
further than the difference from the broker's clock is INVALID_TIMESTAMP (32) with "One or more records have been
rejected due to invalid timestamp" and, from v8, one record error per such record; a batch the producer marked
LogAppendTime is refused so whatever the topic's type; a compacted topic's keyless record gets the key error
instead (``validateKey(...).orElse(validateTimestamp(...))``). Nothing is appended. Before, neither was checked."""

from __future__ import annotations

from typing import Any

import pytest
from crc32c import crc32c
from kafka.record.memory_records import MemoryRecordsBuilder

from zkcontroller.broker.kafka_apis import KafkaApis
from zkcontroller.broker.produce import ProduceTarget

from .test_produce_compacted_wire import KEYLESS, answer
from .test_produce_wire import ORDERS_0, Replicas
from .test_produce_wire import apis as apis

INVALID_TIMESTAMP = 32
NOW = 1_700_000_000_000
REJECTED = "One or more records have been rejected due to invalid timestamp"


def records(timestamps: list[int], keys: list[bytes | None] | None = None, compression: int = 0,
            log_append_time: bool = False) -> bytes:
    """A v2 batch of one record per timestamp (value ``v``), its timestamp type LogAppendTime if asked."""
    b = MemoryRecordsBuilder(magic=2, compression_type=compression, batch_size=1 << 20)
    for i, timestamp in enumerate(timestamps):
        b.append(timestamp=timestamp, key=None if keys is None else keys[i], value=b"v")
    b.close()
    data = bytearray(b.buffer())
    if log_append_time:
        data[22] |= 0x08
        data[17:21] = crc32c(bytes(data[21:])).to_bytes(4, "big")
    return bytes(data)


@pytest.fixture
def timed(apis: tuple[KafkaApis, Replicas]) -> tuple[KafkaApis, Replicas, dict[str, Any]]:
    """The Produce fixture's broker at NOW, ``orders``' difference set in the returned dict (key "max")."""
    api, replicas = apis
    replicas.runtime.now = NOW
    settings: dict[str, Any] = {"max": 1_000, "compacted": False}
    original = replicas.produce_target

    def target() -> ProduceTarget:
        t = original()
        t.timestamp_difference_max_ms = lambda _topic: settings["max"]
        t.compacted = lambda _topic: settings["compacted"]
        return t
    replicas.produce_target = target  # type: ignore[method-assign]
    return api, replicas, settings


def errors(got: dict[str, Any]) -> list[tuple[int, str]]:
    return [(e["batch_index"], e["batch_index_error_message"]) for e in got["record_errors"]]


@pytest.mark.parametrize("compression", [0, 1])
async def test_a_record_outside_the_difference_is_refused(timed, compression: int) -> None:
    api, replicas, _ = timed
    got = await answer(api, 9, records([NOW, NOW - 1_001, NOW + 1_000, -1, NOW + 5_000], compression=compression))
    assert (got["error_code"], got["error_message"], got["base_offset"], got["log_start_offset"]) == (
        INVALID_TIMESTAMP, REJECTED, -1, 0)
    window = f"The timestamp should be within [{NOW - 1_000}, {NOW + 1_000}]"
    assert errors(got) == [(1, f"Timestamp {NOW - 1_001} of message with offset 1 is out of range. {window}"),
                           (4, f"Timestamp {NOW + 5_000} of message with offset 4 is out of range. {window}")]
    assert replicas.parts[ORDERS_0].log_end_offset == 10  # nothing appended
    got = await answer(api, 7, records([0]))
    assert (got["error_code"], got["record_errors"]) == (INVALID_TIMESTAMP, [])  # no record errors before v8


async def test_records_within_the_difference_are_appended(timed) -> None:
    api, replicas, settings = timed
    got = await answer(api, 9, records([NOW - 1_000, NOW + 1_000, -1]))
    assert (got["error_code"], got["base_offset"]) == (0, 10)
    settings["max"] = 2**63 - 1  # the default, Long.MaxValue: any timestamp
    assert (await answer(api, 9, records([0, 2**62])))["error_code"] == 0
    assert replicas.parts[ORDERS_0].log_end_offset == 15


async def test_a_log_append_time_topic_checks_no_difference(timed) -> None:
    api, replicas, _ = timed
    replicas.log_append_time_topics.add("orders")
    assert (await answer(api, 9, records([0])))["error_code"] == 0


@pytest.mark.parametrize("topic_log_append_time", [False, True])
async def test_a_batch_the_producer_marked_log_append_time_is_refused(timed, topic_log_append_time: bool) -> None:
    api, replicas, settings = timed
    settings["max"] = 2**63 - 1
    if topic_log_append_time:
        replicas.log_append_time_topics.add("orders")
    got = await answer(api, 9, records([NOW, NOW + 7], log_append_time=True))
    assert (got["error_code"], got["error_message"]) == (INVALID_TIMESTAMP, REJECTED)
    assert errors(got) == [(i, f"Invalid timestamp type in message DefaultRecord(offset={i}, timestamp={NOW + 7}, "
                               "key=0 bytes, value=1 bytes). Producer should not set timestamp type to LogAppendTime.")
                           for i in (0, 1)]  # each record reads the batch's max timestamp
    assert replicas.parts[ORDERS_0].log_end_offset == 10


async def test_a_keyless_record_gets_the_key_error_and_the_others_theirs(timed) -> None:
    api, _, settings = timed
    settings["compacted"] = True
    got = await answer(api, 9, records([0, 0, NOW], keys=[None, b"k", None]))
    assert got["error_code"] == INVALID_TIMESTAMP  # one timestamp error makes it InvalidTimestampException
    assert [i for i, _ in errors(got)] == [0, 1, 2]
    assert errors(got)[0][1] == errors(got)[2][1] == KEYLESS
    assert errors(got)[1][1].startswith("Timestamp 0 of message with offset 1 is out of range.")
    got = await answer(api, 9, records([NOW], keys=[None]))
    assert (got["error_code"], errors(got)) == (87, [(0, KEYLESS)])
