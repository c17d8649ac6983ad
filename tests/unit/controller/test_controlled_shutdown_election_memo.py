"""The controlled shutdown's elections made once per (replica set, ISR) pair give, partition by partition, the very
results `leader_for_controlled_shutdown` gives (the memo must never change who leads or what is written)."""
from __future__ import annotations

import itertools

from zkcontroller.controller.election import _elect_for_controlled_shutdown, leader_for_controlled_shutdown
from zkcontroller.model import LeaderAndIsr, ReplicaAssignment, TopicPartition

BROKERS = (1, 2, 3, 4)


def _cases() -> tuple[list[tuple[TopicPartition, LeaderAndIsr]], dict[TopicPartition, tuple[int, ...]]]:
    partitions: list[tuple[TopicPartition, LeaderAndIsr]] = []
    assignments: dict[TopicPartition, tuple[int, ...]] = {}
    n = 0
    for rf in (1, 2, 3):
        for replicas in itertools.permutations(BROKERS, rf):
            isrs = [()] + [c for k in range(1, rf + 1) for c in itertools.permutations(replicas, k)]
            for isr in isrs:
                for copy in range(2):  # the same pair twice: the second comes from the memo
                    tp = TopicPartition(f"t{n % 3}", n)
                    n += 1
                    assignments[tp] = replicas
                    partitions.append((tp, LeaderAndIsr(replicas[0], 7 + copy, isr, 11 + copy)))
    # a partition the context has no assignment for: no replicas, no leader
    partitions.append((TopicPartition("unknown", 0), LeaderAndIsr(1, 3, (1, 2), 4)))
    assignments[TopicPartition("unknown", 0)] = ()
    return partitions, assignments


def test_same_results_as_leader_for_controlled_shutdown_for_every_online_and_shutting_down_set() -> None:
    partitions, assignments = _cases()
    by_topic: dict[str, dict[int, ReplicaAssignment]] = {}  # the context's map: topic → partition → assignment
    for tp, replicas in assignments.items():
        if replicas:
            by_topic.setdefault(tp.topic, {})[tp.partition] = ReplicaAssignment(replicas)
    for k in range(len(BROKERS) + 1):
        for online in itertools.combinations(BROKERS, k):
            online_set = frozenset(online)
            for j in range(len(online) + 1):
                for shutting_down in itertools.combinations(online, j):
                    down = frozenset(shutting_down)
                    expected = [leader_for_controlled_shutdown(tp, lai, assignments[tp], online_set, down)
                                for tp, lai in partitions]
                    got = _elect_for_controlled_shutdown(partitions, by_topic, online_set, down)
                    assert got == expected
                    assert [type(r.leader_and_isr) for r in got] == [type(r.leader_and_isr) for r in expected]
                    assert [r.unclean for r in got] == [False] * len(got)
