"""`zkcontroller analyze --master spark://HOST:PORT` on a real Spark standalone cluster: a master and a worker
from the PySpark distribution on loopback, the job submitted from another process, and its tables equal to
those of the same job on `local[2]`."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.analytics import logsets
from tests.helpers import tool_missing

pytest.importorskip("pyspark")
import pandas as pd
import pyspark

pytestmark = [pytest.mark.spark, pytest.mark.timeout(600)]

TABLES = ("controller_tenures", "leader_elections", "broker_failures", "split_brain_windows", "anomalies",
          "topic_deletions", "partition_reassignments", "isr_changes", "controlled_shutdowns", "incidents")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(condition, what: str, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {timeout_s}s")
        time.sleep(0.5)  # polling child processes' ports: a bounded wait on a condition


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as r:
            return int(json.load(r).get("aliveworkers", 0))
    except OSError:
        return 0


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark standalone master and one worker (1 core) on loopback; yields the master URL."""
    home = Path(pyspark.__file__).parent
    spark_class = home / "bin" / "spark-class"
    if shutil.which("java") is None or not spark_class.exists():
        tool_missing("java", "java or the PySpark distribution's bin/spark-class is missing")
    logs = tmp_path_factory.mktemp("spark-standalone")
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOG_DIR": str(logs), "SPARK_WORKER_DIR": str(logs / "work"),
           "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    port, ui, worker_ui = _free_port(), _free_port(), _free_port()
    procs: list[subprocess.Popen[bytes]] = []

    def launch(name: str, *args: str) -> None:
        with (logs / f"{name}.out").open("ab") as out:
            procs.append(subprocess.Popen([str(spark_class), *args], env=env, stdout=out, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL))

    try:
        launch("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
               "--webui-port", str(ui))
        url = f"spark://127.0.0.1:{port}"
        launch("worker", "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "1",
               "--memory", "1g", "--webui-port", str(worker_ui))
        _wait(lambda: _alive_workers(ui) == 1, "a standalone master with one alive worker")
        yield url
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def _analyze(inputs: list[str], out: Path, master: str) -> str:
    done = subprocess.run([sys.executable, "-m", "zkcontroller.cli", "analyze", *inputs, "--out", str(out),
                           "--master", master, "--no-report"], capture_output=True, text=True, timeout=480,
                          env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stderr


def _rows(out: Path, table: str) -> list[tuple]:
    frame = pd.read_parquet(out / table)
    frame = frame.reindex(sorted(frame.columns), axis=1).astype(str)
    return sorted(map(tuple, frame.itertuples(index=False)))


def test_the_job_on_a_standalone_cluster_writes_the_tables_local_mode_writes(standalone: str, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logsets.write_scenario(logs / "prod")
    logsets.write_sim(logs / "sim")
    inputs = [str(logs / "prod"), str(logs / "sim" / "*.jsonl.gz")]
    said = _analyze(inputs, tmp_path / "standalone", standalone)
    assert "(jvm parser)" in said and "JVM parser unavailable" not in said  # the executors loaded spark.jars
    local_said = _analyze(inputs, tmp_path / "local", "local[2]")
    for text in (said, local_said):  # Spark's start-up WARN lines and notices stay off the console
        assert not [line for line in text.splitlines() if " WARN " in line or "log4j" in line
                    or "Setting default log level" in line], text[-3000:]
    assert _rows(tmp_path / "standalone", "events")  # the cluster did read the input
    for table in ("events", *TABLES):
        assert _rows(tmp_path / "standalone", table) == _rows(tmp_path / "local", table), table
    # Output is partitioned by cluster (and day for events), as in local mode.
    assert sorted(p.name.split("=")[0] for p in (tmp_path / "standalone" / "events").iterdir() if p.is_dir()) \
        == ["cluster"] * len([p for p in (tmp_path / "standalone" / "events").iterdir() if p.is_dir()])
