"""The spark-submit entry (``job.main``) and ``zkcontroller analyze`` check their arguments alike, before a JVM
starts, and neither writes over a directory of ``--out`` it did not write (Spark's overwrite mode would)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.analytics.analyze_cli import run_analyze
from tests.helpers import tool_missing

from zkcontroller.analytics import job
from zkcontroller.analytics.cli import analyze

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


def _entry(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = job.main(args)
    captured = capsys.readouterr()
    return code, captured.err


def _shared(tmp_path: Path) -> Path:
    """A directory holding someone else's ``events/`` (and an unrelated file)."""
    shared = tmp_path / "shared"
    (shared / "events").mkdir(parents=True)
    (shared / "events" / "keep.txt").write_text("not ours")
    (shared / "notes.txt").write_text("not ours either")
    return shared


@pytest.mark.parametrize("case", ["missing", "empty", "inside-out", "out-not-a-dir", "shared-out"])
def test_the_entry_fails_as_the_cli_does_before_spark_starts(no_spark: None, log: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str], case: str) -> None:
    """It exited 2 with ``error: ...`` and only after starting Spark; now exit 1 and the CLI's line."""
    empty = tmp_path / "empty.log"
    empty.write_text("")
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    inputs, out = {
        "missing": ([str(tmp_path / "nope.log")], tmp_path / "out"),
        "empty": ([str(empty)], tmp_path / "out"),
        "inside-out": ([str(log)], log.parent),
        "out-not-a-dir": ([str(log)], a_file / "out"),
        "shared-out": ([str(log)], _shared(tmp_path)),
    }[case]
    args = [*inputs, "--out", str(out)]
    cli_code, cli_output = run_analyze(args)
    entry_code, entry_output = _entry(args, capsys)
    assert (entry_code, entry_output) == (cli_code, cli_output) == (1, cli_output)
    assert cli_output.startswith("Error: ") and cli_output.count("\n") == 1


def test_a_shared_out_holding_an_events_directory_is_refused_and_left_alone(
        no_spark: None, log: Path, tmp_path: Path) -> None:
    shared = _shared(tmp_path)
    code, output = run_analyze([str(log), "--out", str(shared)])
    assert code == 1
    assert output == (f"Error: {shared}: holds events/, which the job would replace, and was not written by "
                      f"zkcontroller analyze; give an empty or new --out directory, or, if it is an earlier run's "
                      f"output, create {shared / job.OUT_MARKER} first\n")
    assert (shared / "events" / "keep.txt").read_text() == "not ours"
    assert sorted(p.name for p in shared.iterdir()) == ["events", "notes.txt"]  # no marker written either


def test_run_refuses_a_shared_out_too(log: Path, tmp_path: Path) -> None:
    """The library entry (notebooks, the benchmark) checks before it touches the session."""
    shared = _shared(tmp_path)
    with pytest.raises(job.InputError, match="holds events/"):
        job.run(None, job.JobConfig(inputs=[str(log)], out=shared))  # type: ignore[arg-type]
    assert (shared / "events" / "keep.txt").exists()


@pytest.mark.parametrize("contents", ["nothing", "unrelated", "marked"])
def test_an_out_the_job_may_write_reaches_spark(no_spark: None, log: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str], contents: str) -> None:
    """A new or empty --out, one holding only unrelated things, and one the job wrote (marked) are accepted."""
    out = tmp_path / "out"
    if contents == "unrelated":
        (out / "eventsx").mkdir(parents=True)
        (out / "notes.txt").write_text("")
    elif contents == "marked":
        (out / "events").mkdir(parents=True)
        (out / "report.html").write_text("")
        (out / job.OUT_MARKER).write_text("")
    code, output = run_analyze([str(log), "--out", str(out)])
    assert code == 1 and output.splitlines()[-1] == "Error: could not start Spark on local[*]: SparkStarted"
    code, err = _entry([str(log), "--out", str(out)], capsys)
    assert code == 1 and err == "Error: could not start Spark: SparkStarted\n"


