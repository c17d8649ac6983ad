"""What a directory given as INPUT contributes: its logs, not the notes kept beside them."""

from __future__ import annotations

from pathlib import Path

import pytest

from zkcontroller.analytics.sources import InputError, resolve_inputs

LINE = "[2024-01-01 00:00:00,000] INFO [Controller id=1] Resigned (kafka.controller.KafkaController)\n"


def test_a_readme_beside_the_logs_is_not_read_as_a_log(tmp_path: Path) -> None:
    """``analyze /work/shared/kafka-logs`` read README.md, SOURCES.md and TEMPLATES.md as Kafka text: 833
    rejected lines, every one of them from the notes."""
    logs = tmp_path / "kafka-logs"
    (logs / "samples").mkdir(parents=True)
    (logs / "samples" / "controller.log").write_text(LINE)
    (logs / "samples" / "controller.log.2024-01-01-00").write_text(LINE)  # a rotated log stays in
    (logs / "README.md").write_text("# Real Apache Kafka controller logs\n")
    (logs / "samples" / "SOURCES.md").write_text("| file | source |\n")
    files = resolve_inputs([str(logs)])
    assert sorted(Path(f).name for f in files.all) == ["controller.log", "controller.log.2024-01-01-00"]
    assert resolve_inputs([str(logs / "README.md")]).kafka == [str((logs / "README.md").resolve())]  # as asked


def test_a_directory_of_hidden_files_says_they_are_skipped(tmp_path: Path) -> None:
    """``analyze DIR`` with only ``.x`` in DIR said "directory contains no files", though ``.x`` was there."""
    (tmp_path / "only-hidden").mkdir()
    (tmp_path / "only-hidden" / ".x").write_text(LINE)
    with pytest.raises(InputError, match=r"only-hidden: directory holds only hidden files \(\.x\), which are skipped"):
        resolve_inputs([str(tmp_path / "only-hidden")])
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README.md").write_text("# notes\n")
    with pytest.raises(InputError, match=r"notes: directory holds only files that are skipped .*: README\.md"):
        resolve_inputs([str(tmp_path / "notes")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"empty: directory contains no files"):
        resolve_inputs([str(tmp_path / "empty")])


def test_a_process_cluster_s_directory_gives_its_broker_logs_not_its_config_or_zookeeper_files(tmp_path: Path) -> None:
    """``cluster --processes`` writes ``server-N.properties`` beside ``broker-N.log`` (read as 18 lines "no log
    timestamp at line start"), and its own ZooKeeper's config, id, output and data under the same directory."""
    (tmp_path / "broker-1.log").write_text(LINE)
    (tmp_path / "server-1.properties").write_text("broker.id=1\nlisteners=PLAINTEXT://127.0.0.1:9092\n")
    (tmp_path / "kafka-logs-1").mkdir()
    (tmp_path / "kafka-logs-1" / ".lock").write_text("")
    data = tmp_path / "zookeeper" / "data" / "version-2"
    data.mkdir(parents=True)
    (tmp_path / "zookeeper" / "zoo.cfg").write_text("tickTime=500\n")
    (tmp_path / "zookeeper" / "zookeeper.out").write_text("ZooKeeper JMX enabled by default\n")
    (data / "log.1").write_bytes(b"ZKLG\x00\x00\x00\x02")
    (data / "snapshot.0").write_bytes(b"ZKSN\x00\x00\x00\x02")
    ensemble = tmp_path / "zookeeper-ensemble"
    (ensemble / "zk1").mkdir(parents=True)
    (ensemble / "zk1" / "myid").write_text("1\n")
    (ensemble / "zk1" / "zoo.cfg").write_text("tickTime=500\n")
    (ensemble / "zk1.out").write_text("ZooKeeper JMX enabled by default\n")
    assert [Path(f).name for f in resolve_inputs([str(tmp_path)]).all] == ["broker-1.log"]
