"""A deleted partition's line ends at its deletion: the leader -1 that Kafka's deletion writes after the partition
is gone (its replicas' move to OfflineReplica) does not reopen it, in our event log or in Kafka's logs."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from tests.analytics.test_transform import OFFLINE, ONLINE, T0, events, psc

from zkcontroller.analytics import incidents, transform
from zkcontroller.analytics.controller_timeline import Timeline
from zkcontroller.analytics.timeline_tables import anomaly_rows

pytestmark = pytest.mark.spark
GONE, NEW = "NonExistentPartition", "NewPartition"


def isr(ms: int, leader: int, members: list[int], **kw: object) -> dict[str, object]:
    return dict(ms=ms, kind="isr_change", topic="t", partition=0, leader=leader, isr=members, controller_id=1,
                controller_epoch=5, **kw)


def deletion(ms: int, phase: str) -> dict[str, object]:
    return dict(ms=ms, kind="topic_deletion", topic="t", topics="t", phase=phase, controller_id=1,
                controller_epoch=5)


def created(ms: int, leader: int) -> list[dict[str, object]]:
    return [psc(ms, 0, GONE, NEW), psc(ms, 0, NEW, ONLINE, leader, [leader])]


EVENT_LOG = [  # as `zkcontroller cluster` writes events.jsonl for `create t 1 1`, `delete t`
    *created(0, 1), deletion(1000, "queued"), deletion(1000, "started"), psc(1000, 0, ONLINE, OFFLINE),
    psc(1000, 0, OFFLINE, GONE), isr(1001, -1, [1]), deletion(1003, "completed"), dict(ms=9000, kind="other"),
]
KAFKA_LOG = [  # Kafka 2.8 at INFO: the moves to OfflinePartition and NonExistentPartition are TRACE lines
    psc(0, 0, GONE, NEW), psc(0, 0, NEW, ONLINE, 1, [1, 2]), deletion(999, "queued"), deletion(1000, "started"),
    isr(1001, 1, [1]), isr(1001, -1, []),  # a follower's replica first: the leader keeps its line until its own
    deletion(1003, "completed"), dict(ms=9000, kind="other"),
]


def lines(df, deletions=None) -> list[tuple[int, int, int, bool]]:
    got = transform.partition_leadership(df) if deletions is None else transform.partition_leadership(
        df, deletions=deletions)
    return sorted((r.leader, r.start_ms - T0, r.end_ms - T0, r.open) for r in got.collect())


@pytest.mark.parametrize("log", [EVENT_LOG, KAFKA_LOG], ids=["event-log", "kafka-log"])
def test_a_deleted_partition_is_not_leaderless(spark, log) -> None:
    df = events(spark, log)
    assert lines(df) == [(1, 0, 1000, False)]
    got = incidents.anomalies(df, transform.leader_elections(df), anomaly_rows(spark, Timeline(), []), 1000, 0)
    assert got.where("anomaly = 'leaderless_partition'").count() == 0
    assert incidents.leaderless_partitions_over_time(df).count() == 0
    per_partition = transform.partition_unavailability(df).where("partition = 0").collect()
    assert [r.leaderless_seconds for r in per_partition] == [0.0]


@pytest.mark.parametrize("log", [EVENT_LOG, KAFKA_LOG], ids=["event-log", "kafka-log"])
def test_the_job_s_partition_rows_with_the_deletions_apart_give_the_same_lines(spark, log) -> None:
    df = events(spark, log)
    assert lines(transform.partition_rows(df, 2), transform.deletion_starts(df)) == [(1, 0, 1000, False)]


def test_a_topic_created_again_starts_new_lines(spark) -> None:
    """A new topic of the same name: its creation, or an election, starts a line; its later -1 is leaderless."""
    recreated = [*EVENT_LOG[:-1], *created(5000, 2), isr(6000, -1, [2]), dict(ms=9000, kind="other")]
    assert lines(events(spark, recreated)) == [(-1, 6000, 9000, True), (1, 0, 1000, False), (2, 5000, 6000, False)]
    elected = [*KAFKA_LOG[:-1], dict(ms=5000, kind="leader_election", topic="t", partition=0, leader=3,
                                     controller_id=1, controller_epoch=5), dict(ms=9000, kind="other")]
    assert lines(events(spark, elected)) == [(1, 0, 1000, False), (3, 5000, 9000, True)]


def test_a_second_deletion_ends_the_new_topic_s_line_too(spark) -> None:
    twice = [*EVENT_LOG[:-1], *created(5000, 2), deletion(7000, "started"), isr(7001, -1, [2]),
             dict(ms=9000, kind="other")]
    assert lines(events(spark, twice)) == [(1, 0, 1000, False), (2, 5000, 7000, False)]
