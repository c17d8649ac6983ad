"""The broker failure's offline elections made once per (replica set, ISR) pair give, partition by partition, the
very results `leader_for_offline` gives (the memo must never change who leads or what is written)."""
from __future__ import annotations

import itertools

from zkcontroller.controller.election import _elect_clean_for_offline, leader_for_offline
from zkcontroller.model import LeaderAndIsr, ReplicaAssignment, TopicPartition

BROKERS = (1, 2, 3, 4)


def _cases() -> tuple[list[tuple[TopicPartition, LeaderAndIsr | None]], dict[TopicPartition, tuple[int, ...]]]:
    partitions: list[tuple[TopicPartition, LeaderAndIsr | None]] = []
    assignments: dict[TopicPartition, tuple[int, ...]] = {}
    n = 0
    for rf in (1, 2, 3):
        for replicas in itertools.permutations(BROKERS, rf):
            isrs = [()] + [c for k in range(1, rf + 1) for c in itertools.permutations(replicas, k)]
            for isr in [*isrs, None]:
                for copy in range(2):  # the same pair twice: the second comes from the memo
                    tp = TopicPartition(f"t{n % 3}", n)
                    n += 1
                    assignments[tp] = replicas
                    lai = None if isr is None else LeaderAndIsr(replicas[0], 7 + copy, isr, 11 + copy)
                    partitions.append((tp, lai))
    return partitions, assignments


def test_same_results_as_leader_for_offline_for_every_online_set() -> None:
    partitions, assignments = _cases()
    by_topic: dict[str, dict[int, ReplicaAssignment]] = {}  # the context's map: topic → partition → assignment
    for tp, replicas in assignments.items():
        by_topic.setdefault(tp.topic, {})[tp.partition] = ReplicaAssignment(replicas)
    for k in range(len(BROKERS) + 1):
        for online in itertools.combinations(BROKERS, k):
            online_set = frozenset(online)
            expected = [leader_for_offline(tp, lai, assignments[tp], online_set, False) for tp, lai in partitions]
            got = _elect_clean_for_offline(partitions, by_topic, online_set)
            assert got == expected
            assert [type(r.leader_and_isr) for r in got] == [type(r.leader_and_isr) for r in expected]
            assert [r.unclean for r in got] == [False] * len(got)
