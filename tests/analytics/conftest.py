"""One Spark session for the whole analytics suite (starting a JVM costs seconds), plus shared paths."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED_LOGS = Path(__file__).resolve().parents[2] / ".." / "shared" / "kafka-logs"
SAMPLES = SHARED_LOGS / "samples"


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """``job.build_session`` raises ``SparkStarted``: a test sees it if a check it expects to refuse passed."""
    from tests.analytics.analyze_cli import SparkStarted

    from zkcontroller.analytics import job

    def refuse(*_: object, **__: object) -> None:
        raise SparkStarted

    monkeypatch.setattr(job, "build_session", refuse)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """``logs/controller.log`` under ``tmp_path``, holding one controller line."""
    from tests.analytics.analyze_cli import LINE

    path = tmp_path / "logs" / "controller.log"
    path.parent.mkdir()
    path.write_text(LINE)
    return path


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    pyspark_sql = pytest.importorskip("pyspark.sql")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the executors import zkcontroller to parse
    from zkcontroller.analytics.job import CODEGEN_CACHE_ENTRIES, JIT_OPTIONS
    from zkcontroller.analytics.jvm_parser import build_jar

    jar, _ = build_jar()  # the JVM parser, as build_session adds it (without javac the job falls back to Python)
    session = (
        pyspark_sql.SparkSession.builder.master("local[1]")
        .config("spark.jars", str(jar or ""))
        .appName("zkcontroller-analytics-tests")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", JIT_OPTIONS)  # as the job's sessions: many small queries
        .config("spark.sql.codegen.cache.maxEntries", CODEGEN_CACHE_ENTRIES)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def samples() -> Path:
    if not SAMPLES.is_dir():
        pytest.skip(f"real Kafka log samples not found at {SAMPLES} (../shared is not checked out)")
    return SAMPLES.resolve()


@pytest.fixture(scope="session")
def analyzed(spark, samples: Path, tmp_path_factory: pytest.TempPathFactory) -> object:
    """Every shared log set (tests/analytics/logsets.py) analyzed in one run of the job, report included."""
    from click.testing import CliRunner
    from tests.analytics import logsets
    from tests.logging_state import logging_restored

    from zkcontroller.analytics.job import JobConfig, run
    from zkcontroller.analytics.sources import jsonl_cluster
    from zkcontroller.cli import main

    root = tmp_path_factory.mktemp("logs")
    logsets.write_scenario(root / "prod")
    logsets.write_sim(root / "sim")
    logsets.write_broken(root / "broken")
    with logging_restored():  # `main` sets kazoo.client's level: a session fixture is not under the per-test guard
        demo = CliRunner().invoke(main, ["demo", "--log-dir", str(root / "kafka-demo")])
    assert demo.exit_code == 0, demo.output
    inputs = [str(root / "prod"), str(root / "sim" / "*.jsonl.gz"), str(root / "kafka-demo"), str(root / "broken"),
              *(str(samples / name) for name in logsets.SAMPLE_FILES)]
    said: list[str] = []
    result = run(spark, JobConfig(inputs=inputs, out=root / "out", cluster_pattern=logsets.SAMPLE_PATTERN),
                 progress=said.append)
    result.progress = said  # type: ignore[attr-defined]
    result.logs = root  # type: ignore[attr-defined]
    # the demo's event log names its cluster by the cluster id (a new one each run), as its Kafka-format logs then
    result.demo_cluster = jsonl_cluster(str(root / "kafka-demo" / "events.jsonl"))  # type: ignore[attr-defined]
    return result
