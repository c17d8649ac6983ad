"""A broker process started from ``server.properties`` says which ZooKeeper it connects to before it waits for
it, as Kafka's ``KafkaServer.initZkClient`` does: a ZooKeeper that does not answer is not 15 s of silence."""

from __future__ import annotations

import logging

import pytest

from zkcontroller.cluster.broker_process import BrokerProcess
from zkcontroller.cluster.server_properties import broker_properties, parse_properties
from zkcontroller.cluster.zookeeper_server import free_port
from zkcontroller.coordination.errors import ConnectionLossError


@pytest.mark.usefixtures("unreachable_zookeeper_gives_up_soon")
async def test_the_zookeeper_is_named_before_the_wait_for_it(caplog: pytest.LogCaptureFixture) -> None:
    connect = f"127.0.0.1:{free_port()}"  # nothing listens there
    props = broker_properties(parse_properties(
        f"broker.id=3\nlisteners=PLAINTEXT://127.0.0.1:0\nzookeeper.connect={connect}\n"))
    process = BrokerProcess(props)
    try:
        with caplog.at_level(logging.INFO), pytest.raises(ConnectionLossError):
            await process.startup()
    finally:
        await process.shutdown()
    lines = [r.getMessage() for r in caplog.records]
    assert f"[KafkaServer id=3] Connecting to zookeeper on {connect}" in lines
    assert "[KafkaServer id=3] started" not in lines
