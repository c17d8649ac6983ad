"""DeleteTopics (API 20) as Kafka 2.8.2 answers it in ZooKeeper mode (``handleDeleteTopicsRequest``,
``ZkAdminManager.deleteTopics``, ``DelayedDeleteTopics``), on in-process brokers that listen on the wire over the
embedded store; and the wait itself (`wait_until_deleted`) on a runtime whose time the test drives.

Every wait is on a condition with a bound."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import io
import logging
import random
import uuid
from collections.abc import AsyncIterator
from dataclasses import fields
from datetime import timedelta
from typing import Any

import pytest
from kio.serial import entity_reader, entity_writer
from tests.helpers import until_idle, wait_until
from tests.integration.listening import Cluster, listening_cluster

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.broker.delayed_delete_topics import wait_until_deleted
from zkcontroller.broker.metadata_cache import MetadataCache
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.model import Broker, EndPoint
from zkcontroller.protocol.control_requests import UpdateMetadataPartitionState, UpdateMetadataRequest
from zkcontroller.protocol.wire.client_apis import DELETE_TOPICS, schema_module
from zkcontroller.protocol.wire.frames import decode_response_header
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

from .server_fixture import connect, read_frame, request_frame

pytestmark = pytest.mark.timeout(120)

NONE, UNKNOWN_TOPIC_OR_PARTITION, REQUEST_TIMED_OUT, INVALID_TOPIC = 0, 3, 7, 17
NOT_CONTROLLER, INVALID_REQUEST, TOPIC_DELETION_DISABLED, UNKNOWN_TOPIC_ID = 41, 42, 73, 100


@pytest.fixture
async def running() -> AsyncIterator[Cluster]:
    """Three in-process brokers on free loopback ports."""
    async with listening_cluster([1, 2, 3], ListenerPorts(base=None), 4000) as running:
        yield running


def controller(cluster: LocalCluster) -> KafkaServer:
    return next(s for s in cluster.running_brokers() if s.controller is not None and s.controller.is_active)


def other(cluster: LocalCluster) -> KafkaServer:
    return next(s for s in cluster.running_brokers() if s.controller is None or not s.controller.is_active)


def address(cluster: LocalCluster, server: KafkaServer) -> str:
    return cluster.listeners[server.broker_id].address or ""


async def create(cluster: LocalCluster, zk: KafkaZkClient, *topics: str) -> None:
    """Create ``topics`` and wait until every running broker's cache has them."""
    admin = TopicAdmin(zk, random.Random(1))
    for topic in topics:
        await admin.create_topic(topic, 2, 2)

    def cached() -> bool:
        return all(s.control_plane is not None and s.control_plane.metadata_cache.contains_topic(t)
                   for s in cluster.running_brokers() for t in topics)
    await wait_until(cached, timeout_s=30, what=f"{topics} in every broker's cache")


def _build(cls: type, **values: Any) -> Any:
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in values.items() if k in names})


def delete_frame(version: int, topics: list[str | tuple[str | None, uuid.UUID]], timeout_ms: int) -> bytes:
    """A DeleteTopics request payload: names, or (v6) (name or None, topic id) pairs."""
    m = schema_module(DELETE_TOPICS, version, "request")
    if version >= 6:
        states = tuple(_build(m.DeleteTopicState, name=t, topic_id=uuid.UUID(int=0)) if isinstance(t, str)
                       else _build(m.DeleteTopicState, name=t[0], topic_id=t[1]) for t in topics)
        request = m.DeleteTopicsRequest(topics=states, timeout=timedelta(milliseconds=timeout_ms))
    else:
        request = m.DeleteTopicsRequest(topic_names=tuple(t for t in topics if isinstance(t, str)),
                                        timeout=timedelta(milliseconds=timeout_ms))
    buf = io.BytesIO()
    entity_writer(type(request))(buf, request)
    return request_frame(DELETE_TOPICS, version, 5, buf.getvalue())


