"""The whole job end to end on the shared log sets: extract exactness, the event-log story, real samples,
rejected lines and the CLI's input errors."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.analytics.logsets import SIM_T0

from zkcontroller.analytics import job
from zkcontroller.analytics.cli import analyze
from zkcontroller.analytics.kafka_log_parser import KafkaLogParser, RejectedLine

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("restored_logging")]


def test_chunked_extract_matches_the_reference_parser_line_for_line(spark, samples: Path, tmp_path: Path) -> None:
    """Every real sample line, plus the parser tests' lines, cut into 4 KiB chunks: same records, same numbers."""
    from tests.analytics.test_kafka_log_parser import CASES, VARIANT_LINES

    from zkcontroller.analytics.extract import extract
    from zkcontroller.analytics.sources import resolve_inputs

    synthetic = tmp_path / "version-families.log"
    synthetic.write_text("\n".join([*(line for line, _, _ in CASES), *VARIANT_LINES]) + "\n", encoding="utf-8")
    files = resolve_inputs([str(samples), str(synthetic)])
    extracted = extract(spark, files, chunk_bytes=4096)
    assert len(extracted.chunks) > 2 * len(files.all)  # most files are cut several times
    try:
        spark_rows = {(r.source_file, r.line_number): r.asDict() for r in extracted.events.collect()}
        spark_rejected = {(r.source_file, r.line_number): r.reason for r in extracted.rejected.collect()}
    finally:
        extracted.release()
    parser, python_rows, python_rejected = KafkaLogParser(), {}, {}
    for path in [*sorted(samples.iterdir()), synthetic]:
        name = files.names[str(path.resolve())]
        for result in parser.parse_lines(path.read_text(encoding="utf-8", errors="replace").splitlines()):
            if isinstance(result, RejectedLine):
                python_rejected[(name, result.line_number)] = result.reason
            else:
                python_rows[(name, result.line_number)] = {
                    "kind": result.kind, "ts_ms": result.ts_ms, "level": result.level, "logger": result.logger,
                    **result.fields}
    assert spark_rejected == python_rejected
    assert {k: {n: row[n] for n in python_rows[k]} for k, row in spark_rows.items()} == python_rows
    assert len(python_rows) > 3000


def _table(spark, out: Path, name: str, where: str = "true") -> list[dict[str, object]]:
    return [r.asDict() for r in spark.read.parquet(str(out / name)).where(where).collect()]


def at(ms: int) -> datetime:
    return datetime.fromtimestamp((SIM_T0 + ms) / 1000, tz=UTC).replace(tzinfo=None)


def test_event_log_tables_hold_what_the_log_contains(spark, analyzed) -> None:
    out = analyzed.out
    tenures = sorted(_table(spark, out, "controller_tenures", "cluster = 'sim'"), key=lambda t: t["start_at"])
    assert [(t["controller_id"], t["controller_epoch"], t["ready_at"], t["started_by"], t["failover_gap_ms"])
            for t in tenures] == [(1, 1, at(200), "first", None), (2, 2, at(5400), "failover", 5400 - 6000)]
    failures = _table(spark, out, "broker_failures", "cluster = 'sim'")
    assert [(f["broker_id"], f["detected_at"], f["handling_finished_at"], f["partitions_affected"], f["line_number"])
            for f in failures] == [(3, at(1000), at(1600), 1, 5), (1, at(5000), at(5000), 0, 10)]
    elections = _table(spark, out, "leader_elections", "cluster = 'sim'")
    assert [(e["partition"], e["strategy"], e["trigger"], e["old_leader"], e["new_leader"], e["clean"])
            for e in elections] == [(0, "offline", "BrokerChange", 3, 1, True)]
    windows = _table(spark, out, "split_brain_windows", "cluster = 'sim'")
    assert [(w["start_at"], w["end_at"], w["stale_epoch"], w["new_epoch"], w["stale_actions"]) for w in windows] == [
        (at(5000), at(6000), 1, 2, 1)]
    anomalies = sorted(_table(spark, out, "anomalies", "cluster = 'sim'"), key=lambda a: a["detected_at"])
    assert [(a["anomaly"], a["controller_epoch"], a["detected_at"], a["duration_ms"]) for a in anomalies] == [
        ("leaderless_partition", 1, at(1010), 490),  # offline until the election at 1500
        ("split_brain", 1, at(5000), 1000),
        ("slow_controller_event", 1, at(6000), 1520)]
    assert all(isinstance(a["line_number"], int) for a in anomalies)
    unavailable = _table(spark, out, "partition_unavailability", "cluster = 'sim' and partition = 0")
    assert [(u["offline_seconds"], u["window_seconds"]) for u in unavailable] == [(0.49, 6.0)]
    latency = sorted(_table(spark, out, "event_queue_latency", "cluster = 'sim'"), key=lambda q: q["event_name"])
    assert [(q["event_name"], q["count"], q["processing_p50_ms"]) for q in latency] == [
        ("BrokerChange", 1, 595.0), ("TopicChange", 1, 20.0)]


