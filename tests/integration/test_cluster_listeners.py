"""The in-process cluster's brokers on Kafka's wire protocol (``LocalCluster(listeners=...)``, what ``zkcontroller
cluster`` and ``demo`` run): kcat and kafka-python read the metadata ZooKeeper holds, a killed leader's
partitions show their new leader from a surviving broker, a restarted broker listens again where it registered,
and no listener or client connection outlives its broker. Every wait is on a condition with a bound."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
from collections.abc import AsyncIterator

import pytest
from tests.e2e.test_broker_processes import kcat_partitions, wait_for_kcat, zk_partitions
from tests.helpers import OffsetClock, tool_missing, wait_until
from tests.integration.listening import Cluster, listening_cluster, registered
from tests.integration.test_isr_upkeep import crash

from zkcontroller.admin.metadata_client import partition_replicas
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.listener import BrokerListener, ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import TopicPartition
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = pytest.mark.timeout(180)

SESSION_TIMEOUT_MS = 30000
"""Long: no test here waits for a session to time out (a killed broker's is expired at once, `crash`), and a broker
starved for a few seconds on a loaded machine must not lose its session by accident."""
KCAT = shutil.which("kcat")


@pytest.fixture
async def running() -> AsyncIterator[Cluster]:
    """Three in-process brokers listening on free loopback ports, on the embedded store, and an admin client."""
    async with listening_cluster([1, 2, 3], ListenerPorts(base=None), SESSION_TIMEOUT_MS,
                                 controlled_shutdown_retry_backoff_ms=20) as cluster_and_zk:
        yield cluster_and_zk


def need_kcat() -> None:
    if KCAT is None:
        tool_missing("kcat", "not on PATH (the wire tests need it)")


def addresses(cluster: LocalCluster) -> dict[int, str]:
    return {s.broker_id: cluster.listeners[s.broker_id].address or "" for s in cluster.running_brokers()}


def kafka_python_view(bootstrap: str, topic: str) -> tuple[dict[int, str], int, dict]:
    """Brokers (id -> host:port), controller id and ``topic``'s partitions as kafka-python's admin client sees
    them (blocking: run in a thread, the cluster answers on this process's event loop)."""
    from kafka.admin import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        described = client.describe_cluster()
        (described_topic,) = client.describe_topics([topic])
    finally:
        client.close()
    brokers = {b["node_id"] if "node_id" in b else b["broker_id"]: f"{b['host']}:{b['port']}"
               for b in described["brokers"]}
    parts = {TopicPartition(topic, p["partition_index"]): (p["leader_id"], p["replica_nodes"], p["isr_nodes"])
             for p in described_topic["partitions"]}
    return brokers, described["controller_id"], parts


async def test_kcat_and_kafka_python_see_brokers_topics_and_leaders_as_zookeeper_holds(running: Cluster) -> None:
    need_kcat()
    cluster, zk = running
    listening = addresses(cluster)
    assert sorted(listening) == [1, 2, 3] and all(a.startswith("127.0.0.1:") for a in listening.values())
    for broker_id, address in listening.items():  # each registers the port it really listens on
        host, port = await registered(zk, broker_id)
        assert f"{host}:{port}" == address
    await TopicAdmin(zk, random.Random(3)).create_topic("orders", 3, 2)
    await wait_until(lambda: _all_led(zk, "orders"), timeout_s=30.0, what="orders led on every partition")
    expected = await zk_partitions(zk, ["orders"])

    md = await wait_for_kcat(listening[2], lambda m: kcat_partitions(m) == expected, "kcat to show ZooKeeper's state")
    assert {b["id"]: b["name"] for b in md["brokers"]} == listening
    assert md["controllerid"] == await zk.get_controller_id()

    brokers, controller, parts = await asyncio.to_thread(kafka_python_view, listening[3], "orders")
    assert brokers == listening
    assert controller == await zk.get_controller_id()
    assert parts == expected


async def test_a_killed_leaders_partitions_show_their_new_leader_from_a_surviving_broker(running: Cluster) -> None:
    need_kcat()
    cluster, zk = running
    await TopicAdmin(zk, random.Random(3)).create_topic("orders", 3, 2)
    await wait_until(lambda: _all_led(zk, "orders"), timeout_s=30.0, what="orders led on every partition")
    victim = (await zk_partitions(zk, ["orders"]))[TopicPartition("orders", 0)][0]
    victim_address = cluster.listeners[victim].address
    assert victim_address is not None
    host, port = victim_address.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))  # a client connected to the victim
    survivors = {b: a for b, a in addresses(cluster).items() if b != victim}

    await crash(cluster, victim)  # its session expired at once: no waiting out the timeout
    await _sees_eof(reader)  # its client connection is closed with it
    writer.close()
    with pytest.raises(ConnectionRefusedError):  # and nothing listens on its port
        await asyncio.open_connection(host, int(port))

    async def moved() -> bool:
        leader = (await zk_partitions(zk, ["orders"]))[TopicPartition("orders", 0)][0]
        return leader not in (victim, -1)

    await wait_until(moved, timeout_s=20, what="a new leader for orders-0", poll_s=0.05)
    expected = await zk_partitions(zk, ["orders"])
    for address in survivors.values():  # every surviving broker tells clients the new leaders
        md = await wait_for_kcat(address, lambda m: kcat_partitions(m) == expected
                                 and victim not in {b["id"] for b in m["brokers"]}, f"{address} to show new leaders")
        assert md["topics"][0]["partitions"][0]["leader"] == expected[TopicPartition("orders", 0)][0] != victim
    brokers, _, parts = await asyncio.to_thread(kafka_python_view, next(iter(survivors.values())), "orders")
    assert brokers == survivors and parts == expected

    await cluster.start_broker(victim)  # back on the port clients knew, and registered there
    assert cluster.listeners[victim].address == victim_address
    assert await registered(zk, victim) == (host, int(port))
    await wait_for_kcat(victim_address, lambda m: {b["id"]: b["name"] for b in m["brokers"]} == addresses(cluster),
                        "the restarted broker to list every broker")


