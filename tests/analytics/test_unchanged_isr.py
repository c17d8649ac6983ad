"""An ISR change that changes nothing is not counted: Kafka 2.8's controller logs "Partition t-p state changed to
(...) after removing replica n from the ISR" for a partition whose ISR already lacks n (a second controller
handling the same dead broker, say), though it writes nothing to ZooKeeper for it, and our event log has no
record of it. Merged with the event log, or read alone, those lines were ISR changes in ``events``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from tests.analytics.test_transform import events, psc

from zkcontroller.analytics import job
from zkcontroller.analytics.merge import ROW_KEY, unchanged_isr_rows, without_rows, without_unchanged_isr
from zkcontroller.event_schema import validate_record

pytestmark = pytest.mark.spark
T0 = datetime(2024, 3, 1, 10, 0, 0, tzinfo=UTC)
T0_MS = int(T0.timestamp() * 1000)
SC = "(state.change.logger)"


def isr(ms: int, p: int, leader: int, members: list[int], leader_epoch: int | None, **kw: object) -> dict[str, object]:
    row = dict(ms=ms, kind="isr_change", topic="t", partition=p, leader=leader, isr=members,
               leader_epoch=leader_epoch, controller_id=1, controller_epoch=5)
    return {**row, **kw}


def test_an_isr_change_equal_to_the_partitions_previous_state_is_dropped(spark) -> None:
    df = events(spark, [
        psc(0, 0, "NewPartition", "OnlinePartition", 1, [1, 2, 3], leader_epoch=0),
        isr(10, 0, 1, [1, 2, 3], 0),  # the state the creation stated: dropped
        isr(20, 0, 1, [1, 2], 1),  # a shrink: kept
        isr(30, 0, 1, [2, 1], 1, controller_epoch=6),  # same members, leader, epoch; another controller: dropped
        isr(40, 0, 2, [1, 2], 1),  # another leader: kept
        isr(50, 0, 2, [1, 2], 2),  # another leader epoch: kept
        dict(ms=60, kind="leader_election", topic="t", partition=0, leader=1, isr=[1, 2], leader_epoch=3),
        isr(70, 0, 1, [1, 2], 3),  # what the election stated: dropped
        psc(75, 0, "OnlinePartition", "OfflinePartition"),  # states no leader, ISR or epoch
        isr(80, 0, 1, [1, 2], 3),  # the last statement is still the election's: dropped
        isr(90, 1, 1, [1, 2], 3),  # first of partition 1, though equal to partition 0's state: kept
        isr(100, 1, 1, [1, 2], 3, cluster="other"),  # first of its cluster: kept
        isr(110, 1, 1, [1, 2], None),  # states no epoch: not equal, kept
        dict(ms=120, kind="other"), dict(ms=130, kind="isr_shrink", topic="t", partition=0, isr=[1], broker_id=1),
    ])
    kept = sorted(r["line_number"] for r in without_unchanged_isr(df).collect())
    assert kept == [1, 3, 5, 6, 7, 9, 11, 12, 13, 14, 15]


def shrink(ms: int, p: int, broker: int, members: list[int], kind: str = "isr_shrink") -> dict[str, object]:
    """A leader's own line: ``[Partition t-p broker=n] Shrinking ISR from … to …`` (no leader epoch)."""
    return dict(ms=ms, kind=kind, topic="t", partition=p, broker_id=broker, isr=members,
                logger="kafka.cluster.Partition")