def delete_on_the_wire(at: str, version: int, topics: list[Any], timeout_ms: int = 30_000
                       ) -> list[tuple[str | None, int]]:
    """(name, error code) per entry of the answer, from a real socket."""
    with connect(int(at.rsplit(":", 1)[1]), timeout_s=60) as sock:
        sock.sendall(delete_frame(version, topics, timeout_ms))
        payload = read_frame(sock)
    assert payload is not None, "connection closed"
    correlation_id, offset = decode_response_header(payload, DELETE_TOPICS, version)
    assert correlation_id == 5
    m = schema_module(DELETE_TOPICS, version, "response")
    response, _ = entity_reader(m.DeleteTopicsResponse)(memoryview(payload)[offset:], 0)
    return [(r.name, int(r.error_code)) for r in response.responses]


async def delete(at: str, version: int, topics: list[Any], timeout_ms: int = 30_000) -> list[tuple[str | None, int]]:
    return await asyncio.to_thread(delete_on_the_wire, at, version, topics, timeout_ms)


async def test_the_controller_deletes_and_answers_once_the_topic_left_its_cache(running: Cluster) -> None:
    cluster, zk = running
    await create(cluster, zk, "doomed", "kept")
    active = controller(cluster)
    assert await delete(address(cluster, active), 5, ["doomed"]) == [("doomed", NONE)]
    assert active.control_plane is not None and not active.control_plane.metadata_cache.contains_topic("doomed")
    assert active.control_plane.metadata_cache.contains_topic("kept")
    await wait_until(lambda: _gone(zk, "doomed"), timeout_s=30, what="doomed gone from ZooKeeper")


async def _gone(zk: KafkaZkClient, topic: str) -> bool:
    return topic not in await zk.get_all_topics_in_cluster()


async def test_only_the_controller_deletes(running: Cluster) -> None:
    cluster, zk = running
    await create(cluster, zk, "stays")
    assert await delete(address(cluster, other(cluster)), 5, ["stays", "nope"]) == [
        ("stays", NOT_CONTROLLER), ("nope", NOT_CONTROLLER)]
    assert "stays" in await zk.get_all_topics_in_cluster()
    assert not await zk.is_topic_marked_for_deletion("stays")


async def test_unknown_topics_are_answered_each_and_the_others_deleted(running: Cluster) -> None:
    cluster, zk = running
    await create(cluster, zk, "real")
    assert await delete(address(cluster, controller(cluster)), 4, ["nope", "real"]) == [
        ("nope", UNKNOWN_TOPIC_OR_PARTITION), ("real", NONE)]


async def test_deletion_disabled(running: Cluster) -> None:
    """``delete.topic.enable=false``: TOPIC_DELETION_DISABLED from v3, INVALID_REQUEST below; nothing is marked."""
    cluster, zk = running
    await create(cluster, zk, "protected")
    active = controller(cluster)
    active.config = dataclasses.replace(active.config, controller=dataclasses.replace(
        active.config.controller_config, delete_topic_enable=False))
    at = address(cluster, active)
    assert await delete(at, 3, ["protected"]) == [("protected", TOPIC_DELETION_DISABLED)]
    assert await delete(at, 2, ["protected"]) == [("protected", INVALID_REQUEST)]
    assert await delete(at, 6, [(None, uuid.uuid4())]) == [(None, TOPIC_DELETION_DISABLED)]
    assert "protected" in await zk.get_all_topics_in_cluster()
    assert await zk.get_topic_deletions() == set()


