"""The off-loop record check's bounds: a refused walk keeps no frames and each partition's outcome is released once
appended; a partition the append refuses first is not walked; one check in flight per loop (the rest wait on the
loop, not in the worker's queue); a cancelled request's walk (or every walk at exit) stops early; the topic's
checks changing during the hop hop again instead of walking on the loop; the append is stamped with the clock
read after the hop. Bombs are small (just past `INLINE_SCAN_BYTES`, or 200k 7-byte records) and every bound is
counted, never timed."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from tests.helpers import ManualRuntime, until_idle
from tests.wire.test_produce_offload_wire import KEYED_RECORD, zstd_batch

from zkcontroller.broker import produce as produce_module
from zkcontroller.broker.delayed_produce import ProduceWaiters, PurgatoryShutDown
from zkcontroller.broker.partition import Partition
from zkcontroller.broker.produce import ProduceAnswer, ProducePartition, ProduceTarget, produce
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire import log_validator, record_errors, record_sets, v2_record_errors, v2_records
from zkcontroller.protocol.wire.record_sets import RecordSetError
from zkcontroller.runtime import blocking_worker

KNOWN = SimpleNamespace(contains=lambda _tp: True)
KEYLESS_RECORD = bytes([12, 0, 0, 0, 1, 1, 0])
JUST_PAST = produce_module.INLINE_SCAN_BYTES // len(KEYED_RECORD) + 1
"""Records just past the inline limit: walked on the worker, a few ms."""
LONG = 200_000
"""Records of a walk long enough to cancel (a fraction of a second whole)."""
BOUND_S = 10.0


class Broker:
    """Partitions ``t-0..t-3`` led here (ISR 1, 2), a compacted topic ``t``, offloading."""

    def __init__(self) -> None:
        self.runtime = ManualRuntime()
        self.parts: dict[TopicPartition, Partition] = {}
        for i in range(4):
            p = Partition(TopicPartition("t", i), 1)
            p.make_leader(4, (1, 2), (1, 2), 0, 1, now_ms=0)
            self.parts[TopicPartition("t", i)] = p
        self.offline: set[TopicPartition] = set()
        self.min_isr = 1
        self.compacted = True
        self.log_append_time = False

    def target(self) -> ProduceTarget:
        return ProduceTarget(partition=self.parts.get, runtime=self.runtime,  # type: ignore[arg-type]
                             offline=lambda: self.offline, waiters=ProduceWaiters(),
                             min_insync_replicas=lambda _t: self.min_isr, broker_id=1,
                             compacted=lambda _t: self.compacted, log_append_time=lambda _t: self.log_append_time,
                             offload_scans=True)


async def send(broker: Broker, parts: list[ProducePartition], acks: int = 1, client: str = "c"
               ) -> list[ProduceAnswer]:
    return await produce(9, acks, 30_000, client, parts, cache=KNOWN, target=broker.target())  # type: ignore[arg-type]


async def worker_idle() -> None:
    """Returns once the worker has run everything submitted before (a no-op queued behind it)."""
    await asyncio.wait_for(asyncio.wrap_future(blocking_worker.worker().submit(lambda: None)), BOUND_S)


def test_a_refused_off_loop_check_keeps_no_frames() -> None:
    data = zstd_batch(JUST_PAST, KEYLESS_RECORD)
    checks = produce_module._Checks(None, True, True, record_sets.LONG_MAX)
    out = produce_module._validate_outcome(data, record_sets.inspect(data, 9), TopicPartition("t", 0), checks,
                                           lambda: 0, {})
    assert isinstance(out, RecordSetError)
    assert len(out.record_errors) == min(JUST_PAST, record_errors.RECORD_ERRORS_KEPT)
    assert out.__traceback__ is None  # its frames held the whole walk (the inflated records, the entries)


async def test_each_partitions_outcome_is_released_once_appended(monkeypatch: pytest.MonkeyPatch) -> None:
    broker = Broker()
    outcomes: list[weakref.ref[RecordSetError]] = []
    alive_at_append: list[int] = []
    real_scan, real_append = produce_module._scan, produce_module._append

    async def scan(*args: Any) -> Any:
        scanned = await real_scan(*args)
        assert isinstance(scanned.outcome, RecordSetError)
        outcomes.append(weakref.ref(scanned.outcome))
        return scanned

    def append(*args: Any) -> Any:
        gc.collect()
        alive_at_append.append(sum(r() is not None for r in outcomes))
        return real_append(*args)
    monkeypatch.setattr(produce_module, "_scan", scan)
    monkeypatch.setattr(produce_module, "_append", append)
    bomb = zstd_batch(JUST_PAST, KEYLESS_RECORD)
    answers = await send(broker, [ProducePartition("t", i, bomb) for i in range(3)])
    assert [a.error for a in answers] == [record_sets.INVALID_RECORD] * 3
    assert alive_at_append == [3, 2, 1]  # the earlier partitions' outcomes are gone by the next append


@pytest.mark.parametrize("refusal", ["internal topic", "offline", "not hosted", "follower", "below min ISR"])
async def test_a_partition_the_append_refuses_first_is_not_walked(refusal: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    broker = Broker()
    topic, acks, expected = "t", 1, 0
    tp = TopicPartition("t", 0)
    if refusal == "internal topic":
        topic, expected = "__consumer_offsets", 17  # INVALID_TOPIC_EXCEPTION
        broker.parts[TopicPartition(topic, 0)] = broker.parts[tp]
    elif refusal == "offline":
        broker.offline.add(tp)
        expected = 56  # KAFKA_STORAGE_ERROR
    elif refusal == "not hosted":
        del broker.parts[tp]
        expected = 6  # NOT_LEADER_OR_FOLLOWER
    elif refusal == "follower":
        broker.parts[tp].make_follower(2, 5, (1, 2), (1, 2), 1, 1)
        expected = 6
    else:
        broker.min_isr, acks, expected = 3, -1, 19  # NOT_ENOUGH_REPLICAS
    walks: list[int] = []
    real_validate = log_validator.validate
    monkeypatch.setattr(log_validator, "validate", lambda *a, **k: walks.append(1) or real_validate(*a, **k))
    [got] = await send(broker, [ProducePartition(topic, 0, zstd_batch(LONG))], acks=acks)
    assert got.error == expected
    assert walks == []  # before: walked whole on the shared worker, then refused


async def test_one_check_in_flight_the_others_wait_on_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    broker = Broker()
    loop = asyncio.get_running_loop()
    started, release = asyncio.Event(), threading.Event()
    submitted: list[object] = []
    worker = blocking_worker.worker()

    class Counting:
        def submit(self, *args: Any, **kwargs: Any) -> Any:
            submitted.append(args[0])
            return worker.submit(*args, **kwargs)
    monkeypatch.setattr(blocking_worker, "worker", lambda: Counting())
    real_validate = log_validator.validate

    def held(*args: Any, **kwargs: Any) -> int:
        loop.call_soon_threadsafe(started.set)
        release.wait(BOUND_S)
        return real_validate(*args, **kwargs)
    monkeypatch.setattr(log_validator, "validate", held)
    bomb = zstd_batch(JUST_PAST)
    tasks = [asyncio.create_task(send(broker, [ProducePartition("t", i, bomb)])) for i in range(3)]
    await asyncio.wait_for(started.wait(), BOUND_S)
    await until_idle()  # the other requests have had every chance to queue their walks
    assert len(submitted) == 1  # before: all three in the worker's queue, uncancellable
    tasks[2].cancel()  # a request waiting its turn is cancelled on the loop: its walk never starts
    release.set()
    done = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), BOUND_S)
    assert isinstance(done[2], asyncio.CancelledError)
    assert [a.error for a in done[0] + done[1]] == [0, 0]  # type: ignore[operator]
    assert len(submitted) == 2


def counting_walk(monkeypatch: pytest.MonkeyPatch, started: asyncio.Event, go: threading.Event) -> list[int]:
    """``v2_records.walk_v2_records`` counted (records yielded), paused after its first record until ``go``."""
    loop = asyncio.get_running_loop()
    walked = [0]
    real_walk = v2_records.walk_v2_records

    def walk(records: Any, count: int, *more: Any) -> Iterator[Any]:
        for r in real_walk(records, count, *more):
            walked[0] += 1
            if walked[0] == 1:
                loop.call_soon_threadsafe(started.set)
                go.wait(BOUND_S)
            yield r
    for module in (log_validator, v2_records, v2_record_errors):  # every caller of the walk
        monkeypatch.setattr(module, "walk_v2_records", walk)
    return walked


async def test_a_cancelled_requests_walk_stops_early(monkeypatch: pytest.MonkeyPatch) -> None:
    broker = Broker()
    started, go = asyncio.Event(), threading.Event()
    walked = counting_walk(monkeypatch, started, go)
    task = asyncio.create_task(send(broker, [ProducePartition("t", 0, zstd_batch(LONG))]))
    await asyncio.wait_for(started.wait(), BOUND_S)
    task.cancel()  # e.g. the loop shutting down
    with pytest.raises(asyncio.CancelledError):
        await task
    go.set()  # the walk goes on only once the request is gone
    await worker_idle()
    assert walked[0] <= 2 * 4096  # before: all 200k records walked for no one
    assert broker.parts[TopicPartition("t", 0)].log_end_offset == 0


async def test_a_stopping_brokers_walk_stops_early_and_its_request_is_dropped(monkeypatch: pytest.MonkeyPatch
                                                                             ) -> None:
    broker = Broker()
    target = broker.target()
    started, go = asyncio.Event(), threading.Event()
    walked = counting_walk(monkeypatch, started, go)
    task = asyncio.create_task(produce(9, 1, 30_000, "c", [ProducePartition("t", 0, zstd_batch(LONG))],
                                       cache=KNOWN, target=target))  # type: ignore[arg-type]
    await asyncio.wait_for(started.wait(), BOUND_S)
    target.waiters.shutdown()  # the replica manager shutting down (the broker stopping)
    go.set()
    with pytest.raises(PurgatoryShutDown):  # the request dropped unanswered (its connection closed quietly)
        await asyncio.wait_for(task, BOUND_S)
    assert walked[0] <= 2 * 4096  # before: all 200k records walked for a stopped broker
    assert broker.parts[TopicPartition("t", 0)].log_end_offset == 0


async def test_exit_stops_the_running_walk_and_drops_the_queued_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blocking_worker, "_exiting", threading.Event())
    monkeypatch.setattr(blocking_worker, "_worker", None)  # a worker of this test's own
    started, go = asyncio.Event(), threading.Event()
    walked = counting_walk(monkeypatch, started, go)
    data = zstd_batch(LONG)
    checks = produce_module._Checks(None, True, True, record_sets.LONG_MAX)
    entries = record_sets.inspect(data, 9)
    worker = blocking_worker.worker()
    running = worker.submit(produce_module._validate_outcome, data, entries, TopicPartition("t", 0), checks,
                            lambda: 0, {}, cancelled=blocking_worker._exiting.is_set)
    queued = worker.submit(produce_module._validate_outcome, data, entries, TopicPartition("t", 0), checks,
                           lambda: 0, {})
    await asyncio.wait_for(started.wait(), BOUND_S)
    blocking_worker.stop_all()  # what the interpreter's exit runs before joining the worker
    go.set()
    out = await asyncio.wait_for(asyncio.wrap_future(running), BOUND_S)
    assert isinstance(out, RecordSetError) and "cancelled" in str(out)
    assert queued.cancelled()
    assert walked[0] <= 2 * 4096


async def test_checks_changed_during_the_hop_are_checked_off_the_loop_again(monkeypatch: pytest.MonkeyPatch
                                                                           ) -> None:
    broker = Broker()
    on_loop: list[bool] = []
    hops: list[object] = []
    real_validate, real_off_loop = produce_module._validate, blocking_worker.run

    def validate(*args: Any, **kwargs: Any) -> Any:
        on_loop.append(threading.current_thread() is threading.main_thread())
        return real_validate(*args, **kwargs)

    async def off_loop(*args: Any, **kwargs: Any) -> Any:
        hops.append(args[0])
        out = await real_off_loop(*args, **kwargs)
        if len(hops) == 1:
            broker.log_append_time = True  # the topic's message.timestamp.type altered meanwhile
        return out
    monkeypatch.setattr(produce_module, "_validate", validate)
    monkeypatch.setattr(blocking_worker, "run", off_loop)
    [got] = await send(broker, [ProducePartition("t", 0, zstd_batch(LONG))])
    assert got.error == 0 and got.log_append_time == 0  # LogAppendTime now: stamped
    assert len(hops) == 2 and on_loop == [False, False]  # before: the second walk on the event loop


async def test_the_append_reads_the_clock_after_the_hop(monkeypatch: pytest.MonkeyPatch) -> None:
    broker = Broker()
    broker.log_append_time = True
    broker.runtime.now = 1_000
    real_off_loop = blocking_worker.run

    async def off_loop(*args: Any, **kwargs: Any) -> Any:
        out = await real_off_loop(*args, **kwargs)
        broker.runtime.advance(5_000)  # the walk took its time
        return out
    monkeypatch.setattr(blocking_worker, "run", off_loop)
    [got] = await send(broker, [ProducePartition("t", 0, zstd_batch(JUST_PAST))])
    assert got.error == 0 and got.log_append_time == 6_000  # before: 1_000, the clock read before the hop
    assert broker.parts[TopicPartition("t", 0)].time_index.lookup(0) == (6_000, 0)
