"""The end-to-end tests' ``cluster --processes`` set-up, written once: a `ProcessCluster` started (skipped when no
ZooKeeper is installed) and stopped, a ZooKeeper client that waits for its brokers to register, and one broker
(re)started with a session timeout of its own. The module fixtures of test_broker_processes,
test_alter_configs_clients and test_describe_configs_clients each built the first two by hand."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from tests.helpers import QUICK_SHUTDOWN_RETRIES, tool_missing

from zkcontroller.cluster.process_cluster import ProcessCluster, wait_registered
from zkcontroller.cluster.server_properties import parse_properties
from zkcontroller.cluster.zookeeper_server import ZooKeeperNotInstalled
from zkcontroller.coordination.connect import make_backend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


@contextmanager
def started_process_cluster(directory: Path, broker_ids: list[int], *, session_timeout_ms: int,
                            racks: dict[int, str] | None = None,
                            extra: dict[str, str] | None = None) -> Iterator[ProcessCluster]:
    """Broker processes ``broker_ids`` (and their own ZooKeeper) with files in ``directory``, started; all stopped
    at the end, or when the start fails. ``extra`` goes into every server.properties. Their controlled shutdowns
    back off briefly (`QUICK_SHUTDOWN_RETRIES`) for the brokers a test stops by SIGTERM."""
    cluster = ProcessCluster(broker_ids, directory, session_timeout_ms=session_timeout_ms, racks=racks,
                             extra={**QUICK_SHUTDOWN_RETRIES, **(extra or {})})
    try:
        try:
            cluster.start()
        except ZooKeeperNotInstalled as e:
            tool_missing("zookeeper", str(e))
        yield cluster
    finally:  # also after a start that failed half-way: its ZooKeeper and the brokers already started
        cluster.stop()


@asynccontextmanager
async def registered_zk(cluster: ProcessCluster) -> AsyncIterator[KafkaZkClient]:
    """A ZooKeeper client of the cluster's own, once all its brokers are registered; closed at the end."""
    backend = make_backend(cluster.zookeeper_connect, wall_clock_ms)
    try:
        session = await backend.new_session()
        try:
            client = KafkaZkClient(session, wall_clock_ms)
            await wait_registered(client, list(cluster.brokers))
            yield client
        finally:
            await session.close()
    finally:
        await backend.close()


def start_broker_with_session(cluster: ProcessCluster, broker_id: int, session_timeout_ms: int) -> None:
    """Start one (stopped or never started) broker with a ZooKeeper session timeout of its own: a short one for
    the broker a test means to lose its session, while the others keep the cluster's long one, so that a broker
    starved under load does not lose its session by accident."""
    cluster_wide = cluster.session_timeout_ms
    cluster.session_timeout_ms = session_timeout_ms  # read once, when start_broker writes its server.properties
    try:
        cluster.start_broker(broker_id)
    finally:
        cluster.session_timeout_ms = cluster_wide


def session_timeout_ms(cluster: ProcessCluster, broker_id: int) -> int:
    """The session timeout the broker's running process was started with (its server.properties)."""
    config = cluster.brokers[broker_id].config
    return int(parse_properties(config.read_text(), str(config))["zookeeper.session.timeout.ms"])