async def test_a_timeout_of_zero_marks_the_topic_and_answers_request_timed_out_at_once(running: Cluster) -> None:
    """``ZkAdminManager.deleteTopics`` with timeout <= 0: REQUEST_TIMED_OUT at once, the deletion goes on. A name
    given twice (ZooKeeper mode: no duplicate check) is deleted once; the outcome goes to its first entry only."""
    cluster, zk = running
    await create(cluster, zk, "quick")
    assert await delete(address(cluster, controller(cluster)), 5, ["quick", "quick"], timeout_ms=0) == [
        ("quick", REQUEST_TIMED_OUT), ("quick", NONE)]
    await wait_until(lambda: _gone(zk, "quick"), timeout_s=30, what="quick deleted from ZooKeeper")
    # deleted by now: asked again, it is unknown
    await wait_until(lambda: not controller(cluster).control_plane.metadata_cache.contains_topic("quick"),  # type: ignore[union-attr]
                     timeout_s=30, what="quick gone from the controller's cache")
    assert await delete(address(cluster, controller(cluster)), 5, ["quick"]) == [("quick", UNKNOWN_TOPIC_OR_PARTITION)]


async def test_v6_topic_ids(running: Cluster, caplog: pytest.LogCaptureFixture) -> None:
    """A known id is resolved to its name and deleted; an unknown id is UNKNOWN_TOPIC_ID with a null name; an
    entry with a name and an id makes the whole request INVALID_REQUEST (``getErrorResponse``), logged as Kafka's
    ``RequestHandlerHelper.handleError`` logs it (KafkaApis' ``[KafkaApi-<id>] `` prefix)."""
    cluster, zk = running
    await create(cluster, zk, "by-id", "by-name")
    active = controller(cluster)
    cache = active.control_plane.metadata_cache  # type: ignore[union-attr]
    topic_id = cache.topic_id("by-id")
    assert topic_id is not None
    at = address(cluster, active)
    with caplog.at_level(logging.ERROR, "kafka.server.RequestHandlerHelper"):
        both = await delete(at, 6, [("by-id", uuid.UUID(bytes=topic_id.raw)), "by-name"])
    assert both == [("by-id", INVALID_REQUEST), ("by-name", INVALID_REQUEST)]
    [line] = [r.getMessage() for r in caplog.records if r.name == "kafka.server.RequestHandlerHelper"]
    by_id = base64.urlsafe_b64encode(topic_id.raw).rstrip(b"=").decode()  # Kafka's Uuid.toString
    assert line.startswith(f"[KafkaApi-{active.broker_id}] Error when handling request: clientId=test, "
                           "correlationId=5, api=DELETE_TOPICS, version=6, body=DeleteTopicsRequestData(topics=["
                           f"DeleteTopicState(name='by-id', topicId={by_id}), DeleteTopicState(name='by-name', "
                           "topicId=AAAAAAAAAAAAAAAAAAAAAA)], topicNames=[], timeoutMs=30000)\n")
    assert line.endswith("\norg.apache.kafka.common.errors.InvalidRequestException: "
                         "Topic name and topic ID can not both be specified.")
    assert cache.contains_topic("by-id") and cache.contains_topic("by-name")
    stranger = uuid.uuid4()
    assert await delete(at, 6, [(None, uuid.UUID(bytes=topic_id.raw)), (None, stranger), "by-name"]) == [
        ("by-id", NONE), (None, UNKNOWN_TOPIC_ID), ("by-name", NONE)]


async def test_an_internal_topic_is_refused_as_the_admin_layer_refuses_it(
        running: Cluster, caplog: pytest.LogCaptureFixture) -> None:
    """Logged as ``ZkAdminManager.deleteTopics`` logs a topic's failure, with its ``[Admin Manager on Broker <id>]: ``
    prefix."""
    cluster, zk = running
    await create(cluster, zk, "__consumer_offsets")
    active = controller(cluster)
    with caplog.at_level(logging.ERROR, "kafka.server.ZkAdminManager"):
        assert await delete(address(cluster, active), 5, ["__consumer_offsets"]) == [
            ("__consumer_offsets", INVALID_TOPIC)]
    assert any(r.getMessage().startswith(f"[Admin Manager on Broker {active.broker_id}]: Error processing delete "
                                         "topic request for topic __consumer_offsets")
               for r in caplog.records if r.name == "kafka.server.ZkAdminManager")


