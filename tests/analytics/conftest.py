"""One Spark session for the whole analytics suite (starting a JVM costs seconds), plus shared paths."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED_LOGS = Path(__file__).resolve().parents[2] / ".." / "shared" / "kafka-logs"
SAMPLES = SHARED_LOGS / "samples"


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    pyspark_sql = pytest.importorskip("pyspark.sql")
    session = (
        pyspark_sql.SparkSession.builder.master("local[1]")
        .appName("zkcontroller-analytics-tests")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
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
