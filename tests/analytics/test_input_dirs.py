"""What a directory given as INPUT contributes: its logs, not the notes kept beside them."""

from __future__ import annotations

from pathlib import Path

from zkcontroller.analytics.sources import resolve_inputs

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
