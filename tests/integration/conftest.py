"""Fixtures for whole-cluster tests: brokers with controllers on either backend, requests recorded, and an admin
client on a separate session for the test itself (as an admin tool or an observer would have)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest
from tests.helpers import QUICK_SHUTDOWN_BACKOFF_MS

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.event_log import EventLog
from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.model import Broker
from zkcontroller.protocol.control_requests import AnyControlRequest, ControlResponse
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.runtime.in_process import InProcessTransport
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


class RecordingTransport(InProcessTransport):
    """The in-process transport, remembering every request each broker actually handled."""

    def __init__(self) -> None:
        super().__init__()
        self.delivered: list[tuple[int, AnyControlRequest]] = []

    async def send(self, broker: Broker, request: AnyControlRequest) -> ControlResponse:
        response = await super().send(broker, request)
        self.delivered.append((broker.id, request))
        return response

    def requests_to(self, broker_id: int, kind: type | None = None) -> list[AnyControlRequest]:
        return [r for b, r in self.delivered if b == broker_id and (kind is None or isinstance(r, kind))]


ClusterFactory = Callable[..., Awaitable[LocalCluster]]


def recording_transport(cluster: LocalCluster) -> RecordingTransport:
    """The cluster's transport: a ``RecordingTransport`` for every cluster ``make_cluster`` makes."""
    transport = cluster.transport
    assert isinstance(transport, RecordingTransport)
    return transport


async def make_local_cluster(
    backend: CoordinationBackend,
    broker_ids: list[int],
    transport: InProcessTransport,
    records: list[str] | None = None,
    replication: ReplicationConfig | None = None,
    listeners: ListenerPorts | None = None,
    **controller_overrides: object,
) -> LocalCluster:
    """A started cluster whose event log is validated against the schema on every record; ``listeners``: its
    brokers also answer Kafka's wire protocol (tests pass ``ListenerPorts(base=None)``: free ports only)."""
    sink = records.append if records is not None else (lambda _line: None)
    # The last broker of a cluster cannot hand its leadership over; Kafka's 5 s back-off between its three
    # controlled-shutdown attempts would make every teardown wait 10 s.
    controller_overrides.setdefault("controlled_shutdown_retry_backoff_ms", QUICK_SHUTDOWN_BACKOFF_MS)
    # Tests that want the auto leader rebalance turn it on; elsewhere it would move leaders 5 s after failover.
    controller_overrides.setdefault("auto_leader_rebalance_enable", False)
    cluster = LocalCluster(
        backend,
        broker_ids,
        wall_clock_ms,
        event_log=EventLog("test", wall_clock_ms, sink, validate=True),
        controller_config=ControllerConfig(broker_id=-1, **controller_overrides),  # type: ignore[arg-type]
        session_timeout_ms=6000,
        transport=transport,
        replication=replication,
        listeners=listeners,
    )
    await cluster.start()
    return cluster


@pytest.fixture
async def make_cluster(backend: CoordinationBackend, request: pytest.FixtureRequest
                       ) -> AsyncIterator[ClusterFactory]:
    """Brokers replicate for real unless the test module is marked ``hand_written_isr`` (it writes ISR changes
    into ZooKeeper itself, as a Kafka 2.6 leader would, and real fetchers would race it)."""
    clusters: list[LocalCluster] = []
    records: list[str] = []
    replication = (ReplicationConfig(replica_fetching=False)
                   if request.node.get_closest_marker("hand_written_isr") else None)

    async def make(broker_ids: list[int], listeners: ListenerPorts | None = None,
                   **controller_overrides: object) -> LocalCluster:
        cluster = await make_local_cluster(backend, broker_ids, RecordingTransport(), records, replication,
                                           listeners, **controller_overrides)
        clusters.append(cluster)
        return cluster

    make.records = records  # type: ignore[attr-defined]
    yield make
    for cluster in clusters:
        await cluster.shutdown()


@pytest.fixture
def reached_root() -> Iterator[list[str]]:
    """Messages that got past the prompt to the root logger's handlers (the terminal's other layout)."""
    seen: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    collector = Collect(logging.WARNING)
    logging.getLogger().addHandler(collector)
    try:
        yield seen
    finally:
        logging.getLogger().removeHandler(collector)


@pytest.fixture
def admin(session: CoordinationSession) -> KafkaZkClient:
    """A ``KafkaZkClient`` on the test's own ``session`` (tests/conftest.py), as an admin tool or an observer would
    have."""
    return KafkaZkClient(session, wall_clock_ms)
