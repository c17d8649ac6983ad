"""Which elections ``leader_elections`` calls clean where no line says: the ISR evidence and the strategy."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from tests.analytics.test_transform import OFFLINE, ONLINE, events, psc

from zkcontroller.analytics import transform

pytestmark = pytest.mark.spark


def _clean(spark, rows: list[dict[str, object]]) -> dict[tuple[int, int], bool | None]:
    """(partition, new leader) -> clean, of the elections of ``rows``."""
    return {(r["partition"], r["new_leader"]): r["clean"]
            for r in transform.leader_elections(events(spark, rows)).collect()}


def test_a_leader_back_in_the_isr_by_the_brokers_isr_line_is_elected_cleanly(spark) -> None:
    """Kafka 2.7+'s controller does not log an ISR expansion at INFO: only the leader's ``ISR updated to`` (or
    ``Expanding ISR``) line shows 2 back in the ISR the controller last wrote as [1, 3]."""
    assert _clean(spark, [
        psc(0, 0, "NewPartition", ONLINE, 1, [1, 3]), psc(0, 1, "NewPartition", ONLINE, 1, [1, 3]),
        dict(ms=100, kind="isr_update", topic="t", partition=0, isr=[1, 3, 2], broker_id=1),
        dict(ms=100, kind="isr_expand", topic="t", partition=1, isr=[1, 3, 2], broker_id=1),
        psc(1000, 0, ONLINE, OFFLINE), psc(1000, 1, ONLINE, OFFLINE),
        psc(2000, 0, OFFLINE, ONLINE, 2, [2, 3]), psc(2000, 1, OFFLINE, ONLINE, 2, [2, 3]),
    ]) == {(0, 2): True, (1, 2): True}


def test_a_shrink_line_is_not_read_as_the_isr_and_a_leader_from_outside_the_isr_is_still_unclean(spark) -> None:
    """``Shrinking ISR`` is logged before its write, which a stale leader's fails: the controller's ISR [1, 2]
    stands. Partition 1: an offline election of 3, never in any ISR seen, stays unclean."""
    assert _clean(spark, [
        psc(0, 0, "NewPartition", ONLINE, 1, [1, 2]), psc(0, 1, "NewPartition", ONLINE, 1, [1, 2]),
        dict(ms=100, kind="isr_shrink", topic="t", partition=0, isr=[1], broker_id=1),
        psc(1000, 0, ONLINE, OFFLINE), psc(1000, 1, ONLINE, OFFLINE),
        psc(2000, 0, OFFLINE, ONLINE, 2, [2]), psc(2000, 1, OFFLINE, ONLINE, 3, [3]),
    ]) == {(0, 2): True, (1, 3): False}


def test_preferred_reassignment_and_online_to_online_elections_are_clean_whatever_isr_was_seen(spark) -> None:
    """Those strategies pick from the ISR (Kafka's election algorithms); an OnlinePartition -> OnlinePartition
    change is never the offline strategy. The last ISR seen here ([1]) lacks every new leader."""
    assert _clean(spark, [
        *(psc(0, p, "NewPartition", ONLINE, 1, [1]) for p in range(4)),
        psc(1000, 0, ONLINE, ONLINE, 2, [1, 2]),
        dict(ms=1000, kind="leader_election", topic="t", partition=1, leader=2, strategy="preferred"),
        dict(ms=1000, kind="leader_election", topic="t", partition=2, leader=3, strategy="reassignment"),
        dict(ms=1000, kind="leader_election", topic="t", partition=3, leader=3, strategy="controlled_shutdown"),
    ]) == {(0, 2): True, (1, 2): True, (2, 3): True, (3, 3): True}


def test_a_stated_clean_flag_wins_over_the_strategy(spark) -> None:
    """Our event log's ``clean`` (and Kafka ≤1.0's "potential data loss" line) is what the controller decided."""
    assert _clean(spark, [
        psc(0, 0, "NewPartition", ONLINE, 1, [1]),
        dict(ms=1000, kind="leader_election", topic="t", partition=0, leader=2, strategy="preferred", clean=False),
    ]) == {(0, 2): False}


def test_an_admin_unclean_election_from_online_of_a_replica_outside_the_isr_is_unclean(spark) -> None:
    """Kafka 2.8's UNCLEAN ElectLeaders takes an Online partition whose leader is not live (broker 3 in controlled
    shutdown, its leadership kept: no other ISR member) and runs the offline strategy on it: no live ISR member,
    so any live replica (2, out of the ISR [3]), with the ISR [2] alone, logged only as OnlinePartition ->
    OnlinePartition. Partition 1: the same change where 2 was in the ISR (a controlled shutdown's move) is clean;
    partition 2: no ISR seen before it, clean as before."""
    assert _clean(spark, [
        psc(0, 0, "NewPartition", ONLINE, 3, [3, 2]), psc(0, 1, "NewPartition", ONLINE, 3, [3, 2]),
        dict(ms=100, kind="isr_change", topic="t", partition=0, leader=3, isr=[3], controller_id=1,
             controller_epoch=5),
        psc(1000, 0, ONLINE, ONLINE, 2, [2]), psc(1000, 1, ONLINE, ONLINE, 2, [2]),
        psc(1000, 2, ONLINE, ONLINE, 2, [2]),
    ]) == {(0, 2): False, (1, 2): True, (2, 2): True}