def test_after_the_leaders_own_isr_change_a_controller_line_stating_it_is_dropped(spark) -> None:
    """Kafka's controller rewrites the ISR only with a new leader epoch, so its "after removing replica n" line
    stating the leader's new ISR at the old epoch read ZooKeeper unchanged: the leader had shrunk it already."""
    df = events(spark, [
        psc(0, 0, "NewPartition", "OnlinePartition", 1, [1, 2, 3], leader_epoch=0),
        shrink(10, 0, 1, [1, 2]),
        isr(20, 0, 1, [2, 1], 0, broker_id=3),  # what the leader's shrink left: dropped
        isr(30, 0, 1, [1], 1),  # a real removal: a new epoch, kept
        shrink(40, 0, 2, [1, 2]),  # broker 2 does not lead t-0: not the partition's state
        isr(50, 0, 1, [1, 2], 1),  # kept
        psc(100, 1, "NewPartition", "OnlinePartition", 1, [1, 2, 3], leader_epoch=0),
        shrink(110, 1, 1, [1, 2]),
        isr(120, 1, 1, [1, 2], 0, source_format="jsonl"),  # our controller applying the leader's AlterIsr: kept
        shrink(200, 2, 1, [1, 2]),  # before anything stated t-2's state
        psc(210, 2, "NewPartition", "OnlinePartition", 1, [1, 2, 3], leader_epoch=0),
        isr(220, 2, 1, [1, 2], 0),  # the leader line came before the state it would change: kept
        psc(300, 3, "NewPartition", "OnlinePartition", 1, [1, 2, 3], leader_epoch=0),
        shrink(310, 3, 1, [1]), shrink(320, 3, 1, [1, 2], kind="isr_expand"),
        isr(330, 3, 1, [1, 2], 0),  # the latest leader line counts: dropped
        isr(340, 3, 1, [1], 0),  # a leader line before the latest stated state is not the state: kept
        psc(400, 4, "NewPartition", "OnlinePartition", 1, [1, 2, 3], leader_epoch=0),
        shrink(410, 4, 1, [1, 2]),
        isr(420, 4, 1, [1, 2, 3], 0),  # the controller-stated state (the leader's change may have failed): dropped
        psc(500, 5, "NewPartition", "OnlinePartition", 1, [1, 2], leader_epoch=0),
        shrink(510, 5, 1, [1, 2, 3], kind="isr_update"),  # Kafka 2.8's only INFO line for an expansion
        isr(520, 5, 1, [3, 2, 1], 0),  # what the leader's expansion left: dropped
    ])
    kept = sorted(r["line_number"] for r in without_unchanged_isr(df).collect())
    assert kept == [n for n in range(1, 24) if n not in (3, 16, 20, 23)]
    dropped = unchanged_isr_rows(df)
    assert sorted(r["line_number"] for r in dropped.collect()) == [3, 16, 20, 23]
    # the shuffled anti-join (for many dropped rows) drops the same
    assert sorted(r["line_number"] for r in without_rows(df, dropped, broadcast=False).collect()) == kept


def _plan(df) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def test_above_the_broadcast_limit_the_window_reads_every_partition_and_drops_the_same(spark) -> None:
    """The keys of the partitions with an ISR change are broadcast only up to ``broadcast_limit`` (at a few hundred
    thousand partitions they were tens of MB in every task); above it the window reads every row, with the same
    answer. No partition with an ISR change: no window."""
    df = events(spark, [
        psc(0, 0, "NewPartition", "OnlinePartition", 1, [1, 2], leader_epoch=0),
        isr(10, 0, 1, [2, 1], 0),  # dropped
        psc(20, 1, "NewPartition", "OnlinePartition", 1, [1, 2], leader_epoch=0),  # no ISR change: not looked at
        shrink(30, 1, 1, [1]),
        psc(40, 2, "NewPartition", "OnlinePartition", 2, [2, 3], leader_epoch=0, cluster="other"),
        shrink(50, 2, 2, [2], kind="isr_update") | {"cluster": "other"},
        isr(60, 2, 2, [2], 0, cluster="other"),  # what the leader's line left: dropped
        isr(70, 2, 2, [2], 1, cluster="other"),  # a new epoch: kept
        isr(80, 3, 1, [1], 0),  # the first statement of t-3: kept
        isr(90, 3, 1, [1], 0, topic="u"),  # another topic's partition 3: kept
        psc(100, 4, "NewPartition", "OnlinePartition", 1, [1], leader_epoch=0, topic="u"),
    ])
    answers = {}
    for limit in (4, 3, 0):  # four partitions have an ISR change
        dropped = unchanged_isr_rows(df, broadcast_limit=limit)
        broadcast = "BroadcastHashJoin" in _plan(dropped)
        assert broadcast == (limit >= 4) and ("LeftSemi" in _plan(dropped)) == broadcast, (limit, _plan(dropped))
        answers[limit] = sorted((r["cluster"], r["line_number"]) for r in dropped.collect())
    assert answers[4] == answers[3] == answers[0] == [("c", 2), ("other", 7)]
    none = unchanged_isr_rows(df.where("kind != 'isr_change'"), broadcast_limit=0)
    assert none.collect() == [] and "Window" not in _plan(none)
    assert none.columns == list(ROW_KEY)


