"""A deleted partition's line ends at its deletion: the leader -1 that Kafka's deletion writes after the partition
is gone (its replicas' move to OfflineReplica) does not reopen it, in our event log or in Kafka's logs."""

from __future__ import annotations

from datetime import UTC, timedelta

import pytest

pytest.importorskip("pyspark")

from tests.analytics.test_transform import OFFLINE, ONLINE, T0, at, events, psc

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


def stays(df, deletions=None) -> list[tuple[str, int, int | None, bool]]:
    got = transform.partition_state_intervals(df, deletions=deletions)
    return sorted((r.state, (r.start_at - at(0)) // timedelta(milliseconds=1), r.duration_ms, r.open)
                  for r in got.where("partition = 0").collect())


def test_a_kafka_format_partition_s_state_ends_at_its_topic_s_deletion(spark) -> None:
    """Kafka logs the moves to OfflinePartition and NonExistentPartition at TRACE only: at INFO, the deleted
    partition stayed OnlinePartition to the end of the log (9 s here). Our event log records the moves."""
    kafka = events(spark, KAFKA_LOG)
    assert stays(kafka) == [(NEW, 0, 0, False), (ONLINE, 0, 1000, False)]
    assert stays(transform.partition_rows(kafka, 2), transform.deletion_starts(kafka)) == stays(kafka)
    recreated = events(spark, [*KAFKA_LOG[:-1], psc(5000, 0, GONE, NEW), psc(5000, 0, NEW, ONLINE, 2, [2]),
                               deletion(7000, "started"), dict(ms=9000, kind="other")])
    assert stays(recreated) == [(NEW, 0, 0, False), (NEW, 5000, 0, False), (ONLINE, 0, 1000, False),
                                (ONLINE, 5000, 2000, False)]
    event_log = stays(events(spark, [{**row, "source_format": "jsonl"} for row in EVENT_LOG]))
    assert event_log == sorted([(NEW, 0, 0, False), (ONLINE, 0, 1000, False), (OFFLINE, 1000, 0, False),
                                (GONE, 1000, 8000, True)])


def test_a_real_kafka_log_s_deleted_topic_is_not_online_to_the_end(spark, samples) -> None:
    """guenterh's Kafka 2.7 broker 1 creates test2 at 14:19:39.269 and deletes it at 14:19:42.311 ("Deletion of
    topic test2 (re)started"); its logs end at 14:20."""
    from datetime import datetime

    from zkcontroller.analytics.kafka_log_parser import KafkaLogParser, ParsedLine
    from zkcontroller.analytics.tables import EVENTS, struct

    rows = []
    for name in ("01-guenterh-2.7-broker1-controller.log", "02-guenterh-2.7-broker1-state-change.log"):
        with open(samples / name, encoding="utf-8") as f:
            for line in KafkaLogParser().parse_lines(f):
                if isinstance(line, ParsedLine):
                    values = dict.fromkeys(n for n, _ in EVENTS)
                    values.update(line.fields, cluster="guenterh", source_file=name, line_number=line.line_number,
                                  source_format="kafka_log", kind=line.kind, ts_ms=line.ts_ms,
                                  ts=datetime.fromtimestamp(line.ts_ms / 1000, UTC).replace(tzinfo=None))
                    rows.append(tuple(values[n] for n, _ in EVENTS))
    df = spark.createDataFrame(rows, struct(EVENTS))
    got = transform.partition_state_intervals(df).where("topic = 'test2' and state = 'OnlinePartition'").collect()
    deleted = datetime(2021, 1, 10, 14, 19, 42, 311_000)
    assert sorted((r.partition, r.start_at, r.end_at, r.open) for r in got) == [
        (p, datetime(2021, 1, 10, 14, 19, 39, 269_000), deleted, False) for p in range(3)]


def _broadcasts(df) -> int:
    return df._jdf.queryExecution().executedPlan().toString().count("BroadcastHashJoin")


@pytest.mark.parametrize("log", [EVENT_LOG, KAFKA_LOG], ids=["event-log", "kafka-log"])
def test_above_the_broadcast_bound_the_deletions_are_joined_and_give_the_same_lines(spark, monkeypatch, log) -> None:
    """The deleted topics' starts are broadcast only up to ``BROADCAST_DELETED_TOPICS`` (they were broadcast
    however many); above it a shuffled join gives the same leadership lines and state stays."""
    df = events(spark, [*log[:-1], *created(5000, 2), deletion(7000, "started"), isr(7001, -1, [2]),
                        dict(ms=9000, kind="other")])
    rows, deletions = transform.partition_rows(df, 2), transform.deletion_starts(df)
    threshold = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")  # only the job's own hints broadcast
    try:
        answers, joins = [], []
        for bound in (transform.BROADCAST_DELETED_TOPICS, 0):
            monkeypatch.setattr(transform, "BROADCAST_DELETED_TOPICS", bound)
            leadership = transform.partition_leadership(rows, deletions=deletions)
            intervals = transform.partition_state_intervals(rows, deletions=deletions)
            answers.append((sorted(leadership.collect()), sorted(intervals.collect())))
            joins.append((_broadcasts(leadership), _broadcasts(intervals)))
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", threshold)
    assert answers[0] == answers[1] and answers[0][0] and answers[0][1]
    assert joins[1][0] < joins[0][0] and joins[1][1] < joins[0][1]  # the deletions' broadcast is gone
