"""Bad input: a truncated .gz, bytes that are not UTF-8, our own tracebacks, an unwritable --out, and what the
user sees while the job runs (progress; Spark's UI off or on loopback)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.analytics.logsets import BROKEN_GOOD_LINES

from zkcontroller.analytics import job
from zkcontroller.analytics.cli import analyze
from zkcontroller.analytics.extract import REASON_NOT_UTF8
from zkcontroller.analytics.kafka_log_parser import bad_field_reason

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("restored_logging")]


def _rows(spark, out: Path, name: str, where: str) -> list[dict[str, object]]:
    return [r.asDict() for r in spark.read.parquet(str(out / name)).where(where).collect()]


def test_truncated_gz_is_reported_with_its_file_and_the_rest_is_read(spark, analyzed) -> None:
    broken = _rows(spark, analyzed.out, "rejected_lines", "source_file = 'broken/controller.log.gz'")
    assert len(broken) == 1 and broken[0]["reason"].startswith("compressed file unreadable after line ")
    read = spark.read.parquet(str(analyzed.out / "events")).where(
        "source_file = 'broken/controller.log.gz'").count()
    assert read > BROKEN_GOOD_LINES  # everything before the cut is kept ...
    assert broken[0]["line_number"] == read + 1  # ... and the problem sits just after the last line read
    assert any(w.startswith("broken/controller.log.gz: compressed file unreadable") for w in analyzed.warnings)
    assert _rows(spark, analyzed.out, "events", "source_file = 'broken/state-change.log' and kind = "
                                                "'controller_resigned'")  # the next file was read


def test_bytes_that_are_not_utf8_are_kept_escaped_in_rejected_lines(spark, analyzed) -> None:
    rows = _rows(spark, analyzed.out, "rejected_lines", "source_file = 'broken/state-change.log'")
    assert [(r["line_number"], r["reason"]) for r in rows] == [(1, REASON_NOT_UTF8)]
    assert "Topic caf\\xe9 " in rows[0]["line"]


def test_our_tracebacks_fold_into_the_record_they_follow(spark, analyzed) -> None:
    events = _rows(spark, analyzed.out, "events", "source_file = 'broken/state-change.log'")
    assert [(e["line_number"], e["level"], e["exception"]) for e in sorted(events, key=lambda e: e["line_number"])] \
        == [(2, "ERROR", "KeyError: 'broker 7'"), (8, "INFO", None)]


def test_a_broker_id_beyond_int32_makes_a_rejected_line_naming_the_field(spark, analyzed) -> None:
    """A field that does not fit its template (docs/analytics.md): the line is rejected, not half-read."""
    assert _rows(spark, analyzed.out, "events", "source_file = 'broken/membership.log'") == []
    rejected = _rows(spark, analyzed.out, "rejected_lines", "source_file = 'broken/membership.log'")
    assert [(r["line_number"], r["reason"]) for r in rejected] == [(1, bad_field_reason("brokers"))]
    assert bad_field_reason("brokers") == "field brokers is not a list of int32 broker ids"


def test_a_file_whose_lines_are_nearly_all_rejected_gets_a_warning_naming_it(spark, analyzed) -> None:
    """Random bytes: every line rejected, no event; the warning (console and report) names the file, and the
    report's rejected-lines section counts the lines per file, not only per reason."""
    rows = _rows(spark, analyzed.out, "rejected_lines", "source_file = 'broken/noise.log'")
    assert len(rows) > 10 and not _rows(spark, analyzed.out, "events", "source_file = 'broken/noise.log'")
    named = [w for w in analyzed.warnings if w.startswith("broken/")]
    assert f"broken/noise.log: {len(rows)} of its {len(rows)} line(s) rejected, 0 event(s) read: not a Kafka log " \
        "or event log this job can parse? (see rejected_lines)" in named
    assert any(w.startswith("broken/membership.log: 1 of its 1 line(s) rejected") for w in named)
    assert not any(w.startswith("broken/state-change.log") for w in named)  # 1 of 3: not nearly all
    report = (analyzed.out / "report.html").read_text(encoding="utf-8")
    by_file = report[report.index("By file:"):]
    assert re.search(rf"<td>broken/noise\.log</td>\s*<td>{len(rows)}</td>", by_file)
    assert re.search(r"<td>broken/membership\.log</td>\s*<td>1</td>", by_file)


