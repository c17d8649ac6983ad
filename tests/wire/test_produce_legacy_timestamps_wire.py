"""Produce v0–v2 legacy (magic 0/1) message sets against Kafka 2.8's timestamp checks, now that their timestamps
reach the time index: a v1 set (a wrapper, or an uncompressed message) the producer marked LogAppendTime is
INVALID_TIMESTAMP (32) whatever the topic's type; a CreateTime topic's ``message.timestamp.difference.max.ms``
refuses a v1 timestamp out of range (32; magic 0 has none to check); a v1 timestamp below 0 other than -1 fails the
conversion to a v2 batch (UNKNOWN_SERVER_ERROR, logged as Kafka's IllegalArgumentException). Nothing is appended and
the time index gets nothing; on the worker thread (a wrapper inflating beyond the inline bound) alike. Before, each
was appended and indexed."""

from __future__ import annotations

import logging
import struct
import zlib
from typing import Any

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder

from zkcontroller.broker import produce as produce_module
from zkcontroller.broker.produce import ProduceTarget
from zkcontroller.runtime import blocking_worker

from .test_produce_compacted_wire import answer
from .test_produce_timestamps_wire import INVALID_TIMESTAMP, NOW
from .test_produce_timestamps_wire import timed as timed
from .test_produce_wire import ORDERS_0
from .test_produce_wire import apis as apis

UNKNOWN_SERVER_ERROR = -1


def legacy(timestamps: list[int | None], magic: int = 1, compression: int = 0, *, marked: bool = False,
           value: bytes = b"v") -> bytes:
    """A legacy set of one message per timestamp, as kafka-python's v0.9/v0.10 producer builds it; ``marked``:
    its first message (a wrapper: the wrapper) marked LogAppendTime."""
    b = MemoryRecordsBuilder(magic=magic, compression_type=compression, batch_size=1 << 24)
    for ts in timestamps:
        b.append(timestamp=ts, key=b"k", value=value)
    b.close()
    data = bytearray(b.buffer())
    if marked:
        data[17] |= 0x08
        (size,) = struct.unpack_from(">i", data, 8)
        struct.pack_into(">I", data, 12, zlib.crc32(data[16:12 + size]))
    return bytes(data)


def appended(replicas: Any) -> tuple[int, int]:
    partition = replicas.parts[ORDERS_0]
    return partition.log_end_offset, len(partition.time_index)


@pytest.mark.parametrize("compression", [0, 1])
@pytest.mark.parametrize("topic_log_append_time", [False, True])
async def test_a_set_marked_log_append_time_is_refused(timed, compression: int, topic_log_append_time: bool
                                                       ) -> None:
    api, replicas, settings = timed
    settings["max"] = 2**63 - 1
    if topic_log_append_time:
        replicas.log_append_time_topics.add("orders")
    before = appended(replicas)
    got = await answer(api, 2, legacy([NOW, NOW + 1], compression=compression, marked=True))
    assert (got["error_code"], got["base_offset"]) == (INVALID_TIMESTAMP, -1)
    assert appended(replicas) == before
    assert (await answer(api, 2, legacy([NOW], compression=compression)))["error_code"] == 0  # unmarked: taken


@pytest.mark.parametrize("compression", [0, 1])
async def test_a_v1_timestamp_out_of_the_difference_is_refused(timed, compression: int) -> None:
    api, replicas, _ = timed  # difference 1,000 ms
    before = appended(replicas)
    got = await answer(api, 2, legacy([NOW, NOW + 1_001], compression=compression))
    assert got["error_code"] == INVALID_TIMESTAMP and appended(replicas) == before
    got = await answer(api, 2, legacy([NOW - 1_000, -1, NOW + 1_000], compression=compression))
    assert (got["error_code"], got["base_offset"]) == (0, before[0])
    assert replicas.parts[ORDERS_0].time_index.lookup(NOW) == (NOW + 1_000, before[0] + 2)  # its own offset
    assert (await answer(api, 1, legacy([None, None], 0, compression)))["error_code"] == 0  # magic 0: no timestamp


@pytest.mark.parametrize("compression", [0, 1])
async def test_a_negative_v1_timestamp_is_an_unknown_server_error(timed, compression: int,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    api, replicas, settings = timed
    settings["max"] = 2**63 - 1
    before = appended(replicas)
    with caplog.at_level(logging.ERROR):
        got = await answer(api, 2, legacy([NOW, -5], compression=compression))
    assert got["error_code"] == UNKNOWN_SERVER_ERROR and appended(replicas) == before
    assert "java.lang.IllegalArgumentException: Invalid negative timestamp -5" in caplog.text


@pytest.mark.parametrize("case", ["out of range", "negative", "marked", "taken"])
async def test_a_wrapper_checked_on_the_worker_gets_the_same_checks(timed, case: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A gzip wrapper inflating beyond `produce.INLINE_SCAN_BYTES`: checked on the worker thread at the broker's
    clock read before the hop, with the same answer (the largest timestamp indexed when taken, at its message's
    offset)."""
    api, replicas, settings = timed
    original = replicas.produce_target

    def target() -> ProduceTarget:
        t = original()
        t.offload_scans = True
        return t
    replicas.produce_target = target  # type: ignore[method-assign]
    hops: list[object] = []
    real_run = blocking_worker.run

    async def counted(func: Any, /, *args: Any, **kwargs: Any) -> Any:
        hops.append(func)
        return await real_run(func, *args, **kwargs)
    monkeypatch.setattr(blocking_worker, "run", counted)
    n = produce_module.INLINE_SCAN_BYTES // 20
    timestamps: list[int | None] = [NOW - 500] * n
    timestamps[n // 2] = {"out of range": NOW + 1_001, "negative": -5}.get(case, NOW + 900)
    if case == "negative":
        settings["max"] = 2**63 - 1
    before = appended(replicas)
    got = await answer(api, 2, legacy(timestamps, compression=1, marked=case == "marked"))
    assert len(hops) == 1
    if case == "taken":
        assert (got["error_code"], got["base_offset"]) == (0, before[0])
        assert replicas.parts[ORDERS_0].time_index.lookup(NOW) == (NOW + 900, before[0] + n // 2)  # the message's
        return
    assert got["error_code"] == (UNKNOWN_SERVER_ERROR if case == "negative" else INVALID_TIMESTAMP)
    assert appended(replicas) == before
