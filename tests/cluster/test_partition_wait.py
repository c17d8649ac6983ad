"""`cluster.partition_wait`, the one bounded poll behind ``create``'s and ``fail-log-dir``'s waits at the prompt
and the demo's healing steps. It runs on a virtual-time loop: the bound is 10 virtual seconds, taken at once."""

from __future__ import annotations

import asyncio

import pytest

from zkcontroller.cluster.partition_wait import PartitionWait, wait_for_partitions
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from zkcontroller.sim.loop import run_virtual
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes.topics import TopicPartitionStateZNode

TP0, TP1 = TopicPartition("orders", 0), TopicPartition("orders", 1)


def _state(leader: int, isr: tuple[int, ...]) -> bytes:
    return TopicPartitionStateZNode.encode(LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 0, isr), 1))


def _led_by_first_replica(assignment: ReplicaAssignment, state: LeaderIsrAndControllerEpoch) -> bool:
    return state.leader_and_isr.leader == assignment.replicas[0]


async def _scenario(leader_of_tp1_after_s: float | None, partitions: list[TopicPartition] | None,
                    timeout_s: float = 10.0) -> PartitionWait:
    """Topic ``orders`` (replicas 1,2 and 2,1): partition 0 led by 1, partition 1 by 1 until, after
    ``leader_of_tp1_after_s`` virtual seconds, by 2."""
    loop = asyncio.get_running_loop()
    backend = EmbeddedBackend(lambda: int(loop.time() * 1000), tick_ms=None)
    session = await backend.new_session()
    admin = KafkaZkClient(session, lambda: int(loop.time() * 1000))
    await admin.create_topic_assignment("orders", None, {TP0: ReplicaAssignment((1, 2)),
                                                         TP1: ReplicaAssignment((2, 1))})
    for tp in (TP0, TP1):
        await session.ensure_path(TopicPartitionStateZNode.path(tp).rsplit("/", 1)[0])
        await session.create(TopicPartitionStateZNode.path(tp), _state(1, (1, 2)))

    async def elect_tp1() -> None:
        assert leader_of_tp1_after_s is not None
        await asyncio.sleep(leader_of_tp1_after_s)
        await session.set_data(TopicPartitionStateZNode.path(TP1), _state(2, (1, 2)))

    writer = loop.create_task(elect_tp1()) if leader_of_tp1_after_s is not None else None
    try:
        return await wait_for_partitions(admin, _led_by_first_replica, timeout_s, partitions)
    finally:
        if writer is not None:
            writer.cancel()
        await session.close()
        await backend.close()


def test_returns_once_every_partition_satisfies_the_condition() -> None:
    waited = run_virtual(_scenario(3.0, [TP0, TP1]))
    assert waited.met
    assert 3.0 <= waited.elapsed_s < 3.2  # the first poll after the change
    assert waited.states[TP1].leader_and_isr.leader == 2


def test_every_partition_of_every_topic_when_none_are_named() -> None:
    assert run_virtual(_scenario(3.0, None)).met
    assert not run_virtual(_scenario(None, None)).met


def test_a_time_out_is_a_result_with_the_last_states_not_an_error() -> None:
    waited = run_virtual(_scenario(None, [TP0, TP1]))
    assert not waited.met
    assert waited.elapsed_s == pytest.approx(10.0)  # its last look is at the bound (`runtime.poll`), not past it
    assert waited.states[TP1].leader_and_isr.leader == 1


def test_a_partition_without_a_state_does_not_satisfy_it() -> None:
    waited = run_virtual(_scenario(0.0, [TP0, TopicPartition("orders", 7)], timeout_s=1.0))
    assert not waited.met
