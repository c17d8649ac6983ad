"""A follower's fetch with nothing to read is held by the leader (Kafka's DelayedFetch for a replica), on virtual time.

Kafka 2.8's leader parks such a fetch in the fetch purgatory for up to ``replica.fetch.wait.max.ms`` and completes it
when records are appended; the follower fetches again at once. Here the follower used to sleep that long after an
empty answer, so an acks=-1 produce waited for its next poll (about 0.5 s each). Brokers run on the simulator's
virtual-time loop (`run_virtual`), wired through the in-process transport, so elapsed times are exact and
deterministic.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.delayed_produce import PendingAppend, PurgatoryShutDown
from zkcontroller.broker.partition import Partition
from zkcontroller.broker.replica_manager import ReplicaManager
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors, LeaderAndIsrPartitionState
from zkcontroller.protocol.inter_broker import (
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    FetchPartition,
    FetchRequest,
    next_fetch_session_epoch,
)
from zkcontroller.runtime.in_process import InProcessTransport
from zkcontroller.sim.loop import run_virtual

from .helpers import MY_EPOCH, leader_and_isr, update_metadata

TP = TopicPartition("t", 0)
WAIT_MS = 500
"""``replica.fetch.wait.max.ms``' default."""


class VirtualRuntime:
    """The Runtime port on the running (virtual-time) loop: sleeps take virtual time; spawned tasks are kept."""

    def __init__(self) -> None:
        self.rng = random.Random(7)
        self.tasks: list[asyncio.Task[Any]] = []

    def now_ms(self) -> int:
        return round(asyncio.get_running_loop().time() * 1000)

    async def sleep_ms(self, ms: int) -> None:
        await asyncio.sleep(ms / 1000)

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self.tasks.append(task)
        return task


def state(leader: int = 1, leader_epoch: int = 0) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState("t", 0, 1, leader, leader_epoch, (1, 2, 3), 0, (1, 2, 3))


class Cluster:
    """Replica managers 1..3 on one virtual-time runtime; the in-process transport serves fetches as a broker does
    (`ReplicaManager.handle_fetch_request`, which `KafkaServer.handle_request` calls)."""

    def __init__(self, brokers: tuple[int, ...] = (1, 2, 3)) -> None:
        self.runtime = VirtualRuntime()
        self.transport = InProcessTransport()
        self.rms: dict[int, ReplicaManager] = {}
        cfg = ReplicationConfig(replica_lag_time_max_ms=1_000, replica_fetch_wait_max_ms=WAIT_MS)
        for i in brokers:
            plane = BrokerControlPlane(i, MY_EPOCH)
            assert plane.handle(update_metadata(live=(1, 2, 3), controller_id=1)).error is Errors.NONE
            rm = self.rms[i] = ReplicaManager(plane, self.transport, self.runtime, cfg)
            self.transport.register(i, self._handler(rm))

    @staticmethod
    def _handler(rm: ReplicaManager) -> Callable[[Any], Any]:
        def handle(request: Any) -> Any:
            assert isinstance(request, FetchRequest), f"unexpected {request}"  # no ISR change is expected
            return rm.handle_fetch_request(request)
        return handle

    def lead(self, st: LeaderAndIsrPartitionState, brokers: tuple[int, ...] | None = None) -> None:
        for i in brokers or tuple(self.rms):
            response = self.rms[i].handle_control_request(leader_and_isr(st))
            assert response.partition_errors[0][1] is Errors.NONE

    def stop(self, broker_id: int) -> None:
        self.transport.unregister(broker_id)
        self.rms[broker_id].shutdown()

    async def close(self) -> None:
        for rm in self.rms.values():
            rm.shutdown()
        for task in self.runtime.tasks:
            task.cancel()
        await asyncio.gather(*self.runtime.tasks, return_exceptions=True)


def virtual(test: Callable[[Cluster], Awaitable[None]], brokers: tuple[int, ...] = (1, 2, 3)) -> None:
    async def main() -> None:
        cluster = Cluster(brokers)
        try:
            await test(cluster)
        finally:
            await cluster.close()
    run_virtual(main())


def now_ms() -> int:
    return round(asyncio.get_running_loop().time() * 1000)


async def acks_all(leader: ReplicaManager, records: int) -> int:
    """An acks=-1 produce of ``records`` on the leader: append, then wait in the produce purgatory (as `produce`
    does). Its error code."""
    end = leader.append(TP, records)
    pending = [PendingAppend(TP, end)]
    await leader.produce_waiters.wait(pending, 30_000, leader.runtime, leader.partition, lambda topic: 1,
                                      lambda tp: False)
    assert pending[0].error is not None
    return pending[0].error


def follower_fetch(offset: int, epoch: int = 0, replica: int = 2) -> FetchRequest:
    return FetchRequest(replica, (FetchPartition(TP, epoch, offset, epoch if offset else -1),), max_wait_ms=WAIT_MS)


