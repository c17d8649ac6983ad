"""``zkcontroller cluster`` names its event log's cluster by the cluster id (``/cluster/id``, what Kafka's Metadata
response and kcat show), unless given ``--cluster-name``: every run was ``local``, so the analytics job read two
runs' log directories as one cluster whose controller epoch went "back from 1 to 1"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers import OffsetClock

from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = pytest.mark.timeout(120)


async def _name_twice() -> tuple[str, str, str | None]:
    from zkcontroller.cluster.cluster_shell import event_log_cluster

    store = EmbeddedBackend(OffsetClock(wall_clock_ms))
    try:
        session = await store.new_session()
        zk = KafkaZkClient(session, wall_clock_ms)
        first, again = await event_log_cluster(zk), await event_log_cluster(zk)
        return first, again, await zk.get_cluster_id()
    finally:
        await store.close()


async def test_the_name_is_the_cluster_id_the_brokers_read() -> None:
    first, again, stored = await _name_twice()
    assert first == again == stored  # created once, as the first broker would; read back after
    assert len(first) == 22  # Kafka's base64 UUID
    assert (await _name_twice())[0] != first  # another store, another cluster


def _run(log_dir: Path, *options: str) -> set[str]:
    run = subprocess.run(
        [sys.executable, "-m", "zkcontroller.cli", "cluster", "--brokers", "1", "--no-listeners", "--log-dir",
         str(log_dir), *options], input="quit\n", capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return {json.loads(line)["cluster"] for line in (log_dir / "events.jsonl").read_text().splitlines()}


def test_two_runs_are_two_clusters_unless_named(tmp_path: Path) -> None:
    first, second = _run(tmp_path / "a"), _run(tmp_path / "b")
    assert len(first) == len(second) == 1 and first != second and "local" not in first | second
    assert _run(tmp_path / "c", "--cluster-name", "prod") == {"prod"}


@pytest.mark.usefixtures("restored_logging")  # `main` sets kazoo.client's level process-wide
def test_the_name_is_for_the_event_log_of_in_process_brokers() -> None:
    from click.testing import CliRunner

    from zkcontroller.cli import main

    refused = CliRunner().invoke(main, ["cluster", "--processes", "2", "--cluster-name", "prod"])
    assert refused.exit_code == 2 and "broker processes write no event log" in refused.output
    empty = CliRunner().invoke(main, ["cluster", "--cluster-name", " "])
    assert empty.exit_code == 2 and "give a non-empty name" in empty.output
