"""`zkcontroller analyze` given bad arguments: one `Error:` line and a non-zero exit, before any JVM starts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.analytics.analyze_cli import LINE, run_analyze

from zkcontroller.analytics import job, sources


@pytest.mark.parametrize(("pattern", "message"), [
    ("(", "is not a valid regular expression"),
    ("logs/[^/]+", "has no group"),
])
def test_a_bad_cluster_pattern_is_a_usage_error(no_spark: None, log: Path, tmp_path: Path, pattern: str,
                                                message: str) -> None:
    code, output = run_analyze([str(log), "--out", str(tmp_path / "out"), "--cluster-pattern", pattern])
    assert code == 2
    assert "Invalid value for '--cluster-pattern'" in output and message in output


def test_a_cluster_pattern_with_a_group_is_accepted(log: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def started(*_: object, **__: object) -> None:
        raise RuntimeError("stopped where Spark would start")

    monkeypatch.setattr(job, "build_session", started)
    _, output = run_analyze([str(log), "--out", str(tmp_path / "out"), "--cluster-pattern", "/(lo)gs/"])
    assert output.splitlines()[-1] == "Error: could not start Spark on local[*]: stopped where Spark would start"


@pytest.mark.parametrize("master", ["foo", "local[0]", "local[x]", "spark:/host:7077", "mesos://host:5050"])
def test_a_malformed_master_fails_in_one_line_before_spark_starts(no_spark: None, log: Path, tmp_path: Path,
                                                                  master: str) -> None:
    code, output = run_analyze([str(log), "--out", str(tmp_path / "out"), "--master", master])
    assert code == 1
    assert output == f"Error: --master {master!r} is not a Spark master URL: local, local[N], local[*], " \
                     "spark://HOST:PORT, yarn or k8s://URL\n"


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local[2,3]", "local-cluster[2,1,1024]",
                                    "spark://h:7077", "spark://a:7077,b:7077", "yarn", "k8s://https://h:443"])
def test_spark_master_urls_pass_the_check(master: str) -> None:
    job.check_master(master)


def test_spark_refusing_to_start_is_one_line_not_a_traceback(log: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def unresponsive(*_: object, **__: object) -> None:
        raise RuntimeError("Application has been killed. Reason: All masters are unresponsive! Giving up.\n"
                           "\tat org.apache.spark...")

    monkeypatch.setattr(job, "build_session", unresponsive)
    code, output = run_analyze([str(log), "--out", str(tmp_path / "out"), "--master", "spark://127.0.0.1:9"])
    assert code == 1
    assert output.splitlines()[-1] == ("Error: could not start Spark on spark://127.0.0.1:9: Application has been "
                                       "killed. Reason: All masters are unresponsive! Giving up.")


def _deny(monkeypatch: pytest.MonkeyPatch, denied: Path) -> None:
    """Make ``denied`` unreadable: chmod when not root (root reads anything), else refuse it at ``open``."""
    if os.geteuid() != 0:
        denied.chmod(0)
        return
    real_open = open

    def guarded(path: object, *args: object, **kwargs: object) -> object:
        if Path(str(path)) == denied:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(sources, "open", guarded, raising=False)


def test_an_unreadable_file_fails_in_one_line_naming_it(no_spark: None, log: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    denied = log.parent / "state-change.log"
    denied.write_text(LINE)
    _deny(monkeypatch, denied)
    code, output = run_analyze([str(log.parent), "--out", str(tmp_path / "out")])
    assert code == 1
    assert output == f"Error: {denied.resolve()}: cannot read (Permission denied)\n"


def test_an_unlistable_directory_fails_instead_of_being_skipped(tmp_path: Path, log: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    hidden = log.parent / "broker-2"
    hidden.mkdir()
    (hidden / "controller.log").write_text(LINE)
    real_scandir = os.scandir

    def guarded(path: object) -> object:
        if Path(str(path)) == hidden:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", guarded)
    with pytest.raises(sources.InputError, match=f"^{hidden}: cannot read \\(Permission denied\\)$"):
        sources.resolve_inputs([str(log.parent)])


@pytest.mark.parametrize("inside", ["logs", "logs/controller.log"])
def test_an_input_inside_out_is_named_as_such_not_as_empty(no_spark: None, log: Path, tmp_path: Path,
                                                           inside: str) -> None:
    code, output = run_analyze([str(tmp_path / inside), "--out", str(log.parent)])
    assert code == 1
    assert output == f"Error: {tmp_path / inside}: inside the output directory {log.parent}, which is never " \
                     "read as input\n"


@pytest.mark.parametrize(("option", "value"), [
    ("--slow-event-ms", "-1"), ("--min-leaderless-ms", "-1"), ("--restart-gap-ms", "-1"),
    ("--max-handling-ms", "-1"), ("--storm-elections", "0"),
])
def test_negative_thresholds_are_usage_errors(no_spark: None, log: Path, tmp_path: Path, option: str,
                                              value: str) -> None:
    """A negative handling bound gave negative durations; a storm of 0 elections made every minute one."""
    code, output = run_analyze([str(log), "--out", str(tmp_path / "out"), option, value])
    assert code == 2
    assert f"Invalid value for '{option}'" in output


def test_a_device_or_fifo_is_named_as_not_a_file_not_as_missing(no_spark: None, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (fifo, Path(os.devnull)):
        code, output = run_analyze([str(path), "--out", str(tmp_path / "out")])
        assert code == 1
        assert output == f"Error: {path}: not a regular file or directory\n"


def test_an_earlier_runs_output_inside_an_input_directory_is_not_read_as_logs(log: Path, tmp_path: Path) -> None:
    """``analyze DIR --out DIR/analysis`` (as demo and sim run suggest), then ``analyze DIR --out OTHER``: the
    first run's Parquet files and report pages were read as Kafka text (2290 rejected lines for the demo)."""
    earlier = log.parent / "analysis"
    (earlier / "events" / "cluster=demo").mkdir(parents=True)
    (earlier / "events" / "cluster=demo" / "part-00000-c000.snappy.parquet").write_bytes(b"PAR1\x00binary")
    (earlier / "events" / "_SUCCESS").write_text("")
    (earlier / "report").mkdir()
    (earlier / "report.html").write_text("<html></html>")
    (earlier / "report" / "demo.html").write_text("<html></html>")
    files = sources.resolve_inputs([str(log.parent)], exclude=tmp_path / "other")
    assert files.all == [str(log.resolve())]
    assert sources.resolve_inputs([str(earlier / "report.html")]).kafka  # named on its own: read as asked


