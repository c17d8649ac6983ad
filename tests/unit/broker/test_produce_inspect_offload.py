"""``validateRecords``' walk of a request's entries (`record_sets.inspect`) runs on the worker thread when a record set
may hold many entries (a Produce v0-v2 set of tiny legacy messages: 100 MiB were 4 million entries, about 6 s of
the event loop): the loop keeps turning meanwhile, and the answers (or the request's failure) are the ones the
inline walk gives, in request order. Bounds are conditions with a time limit, never sleeps."""

from __future__ import annotations

import asyncio
import struct
import threading
import zlib
from typing import Any

import pytest
from tests.unit.broker.test_produce_offload_bounds import KNOWN, Broker

from zkcontroller.broker import produce as produce_module
from zkcontroller.broker.produce import ProduceAnswer, ProducePartition, produce
from zkcontroller.protocol.wire import record_sets
from zkcontroller.protocol.wire.record_sets import RequestFailed

BOUND_S = 10.0


def legacy_message(value: bytes = b"") -> bytes:
    """An uncompressed magic-0 message (null key), its CRC right."""
    body = struct.pack(">bbi", 0, 0, -1) + struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", 0, len(message)) + message


MANY = produce_module.INLINE_SCAN_BYTES // len(legacy_message()) * 3
"""Entries well past the inline limit: inspected on the worker."""


def many_messages(n: int = MANY) -> bytes:
    return legacy_message(b"v") * n


async def send(broker: Broker, parts: list[ProducePartition], version: int = 2) -> list[ProduceAnswer]:
    return await produce(version, 1, 30_000, "c", parts, cache=KNOWN,  # type: ignore[arg-type]
                         target=broker.target())


def offloading(offload: bool) -> Broker:
    broker = Broker()
    broker.compacted = False
    if not offload:
        real = broker.target
        broker.target = lambda: _inline(real())  # type: ignore[method-assign]
    return broker


def _inline(target: Any) -> Any:
    target.offload_scans = False
    return target


def requests() -> list[list[ProducePartition]]:
    corrupt = bytearray(many_messages())
    struct.pack_into(">i", corrupt, len(corrupt) - 26 + 8, 3)  # the last entry announces 3 bytes: CORRUPT_MESSAGE
    return [
        [ProducePartition("t", 0, many_messages()), ProducePartition("t", 1, legacy_message()),
         ProducePartition("t", 2, bytes(corrupt)), ProducePartition("t", 3, many_messages(MANY + 1))],
        [ProducePartition("t", 3, legacy_message()), ProducePartition("t", 0, many_messages())],
    ]


async def test_answers_are_the_inline_ones_in_request_order() -> None:
    for parts in requests():
        offloaded = await asyncio.wait_for(send(offloading(True), parts), BOUND_S)
        inline = await send(offloading(False), parts)
        assert offloaded == inline
    assert [a.error for a in inline] == [0, 0]
    assert [(a.partition, a.error) for a in await send(offloading(True), requests()[0])] == [
        (0, 0), (1, 0), (2, record_sets.CORRUPT_MESSAGE), (3, 0)]


async def test_a_request_failed_on_the_worker_fails_the_request_as_inline() -> None:
    """A v3 set whose first batch has codec id 6, then many entries: ``CompressionType.forId`` throws, the whole
    request fails, whichever thread read it."""
    batch = bytearray(struct.pack(">qiibIhiqqqhii", 0, 49, 0, 2, 0, 6, 0, 0, 0, -1, -1, -1, 1))
    data = bytes(batch) + many_messages()
    failures = []
    for offload in (True, False):
        with pytest.raises(RequestFailed) as e:
            await asyncio.wait_for(send(offloading(offload), [ProducePartition("t", 0, data)], 3), BOUND_S)
        failures.append((str(e.value), e.value.exception))
    assert failures[0] == failures[1] == ("Unknown compression type id: 6", "java.lang.IllegalArgumentException")


async def test_the_loop_keeps_turning_during_a_large_inspect(monkeypatch: pytest.MonkeyPatch) -> None:
    """The inspect of a large set waits (bounded) until the loop has run a ticker many times: on the loop it would
    block it, the ticker could not run, and the wait would time out. A small set is inspected on the loop."""
    loop = asyncio.get_running_loop()
    turned = threading.Event()
    threads: list[tuple[int, bool]] = []
    real_inspect = record_sets.inspect

    def inspect(data: Any, version: int, **kw: Any) -> list[record_sets.Entry]:
        threads.append((len(data), threading.current_thread() is threading.main_thread()))
        if len(data) > produce_module.INLINE_SCAN_BYTES:
            threads.append((-1, turned.wait(BOUND_S)))
        return real_inspect(data, version, **kw)
    monkeypatch.setattr(record_sets, "inspect", inspect)

    ticks = 0

    def tick() -> None:
        nonlocal ticks
        ticks += 1
        if ticks >= 100:
            turned.set()
        else:
            loop.call_soon(tick)
    loop.call_soon(tick)
    big, small = many_messages(), legacy_message()
    answers = await asyncio.wait_for(
        send(offloading(True), [ProducePartition("t", 0, big), ProducePartition("t", 1, small)]), BOUND_S)
    assert [a.error for a in answers] == [0, 0]
    assert threads == [(len(big), False), (-1, True), (len(small), True)]  # the big one off the loop, not stalled
    assert ticks >= 100
