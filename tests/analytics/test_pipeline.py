"""Extract parity with the reference parser, the whole job end to end, and the CLI's input errors."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from zkcontroller.analytics.cli import analyze
from zkcontroller.analytics.kafka_log_parser import KafkaLogParser, RejectedLine
from zkcontroller.event_schema import validate_record

pytestmark = pytest.mark.spark
T0 = 1_700_000_000_000
SAMPLE_FILES = ("01-guenterh-2.7-broker1-controller.log", "02-guenterh-2.7-broker1-state-change.log",
                "17-andrei-0.10.2-controller-unclean.log", "19-andrei-0.10.2-state-change-unclean-election.log")


def test_spark_extract_matches_the_reference_parser_on_every_sample(spark, samples: Path, tmp_path: Path) -> None:
    """Every real sample line, plus the parser tests' version-family and deployment-variant lines."""
    from tests.analytics.test_kafka_log_parser import CASES, VARIANT_LINES

    from zkcontroller.analytics.extract import extract

    synthetic = tmp_path / "version-families.log"
    synthetic.write_text("\n".join([*(line for line, _, _ in CASES), *VARIANT_LINES]) + "\n", encoding="utf-8")
    extracted = extract(spark, [str(samples), str(synthetic)])
    spark_rows = {(r.source_file, r.line_number): r.asDict() for r in extracted.events.collect()}
    spark_rejected = {(r.source_file, r.line_number): r.reason for r in extracted.rejected.collect()}
    parser, python_rows, python_rejected = KafkaLogParser(), {}, {}
    for path in [*sorted(samples.iterdir()), synthetic]:
        for result in parser.parse_lines(path.read_text(encoding="utf-8", errors="replace").splitlines()):
            key = (str(path), result.line_number)
            if isinstance(result, RejectedLine):
                python_rejected[key] = result.reason
            else:
                python_rows[key] = {"kind": result.kind, "ts_ms": result.ts_ms, "level": result.level,
                                    "logger": result.logger, **result.fields}
    assert spark_rejected == python_rejected
    assert {k: {n: row[n] for n in python_rows[k]} for k, row in spark_rows.items()} == python_rows
    assert len(python_rows) > 3000  # every sample line is a record (stack traces fold into them)


def _record(ms: int, rtype: str, **fields: object) -> dict[str, object]:
    record = {"schema_version": 1, "type": rtype, "ts_ms": T0 + ms, "cluster": "sim", **fields}
    assert validate_record(record) == [], record
    return record


def _event_log() -> list[str]:
    """A split-brain story: controller 1 (epoch 1) keeps acting after controller 2 (epoch 2) took over."""
    c1, c2 = {"controller_id": 1, "controller_epoch": 1}, {"controller_id": 2, "controller_epoch": 2}
    records = [
        _record(0, "controller_elected", **c1), _record(200, "controller_ready", **c1),
        _record(300, "partition_state_change", **c1, topic="orders", partition=0, from_state="NewPartition",
                to_state="OnlinePartition", leader=3, isr=[3, 1], leader_epoch=0),
        _record(1000, "broker_failed", **c1, broker_id=3),
        _record(1010, "partition_state_change", **c1, topic="orders", partition=0, from_state="OnlinePartition",
                to_state="OfflinePartition"),
        _record(1500, "leader_election", **c1, topic="orders", partition=0, strategy="offline", trigger="BrokerChange",
                old_leader=3, leader=1, isr=[1], leader_epoch=1, clean=True),
        _record(1500, "partition_state_change", **c1, topic="orders", partition=0, from_state="OfflinePartition",
                to_state="OnlinePartition", leader=1, isr=[1], leader_epoch=1),
        _record(1600, "controller_event", **c1, event="BrokerChange", queue_time_ms=5, processing_time_ms=595),
        _record(5000, "controller_elected", **c2), _record(5400, "controller_ready", **c2),
        _record(6000, "controller_event", **c1, event="TopicChange", queue_time_ms=1500, processing_time_ms=20),
    ]
    lines = [json.dumps(r) for r in records]
    lines.insert(3, '{"schema_version": 1, "type": "broker_failed", "ts_ms": "yesterday"')  # line 4: cut off
    lines.append(json.dumps({**records[0], "schema_version": 2}))  # line 13: a future writer
    return lines


