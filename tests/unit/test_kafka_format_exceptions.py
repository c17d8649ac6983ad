"""Exceptions in the Kafka-format logs carry the Java class and text Kafka logs in their place, never a Python
module path: a reader of Kafka 2.8's logs (and the analytics parser) finds ``kafka.common.StateChangeFailedException``
and ``java.io.IOException: Connection to ... failed.``, not ``zkcontroller.controller.errors.StateChangeFailedError``
or ``[Errno 111]``."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest

from zkcontroller.cluster.logs import LogFiles
from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess, free_port
from zkcontroller.controller.errors import StateChangeFailedError
from zkcontroller.coordination.api import SessionState
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.model import Broker, EndPoint
from zkcontroller.protocol.transport import BrokerUnreachableError
from zkcontroller.runtime.in_process import InProcessTransport
from zkcontroller.runtime.log_lines import exception_line
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.runtime.tcp_transport import TcpTransport

BROKER = Broker(3, (EndPoint("127.0.0.1", 24093, "PLAINTEXT", "PLAINTEXT"),))


def _logged(tmp_path: Path, logger: str, msg: str, exc: BaseException, file: str) -> list[str]:
    files = LogFiles(tmp_path, lambda: 1767225665000)
    try:
        logging.getLogger(logger).error(msg, exc_info=exc)
    finally:
        files.close()
    return (tmp_path / file).read_text().splitlines()


def test_a_failed_election_names_kafkas_exception(tmp_path: Path) -> None:
    error = StateChangeFailedError("Failed to elect leader for partition pay-2 under strategy "
                                   "OfflinePartitionLeaderElectionStrategy(false)")
    lines = _logged(tmp_path, "state.change.logger", "[Controller id=1 epoch=2] Controller 1 epoch 2 failed to change "
                    "state for partition pay-2 from OfflinePartition to OnlinePartition", error, "state-change.log")
    assert lines[1] == ("kafka.common.StateChangeFailedException: Failed to elect leader for partition pay-2 under "
                        "strategy OfflinePartitionLeaderElectionStrategy(false)")
    assert exception_line(error) == lines[1]


def test_a_raised_chain_names_java_classes_in_its_traceback(tmp_path: Path) -> None:
    try:
        try:
            raise ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 24093)")
        except OSError as e:
            raise BrokerUnreachableError("Connection to 127.0.0.1:24093 (id: 3 rack: null) failed.") from e
    except BrokerUnreachableError as e:
        error = e
    text = "\n".join(_logged(tmp_path, "kafka.controller.RequestSendThread", "a send failed", error,
                             "controller.log"))
    assert "\njava.io.IOException: Connection to 127.0.0.1:24093 (id: 3 rack: null) failed." in text
    assert "zkcontroller.protocol" not in text


async def test_an_in_process_broker_that_is_down_fails_in_kafkas_words() -> None:
    with pytest.raises(BrokerUnreachableError) as failed:
        await InProcessTransport().send(BROKER, object())
    assert exception_line(failed.value) == ("java.io.IOException: Connection to 127.0.0.1:24093 (id: 3 rack: null) "
                                            "failed.")


async def test_a_refused_tcp_connection_fails_in_kafkas_words() -> None:
    port = free_port()
    broker = Broker(1, (EndPoint("127.0.0.1", port, "PLAINTEXT", "PLAINTEXT"),))
    transport = TcpTransport(AsyncioRuntime())
    try:
        with pytest.raises(BrokerUnreachableError) as failed:
            await transport.connect(broker, client="controlled-shutdown")
    finally:
        await transport.close()
    assert exception_line(failed.value) == (f"java.io.IOException: Connection to 127.0.0.1:{port} (id: 1 rack: null) "
                                            "failed.")
    assert "Errno" not in str(failed.value)


async def test_an_expired_session_is_logged_as_zookeepers_client_does(
        zookeeper_server: ZooKeeperServerProcess, tmp_path: Path) -> None:
    """ZooKeeper's ClientCnxn line, under its logger, in server.log (Kafka's root appender's file)."""
    backend = ZooKeeperBackend(zookeeper_server.connect_string, f"/test-expiry-log-{os.getpid()}")
    files = LogFiles(tmp_path, lambda: 1767225665000)
    try:
        victim = await backend.new_session(6000)
        expired = asyncio.Event()
        victim.add_session_listener(lambda state: expired.set() if state is SessionState.EXPIRED else None)
        await backend.expire_session(victim)
        await asyncio.wait_for(expired.wait(), 30)
        await victim.close()
    finally:
        files.close()
        await backend.close()
    server = (tmp_path / "server.log").read_text()
    assert "INFO Unable to reconnect to ZooKeeper service, session 0x" in server
    assert "has expired, closing socket connection (org.apache.zookeeper.ClientCnxn)" in server
    assert "kazoo_store" not in server
