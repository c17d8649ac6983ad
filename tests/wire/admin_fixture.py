"""Shared by the admin-API wire tests (ElectLeaders, reassignments, CreatePartitions): three in-process brokers on
free loopback ports over the embedded store, and one request/response round trip over a real socket with kio's
types. Every wait is on a condition with a bound."""

from __future__ import annotations

import asyncio
import io
import random
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import fields
from typing import Any

import pytest
from kio.serial import entity_reader, entity_writer
from tests.helpers import wait_until
from tests.integration.listening import Cluster, listening_cluster

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire.client_apis import schema_module
from zkcontroller.protocol.wire.frames import decode_response_header
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

from .server_fixture import connect, read_frame, request_frame


@pytest.fixture(name="admin_cluster")
async def admin_cluster_fixture() -> AsyncIterator[Cluster]:
    """Three in-process brokers on free loopback ports, no automatic leader rebalance."""
    async with listening_cluster([1, 2, 3], ListenerPorts(base=None), 4000) as running:
        yield running


def controller(cluster: LocalCluster) -> KafkaServer:
    return next(s for s in cluster.running_brokers() if s.controller is not None and s.controller.is_active)


def others(cluster: LocalCluster) -> list[KafkaServer]:
    return [s for s in cluster.running_brokers() if s.controller is None or not s.controller.is_active]


def address(cluster: LocalCluster, server: KafkaServer) -> str:
    return cluster.listeners[server.broker_id].address or ""


def leader(server: KafkaServer, topic: str, partition: int) -> int | None:
    """The leader ``server``'s metadata cache shows, None if it does not know the partition."""
    assert server.control_plane is not None
    state = server.control_plane.metadata_cache.partition_info(TopicPartition(topic, partition))
    return None if state is None else state.leader


def isr(server: KafkaServer, topic: str, partition: int) -> tuple[int, ...]:
    assert server.control_plane is not None
    state = server.control_plane.metadata_cache.partition_info(TopicPartition(topic, partition))
    return () if state is None else tuple(state.isr)


async def create(cluster: LocalCluster, zk: KafkaZkClient, topic: str,
                 assignment: Mapping[int, Sequence[int]] | None = None, partitions: int = 2) -> None:
    """Create ``topic`` (``assignment``, or ``partitions`` with replication factor 2) and wait until every running
    broker's cache has a leader for each of its partitions."""
    admin = TopicAdmin(zk, random.Random(1))
    if assignment is None:
        await admin.create_topic(topic, partitions, 2)
        count = partitions
    else:
        await admin.create_topic_with_assignment(topic, {p: list(r) for p, r in assignment.items()})
        count = len(assignment)

    def led() -> bool:
        return all(leader(s, topic, p) not in (None, -1) for s in cluster.running_brokers() for p in range(count))
    await wait_until(led, timeout_s=30, what=f"{topic} led in every broker's cache")


def build(cls: type, **values: Any) -> Any:
    """A kio value with the fields its version has."""
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in values.items() if k in names})


def encode(value: Any) -> bytes:
    buf = io.BytesIO()
    entity_writer(type(value))(buf, value)
    return buf.getvalue()


def raw_round_trip(at: str, api_key: int, version: int, body: bytes) -> tuple[bytes, int]:
    """Send one request body to ``at`` on a real socket: the response payload and where its body starts (fails if
    the broker closed, or answered another correlation id)."""
    with connect(int(at.rsplit(":", 1)[1]), timeout_s=60) as sock:
        sock.sendall(request_frame(api_key, version, 9, body))
        payload = read_frame(sock)
    assert payload is not None, "connection closed"
    correlation_id, offset = decode_response_header(payload, api_key, version)
    assert correlation_id == 9
    return payload, offset


def round_trip(at: str, api_key: int, version: int, body: bytes, response_name: str) -> Any:
    """`raw_round_trip`, decoded by kio."""
    payload, offset = raw_round_trip(at, api_key, version, body)
    cls = getattr(schema_module(api_key, version, "response"), response_name)
    response, _ = entity_reader(cls)(memoryview(payload)[offset:], 0)
    return response


async def send(at: str, api_key: int, version: int, request: Any, response_name: str) -> Any:
    return await asyncio.to_thread(round_trip, at, api_key, version, encode(request), response_name)