@pytest.fixture(scope="module")
def job_output(spark, samples: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from zkcontroller.analytics.job import JobConfig, run

    root = tmp_path_factory.mktemp("e2e")
    with gzip.open(root / "sim-events.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(_event_log()) + "\n")
    inputs = [str(root / "*.jsonl.gz"), *(str(samples / name) for name in SAMPLE_FILES)]
    run(spark, JobConfig(inputs=inputs, out=root / "out", cluster_pattern=r"/\d+-([a-z0-9]+)-"))
    return root / "out"


def _table(spark, out: Path, name: str, where: str = "true") -> list[dict[str, object]]:
    return [r.asDict() for r in spark.read.parquet(str(out / name)).where(where).collect()]


def at(ms: int) -> datetime:
    return datetime.fromtimestamp((T0 + ms) / 1000, tz=UTC).replace(tzinfo=None)


def test_jsonl_tables_hold_what_the_log_contains(spark, job_output: Path) -> None:
    tenures = _table(spark, job_output, "controller_tenures", "cluster = 'sim'")
    assert [(t["controller_id"], t["controller_epoch"], t["ready_at"], t["failover_gap_ms"]) for t in tenures] == [
        (1, 1, at(200), None), (2, 2, at(5400), 5400 - 6000)]  # negative gap: epoch 1 still active (split brain)
    failures = _table(spark, job_output, "broker_failures", "cluster = 'sim'")
    assert [(f["broker_id"], f["detected_at"], f["handling_finished_at"], f["partitions_affected"])
            for f in failures] == [(3, at(1000), at(1600), 1)]
    elections = _table(spark, job_output, "leader_elections", "cluster = 'sim'")
    assert [(e["partition"], e["strategy"], e["trigger"], e["old_leader"], e["new_leader"], e["clean"])
            for e in elections] == [(0, "offline", "BrokerChange", 3, 1, True)]
    anomalies = _table(spark, job_output, "anomalies", "cluster = 'sim'")
    assert [(a["anomaly"], a["controller_epoch"], a["detected_at"], a["duration_ms"]) for a in anomalies] == [
        ("leaderless_partition", None, at(1010), 490),  # offline until the election at 1500
        ("slow_controller_event", 1, at(6000), 1520),
        ("stale_controller_epoch", 1, at(6000), 6000 - 5000)]
    unavailable = _table(spark, job_output, "partition_unavailability", "cluster = 'sim' and partition = 0")
    assert [(u["offline_seconds"], u["window_seconds"]) for u in unavailable] == [(0.49, 6.0)]
    latency = _table(spark, job_output, "event_queue_latency", "cluster = 'sim'")
    assert [(q["event_name"], q["count"], q["processing_p50_ms"]) for q in latency] == [
        ("BrokerChange", 1, 595.0), ("TopicChange", 1, 20.0)]


def test_bad_lines_are_rejected_with_file_line_and_reason(spark, job_output: Path) -> None:
    rejected = _table(spark, job_output, "rejected_lines")
    assert [(Path(r["source_file"]).name, r["line_number"], r["reason"]) for r in rejected] == [
        ("sim-events.jsonl.gz", 4, "not a JSON object of the event-log schema (bad JSON or wrong field type)"),
        ("sim-events.jsonl.gz", 13, "unsupported schema_version 2"),
    ]


def test_real_samples_show_the_unclean_elections_and_the_epoch_9_tenure(spark, job_output: Path) -> None:
    unclean = _table(spark, job_output, "anomalies", "anomaly = 'unclean_election'")
    assert sorted((a["cluster"], a["topic"], a["partition"]) for a in unclean) == [
        ("andrei", "dns_kafka_topic", 0), ("andrei", "dns_kafka_topic", 1), ("andrei", "dns_kafka_topic", 2)]
    tenures = _table(spark, job_output, "controller_tenures", "cluster = 'guenterh'")
    assert [(t["controller_id"], t["controller_epoch"], t["resigned_at"] is not None)
            for t in tenures] == [(1, 9, True)]
    failed = _table(spark, job_output, "broker_failures", "cluster = 'guenterh'")
    assert sorted(f["broker_id"] for f in failed) == [2, 3]


def test_report_is_one_self_contained_html_file(job_output: Path) -> None:
    page = (job_output / "report.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") >= 5
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert "<b>2</b> line(s) could not be parsed" in page


def test_missing_and_empty_inputs_fail_with_the_path_named(tmp_path: Path) -> None:
    empty = tmp_path / "state-change.log"
    empty.write_text("")
    for path, message in ((tmp_path / "nope.log", "no such file or directory"), (empty, "input is empty"),
                          (tmp_path / "*.jsonl", "no file matches this pattern")):
        result = CliRunner().invoke(analyze, [str(path), "--out", str(tmp_path / "out")])
        assert result.exit_code != 0
        assert f"{path}: {message}" in result.output
