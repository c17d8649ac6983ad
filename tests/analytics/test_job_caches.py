"""A job that fails half-way leaves no cache behind in its session: the per-partition rows were persisted before
the first collects and released only on the paths that reached their release (found in review)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zkcontroller.analytics import job

pytestmark = pytest.mark.spark

KC = "(kafka.controller.KafkaController)"


def _cached(spark) -> tuple[bool, int]:
    return (spark._jsparkSession.sharedState().cacheManager().isEmpty(),
            spark.sparkContext._jsc.getPersistentRDDs().size())


@pytest.mark.parametrize("failing", ["classify", "build_and_write"])
def test_a_failed_job_releases_every_cache_it_made(spark, tmp_path: Path, monkeypatch, failing: str) -> None:
    log = tmp_path / "controller.log"
    log.write_text(f"[2024-01-01 00:00:00,000] INFO [Controller id=1] 1 successfully elected as the controller. "
                   f"Epoch incremented to 3 and epoch zk version is now 2 {KC}\n"
                   f"[2024-01-01 00:00:01,000] INFO [Controller id=1] Resigned {KC}\n")
    before = _cached(spark)

    def boom(*_: object, **__: object) -> None:
        raise RuntimeError(f"{failing} failed")

    if failing == "classify":  # between the first collects and the tables
        monkeypatch.setattr(job.ct, "classify", boom)
    else:  # inside the tables, with every cache of the job built
        monkeypatch.setattr(job, "_build_and_write", boom)
    with pytest.raises(RuntimeError, match=f"{failing} failed"):
        job.run(spark, job.JobConfig(inputs=[str(log)], out=tmp_path / "out", report=False))
    assert _cached(spark) == before
