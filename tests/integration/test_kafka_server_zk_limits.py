"""``zookeeper.max.in.flight.requests`` reaches the broker's KafkaZkClient, as Kafka's KafkaServer passes
``config.zkMaxInFlightRequests`` to the ZooKeeperClient it builds."""

from __future__ import annotations

import random

from zkcontroller.cluster.kafka_server import BrokerConfig, KafkaServer
from zkcontroller.cluster.server_properties import broker_properties, parse_properties
from zkcontroller.controller.event_log import EventLog
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.runtime.in_process import InProcessTransport
from zkcontroller.runtime.runtime import AsyncioRuntime

PROPERTIES = """broker.id=1
zookeeper.connect=localhost:2181
log.dirs=/tmp/unused
controlled.shutdown.enable=false
zookeeper.max.in.flight.requests=3
"""


async def test_server_properties_bound_the_zk_clients_requests_in_flight() -> None:
    props = broker_properties(parse_properties(PROPERTIES))
    assert props.controller.zookeeper_max_in_flight_requests == 3
    config = BrokerConfig(broker_id=props.broker_id, controller=props.controller,
                          session_timeout_ms=props.session_timeout_ms)
    backend = EmbeddedBackend(wall_clock_ms)
    server = KafkaServer(config, backend, InProcessTransport(), AsyncioRuntime(random.Random(1)),
                         EventLog("test", wall_clock_ms, None))
    await server.startup()
    try:
        assert server.zk is not None
        assert server.zk.limits.max_in_flight == 3
    finally:
        await server.shutdown()
        await backend.close()