def test_bad_event_log_lines_are_rejected_with_relative_file_line_and_reason(spark, analyzed) -> None:
    rejected = _table(spark, analyzed.out, "rejected_lines", "source_format = 'jsonl'")
    assert sorted((r["source_file"], r["line_number"], r["reason"]) for r in rejected) == [
        ("sim/sim-events.jsonl.gz", 4, "not a JSON object of the event-log schema (bad JSON or wrong field type)"),
        ("sim/sim-events.jsonl.gz", 13, "unsupported schema_version 2"),
        ("sim/sim-events.jsonl.gz", 14, "ts_ms out of range [-62135596800000, 253402300799999]: 100000000000000000"),
        ("sim/sim-events.jsonl.gz", 15, "controller_epoch out of range [-2147483648, 2147483647]: 1099511627776"),
    ]


def test_real_samples_show_the_unclean_elections_and_the_epoch_9_tenure(spark, analyzed) -> None:
    out = analyzed.out
    unclean = _table(spark, out, "anomalies", "anomaly = 'unclean_election' and cluster = 'andrei'")
    assert sorted((a["cluster"], a["topic"], a["partition"]) for a in unclean) == [
        ("andrei", "dns_kafka_topic", 0), ("andrei", "dns_kafka_topic", 1), ("andrei", "dns_kafka_topic", 2)]
    assert all(a["source_file"].startswith("samples/17-andrei") or a["source_file"].startswith("samples/19-andrei")
               for a in unclean)
    tenures = _table(spark, out, "controller_tenures", "cluster = 'guenterh'")
    assert [(t["controller_id"], t["controller_epoch"], t["resigned_at"] is not None)
            for t in tenures] == [(1, 9, True)]
    # 2.7 cluster stopped in order: "Shutting down broker 3/2/1" at 14:20:09.5, then brokers 2 and 3 deleted
    # from /brokers/ids 0.8 s later (with failure callbacks): clean stops, no failures; the shutdowns stay
    failed = _table(spark, out, "broker_failures", "cluster = 'guenterh'")
    assert failed == []
    stops = _table(spark, out, "controlled_shutdowns", "cluster = 'guenterh'")
    assert sorted(s["broker_id"] for s in stops) == [1, 2, 3]
    # ... and the controller's "Removed 2 (3) from list of shutting down brokers." ends the shutdowns of 2 and 3
    assert sorted((s["broker_id"], s["ended_at"]) for s in stops if s["ended_at"] is not None) == [
        (2, datetime(2021, 1, 10, 14, 20, 10, 312_000)), (3, datetime(2021, 1, 10, 14, 20, 10, 321_000))]


