"""The wire-protocol admin client (`admin.admin_client`) against in-process brokers: controller-bound calls
follow the controller after a NOT_CONTROLLER answer, and a broker that never answers ends a call at its deadline
with one error. Every wait is bounded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from tests.integration.listening import listening_cluster

from zkcontroller.admin.admin_client import (
    AdminClient,
    AdminTimeoutError,
    ClusterMetadata,
    KafkaApiError,
    parse_bootstrap,
)
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster


@pytest.fixture(name="brokers")
async def brokers_fixture() -> AsyncIterator[tuple[LocalCluster, str]]:
    async with listening_cluster([1, 2, 3], ListenerPorts(base=None, host="127.0.0.1"), 4000) as (cluster, _zk):
        yield cluster, ",".join(cluster.listeners[b].address or "" for b in (1, 2, 3))


async def test_a_stale_controller_answers_not_controller_and_the_call_follows(
        brokers: tuple[LocalCluster, str]) -> None:
    _cluster, bootstrap = brokers
    async with AdminClient(bootstrap, default_api_timeout_ms=20_000) as admin:
        md = await admin.metadata()
        wrong = next(b.id for b in md.brokers if b.id != md.controller_id)
        admin._metadata = ClusterMetadata(md.brokers, wrong)  # as if the controller had moved since
        await admin.create_topic("moved", 1, 1)
        assert admin._metadata is not None and admin._metadata.controller_id == md.controller_id
        assert "moved" in await admin.list_topics()
        with pytest.raises(KafkaApiError) as e:
            await admin.create_topic("moved", 1, 1)
        assert (e.value.code, str(e.value)) == (36, "Topic 'moved' already exists.")
    # a broker's own resource goes to that broker: one the cluster does not have is never assigned a node
    async with AdminClient(bootstrap, default_api_timeout_ms=500) as admin:
        with pytest.raises(AdminTimeoutError) as timeout:
            await admin.describe_configs([(4, "9")])
        assert str(timeout.value) == "Timed out waiting for a node assignment. Call: describeConfigs"
        assert (4, "2") in await admin.describe_configs([(4, "2")])


async def test_a_broker_that_never_answers_ends_the_call_at_its_deadline() -> None:
    accepted = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.set()
        await reader.read()  # until the client gives up and closes
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with AdminClient(f"127.0.0.1:{port}", default_api_timeout_ms=600, request_timeout_ms=200) as admin:
            with pytest.raises(AdminTimeoutError) as e:
                await asyncio.wait_for(admin.list_topics(), 30)
        assert accepted.is_set()
        assert str(e.value) == "Timed out waiting for a node assignment. Call: listTopics"  # no ApiVersions answer
    finally:
        server.close()
        await server.wait_closed()


def test_bootstrap_lists_are_read_as_kafka_reads_them() -> None:
    assert parse_bootstrap(" a:1, [::1]:9092,,b:2 ") == [("a", 1), ("::1", 9092), ("b", 2)]
    for bad, message in (("a", "Invalid url in bootstrap.servers: a"), ("a:x", "Invalid url in bootstrap.servers: a:x"),
                         (" , ", "No resolvable bootstrap urls given in bootstrap.servers")):
        with pytest.raises(ValueError) as e:
            parse_bootstrap(bad)
        assert str(e.value) == message