def test_the_spark_submit_entry_refuses_a_bad_cluster_pattern_before_spark_starts(
        no_spark: None, log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        job.main([str(log), "--out", str(tmp_path / "out"), "--cluster-pattern", "("])
    assert exited.value.code == 2
    assert "argument --cluster-pattern: '(' is not a valid regular expression" in capsys.readouterr().err


def test_cluster_and_cluster_pattern_together_is_a_usage_error(no_spark: None, log: Path, tmp_path: Path) -> None:
    """Both were accepted and --cluster won without a word; the docs show them as alternatives."""
    code, output = run_analyze([str(log), "--out", str(tmp_path / "out"), "--cluster", "prod",
                           "--cluster-pattern", "/(lo)gs/"])
    assert code == 2
    assert "either --cluster" in output and "not both" in output


def test_spark_draws_no_progress_bar_into_a_file_or_pipe(log: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Its \\r-redrawn bar, written to a file or pipe, left hundreds of "[Stage N:>  (0 + 2) / 4]" fragments
    between the job's own lines."""
    asked: dict[str, object] = {}

    def started(*_: object, **kwargs: object) -> None:
        asked.update(kwargs)
        raise RuntimeError("stopped where Spark would start")

    monkeypatch.setattr(job, "build_session", started)
    run_analyze([str(log), "--out", str(tmp_path / "out")])  # the runner's stderr is no terminal
    assert asked.get("progress") is False