def _record(ms: int, rtype: str, controller: int, **fields: object) -> str:
    record = {"schema_version": 1, "type": rtype, "ts_ms": T0_MS + ms, "cluster": "mixed",
              "controller_id": controller, "controller_epoch": controller, **fields}
    assert validate_record(record) == [], record
    return json.dumps(record)


def _line(ms: int, controller: int, message: str) -> str:
    stamp = T0 + timedelta(milliseconds=ms)
    return (f"[{stamp:%Y-%m-%d %H:%M:%S},{stamp.microsecond // 1000:03d}] INFO [Controller id={controller} "
            f"epoch={controller}] {message} {SC}")


def _removed(ms: int, controller: int, p: int, leader: int, members: str, leader_epoch: int, replica: int) -> str:
    return _line(ms, controller, f"Partition t-{p} state changed to (Leader:{leader},ISR:{members},LeaderEpoch:"
                                 f"{leader_epoch},ControllerEpoch:{controller}) after removing replica {replica} "
                                 f"from the ISR as part of transition to OfflineReplica")


# Controller 1 creates t-0 and t-1 and removes broker 3 from their ISRs; controller 2 takes over and removes
# broker 3 again (no-ops: the ISRs already lack it), logs t-2 for the first time, then removes broker 2 from t-0.
STATE_CHANGE_LOG = [
    _line(0, 1, "Changed partition t-0 from NewPartition to OnlinePartition with state LeaderAndIsr(leader=1, "
                "leaderEpoch=0, isr=List(1, 2, 3), zkVersion=0)"),
    _line(0, 1, "Changed partition t-1 from NewPartition to OnlinePartition with state LeaderAndIsr(leader=2, "
                "leaderEpoch=0, isr=List(2, 3), zkVersion=0)"),
    _removed(1000, 1, 0, 1, "1,2", 1, 3),
    _removed(1000, 1, 1, 2, "2", 1, 3),
    _removed(5000, 2, 0, 1, "1,2", 1, 3),  # no-op
    _removed(5000, 2, 1, 2, "2", 1, 3),  # no-op
    _removed(5000, 2, 2, 1, "1", 7, 3),  # the first we hear of t-2
    _removed(8000, 2, 0, 1, "1", 2, 2),
]
EVENT_LOG = [  # the same run's event log: no record of the no-ops, nor of t-2 (kept from the Kafka line)
    _record(0, "partition_state_change", 1, topic="t", partition=0, from_state="NewPartition",
            to_state="OnlinePartition", leader=1, isr=[1, 2, 3], leader_epoch=0),
    _record(0, "partition_state_change", 1, topic="t", partition=1, from_state="NewPartition",
            to_state="OnlinePartition", leader=2, isr=[2, 3], leader_epoch=0),
    _record(1000, "isr_change", 1, topic="t", partition=0, leader=1, isr=[1, 2], leader_epoch=1),
    _record(1000, "isr_change", 1, topic="t", partition=1, leader=2, isr=[2], leader_epoch=1),
    _record(8000, "isr_change", 2, topic="t", partition=0, leader=1, isr=[1], leader_epoch=2),
]


def _leader_line(ms: int, broker: int, p: int, before: str, after: str) -> str:
    stamp = T0 + timedelta(milliseconds=ms)
    return (f"[{stamp:%Y-%m-%d %H:%M:%S},{stamp.microsecond // 1000:03d}] INFO [Partition t-{p} broker={broker}] "
            f"Shrinking ISR from {before} to {after}. Leader: (highWatermark: 5, endOffset: 5). Out of sync "
            f"replicas: (brokerId: 3, endOffset: 2). (kafka.cluster.Partition)")


