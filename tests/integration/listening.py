"""In-process brokers listening on Kafka's wire protocol, on the embedded store, with an admin client, and what a
broker registered: shared by the listener tests here and ``tests/cluster/test_listen_host.py``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from tests.helpers import OffsetClock

from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

Cluster = tuple[LocalCluster, KafkaZkClient]


@asynccontextmanager
async def listening_cluster(broker_ids: list[int], listeners: ListenerPorts, session_timeout_ms: int,
                            **controller_overrides: object) -> AsyncIterator[Cluster]:
    """The brokers started (auto leader rebalance off) and a controller elected, with a ``KafkaZkClient`` on a
    session of its own; all shut down and closed on the way out."""
    backend = EmbeddedBackend(OffsetClock(wall_clock_ms))
    controller_overrides.setdefault("auto_leader_rebalance_enable", False)
    config = ControllerConfig(broker_id=-1, **controller_overrides)  # type: ignore[arg-type]
    cluster = LocalCluster(backend, broker_ids, wall_clock_ms, session_timeout_ms=session_timeout_ms,
                           controller_config=config, listeners=listeners)
    session = await backend.new_session()
    try:
        await cluster.start()
        await cluster.wait_for_controller()
        yield cluster, KafkaZkClient(session, wall_clock_ms)
    finally:
        await cluster.shutdown()
        await session.close()
        await backend.close()


async def registered(zk: KafkaZkClient, broker_id: int) -> tuple[str | None, int]:
    """The PLAINTEXT host and port broker ``broker_id`` registered in ZooKeeper."""
    found = await zk.get_broker(broker_id)
    assert found is not None, f"broker {broker_id} is not registered"
    endpoint = found.broker.endpoint("PLAINTEXT")
    assert endpoint is not None
    return endpoint.host, endpoint.port