async def test_listeners_close_with_their_brokers_and_the_cluster() -> None:
    """A stopped, a killed, and a shut-down broker: each one's port refuses connections, each one's client
    connection is closed, and the process holds no more sockets than before the cluster started."""
    before = _socket_fds()
    backend = EmbeddedBackend(OffsetClock(wall_clock_ms))
    cluster = LocalCluster(backend, [1, 2, 3], wall_clock_ms, session_timeout_ms=SESSION_TIMEOUT_MS,
                           controller_config=ControllerConfig(broker_id=-1, controlled_shutdown_retry_backoff_ms=20),
                           listeners=ListenerPorts(base=None))
    try:
        await cluster.start()
        await cluster.wait_for_controller()
        listeners = dict(cluster.listeners)
        connections = {}
        for broker_id, listener in listeners.items():
            assert listener.port is not None
            await partition_replicas(listener.host, listener.port, [])  # it answers Metadata
            connections[broker_id] = await asyncio.open_connection(listener.host, listener.port)
        await cluster.stop_broker(1)
        await _closed(listeners[1], connections[1])
        await cluster.crash_broker(2)
        await _closed(listeners[2], connections[2])
    finally:
        await cluster.shutdown()
        await backend.close()
    await _closed(listeners[3], connections[3])
    await wait_until(lambda: _socket_fds() <= before, timeout_s=10.0, what="every socket of the cluster closed")


async def test_by_default_no_socket_is_opened() -> None:
    """Tests, benchmarks and the simulator build LocalCluster without listeners: nothing binds, and brokers
    register localhost:9092+id as before."""
    backend = EmbeddedBackend(OffsetClock(wall_clock_ms))
    before = _socket_fds()
    cluster = LocalCluster(backend, [7], wall_clock_ms, session_timeout_ms=SESSION_TIMEOUT_MS)
    try:
        await cluster.start()
        assert cluster.listeners == {} and _socket_fds() == before
        session = await backend.new_session()
        try:
            assert await registered(KafkaZkClient(session, wall_clock_ms), 7) == ("localhost", 9099)
        finally:
            await session.close()
    finally:
        await cluster.shutdown()
        await backend.close()


async def test_a_taken_port_falls_back_to_a_free_one_and_is_registered() -> None:
    blocker = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    taken = int(blocker.sockets[0].getsockname()[1])
    backend = EmbeddedBackend(OffsetClock(wall_clock_ms))
    cluster = LocalCluster(backend, [1], wall_clock_ms, session_timeout_ms=SESSION_TIMEOUT_MS,
                           listeners=ListenerPorts(base=taken - 1))
    session = await backend.new_session()
    try:
        await cluster.start()
        listener = cluster.listeners[1]
        assert listener.taken_port == taken and listener.port not in (None, taken)
        assert await registered(KafkaZkClient(session, wall_clock_ms), 1) == ("127.0.0.1", listener.port)
    finally:
        await cluster.shutdown()
        await session.close()
        await backend.close()
        blocker.close()
        await blocker.wait_closed()


async def _all_led(zk: KafkaZkClient, topic: str) -> bool:
    parts = await zk_partitions(zk, [topic])
    return bool(parts) and all(leader >= 0 for leader, _, _ in parts.values())


async def _closed(listener: BrokerListener, connection: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
    reader, writer = connection
    assert listener.address is None
    await _sees_eof(reader)
    writer.close()
    assert listener.last_port is not None
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection(listener.host, listener.last_port)


async def _sees_eof(reader: asyncio.StreamReader) -> None:
    try:
        assert await asyncio.wait_for(reader.read(), 10) == b""
    except TimeoutError:
        raise AssertionError("a client's connection to the stopped broker stayed open") from None


def _socket_fds() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            continue
    return count


async def test_a_control_request_on_the_wire_is_logged_with_its_header_correlation_id(
    running: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    """Kafka's broker names the request header's correlation id in its state-change lines; the listener's
    broker entry point dropped it, so every line read "correlation id 0"."""
    from tests.wire.test_protocol_server import _control

    from zkcontroller.protocol.control_requests import Errors, UpdateMetadataRequest

    cluster, _ = running
    server = cluster.running_brokers()[0]
    plane = server.control_plane
    assert plane is not None
    await wait_until(lambda: plane.controller_epoch > 0, what="the broker to know the controller epoch")
    port = int((cluster.listeners[server.broker_id].address or "").rsplit(":", 1)[1])
    stale = UpdateMetadataRequest(99, plane.controller_epoch - 1, plane.broker_epoch)
    caplog.set_level("INFO", logger="state.change.logger")
    response = await asyncio.to_thread(_control, port, stale, 7, 4242)
    assert response.error is Errors.STALE_CONTROLLER_EPOCH
    assert any("update metadata request with correlation id 4242 from an old controller 99" in r.getMessage()
               for r in caplog.records), [r.getMessage() for r in caplog.records][-5:]