def test_acks_all_produce_completes_within_a_fetch_round_trip_not_a_poll_interval() -> None:
    """Steady state (followers caught up, their fetches held), then acks=-1 produces between the followers' old
    500 ms polls: each completes with no virtual time passing (in-process hops take none), where the old fetcher
    left it waiting up to its next poll."""
    async def test(cluster: Cluster) -> None:
        cluster.lead(state())
        leader = cluster.rms[1]
        await asyncio.sleep(2.25)  # mid-way between the old fetcher's polls (every 500 ms from 0)
        for _ in range(5):
            start = now_ms()
            assert await acks_all(leader, 3) == Errors.NONE
            assert now_ms() - start < 50, f"acks=-1 took {now_ms() - start} ms"
            await asyncio.sleep(0.1)
        partition = leader.partition(TP)
        assert partition is not None and partition.high_watermark == 15
        assert [cluster.rms[i].log_end_offset(TP) for i in (2, 3)] == [15, 15]
    virtual(test)


def test_held_follower_fetch_completes_on_append() -> None:
    async def test(cluster: Cluster) -> None:
        cluster.lead(state(), brokers=(1,))  # followers 2 and 3 are played by the test: no fetchers
        leader = cluster.rms[1]
        held = asyncio.ensure_future(leader.fetch_messages(follower_fetch(0)))
        await asyncio.sleep(0.1)
        assert not held.done(), "a follower fetch at the log end was answered at once"
        leader.append(TP, 4)
        response = await asyncio.wait_for(held, 0.001)  # virtual seconds: no time passes before it completes
        assert now_ms() == 100
        (answer,) = response.partitions
        assert (answer.error, answer.records, answer.base_offset) == (Errors.NONE, 4, 0)
    virtual(test, brokers=(1,))


def test_held_follower_fetch_completes_on_leader_change() -> None:
    async def test(cluster: Cluster) -> None:
        cluster.lead(state(), brokers=(1,))
        leader = cluster.rms[1]
        held = asyncio.ensure_future(leader.fetch_messages(follower_fetch(0)))
        await asyncio.sleep(0.2)
        assert not held.done()
        cluster.lead(state(leader=2, leader_epoch=1), brokers=(1,))  # broker 1 now follows
        response = await asyncio.wait_for(held, 0.001)
        (answer,) = response.partitions
        assert answer.error is Errors.FENCED_LEADER_EPOCH
    virtual(test, brokers=(1,))


def test_held_follower_fetch_expires_after_max_wait_with_the_high_watermark_of_then() -> None:
    """Nothing appended: answered empty after exactly ``max_wait_ms``, read again then (Kafka's ``onComplete``),
    so a high watermark another follower moved meanwhile is in the answer; the fetch counted as caught up when it
    came (Kafka's ``updateFollowerFetchState`` before parking it), not again at expiry."""
    async def test(cluster: Cluster) -> None:
        cluster.lead(state(), brokers=(1,))
        leader = cluster.rms[1]
        leader.append(TP, 1)
        leader.handle_fetch(FetchRequest(2, (FetchPartition(TP, 0, 0),)))  # both followers fetch the record
        leader.handle_fetch(FetchRequest(3, (FetchPartition(TP, 0, 0),)))
        await asyncio.sleep(0.05)
        arrived = now_ms()
        held = asyncio.ensure_future(leader.fetch_messages(follower_fetch(1)))
        await asyncio.sleep(0.1)
        leader.handle_fetch(FetchRequest(3, (FetchPartition(TP, 0, 1),)))  # follower 3 catches up: HW 0 -> 1
        partition = leader.partition(TP)
        assert partition is not None and partition.high_watermark == 1
        await asyncio.sleep(WAIT_MS / 1000 - 0.1 - 0.001)
        assert not held.done(), "answered before its max wait"
        response = await asyncio.wait_for(held, 0.002)
        assert now_ms() - arrived == WAIT_MS
        (answer,) = response.partitions
        assert (answer.error, answer.records, answer.high_watermark) == (Errors.NONE, 0, 1)
        assert partition.followers[2].last_caught_up_time_ms == arrived
    virtual(test, brokers=(1,))


def test_broker_stop_drops_held_fetches_and_leaves_no_task() -> None:
    """The leader stops while followers' fetches are held: each is dropped (`PurgatoryShutDown`), the fetchers see
    a lost connection and back off (their tasks live on), and no purgatory task is left behind."""
    async def test(cluster: Cluster) -> None:
        cluster.lead(state())
        await asyncio.sleep(0.25)
        leader = cluster.rms[1]
        assert leader.produce_waiters.waiting() == 2, "both followers' fetches should be held"
        direct = asyncio.ensure_future(leader.fetch_messages(follower_fetch(0, replica=3)))
        await asyncio.sleep(0)
        cluster.stop(1)
        await asyncio.sleep(0.01)
        assert direct.done() and isinstance(direct.exception(), PurgatoryShutDown)
        assert leader.produce_waiters.waiting() == 0
        left = [t.get_name() for t in asyncio.all_tasks() if "request-delayed-fetch" in t.get_name()]
        assert left == []
        for i in (2, 3):
            (fetcher,) = cluster.rms[i].fetchers.values()
            assert fetcher._task is not None and not fetcher._task.done(), "the fetcher died with the leader"
            assert fetcher.session.session_id >= 0
    virtual(test)


