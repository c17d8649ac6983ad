"""Produce throttled by ``producer_byte_rate`` as Kafka 2.8.2's ``handleProduceRequest`` does: the request's size
recorded against the client's quota once it is answered, ``throttle_time_ms`` in the answer (v1+), the answer sent
at once for every version and the connection then muted for the throttle time (KIP-219), acks=0 muted too; and
end to end, a quota set with AlterClientQuotas taken up by the brokers and applied to a Produce over a socket."""

from __future__ import annotations

import asyncio
import random
import struct

import pytest
from tests.helpers import ManualRuntime, assert_sleeps_exactly, wait_until
from tests.integration.listening import Cluster

from zkcontroller.admin.client_quotas import change_quota_config
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.broker.client_quota_manager import ANONYMOUS, ClientQuotaManager
from zkcontroller.broker.kafka_apis import KafkaApis
from zkcontroller.protocol.wire import client_quotas as cq
from zkcontroller.protocol.wire import codec
from zkcontroller.protocol.wire.client_apis import PRODUCE, PRODUCE_RESPONSE
from zkcontroller.protocol.wire.frames import decode_response_header
from zkcontroller.runtime.socket_server import SocketServer, ThrottledResponse

from .admin_fixture import address, admin_cluster_fixture, leader  # noqa: F401 (the fixture)
from .server_fixture import connect, read_frame, request_frame
from .test_produce_wire import Replicas, apis, batch, frame, legacy_frame  # noqa: F401

QUOTA = 10.0
"""Bytes per second: any Produce is far above it."""
DEFAULT_CLIENT = "<default>"


def throttle_of(payload: bytes, version: int) -> int:
    _, offset = decode_response_header(payload, PRODUCE, version)
    return int(codec.decode(PRODUCE_RESPONSE, version, payload, offset)["throttle_time_ms"])


def expected_throttle(size: int) -> int:
    """A first record: 10 windows counted (one sample, just begun), so the rate is size / 10 s."""
    return round((size / 10 - QUOTA) / QUOTA * 10_000)


@pytest.mark.parametrize("version", [1, 3, 7, 9])
async def test_an_answer_over_quota_carries_the_throttle_and_mutes_after_it(
        apis: tuple[KafkaApis, Replicas], version: int) -> None:  # noqa: F811
    api, replicas = apis
    quotas = ClientQuotaManager(replicas.runtime)  # type: ignore[arg-type]
    api.produce_quotas = lambda: quotas
    quotas.update_quota(None, "test", QUOTA)
    request = frame(version, 1, [("orders", [(0, batch(3))])]) if version >= 3 else \
        legacy_frame(version, 1, [("orders", [(0, batch(3, magic=1))])])
    response = await api.handle(request)
    assert isinstance(response, ThrottledResponse)
    assert throttle_of(response, version) == expected_throttle(len(request)) > 0
    await assert_sleeps_exactly(asyncio.ensure_future(response.throttle()), replicas.runtime,
                                expected_throttle(len(request)))

    other = await api.handle(frame(9, 1, [("orders", [(0, batch(1))])], client_id="unlimited"))
    assert not isinstance(other, ThrottledResponse) and throttle_of(other, 9) == 0  # type: ignore[arg-type]


async def test_v0_has_no_throttle_field_and_acks_0_is_muted_without_an_answer(
        apis: tuple[KafkaApis, Replicas]) -> None:  # noqa: F811
    api, replicas = apis
    quotas = ClientQuotaManager(replicas.runtime)  # type: ignore[arg-type]
    api.produce_quotas = lambda: quotas
    quotas.update_quota(None, DEFAULT_CLIENT, QUOTA)
    response = await api.handle(legacy_frame(0, 1, [("orders", [(0, batch(5, magic=0))])]))  # over 100 bytes
    assert isinstance(response, ThrottledResponse) and len(response) > 0
    silent = await api.handle(frame(7, 0, [("orders", [(0, batch(1))])]))
    assert isinstance(silent, ThrottledResponse) and silent == b""


async def test_the_socket_server_reads_nothing_more_until_the_throttle_ends() -> None:
    runtime = ManualRuntime()

    async def handle(payload: bytes) -> bytes:
        if server.requests == 1:
            async def muted() -> None:
                await runtime.sleep_ms(500)
            return ThrottledResponse(b"first", muted)
        return b"second"

    server = SocketServer("127.0.0.1", 0, handle)
    await server.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(struct.pack(">i", 1) + b"a" + struct.pack(">i", 1) + b"b")  # pipelined
        await writer.drain()
        assert await asyncio.wait_for(reader.readexactly(9), 5) == struct.pack(">i", 5) + b"first"
        assert server.requests == 1  # the second frame waits in the socket: the channel is muted
        runtime.advance(500)
        assert await asyncio.wait_for(reader.readexactly(10), 5) == struct.pack(">i", 6) + b"second"
        writer.close()
    finally:
        await server.stop()