def test_the_share_of_rejected_lines_that_warns() -> None:
    assert job.mostly_rejected({"a.log": 9, "b.log": 8, "c.log": 3}, {"a.log": 1, "b.log": 2}) == [
        "a.log: 9 of its 10 line(s) rejected, 1 event(s) read: not a Kafka log or event log this job can parse? "
        "(see rejected_lines)",
        "c.log: 3 of its 3 line(s) rejected, 0 event(s) read: not a Kafka log or event log this job can parse? "
        "(see rejected_lines)"]


def test_unwritable_out_fails_in_one_line_before_spark_starts(tmp_path: Path, monkeypatch) -> None:
    log = tmp_path / "controller.log"
    log.write_text("[2024-01-01 00:00:00,000] INFO [Controller id=1] Resigned (kafka.controller.KafkaController)\n")
    blocker = tmp_path / "a-file"
    blocker.write_text("")

    def no_spark(*_: object, **__: object) -> None:
        raise AssertionError("Spark was started")

    monkeypatch.setattr(job, "build_session", no_spark)
    result = CliRunner().invoke(analyze, [str(log), "--out", str(blocker / "out")])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert result.output.startswith(f"Error: {blocker / 'out'}: output directory is not writable")


def test_progress_is_reported_per_stage(analyzed) -> None:
    assert [p.split(" ")[0] for p in analyzed.progress] == ["parsing", "controller", "tables:", "time", "report"]


def test_spark_ui_is_off_unless_asked_for_and_binds_to_loopback() -> None:
    default = job.session_config("local[2]")
    assert default["spark.ui.enabled"] == "false" and default["spark.driver.bindAddress"] == "127.0.0.1"
    asked = job.session_config("local[2]", ui=True)
    assert asked["spark.ui.enabled"] == "true" and asked["spark.driver.host"] == "127.0.0.1"
    assert default["spark.ui.showConsoleProgress"] == "true"


def test_a_log_ident_id_that_is_no_number_gets_a_warning_naming_the_file_and_line(spark, tmp_path: Path) -> None:
    """The line is read (its event kept, the id null) and the job goes on; the warning names the first such line
    of each file and counts the rest, on both parsers."""
    from zkcontroller.analytics.kafka_log_parser import REASON_IDENT_NOT_NUMBER

    logs = tmp_path / "logs"
    logs.mkdir()
    kc = "(kafka.controller.KafkaController)"
    (logs / "controller.log").write_text(
        f"[2024-05-01 00:00:00,000] INFO [Controller id=1] 1 successfully elected as the controller. Epoch "
        f"incremented to 3 and epoch zk version is now 3 {kc}\n"
        f"[2024-05-01 00:00:01,000] INFO [Controller id=x] Shutting down broker 2 {kc}\n"
        f"[2024-05-01 00:00:02,000] INFO [Controller id=y] Shutting down broker 3 {kc}\n", encoding="utf-8")
    for parser in ("jvm", "python"):
        result = job.run(spark, job.JobConfig(inputs=[str(logs)], out=tmp_path / parser, parser=parser,
                                              report=False))
        reason = REASON_IDENT_NOT_NUMBER.format(field="controller_id")
        assert f"logs/controller.log: line 2: {reason} (and 1 more line(s) of that file alike)" in result.warnings, \
            (parser, result.warnings)
        shutdowns = _rows(spark, tmp_path / parser, "events", "kind = 'controlled_shutdown'")
        assert sorted((r["line_number"], r["broker_id"], r["controller_id"]) for r in shutdowns) == [
            (2, 2, None), (3, 3, None)]