def admin_delete(at: str, topic: str) -> None:
    from kafka.admin import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=at, request_timeout_ms=20000)
    try:
        client.delete_topics([topic], timeout_ms=20000)
    finally:
        client.close()


async def test_kafka_pythons_admin_client_deletes_a_topic(running: Cluster) -> None:
    """It finds the controller through Metadata and sends DeleteTopics there, whichever broker it boots from."""
    cluster, zk = running
    await create(cluster, zk, "via-kafka-python")
    await asyncio.to_thread(admin_delete, address(cluster, other(cluster)), "via-kafka-python")
    assert not controller(cluster).control_plane.metadata_cache.contains_topic("via-kafka-python")  # type: ignore[union-attr]


# ------------------------------------------------------------------------------------ the wait, on driven time

class DrivenRuntime:
    """A runtime whose ``sleep_ms`` returns only when the test says the time has come."""

    rng = random.Random(0)

    def __init__(self) -> None:
        self.sleeps: list[int] = []
        self.elapsed = asyncio.Event()

    def now_ms(self) -> int:
        return 0

    async def sleep_ms(self, ms: int) -> None:
        self.sleeps.append(ms)
        await self.elapsed.wait()

    def spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        return asyncio.get_running_loop().create_task(coro, name=name)


def cache_with(*topics: str) -> MetadataCache:
    cache = MetadataCache(1)
    cache.update_metadata(1, _update(*[(t, 0) for t in topics]))
    return cache


def _update(*partitions: tuple[str, int], leader: int = 1) -> UpdateMetadataRequest:
    brokers = (Broker(1, (EndPoint("127.0.0.1", 9092, "PLAINTEXT", "PLAINTEXT"),)),)
    return UpdateMetadataRequest(1, 1, 10, live_brokers=brokers, partition_states=tuple(
        UpdateMetadataPartitionState(t, p, 1, leader, 1, (1,), 0, (1,)) for t, p in partitions))


async def test_the_wait_ends_on_the_cache_update_that_removes_the_last_topic() -> None:
    runtime = DrivenRuntime()
    cache = cache_with("a", "b")
    waiting = asyncio.ensure_future(wait_until_deleted(cache, ["a", "b"], 30_000, runtime))  # type: ignore[arg-type]
    await wait_until(lambda: runtime.sleeps == [30_000], timeout_s=5, what="the timer armed")
    cache.update_metadata(2, _update(("a", 0), leader=-2))  # LEADER_DURING_DELETE: a goes
    await until_idle()  # the update checked: b is still there
    assert not waiting.done() and len(cache._listeners) == 1
    cache.update_metadata(3, _update(("b", 0), leader=-2))
    assert await asyncio.wait_for(waiting, 5) == set()
    assert cache._listeners == []  # unregistered


async def test_at_the_timeout_the_topics_still_there_are_returned() -> None:
    runtime = DrivenRuntime()
    cache = cache_with("a", "b")
    waiting = asyncio.ensure_future(wait_until_deleted(cache, ["a", "b"], 500, runtime))  # type: ignore[arg-type]
    await wait_until(lambda: runtime.sleeps == [500], timeout_s=5, what="the timer armed")
    cache.update_metadata(2, _update(("a", 0), leader=-2))
    runtime.elapsed.set()
    assert await asyncio.wait_for(waiting, 5) == {"b"}
    assert cache._listeners == []


async def test_no_wait_for_a_timeout_of_zero_or_topics_already_gone() -> None:
    runtime = DrivenRuntime()
    cache = cache_with("a")
    assert await asyncio.wait_for(wait_until_deleted(cache, ["a"], 0, runtime), 5) == {"a"}  # type: ignore[arg-type]
    assert await asyncio.wait_for(wait_until_deleted(cache, ["gone"], 1000, runtime), 5) == set()  # type: ignore[arg-type]
    assert runtime.sleeps == []
