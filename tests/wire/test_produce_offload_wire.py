"""A Produce whose record check walks many records (here a zstd bomb of keyed minimal records to a compacted
topic) is checked on a worker thread: the broker answers other connections while it runs, then appends it as
before. Small batches stay on the event loop (the thread hop costs more than their walk), and the simulator's
runtime never hops. Before, the walk held the event loop for its whole length (seconds for a 64 MiB bomb)."""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import struct
import threading
from typing import Any

import cramjam
import pytest
from tests.helpers import ManualRuntime
from tests.unit.broker.v2_batches import numbered, numbered_size

from zkcontroller.broker import produce as produce_module
from zkcontroller.broker.kafka_apis import KafkaApis
from zkcontroller.broker.produce import ProduceTarget
from zkcontroller.protocol.wire import log_validator, record_errors, record_sets
from zkcontroller.protocol.wire.client_apis import API_VERSIONS
from zkcontroller.protocol.wire.frames import RequestHeader, decode_response_header, encode_request_header
from zkcontroller.protocol.wire.record_sets import crc32c
from zkcontroller.runtime import blocking_worker
from zkcontroller.runtime.runtime import AsyncioRuntime

from .test_produce_compacted_wire import answer
from .test_produce_wire import BOUND_S, ORDERS_0, Replicas
from .test_produce_wire import apis as apis

KEYED_RECORD = bytes([12, 0, 0, 0, 0, 1, 0])
"""A DefaultRecord of 7 bytes: length 6, attributes, timestamp and offset deltas 0, an empty (not null) key, a null
value, no headers."""
BOMB_RECORDS = 200_000
"""1.4 MB of records in about 150 bytes of zstd: far beyond the inline limit, a fraction of a second to walk."""


def zstd_batch(n: int, record: bytes = KEYED_RECORD, *, in_order: bool = True) -> bytes:
    """A v2 batch of ``n`` copies of ``record``, zstd-compressed as zstd-jni streams it (no content size); each
    with its index as its offset delta (`numbered`: a batch kept in place must be), unless not ``in_order``."""
    compressor = cramjam.zstd.Compressor()
    compressor.compress(numbered(record, n) if in_order else record * n)
    head = struct.pack(">qiibIhiqqqhii", 0, 0, 0, 2, 0, 4, n - 1, 1_000, 1_000, -1, -1, -1, n)
    out = bytearray(head + bytes(compressor.finish()))
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


@pytest.fixture
def offloading(apis: tuple[KafkaApis, Replicas]) -> tuple[KafkaApis, Replicas]:
    """The Produce fixture's broker, ``orders`` compacted (so every record's key is checked), offloading as the
    real runtime does."""
    api, replicas = apis
    original = replicas.produce_target

    def target() -> ProduceTarget:
        t = original()
        t.compacted = lambda topic: topic == "orders"
        t.offload_scans = True
        return t
    replicas.produce_target = target  # type: ignore[method-assign]
    return api, replicas


async def api_versions(api: KafkaApis) -> int:
    """An ApiVersions v0 answer's error code."""
    payload = await api.handle(encode_request_header(RequestHeader(API_VERSIONS, 0, 5, "other")))
    assert isinstance(payload, bytes)
    _, offset = decode_response_header(payload, API_VERSIONS, 0)
    return int(struct.unpack_from(">h", payload, offset)[0])


