"""A Kafka-format log set with a known story, checked table by table: a broker failure (logged twice), a split
brain (controller 1, epoch 9, keeps acting after controller 2 took epoch 10), a ZooKeeper reset two hours later
(epoch 10 -> 1, one restart, one reset), then a failover (epoch 1 -> 2) in which the controller's own broker dies.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.analytics.logsets import T0, T2, naive

pytestmark = pytest.mark.spark
def _rows(spark, out: Path, name: str) -> list[dict[str, object]]:
    return [r.asDict() for r in spark.read.parquet(str(out / name)).where("cluster = 'prod'").collect()]


@pytest.fixture(scope="module")
def scenario(analyzed):
    return analyzed


def test_one_restart_one_epoch_reset_and_failovers_otherwise(spark, scenario) -> None:
    tenures = sorted(_rows(spark, scenario.out, "controller_tenures"), key=lambda t: t["start_at"])
    assert [(t["controller_id"], t["controller_epoch"], t["started_by"]) for t in tenures] == [
        (1, 9, "first"), (2, 10, "failover"), (1, 1, "epoch_reset"), (3, 2, "failover")]
    assert tenures[3]["failover_gap_ms"] == 10_100 - 10_000
    resets = [a for a in _rows(spark, scenario.out, "anomalies") if a["anomaly"] == "controller_epoch_reset"]
    assert [(a["controller_epoch"], a["source_file"], a["line_number"]) for a in resets] == [
        (1, "prod/broker1-controller.log", 6)]
    assert any("epoch goes back from 10 to 1" in w for w in scenario.warnings)


def test_split_brain_window_is_the_stale_controllers_activity_after_the_new_tenure_began(spark, scenario) -> None:
    windows = _rows(spark, scenario.out, "split_brain_windows")
    assert [(w["start_at"], w["end_at"], w["stale_controller_id"], w["stale_epoch"], w["new_controller_id"],
             w["new_epoch"], w["stale_actions"], w["stale_refused"], w["new_actions"]) for w in windows] == [
        (naive(T0, 60_000), naive(T0, 61_500), 1, 9, 2, 10, 2, 1, 3)]
    assert (windows[0]["source_file"], windows[0]["line_number"]) == ("prod/broker1-state-change.log", 4)


def test_broker_failures_include_the_controllers_own_death(spark, scenario) -> None:
    failures = sorted(_rows(spark, scenario.out, "broker_failures"), key=lambda f: f["detected_at"])
    assert [(f["broker_id"], f["detected_at"], f["source_file"], f["line_number"]) for f in failures] == [
        (3, naive(T0, 1_000), "prod/broker1-controller.log", 3),  # two lines, one failure
        (1, naive(T0, 60_000), "prod/broker2-controller.log", 1),  # replaced by controller 2
        (1, naive(T2, 10_005), "prod/broker3-controller.log", 1),  # replaced by controller 3
    ]
    assert failures[0]["handling_finished_at"] == naive(T0, 1_500)
    assert failures[0]["partitions_affected"] == 1


def test_elections_without_a_controller_on_the_line_take_the_active_tenure(spark, scenario) -> None:
    elections = [e for e in _rows(spark, scenario.out, "leader_elections") if e["partition"] == 0]
    assert [(e["controller_id"], e["controller_epoch"], e["new_leader"], e["clean"], e["source_file"],
             e["line_number"]) for e in elections] == [(1, 9, 2, False, "prod/broker1-state-change.log", 2)]


def test_every_incident_and_anomaly_row_points_at_a_log_line(spark, scenario) -> None:
    for name in ("incidents", "anomalies", "broker_failures", "controller_tenures", "leader_elections",
                 "split_brain_windows"):
        rows = _rows(spark, scenario.out, name)
        assert rows, name
        assert all(r["source_file"].startswith("prod/") and r["line_number"] >= 1 for r in rows), name
    resigned = sorted((r["at"], r["source_file"], r["line_number"]) for r in _rows(spark, scenario.out, "incidents")
                      if r["incident"] == "resigned")
    assert resigned[0] == (naive(T0, 62_000), "prod/broker1-controller.log", 5)  # the "Resigned" line itself
    kinds = sorted({r["incident"] for r in _rows(spark, scenario.out, "incidents")})
    assert kinds == ["broker_failure", "epoch_reset", "failover", "first", "resigned", "split_brain",
                     "unclean_election"]
