"""`zkcontroller analyze` over inputs that held no event (every line rejected) warns, naming ``rejected_lines``.

Given files of another kind (a reassignment JSON, a broker's server.properties) it wrote empty tables and an
empty report, said nothing and exited 0, as if the cluster had been idle. Spark is replaced here by a stand-in:
what is under test is the command's reading of the job's row counts."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from zkcontroller.analytics import job
from zkcontroller.analytics.cli import analyze

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


class _NoSpark:
    def stop(self) -> None:
        pass


def _analyze_with_rows(monkeypatch: pytest.MonkeyPatch, log: Path, out: Path, rows: dict[str, int]) -> str:
    monkeypatch.setattr(job, "build_session", lambda *_, **__: _NoSpark())
    monkeypatch.setattr(job, "run", lambda _spark, config, progress=None: job.JobResult(out=config.out, rows=rows))
    result = CliRunner().invoke(analyze, [str(log), "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stderr


def test_inputs_with_no_event_get_a_warning(monkeypatch: pytest.MonkeyPatch, log: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    stderr = _analyze_with_rows(monkeypatch, log, out, {"events": 0, "rejected_lines": 3})
    assert f"warning: no event was read from the inputs (3 line(s) rejected, see {out / 'rejected_lines'})" in stderr


def test_inputs_with_events_get_none(monkeypatch: pytest.MonkeyPatch, log: Path, tmp_path: Path) -> None:
    stderr = _analyze_with_rows(monkeypatch, log, tmp_path / "out", {"events": 1, "rejected_lines": 3})
    assert "warning" not in stderr
