"""Transforms on a few inline events with explicit schemas, compared as whole DataFrames."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from zkcontroller.analytics.controller_timeline import Timeline
from zkcontroller.analytics.timeline_tables import anomaly_rows

pytest.importorskip("pyspark")
from pyspark.testing import assertDataFrameEqual

from zkcontroller.analytics import incidents, transform
from zkcontroller.analytics.tables import EVENTS, struct

pytestmark = pytest.mark.spark
T0 = 1_700_000_000_000
ONLINE, OFFLINE = "OnlinePartition", "OfflinePartition"


def at(ms: int) -> datetime:
    return datetime.fromtimestamp((T0 + ms) / 1000, tz=UTC).replace(tzinfo=None)


def events(spark, rows: list[dict[str, object]]):
    """Events frame: each row gives its offset in ms as 'ms' plus whatever columns it needs."""
    full = []
    for n, row in enumerate(rows, start=1):
        values = dict.fromkeys((name for name, _ in EVENTS))
        values.update(cluster="c", source_file="f.log", line_number=n, source_format="kafka_log")
        values.update({k: v for k, v in row.items() if k != "ms"})
        values.update(ts=at(row["ms"]), ts_ms=T0 + row["ms"])
        full.append(tuple(values[name] for name, _ in EVENTS))
    return spark.createDataFrame(full, struct(EVENTS))


def psc(ms: int, p: int, frm: str, to: str, leader: int | None = None, isr: list[int] | None = None, **kw):
    row = dict(ms=ms, kind="partition_state_change", topic="t", partition=p, from_state=frm, to_state=to,
               leader=leader, isr=isr, controller_id=1, controller_epoch=5)
    return {**row, **kw}


def test_partition_state_intervals_run_to_the_next_change_or_stay_open(spark) -> None:
    df = events(spark, [psc(0, 0, "NewPartition", ONLINE, 1), psc(1000, 0, ONLINE, OFFLINE),
                        psc(4000, 0, OFFLINE, ONLINE, 2), dict(ms=9000, kind="other")])
    expected = spark.createDataFrame(
        [("c", "t", 0, ONLINE, at(0), at(1000), 1000, False, 1, 5, 1, "f.log", 1),
         ("c", "t", 0, OFFLINE, at(1000), at(4000), 3000, False, 1, 5, None, "f.log", 2),
         ("c", "t", 0, ONLINE, at(4000), None, 5000, True, 1, 5, 2, "f.log", 3)],
        "cluster string, topic string, partition int, state string, start_at timestamp, end_at timestamp, "
        "duration_ms bigint, open boolean, controller_id int, controller_epoch int, leader int, "
        "source_file string, line_number bigint")
    assertDataFrameEqual(transform.partition_state_intervals(df), expected)


def test_unclean_election_is_a_leader_from_outside_the_previous_isr_and_lines_merge(spark) -> None:
    df = events(spark, [
        psc(0, 0, "NewPartition", ONLINE, 1, [1, 2]), psc(0, 1, "NewPartition", ONLINE, 2, [2, 3]),
        dict(ms=500, kind="isr_change", topic="t", partition=0, leader=-1, isr=[1], leader_epoch=3, broker_id=2),
        dict(ms=900, kind="leader_election", topic="t", partition=1, leader=3, strategy="offline"),  # same election
        psc(1000, 0, OFFLINE, ONLINE, 3, [3], leader_epoch=4), psc(1001, 1, OFFLINE, ONLINE, 3, [3], leader_epoch=9),
    ])
    expected = spark.createDataFrame(
        [("c", "t", 1, at(900), 1, 5, "offline", None, 2, 3, 9, True, "f.log", 4),
         ("c", "t", 0, at(1000), 1, 5, "offline", None, 1, 3, 4, False, "f.log", 5)],
        "cluster string, topic string, partition int, elected_at timestamp, controller_id int, "
        "controller_epoch int, strategy string, trigger string, old_leader int, new_leader int, leader_epoch int, "
        "clean boolean, source_file string, line_number bigint")
    assertDataFrameEqual(transform.leader_elections(df), expected)


def test_an_event_log_election_s_old_leader_is_its_own_not_the_stale_controller_s_last_line(spark) -> None:
    """A split brain in our event log: controller 2 (epoch 6) took over at 1000, and stale controller 1 (epoch 5)
    still logged a change of t-0 to leader 3 at 1500 (its own view; ZooKeeper refused the write). Controller 2's
    preferred election at 2000 writes its partition_state_change first, then the leader_election naming old
    leader 1 (read from ZooKeeper). The merged election took the first line's old leader, derived from the last
    leader logged before it: the stale controller's 3."""
    new = dict(controller_id=2, controller_epoch=6, source_format="jsonl")
    df = events(spark, [
        psc(0, 0, "NewPartition", ONLINE, 1, [1, 2, 3], source_format="jsonl"),
        dict(ms=1000, kind="controller_elected", **new),
        psc(1500, 0, OFFLINE, ONLINE, 3, [3], source_format="jsonl"),  # the stale tenure's view
        psc(2000, 0, ONLINE, ONLINE, 2, [1, 2, 3], leader_epoch=2, **new),
        dict(ms=2000, kind="leader_election", topic="t", partition=0, strategy="preferred", trigger="auto",
             old_leader=1, leader=2, isr=[1, 2, 3], leader_epoch=2, clean=True, **new),
    ])
    got = [(r.elected_at, r.controller_epoch, r.strategy, r.old_leader, r.new_leader)
           for r in transform.leader_elections(df).orderBy("elected_at").collect()]
    assert got == [(at(1500), 5, "offline", 1, 3), (at(2000), 6, "preferred", 1, 2)]
    assertDataFrameEqual(transform.leader_elections(df), _elections_by_session_window(df))