def test_a_brokers_server_log_says_its_controlled_shutdown_succeeded(spark, samples: Path, tmp_path: Path) -> None:
    """choopong 1.1: the controller's "Shutting down broker 0" (controller.log) and broker 0's own "[KafkaServer
    id=0] Controlled shutdown succeeded" 18 ms later (server.log, another sample of the same cluster)."""
    from tests.analytics.logsets import SAMPLE_PATTERN

    names = ("08-choopong-1.1-controller-reelection.log", "10-choopong-1.1-controller-broker-failure.log",
             "44-choopong-1.1-server-zk-expiry-controlled-shutdown.log")
    job.run(spark, job.JobConfig(inputs=[str(samples / n) for n in names], out=tmp_path / "out",
                                 cluster_pattern=SAMPLE_PATTERN))
    stops = _table(spark, tmp_path / "out", "controlled_shutdowns", "cluster = 'choopong'")
    assert [(s["broker_id"], s["requested_at"], s["outcome"], s["ended_at"]) for s in stops] == [
        (0, datetime(2018, 7, 18, 17, 54, 27, 777_000), "succeeded", datetime(2018, 7, 18, 17, 54, 27, 795_000))]


def test_output_is_parquet_partitioned_by_cluster_and_events_by_day(analyzed) -> None:
    out = analyzed.out
    assert (out / "events" / "cluster=prod" / "day=2024-03-01").is_dir()
    assert (out / "controller_tenures" / "cluster=guenterh").is_dir()
    assert {p.name for p in (out / "events").iterdir() if p.is_dir()} >= {
        "cluster=prod", "cluster=sim", f"cluster={analyzed.demo_cluster}", "cluster=andrei", "cluster=guenterh",
        "cluster=broken"}


def test_missing_and_empty_inputs_fail_with_the_path_named(tmp_path: Path) -> None:
    empty = tmp_path / "state-change.log"
    empty.write_text("")
    for path, message in ((tmp_path / "nope.log", "no such file or directory"), (empty, "input is empty"),
                          (tmp_path / "*.jsonl", "no file matches this pattern")):
        result = CliRunner().invoke(analyze, [str(path), "--out", str(tmp_path / "out")])
        assert result.exit_code != 0
        assert f"{path}: {message}" in result.output


def test_the_job_builds_its_caches_uncompressed_and_gives_the_session_its_setting_back(
        spark, analyzed, tmp_path: Path, monkeypatch) -> None:
    assert spark.conf.get(job.CACHE_COMPRESSED, None) is None  # the analyzed job started from, and left, no setting
    log = tmp_path / "controller.log"
    log.write_text("[2024-01-01 00:00:00,000] INFO [Controller id=1] Resigned (kafka.controller.KafkaController)\n")
    seen: list[str | None] = []
    write = job.write_table

    def spy(name: str, df: object, out: Path) -> Path:
        seen.append(spark.conf.get(job.CACHE_COMPRESSED, None))
        return write(name, df, out)

    monkeypatch.setattr(job, "write_table", spy)
    spark.conf.set(job.CACHE_COMPRESSED, "true")
    try:
        job.run(spark, job.JobConfig(inputs=[str(log)], out=tmp_path / "out", report=False))
        assert seen and set(seen) == {"false"}  # every table, the events write (which builds the parse's cache) first
        assert spark.conf.get(job.CACHE_COMPRESSED, None) == "true"
    finally:
        spark.conf.unset(job.CACHE_COMPRESSED)


def test_a_run_without_report_removes_an_earlier_runs_report(spark, tmp_path: Path) -> None:
    """`--no-report` into an --out holding an earlier run's report left it there, describing other tables."""
    log = tmp_path / "controller.log"
    log.write_text("[2024-01-01 00:00:00,000] INFO [Controller id=1] Resigned (kafka.controller.KafkaController)\n")
    out = tmp_path / "out"
    (out / "report").mkdir(parents=True)
    (out / "report.html").write_text("old")
    (out / "report" / "old-cluster.html").write_text("old")
    (out / job.OUT_MARKER).write_text("")  # the earlier run's
    job.run(spark, job.JobConfig(inputs=[str(log)], out=out, report=False))
    assert not (out / "report.html").exists() and not (out / "report").exists()
    assert (out / "events").is_dir()