def test_the_entry_reports_an_unstartable_spark_in_one_line(log: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    def unresponsive(*_: object, **__: object) -> None:
        raise RuntimeError("All masters are unresponsive! Giving up.\n\tat org.apache.spark...")

    monkeypatch.setattr(job, "build_session", unresponsive)
    assert _entry([str(log), "--out", str(tmp_path / "out")], capsys) == (
        1, "Error: could not start Spark: All masters are unresponsive! Giving up.\n")


def test_the_entry_refuses_cluster_with_cluster_pattern(no_spark: None, log: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        job.main([str(log), "--out", str(tmp_path / "out"), "--cluster", "a", "--cluster-pattern", "/(lo)gs/"])
    assert exited.value.code == 2
    assert "not both" in capsys.readouterr().err


def test_a_run_marks_its_out_so_the_next_run_may_replace_it(spark, log: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    job.run(spark, job.JobConfig(inputs=[str(log)], out=out, report=False))
    assert (out / job.OUT_MARKER).is_file() and (out / "events").is_dir()
    job.check_output_dir(out)  # the next run's check: its own tables are no obstacle


def test_an_out_that_is_a_file_is_a_usage_error_as_in_the_cli(no_spark: None, log: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The entry said "output directory is not writable (File exists)", exit 1; the CLI: a usage error."""
    a_file = tmp_path / "analysis"
    a_file.write_text("x")
    assert run_analyze([str(log), "--out", str(a_file)])[0] == 2
    with pytest.raises(SystemExit) as exited:
        job.main([str(log), "--out", str(a_file)])
    assert exited.value.code == 2
    assert f"argument --out: directory '{a_file}' is a file" in capsys.readouterr().err
    with pytest.raises(job.InputError, match=r"--out is a file, not a directory$"):  # the library's check
        job.check_output_dir(a_file)


def test_the_entry_prints_the_jobs_warnings_and_summary_as_the_cli_does(
        spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """It printed only ``name: N rows``: a truncated .gz or two clusters in one folder went unsaid under
    spark-submit. Both entries run the real job here, on the test session (which neither may stop)."""
    from tests.analytics.logsets import write_broken

    write_broken(tmp_path / "logs")
    (tmp_path / "logs" / "controller.log").write_text("".join(  # the epoch goes back: mixed clusters?
        f"[2024-05-01 00:0{i}:00,000] INFO [Controller id=1 epoch={epoch}] 1 successfully elected as the "
        f"controller. Epoch incremented to {epoch} and epoch zk version is now {epoch} "
        "(kafka.controller.KafkaController)\n" for i, epoch in enumerate((7, 2))))
    monkeypatch.setattr(job, "build_session", lambda *_, **__: spark)
    monkeypatch.setattr(spark, "stop", lambda: None)
    args = [str(tmp_path / "logs"), "--no-report", "--restart-gap-ms", "1000"]
    cli = CliRunner().invoke(analyze, [*args, "--out", str(tmp_path / "cli")], catch_exceptions=False)
    assert cli.exit_code == 0, cli.output
    assert job.main([*args, "--out", str(tmp_path / "entry")]) == 0
    entry = capsys.readouterr()

    def warnings(err: str, out: Path) -> list[str]:
        return [line.replace(str(out), "OUT") for line in err.splitlines() if line.startswith("warning: ")]

    said = warnings(entry.err, tmp_path / "entry")
    assert said == warnings(cli.stderr, tmp_path / "cli")
    assert any("controller.log.gz" in line for line in said), said
    assert any("epoch goes back from 7 to 2" in line for line in said), said
    rows = [line for line in entry.out.splitlines() if not line.startswith("done in ")]
    assert rows == [line for line in cli.stdout.splitlines() if not line.startswith("done in ")]
    assert rows[0].split() == ["events", str(job.count_rows(tmp_path / "entry" / "events")), "rows"]
    assert entry.out.splitlines()[-1].startswith("done in ")


def test_the_entry_takes_the_clis_thresholds(no_spark: None, log: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``--restart-gap-ms`` and the other thresholds were usage errors under spark-submit."""
    with pytest.raises(SystemExit) as exited:
        job.main([str(log), "--out", str(tmp_path / "out"), "--storm-elections", "0"])
    assert exited.value.code == 2 and "0 is not in the range x>=1" in capsys.readouterr().err
    assert job.main([str(log), "--out", str(tmp_path / "out"), "--min-leaderless-ms", "5", "--restart-gap-ms",
                     "5", "--storm-elections", "5", "--max-handling-ms", "5"]) == 1  # reached Spark


SPARK_LOG_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (TRACE|DEBUG|INFO|WARN|ERROR) ")


@pytest.mark.spark
@pytest.mark.timeout(300)
def test_under_spark_submit_spark_logs_nothing_once_the_job_has_started(log: Path, tmp_path: Path) -> None:
    """spark-submit's driver JVM runs before the job, so the job's ``log4j2.properties`` (given to a JVM it starts
    itself) did not apply: some 40 INFO lines of Spark's start-up came between the launcher's lines and the job's.
    Now Spark says nothing after the job's first line, and no INFO at all; what spark-submit's JVM prints before
    the job runs (its default-profile notice) is the launcher's."""
    import pyspark

    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    if shutil.which("java") is None or not submit.exists():
        tool_missing("java", "java or the PySpark distribution's bin/spark-submit is missing")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "SPARK_HOME": str(submit.parent.parent)}
    done = subprocess.run(
        [str(submit), "--master", "local[1]", job.__file__, str(log), "--out", str(tmp_path / "out"), "--no-report"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240, stdin=subprocess.DEVNULL,
        check=False)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout
    first = next(i for i, line in enumerate(lines) if line.startswith("analyze: "))
    ours = re.compile(r"^(analyze: |warning: |done in |report: |\w+ +\d+ rows$)")
    assert [line for line in lines[first:] if not ours.match(line)] == []
    assert [line for line in lines if SPARK_LOG_LINE.match(line) and " INFO " in line] == []
    assert lines[first].startswith("analyze: parsing 1 file(s) in 1 chunk(s)")
    assert "events 1 rows" in [" ".join(line.split()) for line in lines] and lines[-1].startswith("done in ")