async def test_another_connection_is_answered_while_a_bomb_is_checked(offloading: tuple[KafkaApis, Replicas],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    api, replicas = offloading
    loop = asyncio.get_running_loop()
    started, release = asyncio.Event(), threading.Event()
    order: list[str] = []
    real_validate = log_validator.validate

    def held_validate(*args: Any, **kwargs: Any) -> int:
        """The check, held until the other connection is answered (or the bound passes: on the event loop, as
        before, nothing else could run meanwhile)."""
        loop.call_soon_threadsafe(started.set)
        release.wait(BOUND_S)
        order.append("check ended")
        return real_validate(*args, **kwargs)
    monkeypatch.setattr(log_validator, "validate", held_validate)
    producing = asyncio.create_task(answer(api, 9, zstd_batch(BOMB_RECORDS)))
    await asyncio.wait_for(started.wait(), BOUND_S)
    assert await asyncio.wait_for(api_versions(api), BOUND_S) == 0
    order.append("other connection answered")
    release.set()
    got = await asyncio.wait_for(producing, BOUND_S)
    assert order == ["other connection answered", "check ended"]
    assert (got["error_code"], got["base_offset"]) == (0, 10)
    assert replicas.parts[ORDERS_0].log_end_offset == 10 + BOMB_RECORDS


async def test_an_offloaded_bomb_is_refused_as_inline(offloading: tuple[KafkaApis, Replicas],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Keyless records found on the worker thread: the same answer, nothing appended."""
    api, replicas = offloading
    hops: list[object] = []
    real_off_loop = blocking_worker.run

    async def counted(func: Any, /, *args: Any, **kwargs: Any) -> Any:
        hops.append(func)
        return await real_off_loop(func, *args, **kwargs)
    monkeypatch.setattr(blocking_worker, "run", counted)
    n = produce_module.INLINE_SCAN_BYTES // len(KEYED_RECORD) + 1
    keyless = bytes([12, 0, 0, 0, 1, 1, 0])
    got = await answer(api, 9, zstd_batch(n, keyless))
    assert (got["error_code"], got["error_message"], len(got["record_errors"])) == (
        87, "One or more records have been rejected", min(n, record_errors.RECORD_ERRORS_KEPT))
    assert len(hops) == 1 and replicas.parts[ORDERS_0].log_end_offset == 10


async def test_a_small_batch_stays_on_the_event_loop(offloading: tuple[KafkaApis, Replicas],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    api, replicas = offloading

    async def refused(*_args: Any) -> Any:
        raise AssertionError("a small batch went to a worker thread")
    monkeypatch.setattr(blocking_worker, "run", refused)
    n = next(n for n in itertools.count(1) if numbered_size(KEYED_RECORD, n + 1) > produce_module.INLINE_SCAN_BYTES)
    got = await answer(api, 9, zstd_batch(n))
    assert (got["error_code"], got["base_offset"]) == (0, 10)
    assert replicas.parts[ORDERS_0].log_end_offset == 10 + n


def test_only_the_real_runtime_offloads_by_default() -> None:
    """The simulator's runtime (and the tests' manual one) keep every check on the loop: its virtual-time loop
    runs no threads, and a run's trace stays the seed's."""
    def target(runtime: Any) -> ProduceTarget:
        return ProduceTarget(partition=lambda _tp: None, runtime=runtime, offline=lambda: (), waiters=None)  # type: ignore[arg-type]
    assert target(AsyncioRuntime(random.Random(1))).offload_scans
    assert not target(ManualRuntime()).offload_scans


def test_a_forked_child_makes_its_own_worker() -> None:
    """A broker process forked after its parent checked a batch off the loop: the parent's worker thread does not
    exist in the child, whose checks would otherwise wait forever."""
    parent = blocking_worker.worker()
    assert parent.submit(int, "7").result(BOUND_S) == 7
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: one check on its own worker, its result through the pipe
        try:
            os.write(write, str(blocking_worker.worker().submit(int, "42").result(BOUND_S)).encode())
        finally:
            os._exit(0)
    os.close(write)
    try:
        assert os.read(read, 16) == b"42"
    finally:
        os.close(read)
        os.waitpid(pid, 0)


async def test_a_bomb_beyond_the_guard_is_refused_by_a_compacted_topic(offloading: tuple[KafkaApis, Replicas],
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    """64 MiB and 7 bytes of keyless records in a few KB: not walked (nor accepted unchecked, as before), refused
    as a batch that cannot be decompressed: UNKNOWN_SERVER_ERROR, the reason in the broker's log."""
    api, replicas = offloading
    n = record_sets.MAX_INFLATED // len(KEYED_RECORD) + 1
    got = await answer(api, 9, zstd_batch(n, bytes([12, 0, 0, 0, 1, 1, 0]), in_order=False))
    assert (got["error_code"], got["error_message"], got["record_errors"]) == (-1, None, [])
    assert replicas.parts[ORDERS_0].log_end_offset == 10
    assert "org.apache.kafka.common.KafkaException: Failed to decompress record stream: zstd frame inflates beyond " \
           "67108864 bytes" in caplog.text
