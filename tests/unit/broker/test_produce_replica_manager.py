"""acks=-1 produce on real replica managers: the replica manager wakes a waiting request where Kafka's purgatory
is checked — the leader's high watermark moving up as followers fetch, a LeaderAndIsr moving leadership away, a
StopReplica, a confirmed ISR shrink below ``min.insync.replicas`` — with no timer involved (request timeouts never
fire on this manual runtime)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from kafka.record.memory_records import MemoryRecordsBuilder
from tests.helpers import until_idle

from zkcontroller.broker.produce import ProduceAnswer, ProducePartition, produce
from zkcontroller.broker.replica_manager import ReplicaManager
from zkcontroller.model import TopicPartition

from .helpers import stop_replica
from .replica_helpers import LAG_MS, Brokers, state
from .test_replica_manager import confirm

TP = TopicPartition("t", 0)
NONE, NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS_AFTER_APPEND = 0, 6, 20
KNOWN = SimpleNamespace(contains=lambda _tp: True)


def records(n: int) -> bytes:
    b = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    for i in range(n):
        b.append(timestamp=1, key=None, value=b"%d" % i)
    b.close()
    return bytes(b.buffer())


def send_all(rm: ReplicaManager, n: int) -> asyncio.Task[list[ProduceAnswer]]:
    return asyncio.ensure_future(produce(8, -1, 30_000, "c", [ProducePartition("t", 0, records(n))],
                                         cache=KNOWN, target=rm.produce_target()))  # type: ignore[arg-type]


async def waiting(rm: ReplicaManager, task: asyncio.Task[Any]) -> None:
    """Yield until ``task`` waits in the purgatory (bounded turns, no wall time)."""
    for _ in range(100):
        if rm.produce_waiters.waiting():
            break
        await asyncio.sleep(0)
    assert rm.produce_waiters.waiting() == 1 and not task.done()


async def settle(task: asyncio.Task[Any]) -> Any:
    for _ in range(100):
        if task.done():
            return task.result()
        await asyncio.sleep(0)
    raise AssertionError("the produce request did not complete")


async def test_acks_all_completes_when_the_followers_have_fetched(brokers: Brokers) -> None:
    brokers.lead(state())
    leader = brokers.rms[1]
    task = send_all(leader, 4)
    await waiting(leader, task)
    await brokers.fetch_all()  # the followers get the records
    await until_idle()  # every wake-up handled: the request checked the HW and waits on
    assert not task.done() and leader.high_watermark(TP) == 0 and leader.produce_waiters.waiting() == 1
    await brokers.fetch_all()  # the leader learns their LEOs: the HW moves, the request wakes
    assert [(a.error, a.base_offset) for a in await settle(task)] == [(NONE, 0)]
    assert leader.high_watermark(TP) == 4 and leader.produce_waiters.waiting() == 0


async def test_acks_all_on_a_leader_that_a_leader_and_isr_demotes_is_not_leader(brokers: Brokers) -> None:
    brokers.lead(state())
    leader = brokers.rms[1]
    task = send_all(leader, 2)
    await waiting(leader, task)
    brokers.lead(state(leader=2, leader_epoch=1))
    assert [(a.error, a.base_offset) for a in await settle(task)] == [(NOT_LEADER_OR_FOLLOWER, 0)]


async def test_acks_all_on_a_deleted_replica_is_not_leader(brokers: Brokers) -> None:
    brokers.lead(state())
    leader = brokers.rms[1]
    task = send_all(leader, 2)
    await waiting(leader, task)
    leader.handle_control_request(stop_replica((0, 1, True)))
    assert leader.partition(TP) is None
    assert [a.error for a in await settle(task)] == [NOT_LEADER_OR_FOLLOWER]


async def test_acks_all_after_an_isr_shrink_below_min_insync_is_not_enough_replicas_after_append(
        brokers: Brokers) -> None:
    brokers.lead(state())
    leader = brokers.rms[1]
    leader.min_insync_replicas = lambda _topic: 3
    brokers.rms[3].pause_fetchers()
    task = send_all(leader, 5)
    await waiting(leader, task)
    brokers.clock.advance(LAG_MS)
    await brokers.fetch_all()
    await brokers.fetch_all()  # broker 2 caught up; broker 3 (in the ISR) holds the HW at 0
    await until_idle()
    assert not task.done() and leader.high_watermark(TP) == 0
    brokers.clock.advance(1)
    assert len(leader.maybe_shrink_isr()) == 1
    await until_idle()  # the proposal's wake-up handled
    assert not task.done()  # pending: the maximal ISR still counts broker 3, and the HW waits for it
    confirm(brokers)  # ISR (1, 2): the HW moves to 5, below min.insync.replicas
    assert leader.high_watermark(TP) == 5
    assert [a.error for a in await settle(task)] == [NOT_ENOUGH_REPLICAS_AFTER_APPEND]


async def test_a_log_append_time_topic_answers_the_replica_managers_clock(brokers: Brokers) -> None:
    """The topic's ``message.timestamp.type`` reaches the produce path: LogAppendTime answers the broker's time,
    CreateTime -1."""
    brokers.lead(state())
    leader = brokers.rms[1]

    async def append_time() -> int:
        [answer] = await produce(8, 1, 30_000, "c", [ProducePartition("t", 0, records(1))], cache=KNOWN,  # type: ignore[arg-type]
                                 target=leader.produce_target())
        assert answer.error == NONE
        return answer.log_append_time

    assert await append_time() == -1
    leader.topic_configs._apply("t", {"message.timestamp.type": "LogAppendTime"})  # as read from /config/topics/t
    assert await append_time() == leader.runtime.now_ms()
