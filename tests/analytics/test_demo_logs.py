"""The job on logs our own cluster wrote: ``zkcontroller demo``'s directory holds events.jsonl and the
Kafka-format logs of the same run, so they merge into one cluster (the event log's own name, the run's cluster id) in
which every event counts once, and the tables follow what the demo narrates.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from zkcontroller.analytics.merge import SHARED_KINDS

pytestmark = pytest.mark.spark


def _rows(spark, analyzed, name: str, where: str = "true") -> list[dict[str, object]]:
    return [r.asDict() for r in spark.read.parquet(str(analyzed.out / name)).where(
        f"cluster = '{analyzed.demo_cluster}' and ({where})").collect()]


def _records(analyzed) -> list[dict[str, object]]:
    return [json.loads(line) for line in (analyzed.logs / "kafka-demo" / "events.jsonl").open()]


def test_both_sources_feed_one_cluster_and_every_event_counts_once(spark, analyzed) -> None:
    sources = {(s["source_file"], s["source_format"]) for s in _rows(spark, analyzed, "sources")}
    assert sources == {("kafka-demo/events.jsonl", "jsonl"), ("kafka-demo/controller.log", "kafka_log"),
                       ("kafka-demo/state-change.log", "kafka_log"), ("kafka-demo/server.log", "kafka_log")}
    events = _rows(spark, analyzed, "events", f"kind in {tuple(SHARED_KINDS)}")

    def key(e: dict[str, object]) -> tuple[object, ...]:
        return tuple(e.get(n) for n in ("kind", "topic", "partition", "controller_epoch", "to_state", "leader"))

    jsonl = Counter(key({**r, "kind": r["type"]}) for r in _records(analyzed) if r["type"] in SHARED_KINDS)
    merged = Counter(key(e) for e in events)
    assert {k: merged[k] for k in jsonl} == dict(jsonl)  # what the event log says, once (JSONL wins)
    kafka_only = [e for e in events if key(e) not in jsonl]  # what only the Kafka-format logs say stays
    assert all(e["source_format"] == "kafka_log" for e in kafka_only)
    intervals = _rows(spark, analyzed, "partition_state_intervals")
    assert len(intervals) == sum(r["type"] == "partition_state_change" for r in _records(analyzed))


def test_every_line_our_cluster_writes_parses(spark, analyzed) -> None:
    rejected = spark.read.parquet(str(analyzed.out / "rejected_lines")).where(
        "source_file like 'kafka-demo/%'").count()
    assert rejected == 0
    isr_shrinks = sum("after removing replica" in line for line in (analyzed.logs / "kafka-demo" /
                                                                   "state-change.log").open())
    assert isr_shrinks > 0


def test_tenures_and_failovers_follow_the_script(spark, analyzed) -> None:
    tenures = sorted(_rows(spark, analyzed, "controller_tenures"), key=lambda t: t["controller_epoch"])
    assert [t["controller_epoch"] for t in tenures] == list(range(1, len(tenures) + 1)) and len(tenures) >= 3
    by_epoch = {t["controller_epoch"]: t["controller_id"] for t in tenures}
    assert by_epoch[1] == 1  # broker 1 wins the first election
    assert by_epoch[2] in (2, 3)  # broker 1, the controller, is stopped: a survivor takes over
    assert by_epoch[3] in (2, 3) and by_epoch[3] != by_epoch[2]  # its session expires: the other survivor
    assert [t["started_by"] for t in tenures] == ["first"] + ["failover"] * (len(tenures) - 1)
    for t in tenures:
        assert None not in (t["start_at"], t["ready_at"], t["resigned_at"]), t
    incidents = Counter(i["incident"] for i in _rows(spark, analyzed, "incidents"))
    assert incidents["first"] == 1 and incidents["failover"] == len(tenures) - 1
    assert incidents["restart"] == 0 and incidents["split_brain"] == 0


def test_the_stopped_controller_is_a_clean_stop_and_its_partitions_move(spark, analyzed) -> None:
    """The demo stops its controller (broker 1) with a controlled shutdown: leadership moves off it, it
    deregisters, another broker takes over. That is a clean stop (a ``controlled_shutdowns`` row), no broker
    failure; nor are the controlled shutdowns that end the run. The one failure is the expired session of the
    second controller (the demo's ``expire``)."""
    tenures = {t["controller_epoch"]: t for t in _rows(spark, analyzed, "controller_tenures")}
    stops = _rows(spark, analyzed, "controlled_shutdowns", f"broker_id = 1 and requested_at <= "
                                                                 f"'{tenures[2]['start_at']}'")
    created = [r for r in _records(analyzed) if r["type"] == "partition_state_change"
               and r["from_state"] == "NewPartition" and r["to_state"] == "OnlinePartition"]
    led_by_1 = sorted((r["topic"], r["partition"]) for r in created if r.get("leader") == 1)
    assert led_by_1
    elections = _rows(spark, analyzed, "leader_elections", "controller_epoch = 1 and strategy = "
                                                               "'controlled_shutdown'")
    moved = {(e["topic"], e["partition"]) for e in elections}
    assert set(led_by_1) <= moved  # what it led from creation on (and any it took over since) moved off it
    assert len(stops) == 1 and stops[0]["leaders_moved"] >= len(moved)  # (its 5 s tail may reach the run's end)
    failures = _rows(spark, analyzed, "broker_failures")
    assert [(f["broker_id"], f["cause"]) for f in failures] == [
        (tenures[2]["controller_id"], "controller failover (epoch 2 -> 3)")]
    incidents = _rows(spark, analyzed, "incidents")
    failed = [i for i in incidents if i["incident"] == "broker_failure"]
    assert [i["broker_id"] for i in failed] == [tenures[2]["controller_id"]]
    stopped = sorted((i["at"], i["broker_id"]) for i in incidents if i["incident"] == "controlled_shutdown")
    assert stopped[0] == (stops[0]["requested_at"], 1)  # the timeline shows the stop as one, not as a failure
    assert len(stopped) == len(_rows(spark, analyzed, "controlled_shutdowns"))


def test_event_queue_latency_has_every_controller_event_of_the_run(spark, analyzed) -> None:
    expected = Counter(r["event"] for r in _records(analyzed) if r["type"] == "controller_event")
    assert {"Startup", "TopicChange", "BrokerChange", "Expire"} <= set(expected)
    latency = _rows(spark, analyzed, "event_queue_latency")
    assert {q["event_name"]: q["count"] for q in latency} == dict(expected)