def test_idle_followers_stay_in_the_isr_with_held_fetches() -> None:
    """Held fetches answered empty at the log end keep the followers caught up: 10 idle virtual seconds with
    ``replica.lag.time.max.ms`` 1 s and the ``isr-expiration`` task running shrink no ISR, and each follower's
    fetch arrives again at once after each expiry (about two fetches a second, not a busy loop)."""
    async def test(cluster: Cluster) -> None:
        for rm in cluster.rms.values():
            rm.startup()
        cluster.lead(state())
        leader = cluster.rms[1]
        assert await acks_all(leader, 2) == Errors.NONE
        await asyncio.sleep(10)
        partition = leader.partition(TP)
        assert partition is not None and partition.isr == (1, 2, 3) and leader.isr_shrinks == 0
        fetches = [next(iter(cluster.rms[i].fetchers.values())).fetches for i in (2, 3)]
        assert all(18 <= n <= 26 for n in fetches), fetches
        assert await acks_all(leader, 1) == Errors.NONE
    virtual(test)



def test_held_follower_fetch_expiring_untouched_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fetch that expires with no wake-up for its partitions (an idle partition, a follower at its log end: most
    held fetches) is answered from its first read, which a read at expiry would repeat: the partition is read once
    per fetch, not twice, and the answers are the same (a full fetch's partition at the high watermark; an
    incremental one's, with nothing new, left out)."""
    reads: list[int] = []
    original = Partition.fetch_error

    def counted(self: Partition, replica_id: int, current_leader_epoch: int, fetch_offset: int) -> Errors:
        reads.append(replica_id)
        return original(self, replica_id, current_leader_epoch, fetch_offset)

    monkeypatch.setattr(Partition, "fetch_error", counted)

    async def test(cluster: Cluster) -> None:
        cluster.lead(state(), brokers=(1,))
        leader = cluster.rms[1]
        leader.append(TP, 2)
        leader.handle_fetch(FetchRequest(3, (FetchPartition(TP, 0, 2),)))  # follower 3 is at the log end
        reads.clear()
        full = FetchRequest(2, (FetchPartition(TP, 0, 2, 0),), max_wait_ms=WAIT_MS, session_epoch=INITIAL_EPOCH)
        response = await leader.fetch_messages(full)
        assert now_ms() == WAIT_MS and reads == [2], f"read {len(reads)} times"
        (answer,) = response.partitions
        assert (answer.error, answer.records, answer.high_watermark) == (Errors.NONE, 0, 2)
        assert response.session_id != INVALID_SESSION_ID
        reads.clear()
        incremental = FetchRequest(2, (), max_wait_ms=WAIT_MS, session_id=response.session_id,
                                   session_epoch=next_fetch_session_epoch(INITIAL_EPOCH))
        response = await leader.fetch_messages(incremental)
        assert now_ms() == 2 * WAIT_MS and reads == [2], f"read {len(reads)} times"
        assert response.error is Errors.NONE and response.partitions == ()
    virtual(test, brokers=(1,))


def test_high_watermark_moved_by_the_held_fetch_itself_reaches_its_session_answer() -> None:
    """An incremental fetch whose own arrival moves the high watermark (the last ISR follower catching up) reads no
    records and is held; its fetch session must learn that high watermark only from the answer sent after the hold
    (Kafka's ``updateAndGenerateResponseData`` runs then). Noted at the first read, it was left out of that answer
    as old news, and the follower did not learn it until something else changed."""
    async def test(cluster: Cluster) -> None:
        cluster.lead(state(), brokers=(1,))
        leader = cluster.rms[1]
        leader.append(TP, 2)
        opened = leader.handle_fetch(FetchRequest(2, (FetchPartition(TP, 0, 0, -1),), session_epoch=INITIAL_EPOCH))
        assert opened.partitions[0].records == 2 and opened.partitions[0].high_watermark == 0
        leader.handle_fetch(FetchRequest(3, (FetchPartition(TP, 0, 2, 0),)))  # follower 3 at the log end
        incremental = FetchRequest(2, (FetchPartition(TP, 0, 2, 0),), max_wait_ms=WAIT_MS,
                                   session_id=opened.session_id, session_epoch=next_fetch_session_epoch(INITIAL_EPOCH))
        response = await leader.fetch_messages(incremental)  # follower 2 catches up: HW 0 -> 2, nothing to read
        assert now_ms() == WAIT_MS, "not held"
        partition = leader.partition(TP)
        assert partition is not None and partition.high_watermark == 2
        assert [(p.topic_partition, p.high_watermark) for p in response.partitions] == [(TP, 2)]
    virtual(test, brokers=(1,))