def test_two_controllers_electing_one_leader_within_the_gap_are_two_elections(spark) -> None:
    """A failover (epoch 2) elects broker 3 for t-0 and, 150 ms later, controller 3 (epoch 3) elects it again after
    broker 1 stops (a fast demo's teardown): the gap alone merged them into one election of epoch 3 at the first
    one's time, and the epoch-2 election was gone from the table."""
    df = events(spark, [
        psc(0, 0, "NewPartition", ONLINE, 1, [1, 3]),
        psc(100, 0, OFFLINE, ONLINE, 3, [3], controller_id=2, controller_epoch=2, leader_epoch=1),
        psc(200, 0, ONLINE, ONLINE, 1, [3, 1], controller_id=3, controller_epoch=3, leader_epoch=2),
        psc(250, 0, OFFLINE, ONLINE, 3, [3], controller_id=3, controller_epoch=3, leader_epoch=3),
    ])
    got = [(r["controller_epoch"], r["new_leader"], r["leader_epoch"], r["elected_at"])
           for r in transform.leader_elections(df).orderBy("elected_at").collect()]
    assert got == [(2, 3, 1, at(100)), (3, 1, 2, at(200)), (3, 3, 3, at(250))]


def test_event_queue_latency_percentiles(spark) -> None:
    df = events(spark, [dict(ms=i, kind="controller_event", event_name="BrokerChange", queue_time_ms=q,
                             processing_time_ms=10 * q) for i, q in enumerate([1, 2, 3, 4, 100])])
    expected = spark.createDataFrame(
        [("c", "BrokerChange", 5, 3.0, 80.8, 96.16, 30.0, 808.0, 961.6, 100.0, 1000.0)],
        "cluster string, event_name string, count bigint, queue_p50_ms double, queue_p95_ms double, "
        "queue_p99_ms double, processing_p50_ms double, processing_p95_ms double, processing_p99_ms double, "
        "queue_max_ms double, processing_max_ms double")
    assertDataFrameEqual(incidents.event_queue_latency(df), expected, rtol=1e-9)