def _exchange(at: str, frame_bytes: bytes) -> bytes:
    with connect(int(at.rsplit(":", 1)[1]), timeout_s=60) as sock:
        sock.sendall(frame_bytes)
        payload = read_frame(sock)
    assert payload is not None, "connection closed"
    return payload


async def test_a_quota_set_through_the_api_throttles_produce(admin_cluster: Cluster) -> None:
    cluster, _ = admin_cluster
    brokers = cluster.running_brokers()
    at = address(cluster, brokers[0])
    body = cq.encode_alter_request(1, cq.AlterQuotasQuery((cq.QuotaAlteration(
        (("client-id", "slow"),), (cq.QuotaOp("producer_byte_rate", QUOTA),)),), False))
    payload = await asyncio.to_thread(_exchange, at, request_frame(cq.ALTER_CLIENT_QUOTAS, 1, 7, body))
    _, offset = decode_response_header(payload, cq.ALTER_CLIENT_QUOTAS, 1)
    assert cq.decode_alter_response(1, payload, offset) == [cq.AlteredQuota((("client-id", "slow"),))]

    def quota_everywhere() -> bool:
        return all(s.replica_manager is not None
                   and s.replica_manager.topic_configs.produce_quotas.quota(ANONYMOUS, "slow") == QUOTA
                   for s in brokers)
    await wait_until(quota_everywhere, timeout_s=10, what="every broker took the quota up")

    request = frame(7, 1, [("nowhere", [(0, batch(2))])], client_id="slow")  # any answer is throttled
    answer = await asyncio.to_thread(_exchange, address(cluster, brokers[1]), struct.pack(">i", len(request)) + request)
    assert throttle_of(answer, 7) == expected_throttle(len(request))


def _produce_with_kafka_python(at: str, topic: str) -> float:
    """kafka-python 3.0.12's producer, client id "slow": one record; the producer's largest throttle time seen."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=at, client_id="slow", max_block_ms=30000, request_timeout_ms=10000)
    try:
        producer.send(topic, b"x" * 200).get(timeout=30)
        return float(producer.metrics()["producer-metrics"]["throttle-time-max"])
    finally:
        producer.close(timeout=5)


async def test_kafka_python_reads_the_throttle(admin_cluster: Cluster) -> None:
    """A real client: its producer records the ``throttle_time_ms`` of the answer (and backs off by it)."""
    cluster, zk = admin_cluster
    await change_quota_config(zk, "clients", "slow", {"producer_byte_rate": "10"})
    await TopicAdmin(zk, random.Random(1)).create_topic("q", 1, 3, {})
    brokers = cluster.running_brokers()
    await wait_until(lambda: all(leader(s, "q", 0) not in (None, -1) for s in brokers)
                     and all(s.replica_manager is not None
                             and s.replica_manager.topic_configs.produce_quotas.quota(ANONYMOUS, "slow") == 10.0
                             for s in brokers), timeout_s=10, what="the topic and the quota on every broker")
    assert await asyncio.to_thread(_produce_with_kafka_python, address(cluster, brokers[0]), "q") > 0


async def test_stopping_the_server_ends_a_throttle() -> None:
    """A muted connection does not hold the listener's stop: its throttle is cancelled and the connection closed."""
    runtime = ManualRuntime()

    async def handle(payload: bytes) -> bytes:
        async def muted() -> None:
            await runtime.sleep_ms(3_600_000)
        return ThrottledResponse(b"r", muted)

    server = SocketServer("127.0.0.1", 0, handle)
    await server.start()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(struct.pack(">i", 1) + b"a")
    await writer.drain()
    assert await asyncio.wait_for(reader.readexactly(5), 5) == struct.pack(">i", 1) + b"r"
    await wait_until(lambda: server._mutes != set(), timeout_s=5, what="the connection muted")
    await server.stop()
    assert await asyncio.wait_for(reader.read(), 5) == b""  # closed
    await wait_until(lambda: server.connection_count == 0, timeout_s=5, what="the connection gone")
    writer.close()