LEADER_FIRST = [  # cluster "leader": broker 1, leading t-0, shrinks its ISR; then the controller handles broker 3's
    # failure and logs t-0's state "after removing replica 3", though the ISR already lacks 3
    _line(0, 1, "Changed partition t-0 from NewPartition to OnlinePartition with state LeaderAndIsr(leader=1, "
                "leaderEpoch=0, isr=List(1, 2, 3), zkVersion=0)"),
    _removed(6000, 1, 0, 1, "1,2", 0, 3),  # no-op: the leader's shrink left it so
    _removed(6000, 1, 0, 1, "1", 1, 2),  # a real removal
]


@pytest.fixture(scope="module")
def analyzed_isr(spark, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, job.JobResult]:
    """One job over the clusters of both tests below (tables are per cluster; one run costs what two did not)."""
    root = tmp_path_factory.mktemp("unchanged-isr")
    logs = root / "logs"
    for cluster, files in (("mixed", {"state-change.log": STATE_CHANGE_LOG, "events.jsonl": EVENT_LOG}),
                           ("kafka", {"state-change.log": STATE_CHANGE_LOG}),
                           ("leader", {"state-change.log": LEADER_FIRST,
                                       "server.log": [_leader_line(5000, 1, 0, "1,2,3", "1,2")]})):
        (logs / cluster).mkdir(parents=True)
        for name, lines in files.items():
            (logs / cluster / name).write_text("\n".join(lines) + "\n")
    out = root / "out"
    return out, job.run(spark, job.JobConfig(inputs=[str(logs)], out=out, report=False))


def test_no_op_isr_lines_count_neither_merged_with_the_event_log_nor_alone(spark, analyzed_isr) -> None:
    out, _ = analyzed_isr
    changes = [(r["cluster"], r["partition"], r["ts_ms"] - T0_MS, r["source_format"]) for r in
               job.read_events(spark, out).where("kind = 'isr_change' and cluster != 'leader'").collect()]
    assert sorted(changes) == [
        ("kafka", 0, 1000, "kafka_log"), ("kafka", 0, 8000, "kafka_log"), ("kafka", 1, 1000, "kafka_log"),
        ("kafka", 2, 5000, "kafka_log"),
        ("mixed", 0, 1000, "jsonl"), ("mixed", 0, 8000, "jsonl"), ("mixed", 1, 1000, "jsonl"),
        ("mixed", 2, 5000, "kafka_log"),  # what the event log does not say stays
    ]
    table = [(r["cluster"], r["partition"], r["changed_at"], r["change"], r["previous_isr"], r["isr"])
             for r in spark.read.parquet(str(out / "isr_changes")).collect()]
    at = {ms: (T0 + timedelta(milliseconds=ms)).replace(tzinfo=None) for ms in (1000, 5000, 8000)}
    for cluster in ("kafka", "mixed"):
        assert sorted(r[1:] for r in table if r[0] == cluster) == [
            (0, at[1000], "shrink", [1, 2, 3], [1, 2]), (0, at[8000], "shrink", [1, 2], [1]),
            (1, at[1000], "shrink", [2, 3], [2]), (2, at[5000], "expand", None, [1])]


def test_a_controller_line_after_the_leaders_shrink_counts_neither_in_events_nor_tables(spark, analyzed_isr) -> None:
    """Cluster ``leader`` (``LEADER_FIRST``): one ISR change, the leader's."""
    out, result = analyzed_isr
    written = job.read_events(spark, out).collect()
    kinds = sorted((r["kind"], r["ts_ms"] - T0_MS) for r in written if r["cluster"] == "leader")
    assert kinds == [("isr_change", 6000), ("isr_shrink", 5000), ("partition_state_change", 0)]
    assert result.rows["events"] == len(written)  # the count the job reports leaves the dropped line out too
    table = sorted((r["by"], r["change"], r["previous_isr"], r["isr"])
                   for r in spark.read.parquet(str(out / "isr_changes")).where("cluster = 'leader'").collect())
    assert table == [("controller", "shrink", [1, 2], [1]), ("leader", "shrink", [1, 2, 3], [1, 2])]