def test_anomalies_find_stale_epochs_leaderless_partitions_unclean_elections_and_slow_events(spark) -> None:
    df = events(spark, [
        psc(0, 0, "NewPartition", ONLINE, 1, [1]),
        dict(ms=100, kind="isr_change", topic="t", partition=0, leader=-1, isr=[1], controller_id=1,
             controller_epoch=5),
        dict(ms=1000, kind="controller_ready", controller_id=2, controller_epoch=6),
        dict(ms=1500, kind="leader_and_isr_received", broker_id=3, controller_id=1, controller_epoch=5),  # stale
        psc(2100, 0, OFFLINE, ONLINE, 2, [2], controller_epoch=6),
        dict(ms=3000, kind="controller_event", event_name="BrokerChange", queue_time_ms=700,
             processing_time_ms=600, controller_id=2, controller_epoch=6),
        dict(ms=3100, kind="controller_event", event_name="Startup", queue_time_ms=0, processing_time_ms=0,
             controller_id=3, controller_epoch=0),  # a broker that is not controller: not a stale epoch
    ])
    # Stale epochs are the driver-side timeline's (split-brain windows, tests/analytics/test_controller_timeline.py);
    # here the timeline contributes no rows.
    no_timeline_rows = anomaly_rows(spark, Timeline(), [])
    got = incidents.anomalies(df, transform.leader_elections(df), no_timeline_rows, slow_event_ms=1000)
    expected = spark.createDataFrame([
        ("c", "leaderless_partition", at(100), "t", 0, None, 1, 5, 2000, 1,  # traced to the line that set -1
         "leader -1 until a new leader was elected", "f.log", 2),
        ("c", "unclean_election", at(2100), "t", 0, 2, 1, 6, None, 1,
         "leader 2 elected from outside the ISR (old leader 1)", "f.log", 5),
        ("c", "slow_controller_event", at(3000), None, None, None, 2, 6, 1300, 1,
         "BrokerChange waited 700 ms and ran 600 ms (threshold 1000 ms)", "f.log", 6),
    ], got.schema)
    assertDataFrameEqual(got, expected)


def _active_tenure_by_join(elections, tenures):
    """The earlier with_active_tenure (every election joined with every earlier tenure, then aggregated): the
    reference the range join must equal."""
    from pyspark.sql import functions as F

    t = F.broadcast(tenures.select(
        F.col("cluster").alias("t_cluster"), F.col("controller_id").alias("t_id"),
        F.col("controller_epoch").alias("t_epoch"), F.col("start_at").alias("t_start")))
    key = ["cluster", "topic", "partition", "elected_at", "leader", "source_file", "line_number"]
    keyed = elections.withColumnRenamed("new_leader", "leader")
    active = keyed.select(*key).join(
        t, on=(F.col("cluster") == F.col("t_cluster")) & (F.col("t_start") <= F.col("elected_at")), how="inner",
    ).groupBy(*key).agg(F.max_by(F.struct("t_id", "t_epoch"), F.struct("t_start", "t_epoch")).alias("active"))
    return keyed.join(active, on=key, how="left").select(
        "cluster", "topic", "partition", "elected_at",
        F.coalesce("controller_id", "active.t_id").alias("controller_id"),
        F.coalesce("controller_epoch", "active.t_epoch").alias("controller_epoch"),
        "strategy", "trigger", "old_leader", F.col("leader").alias("new_leader"), "leader_epoch", "clean",
        "source_file", "line_number")


