"""``zkcontroller demo`` names its event log's cluster by the cluster id (``/cluster/id``), as ``zkcontroller
cluster`` does: every run was ``demo``, so ``analyze`` read two runs' log directories as one cluster (its controller
epoch "back from 3 to 1", tenures across both). The Kafka-format logs beside a run's event log take its name, so
one run is still one cluster (its JSONL and Kafka-format sources merge) and two runs are two."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from zkcontroller.analytics.sources import plan_sources, resolve_inputs
from zkcontroller.cli import main

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("restored_logging")]


def _demo(log_dir: Path) -> tuple[str, set[str]]:
    result = CliRunner().invoke(main, ["demo", "--log-dir", str(log_dir), "--no-listeners"])
    assert result.exit_code == 0, result.output
    names = {json.loads(line)["cluster"] for line in (log_dir / "events.jsonl").read_text().splitlines()}
    return result.output, names


def test_two_demo_runs_are_two_clusters_and_each_run_one(tmp_path: Path) -> None:
    (first_out, first), (_, second) = _demo(tmp_path / "a"), _demo(tmp_path / "b")
    assert len(first) == len(second) == 1 and first != second and "demo" not in first | second
    (name,) = first
    assert len(name) == 22 and f"the report names the cluster by its id, {name}" in first_out  # Kafka's base64 UUID
    sources = plan_sources(resolve_inputs([str(tmp_path / "a"), str(tmp_path / "b")]))
    by_run: dict[str, set[str | None]] = {}
    for s in sources:
        by_run.setdefault(Path(s.name).parts[0], set()).add(s.cluster if s.fmt == "kafka_log" else None)
    assert {run: clusters - {None} for run, clusters in by_run.items()} == {"a": first, "b": second}
    assert {s.fmt for s in sources} == {"jsonl", "kafka_log"}
