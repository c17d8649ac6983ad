"""The job on logs our own cluster wrote: ``zkcontroller demo`` run in-process, then the tables checked against
what that run is known to contain. The Kafka-format logs and events.jsonl describe the same run, so the tables
built from each (clusters ``kafka-demo`` and ``demo``) must agree with each other as well as with the script.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main

pytestmark = pytest.mark.spark
KAFKA, JSONL = "kafka-demo", "demo"  # cluster names: the log directory's name, and the event log's own


@pytest.fixture(scope="module")
def demo(spark, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from zkcontroller.analytics.job import JobConfig, run

    root = tmp_path_factory.mktemp("demo")
    logs = root / KAFKA
    result = CliRunner().invoke(main, ["demo", "--log-dir", str(logs)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in logs.iterdir()) == ["controller.log", "events.jsonl", "state-change.log"]
    run(spark, JobConfig(inputs=[str(logs)], out=root / "out", report=False))
    return logs, root / "out"


def _rows(spark, out: Path, name: str, where: str = "true") -> list[dict[str, object]]:
    return [r.asDict() for r in spark.read.parquet(str(out / name)).where(where).collect()]


def test_every_line_our_cluster_writes_parses(spark, demo: tuple[Path, Path]) -> None:
    logs, out = demo
    assert _rows(spark, out, "rejected_lines") == []
    isr_shrinks = sum("after removing replica" in line for line in (logs / "state-change.log").open())
    assert isr_shrinks > 0  # the ZkVersion form of the ISR-shrink line is in the run ...
    parsed = _rows(spark, out, "events", f"cluster = '{KAFKA}' and kind = 'isr_change' and broker_id is not null")
    assert len(parsed) == isr_shrinks  # ... and every one of them is an isr_change, not `other`


def test_controller_tenures_follow_the_script_in_both_logs(spark, demo: tuple[Path, Path]) -> None:
    _, out = demo
    tenures = {
        cluster: [(t["controller_epoch"], t["controller_id"]) for t in sorted(
            _rows(spark, out, "controller_tenures", f"cluster = '{cluster}'"), key=lambda t: t["controller_epoch"])]
        for cluster in (KAFKA, JSONL)
    }
    assert tenures[KAFKA] == tenures[JSONL]
    epochs = [epoch for epoch, _ in tenures[KAFKA]]
    assert epochs == list(range(1, len(epochs) + 1)) and len(epochs) >= 3  # shutdown adds re-elections after 3
    by_epoch = dict(tenures[KAFKA])
    assert by_epoch[1] == 1  # broker 1 wins the first election
    assert by_epoch[2] in (2, 3)  # broker 1, the controller, is stopped: a survivor takes over
    assert by_epoch[3] in (2, 3) and by_epoch[3] != by_epoch[2]  # its session expires: the other survivor
    for t in _rows(spark, out, "controller_tenures"):
        assert None not in (t["elected_at"], t["ready_at"], t["resigned_at"]), t  # every tenure ends cleanly


def test_stopping_the_controller_moves_its_partitions_to_survivors(spark, demo: tuple[Path, Path]) -> None:
    _, out = demo
    created = _rows(spark, out, "events", f"cluster = '{KAFKA}' and kind = 'partition_state_change' "
                                          "and from_state = 'NewPartition' and to_state = 'OnlinePartition'")
    assert Counter(e["topic"] for e in created) == {"orders": 6, "payments": 3}
    led_by_1 = sorted((e["topic"], e["partition"]) for e in created if e["leader"] == 1)
    assert led_by_1  # the placement gives broker 1 some leaders
    for cluster in (KAFKA, JSONL):
        elections = _rows(spark, out, "leader_elections", f"cluster = '{cluster}' and controller_epoch = 2")
        assert sorted((e["topic"], e["partition"]) for e in elections) == led_by_1, cluster
        assert {(e["strategy"], e["old_leader"], e["clean"]) for e in elections} == {("offline", 1, True)}, cluster
        assert {e["new_leader"] for e in elections} <= {2, 3}, cluster


def test_event_queue_latency_has_every_controller_event_of_the_run(spark, demo: tuple[Path, Path]) -> None:
    logs, out = demo
    records = [json.loads(line) for line in (logs / "events.jsonl").open()]
    expected = Counter(r["event"] for r in records if r["type"] == "controller_event")
    assert {"Startup", "TopicChange", "BrokerChange", "Expire"} <= set(expected)
    latency = _rows(spark, out, "event_queue_latency")
    assert {(q["cluster"], q["event_name"]): q["count"] for q in latency} == {
        (JSONL, name): count for name, count in expected.items()}