def test_active_tenure_by_range_join_equals_the_join_and_aggregate_it_replaced(spark) -> None:
    tenures = spark.createDataFrame([
        ("c", 1, 5, at(100)), ("c", 2, 6, at(200)), ("c", 3, 4, at(200)),  # same start: the higher epoch wins
        ("c", 4, None, at(300)), ("c", 5, 7, at(400)), ("c", 6, 8, None), ("d", 9, 1, at(0)), (None, 7, 3, at(0)),
    ], "cluster string, controller_id int, controller_epoch int, start_at timestamp")
    cols = ("cluster string, topic string, partition int, elected_at timestamp, controller_id int, controller_epoch "
            "int, strategy string, trigger string, old_leader int, new_leader int, leader_epoch int, clean boolean, "
            "source_file string, line_number bigint")
    rows = []
    for n, (cluster, ms, cid, epoch, topic, leader) in enumerate([
        ("c", 50, None, None, "t", 1), ("c", 100, None, None, "t", 1), ("c", 150, 8, None, "t", 2),
        ("c", 200, None, None, "t", 1), ("c", 250, None, 3, "t", 1), ("c", 300, None, None, "t", 1),
        ("c", 399, None, None, "t", 1), ("c", 400, None, None, "t", 1), ("c", 10_000, None, None, "t", 1),
        ("c", 500, None, None, None, 1), ("c", 500, None, None, "t", None), ("d", 5, None, None, "t", 1),
        ("e", 5, None, None, "t", 1), (None, 5, None, None, "t", 1), ("c", 500, None, None, "t", 1),
        ("c", 500, None, None, "t", 1),  # the same key twice
    ], start=1):
        rows.append((cluster, topic, 0, None if ms == 399 else at(ms), cid, epoch, "offline", None, 1, leader, 3,
                     True, "f.log", 7 if ms == 500 else n))
    elections = spark.createDataFrame(rows, cols)
    expected = _active_tenure_by_join(elections, tenures)
    # without buckets; with buckets smaller than, about as long as, and longer than the intervals (an election
    # long after the last start, on a bucket boundary, before any start, in a cluster without tenures)
    for bucket_ms in (None, 1, 7, 50, 100, 150, 1_000, 10**9):
        assertDataFrameEqual(transform.with_active_tenure(elections, tenures, bucket_ms), expected)
    got = {(r["cluster"], r["line_number"]): (r["controller_id"], r["controller_epoch"])
           for r in transform.with_active_tenure(elections, tenures, 7).collect()}
    assert got[("c", 1)] == (None, None) and got[("c", 2)] == (1, 5) and got[("c", 3)] == (8, 5)
    assert got[("c", 4)] == (2, 6) and got[("c", 6)] == (4, None) and got[("c", 9)] == (5, 7)


