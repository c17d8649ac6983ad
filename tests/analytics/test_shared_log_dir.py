"""One ``--log-dir`` given to two runs of different clusters: the runs append to the same ``controller.log``,
``state-change.log`` and ``server.log``, and the event log names each record's cluster. Every Kafka-format line went
to the first cluster named, so its tables held the second run's tenures and elections (an "epoch reset" that was
another cluster) and the second cluster had no Kafka-format rows. The ``Cluster ID`` lines our brokers log at
start-up (as Kafka's) cut the directory's lines into runs by time."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from zkcontroller.analytics.sources import plan_sources, resolve_inputs
from zkcontroller.cli import main

pytestmark = [pytest.mark.timeout(600), pytest.mark.usefixtures("restored_logging")]


def _demo(log_dir: Path) -> str:
    """Run ``zkcontroller demo`` into ``log_dir`` (appending, as a reused directory does); its cluster id."""
    result = CliRunner().invoke(main, ["demo", "--log-dir", str(log_dir), "--no-listeners"])
    assert result.exit_code == 0, result.output
    found = re.search(r"the report names the cluster by its id, (\S+)\)", result.output)
    assert found, result.output
    return found.group(1)


def _second_start(server_log: Path, cluster_id: str) -> int:
    """When the run of ``cluster_id`` began: the first of the ZooKeeper-connection lines before its first
    ``Cluster ID`` line (read here from the text, so the test runs on code without ``cluster_id_lines``)."""
    lines = server_log.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if f"Cluster ID = {cluster_id} " in line)
    while at > 0 and "ZooKeeperClient Kafka server] Closed." not in lines[at - 1]:
        at -= 1
    stamp = re.match(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]", lines[at])
    assert stamp and "Initializing a new session" in lines[at], lines[at]
    parsed = datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    return int(parsed.timestamp()) * 1000 + int(stamp.group(2))


def _cluster(log_dir: Path, name: str) -> None:
    """``zkcontroller cluster --cluster-name NAME`` into ``log_dir``: a topic, a broker stopped, quit."""
    result = CliRunner().invoke(main, ["cluster", "--log-dir", str(log_dir), "--no-listeners", "--cluster-name",
                                       name], input="create t 2 2\nstop 1\nquit\n")
    assert result.exit_code == 0, result.output


@pytest.mark.spark
def test_two_runs_in_one_log_dir_keep_their_own_lines(spark, tmp_path: Path) -> None:
    from zkcontroller.analytics.job import JobConfig, run

    logs = tmp_path / "logs"
    first, second = _demo(logs), _demo(logs)
    assert first != second
    assert {json.loads(line)["cluster"] for line in (logs / "events.jsonl").open()} == {first, second}
    # the second run begins with its brokers' ZooKeeper connection, just before their Cluster ID lines
    second_start = _second_start(logs / "server.log", second)
    result = run(spark, JobConfig(inputs=[str(logs)], out=tmp_path / "out", report=False))

    def table(name: str) -> list[dict[str, object]]:
        return [r.asDict() for r in spark.read.parquet(str(result.out / name)).collect()]

    tenures: dict[object, list[object]] = {}
    for t in sorted(table("controller_tenures"), key=lambda t: (t["cluster"], t["controller_epoch"])):
        tenures.setdefault(t["cluster"], []).append(t["controller_epoch"])
    # each run elects from epoch 1 on its own store: 1, 2, 3 in each cluster, no tenure of the other's
    assert tenures == {first: [1, 2, 3], second: [1, 2, 3]}
    assert not [a for a in table("anomalies") if a["anomaly"] == "controller_epoch_reset"]
    kafka = [e for e in table("events") if e["source_format"] == "kafka_log"]
    stamps = {name: [int(e["ts"].timestamp() * 1000) for e in kafka if e["cluster"] == name]
              for name in (first, second)}
    assert {e["cluster"] for e in kafka} == {first, second}
    assert max(stamps[first]) < second_start <= min(stamps[second])
    # each run's Kafka-format lines merge with its own event-log records: every state change counts once
    records = [json.loads(line) for line in (logs / "events.jsonl").open()]
    intervals = table("partition_state_intervals")
    for name in (first, second):
        assert sum(i["cluster"] == name for i in intervals) == sum(
            r["cluster"] == name and r["type"] == "partition_state_change" for r in records)
    elections = {name: [int(e["elected_at"].timestamp() * 1000) for e in table("leader_elections")
                        if e["cluster"] == name] for name in (first, second)}
    assert elections[first] and elections[second]  # each run's own elections, counted in its cluster only
    assert max(elections[first]) < second_start <= min(elections[second])
    # the first cluster's window ends with its own last line: the second's start-up lines (before its Cluster ID
    # lines) stretched it to the second run's start, and a partition leaderless at its end with it
    ends = {r["cluster"]: r["window_end_at"] for r in table("partition_unavailability")}
    assert int(ends[first].timestamp() * 1000) < second_start

def test_a_run_named_by_its_event_log_and_runs_of_one_cluster_not_cut(tmp_path: Path) -> None:
    from zkcontroller.analytics.sources import cluster_id_lines

    logs = tmp_path / "logs"
    first = _demo(logs)
    alone = plan_sources(resolve_inputs([str(logs)]))
    assert {s.cluster for s in alone if s.fmt == "kafka_log"} == {first} and not any(s.runs for s in alone)
    _cluster(logs, "other")  # named by --cluster-name, not by its id: the event log's name where its run begins
    ids = [m.cluster_id for m in cluster_id_lines(str(logs / "server.log"))]
    assert ids[0] == first and ids[-1] != first
    warnings: list[str] = []
    sources = plan_sources(resolve_inputs([str(logs)]), warnings=warnings)
    kafka = [s for s in sources if s.fmt == "kafka_log"]
    assert {s.name for s in kafka} == {"logs/controller.log", "logs/state-change.log", "logs/server.log"}
    assert {s.cluster for s in kafka} == {first}  # lines before any Cluster ID line: the rule as before
    assert {tuple(name for _, name in s.runs) for s in kafka} == {(first, "other")} and warnings == []
    # --cluster names every line, as it says; --cluster-pattern names by path: neither is cut
    assert not any(s.runs for s in plan_sources(resolve_inputs([str(logs)]), cluster="x"))
    assert not any(s.runs for s in plan_sources(resolve_inputs([str(logs)]), cluster_pattern="/(logs)/"))


def test_an_id_that_comes_back_is_reported_with_file_and_line(tmp_path: Path) -> None:
    first, second = _demo(tmp_path / "a"), _demo(tmp_path / "b")
    a = (tmp_path / "a" / "server.log").read_text().splitlines(keepends=True)
    b = (tmp_path / "b" / "server.log").read_text().splitlines(keepends=True)
    # two clusters writing one file at once: the first's lines again after the second's (stamped later: the
    # first run's brokers registering again, as after a restart)
    shared = tmp_path / "shared"
    shared.mkdir()
    later = [re.sub(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}", f"[2099-01-01 00:{i // 60000:02d}:{i // 1000 % 60:02d},"
                    f"{i % 1000:03d}", line) for i, line in enumerate(a)]  # in line order, as the original
    (shared / "server.log").write_text("".join(a + b + later))
    def first_id_line(lines: list[str]) -> int:
        return next(i for i, line in enumerate(lines, start=1) if "Cluster ID = " in line)

    again, before = len(a) + len(b) + first_id_line(a), len(a) + first_id_line(b)
    warnings: list[str] = []
    sources = plan_sources(resolve_inputs([str(shared)]), warnings=warnings)
    assert [tuple(name for _, name in s.runs) for s in sources] == [(first, second, first)]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"shared/server.log:{again}: Cluster ID {first} again after {second} "
                                  f"(shared/server.log:{before}): ")
    assert "--cluster-pattern" in warnings[0]