def test_tenure_bucket_is_a_second_unless_the_spans_would_make_too_many_buckets() -> None:
    assert transform.tenure_bucket_ms({}) == 1_000
    assert transform.tenure_bucket_ms({"c": [5, 2_000_000], "d": [7]}) == 1_000
    span = 10 * transform.MAX_TENURE_BUCKETS * 1_000
    assert transform.tenure_bucket_ms({"c": [0, span // 2], "d": [span, span // 2]}) == 10_000


def _elections_by_session_window(events_df, merge_gap_seconds: int = 2):
    """The earlier leader_elections (Spark's ``session_window``): the reference the window numbering must equal."""
    from pyspark.sql import functions as F

    line = F.struct("ts_ms", "source_file", "line_number")
    merged = transform._election_evidence(events_df).groupBy(
        "cluster", "topic", "partition", "leader", F.session_window("ts", f"{merge_gap_seconds} seconds"),
    ).agg(
        F.min("ts").alias("elected_at"), F.max("controller_id").alias("controller_id"),
        F.max("controller_epoch").alias("controller_epoch"), F.max("strategy").alias("strategy"),
        F.max("trigger").alias("trigger"),
        F.coalesce(F.min_by("stated_old_leader", F.when(F.col("stated_old_leader").isNotNull(), line)),
                   F.min_by("old_leader", line)).alias("old_leader"),
        F.max("leader_epoch").alias("leader_epoch"), F.bool_and("clean").alias("clean"),
        F.min_by(F.struct("source_file", "line_number"), line).alias("first_line"))
    return merged.select(
        "cluster", "topic", "partition", "elected_at", "controller_id", "controller_epoch", "strategy", "trigger",
        "old_leader", F.col("leader").alias("new_leader"), "leader_epoch", "clean",
        F.col("first_line.source_file").alias("source_file"), F.col("first_line.line_number").alias("line_number"))


def test_election_sessions_by_window_functions_equal_the_session_window_they_replaced(spark) -> None:
    """Gaps just under, exactly at and just over 2 s, chains that only merge through a middle line, ties, other
    leaders in between, other partitions, null topics and clusters, and a line without a time."""
    rows = []
    for p, offsets in enumerate([[0, 2000], [0, 2001], [0, 1999, 3998, 6000], [0, 0, 500], [0, 2000, 4001]]):
        # one controller epoch: another epoch's lines are another election (test_two_controllers_electing_...)
        rows += [psc(ms, p, OFFLINE, ONLINE, 1 + (i % 2 if p == 3 else 0), isr=[1, 2], controller_epoch=5)
                 for i, ms in enumerate(offsets)]
    rows += [dict(ms=100, kind="leader_election", topic="t", partition=0, leader=1, old_leader=3, strategy="offline"),
             dict(ms=2100, kind="leader_election", topic="t", partition=0, leader=2, clean=False),
             dict(ms=50, kind="leader_election", topic=None, partition=9, leader=1),
             dict(ms=60, kind="leader_election", topic="t", partition=9, leader=1, cluster=None),
             dict(ms=4100, kind="leader_election", topic="t", partition=9, leader=1, cluster=None)]
    from pyspark.sql import functions as F

    df = events(spark, rows)
    no_time = df.limit(1).withColumn("ts", F.lit(None).cast("timestamp"))
    df = df.unionByName(no_time)
    got = transform.leader_elections(df)
    assertDataFrameEqual(got, _elections_by_session_window(df))
    assert got.count() == 13  # 2+2+2+2+2 on partitions 0-4, 1 with no topic, 2 with no cluster


def test_failure_windows_end_at_the_first_later_change_as_the_scan_of_every_change_did(spark) -> None:
    """failures_frame looks each failure up among its cluster's changes in time order; the reference scans
    every change of the cluster for every failure (quadratic: seconds at 1M lines)."""
    import random

    from zkcontroller.analytics.controller_timeline import DEFAULT_FAILURE_MERGE_MS, Tenure
    from zkcontroller.analytics.timeline_tables import failures_frame

    rng = random.Random(5)
    kinds = ("broker_failed", "broker_change", "broker_registered")
    membership = [{"cluster": rng.choice("ab"), "ts_ms": rng.randrange(0, 200_000, 250), "kind": rng.choice(kinds),
                   "brokers": rng.sample(range(1, 6), rng.randint(0, 2)) or None} for _ in range(300)]
    tenures = [Tenure(cluster=rng.choice("ab"), controller_id=1, controller_epoch=e,
                      elected_ms=rng.randrange(0, 200_000, 250)) for e in range(1, 8)]
    failures = [{"cluster": rng.choice("abc"), "broker_id": rng.randint(1, 5),
                 "detected_ms": rng.randrange(0, 200_000, 250), "cause": "x"} for _ in range(200)]
    got = [r["until_ms"] for r in failures_frame(spark, failures, membership, tenures, 20_000).collect()]
    expected = []
    for f in failures:
        changes = [(m["ts_ms"], set(m["brokers"] or []) if m["kind"] != "broker_registered" else set())
                   for m in membership if m["cluster"] == f["cluster"]]
        changes += [(t.start_ms, set()) for t in tenures if t.cluster == f["cluster"]]
        later = [ts for ts, dead in changes if ts > f["detected_ms"]
                 and not (f["broker_id"] in dead and ts - f["detected_ms"] <= DEFAULT_FAILURE_MERGE_MS)]
        expected.append(min([f["detected_ms"] + 20_000, *later]))
    assert got == expected
    assert len(set(got)) > 100  # most failures end at a change, not at the limit


def test_broker_failure_handling_is_the_same_whatever_the_time_bucket(spark) -> None:
    """The bucket only narrows which failures each handling event is range-tested against: windows that cross
    bucket boundaries, events exactly at detection and at the window's end (excluded), overlapping failures,
    another cluster and a BrokerChange controller event give the same rows with minutes, seconds or 7 ms."""
    import random

    from zkcontroller.analytics.timeline_tables import FAILURE_COLUMNS, rows_frame

    rng = random.Random(11)
    failures = [{"cluster": rng.choice("cd"), "broker_id": rng.randint(1, 4), "detected_ms": T0 + d,
                 "until_ms": T0 + d + rng.choice((0, 1, 999, 1_000, 1_001, 2_500, 61_000)), "cause": "x",
                 "failure_id": i} for i, d in enumerate(rng.randrange(0, 120_000, 125) for _ in range(40))]
    edges = [f[k] - T0 for f in failures for k in ("detected_ms", "until_ms")]
    kinds = ("partition_state_change", "replica_state_change", "isr_change", "leader_election", "controller_event")
    rows = [dict(ms=ms, cluster=rng.choice("cd"), kind=rng.choice(kinds), broker_id=rng.randint(1, 4), topic="t",
                 partition=rng.randint(0, 5), event_name=rng.choice(("BrokerChange", None)))
            for ms in [*edges, *(e - 1 for e in edges), *(rng.randrange(0, 185_000) for _ in range(400))] if ms >= 0]
    evs = events(spark, rows)
    frame = rows_frame(spark, failures, FAILURE_COLUMNS)
    by_minute = incidents.broker_failure_handling(frame, evs, 60_000)
    for bucket in (1_000, 7):
        assertDataFrameEqual(incidents.broker_failure_handling(frame, evs, bucket), by_minute)
    assert by_minute.where("partitions_affected > 0").count() > 10  # the comparison has handling to compare
    assert incidents.handling_bucket_ms([400] * 2_705) == 1_000
    assert incidents.handling_bucket_ms([60_000] * 100_000) == 30_000  # 6e9 ms of windows in 200k rows


def test_a_slot_of_the_series_says_the_level_it_ended_with(spark) -> None:
    """t-0 leaderless for 1 ms at 1000 ms, then nothing until 100 s: its slot's peak is 1 and it ends at 0, which
    holds until the next slot (the report drew the peak for the 99 s after)."""
    df = events(spark, [psc(0, 0, "NewPartition", ONLINE, 1), psc(1000, 0, ONLINE, OFFLINE),
                        psc(1001, 0, OFFLINE, ONLINE, 2), dict(ms=100_000, kind="other")])
    width = -(-100_001 // 400)  # 400 slots over the observed window
    rows = [(r.bucket_ms - T0, r.value, r.end_value, r.until_ms - r.bucket_ms) for r in
            incidents.leaderless_partitions_over_time(df).orderBy("bucket_ms").collect()]
    assert rows == [(1000 // width * width, 1, 0, width)]
    led = sorted((r.broker_id, r.bucket_ms - T0, r.value, r.end_value) for r in
                 incidents.leaders_per_broker_over_time(df).collect())
    assert led == [(1, 0, 1, 1), (1, 1000 // width * width, 0, 0), (2, 1000 // width * width, 1, 1)]


def test_a_failure_s_handling_ends_before_the_next_event_the_controller_processed_for_another_reason(spark) -> None:
    """The walkthrough's `kill 2`: controller 1 handled broker 2's failure in 22 ms (t-0, t-1 offline); 18 s later
    an admin's unclean election ("Starting replica leader election (UNCLEAN) … triggered by AdminClientTriggered")
    failed for t-2. The failure's handling ran to that election's ERROR, 17420 ms with t-2 counted. A shutdown
    request or an event-log election an admin asked for ends it too; another controller's line does not."""
    from zkcontroller.analytics.timeline_tables import FAILURE_COLUMNS, rows_frame

    c1 = dict(controller_id=1, controller_epoch=5)
    failures = [{"cluster": "c", "broker_id": 2, "detected_ms": T0 + d, "until_ms": T0 + d + 60_000, "cause": "x",
                 "failure_id": i, "controller_id": 1, "controller_epoch": 5, "source_file": "f.log",
                 "line_number": line} for i, (d, line) in enumerate(((0, 1), (100_000, 7), (200_000, 11)))]
    evs = events(spark, [
        dict(ms=0, kind="broker_change", brokers=[2], controller_id=1),
        psc(10, 0, ONLINE, OFFLINE), psc(22, 1, ONLINE, OFFLINE),
        dict(ms=17_420, kind="election_started", strategy="unclean", trigger="admin", controller_id=1),
        dict(ms=17_420, kind="partition_state_change_failed", topic="t", partition=2, from_state=OFFLINE,
             to_state=ONLINE, **c1),
        psc(17_430, 3, OFFLINE, ONLINE, 1),
        dict(ms=100_000, kind="broker_failed", brokers=[2], controller_id=1),
        psc(100_000, 0, ONLINE, OFFLINE),
        dict(ms=100_002, kind="election_started", strategy="preferred", trigger="zk", controller_id=3),  # stale
        dict(ms=100_005, kind="controller_event", event_name="Startup", controller_id=3),  # another broker's
        dict(ms=100_010, kind="controlled_shutdown", broker_id=3, controller_id=1),
        psc(100_020, 1, ONLINE, ONLINE, 1),
        dict(ms=200_000, kind="broker_failed", brokers=[2], controller_id=1, source_format="jsonl"),
        psc(200_007, 0, ONLINE, OFFLINE, source_format="jsonl"),
        psc(200_050, 1, ONLINE, ONLINE, 1, source_format="jsonl"),
        dict(ms=200_050, kind="leader_election", topic="t", partition=1, leader=1, strategy="preferred",
             trigger="admin", source_format="jsonl", **c1),
    ])
    got = incidents.broker_failure_handling(rows_frame(spark, failures, FAILURE_COLUMNS), evs, 1_000)
    assert [(r.duration_ms, r.partitions_affected) for r in got.orderBy("detected_at").collect()] == [
        (22, 2), (0, 1), (7, 1)]


def test_an_election_s_trigger_is_its_starting_line_s(spark) -> None:
    """Kafka names who asked for an election only on "Starting replica leader election (UNCLEAN) for partitions t-2
    triggered by AdminClientTriggered": the elections table's trigger was empty for every Kafka-format election.
    It goes to the elections after that line by the same controller, of its kind, until the next event begins (a
    broker change here) or ``ELECTION_LINES_MS`` pass."""
    start = dict(kind="election_started", controller_id=1)
    df = events(spark, [
        psc(0, 0, "NewPartition", ONLINE, 1, [1, 2]), psc(0, 1, "NewPartition", ONLINE, 1, [1, 2]),
        psc(0, 2, "NewPartition", ONLINE, 2, [2]), psc(0, 3, "NewPartition", ONLINE, 2, [2]),
        psc(500, 2, ONLINE, OFFLINE, -1, [2]), psc(500, 3, ONLINE, OFFLINE, -1, [2]),
        dict(ms=1_000, strategy="unclean", trigger="admin", **start),
        psc(1_005, 2, OFFLINE, ONLINE, 1, [1]),  # admin
        psc(1_010, 0, ONLINE, ONLINE, 2, [2, 1]),  # 2.8 elects an Online partition whose leader is gone too
        dict(ms=5_000, kind="broker_change", brokers=[], controller_id=1),
        psc(5_010, 3, OFFLINE, ONLINE, 2, [2]),  # the broker change's
        dict(ms=8_000, strategy="preferred", trigger="zk", **start),
        psc(8_004, 3, OFFLINE, ONLINE, 1, [1]),  # not a preferred election's
        psc(8_005, 0, ONLINE, ONLINE, 1, [1, 2], controller_id=2, controller_epoch=4),  # another controller's
        psc(8_006, 1, ONLINE, ONLINE, 2, [2, 1]),  # zk
        psc(45_000, 1, ONLINE, ONLINE, 1, [1, 2]),  # long after
        dict(ms=50_000, strategy="preferred", trigger="auto", **start),
        psc(50_001, 1, ONLINE, ONLINE, 2, [2, 1]),  # auto
    ])
    got = [(r.partition, r.new_leader, r.elected_at, r.trigger)
           for r in transform.leader_elections(df).orderBy("elected_at", "partition").collect()]
    assert got == [(2, 1, at(1_005), "admin"), (0, 2, at(1_010), "admin"), (3, 2, at(5_010), None),
                   (3, 1, at(8_004), None), (0, 1, at(8_005), None), (1, 2, at(8_006), "zk"), (1, 1, at(45_000), None),
                   (1, 2, at(50_001), "auto")]
