"""CreateTopics when a topic fails for a reason that is not one of Kafka's API errors: ``ZkAdminManager.createTopics``
catches every Throwable per topic, logs it at ERROR and answers that topic UNKNOWN_SERVER_ERROR without a message
(``ApiError.fromThrowable`` keeps no message for it); the other topics of the request are created. Ours put the
exception's text in the answer (racks on some brokers only: Kafka's ``AdminOperationException``), or let any other
exception end the request and close the connection."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from tests.helpers import OffsetClock

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.coordination.errors import ConnectionLossError
from zkcontroller.protocol.wire.client_apis import CREATE_TOPICS, schema_module
from zkcontroller.runtime.clock import wall_clock_ms

from .admin_fixture import address, controller, send

pytestmark = pytest.mark.timeout(120)

UNKNOWN_SERVER_ERROR, NONE = -1, 0


@pytest.fixture
async def racked() -> AsyncIterator[LocalCluster]:
    """Three in-process brokers on free ports; brokers 1 and 2 have a rack, broker 3 none."""
    backend = EmbeddedBackend(OffsetClock(wall_clock_ms))
    cluster = LocalCluster(backend, [1, 2, 3], wall_clock_ms, session_timeout_ms=4000, racks={1: "a", 2: "b"},
                           controller_config=ControllerConfig(broker_id=-1, auto_leader_rebalance_enable=False),
                           listeners=ListenerPorts(base=None))
    try:
        await cluster.start()
        await cluster.wait_for_controller()
        yield cluster
    finally:
        await cluster.shutdown()
        await backend.close()


async def create(at: str, topics: dict[str, dict[int, list[int]] | None]) -> list[tuple[str, int, str | None]]:
    """Each topic with 2 partitions and replication factor 2, or its explicit assignment."""
    m = schema_module(CREATE_TOPICS, 7, "request")
    request = m.CreateTopicsRequest(topics=tuple(
        m.CreatableTopic(name=name, num_partitions=-1 if a else 2, replication_factor=-1 if a else 2,
                         assignments=tuple(m.CreatableReplicaAssignment(partition_index=p, broker_ids=tuple(r))
                                           for p, r in (a or {}).items()), configs=())
        for name, a in topics.items()), timeout=timedelta(seconds=30), validate_only=False)
    response: Any = await send(at, CREATE_TOPICS, 7, request, "CreateTopicsResponse")
    return [(t.name, int(t.error_code), t.error_message) for t in response.topics]


async def test_racks_on_some_brokers_only_fail_the_placed_topic_without_a_message(
        racked: LocalCluster, caplog: pytest.LogCaptureFixture) -> None:
    at = address(racked, controller(racked))
    assert await create(at, {"placed": None, "assigned": {0: [1, 3], 1: [3, 2]}}) == [
        ("placed", UNKNOWN_SERVER_ERROR, None), ("assigned", NONE, None)]
    [line] = [r for r in caplog.records if r.name == "kafka.server.ZkAdminManager" and r.levelname == "ERROR"]
    assert line.getMessage() == (
        f"[Admin Manager on Broker {controller(racked).broker_id}]: Error processing create topic request "
        "CreatableTopic(name='placed', numPartitions=2, replicationFactor=2, assignments=[], configs=[])")
    assert line.exc_info is not None and str(line.exc_info[1]) == (
        "Not all brokers have rack information for replica rack aware assignment.")  # Kafka's stack trace


async def test_an_unexpected_failure_answers_that_topic_and_creates_the_others(
        racked: LocalCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    validate = TopicAdmin.validate_topic_create

    async def failing(self: TopicAdmin, topic: str, *args: Any) -> None:
        if topic == "broken":
            raise RuntimeError("the store went away")
        await validate(self, topic, *args)

    monkeypatch.setattr(TopicAdmin, "validate_topic_create", failing)
    at = address(racked, controller(racked))
    assert await create(at, {"broken": {0: [1, 2]}, "fine": {0: [2, 3]}}) == [
        ("broken", UNKNOWN_SERVER_ERROR, None), ("fine", NONE, None)]


async def test_create_partitions_with_racks_on_some_brokers_only_fails_the_whole_request(
        racked: LocalCluster, caplog: pytest.LogCaptureFixture) -> None:
    """``ZkAdminManager.createPartitions`` starts with ``adminZkClient.getBrokerMetadatas()`` (rack-aware Enforced),
    outside its per-topic catch: its ``AdminOperationException`` fails the request (``handleError``), every topic
    UNKNOWN_SERVER_ERROR without a message, an explicit assignment's and an unknown topic's too. Ours answered the
    admin tool's ``--disable-rack-aware`` advice per topic, and the unknown topic UNKNOWN_TOPIC_OR_PARTITION."""
    from zkcontroller.protocol.wire.client_apis import CREATE_PARTITIONS

    at = address(racked, controller(racked))
    assert await create(at, {"assigned": {0: [1, 3], 1: [3, 2]}}) == [("assigned", NONE, None)]
    m = schema_module(CREATE_PARTITIONS, 3, "request")
    for assignments in (None, (m.CreatePartitionsAssignment(broker_ids=(1, 2)),)):
        request = m.CreatePartitionsRequest(
            topics=(m.CreatePartitionsTopic(name="assigned", count=3, assignments=assignments),
                    m.CreatePartitionsTopic(name="nope", count=3, assignments=None)),
            timeout=timedelta(seconds=5), validate_only=False)
        response: Any = await send(at, CREATE_PARTITIONS, 3, request, "CreatePartitionsResponse")
        assert [(r.name, int(r.error_code), r.error_message) for r in response.results] == [
            ("assigned", UNKNOWN_SERVER_ERROR, None), ("nope", UNKNOWN_SERVER_ERROR, None)]
    failed = [r.getMessage() for r in caplog.records if r.name == "kafka.server.RequestHandlerHelper"]
    assert len(failed) == 2 and all(
        line.startswith(f"[KafkaApi-{controller(racked).broker_id}] Error when handling request: ")
        and "api=CREATE_PARTITIONS, version=3, " in line
        and line.endswith("\nkafka.admin.AdminOperationException: Not all brokers have rack information. Add "
                          "--disable-rack-aware in command line to make replica assignment without rack "
                          "information.") for line in failed)  # getBrokerMetadatas' own message


async def test_create_partitions_answers_every_topic_when_zookeeper_fails_the_broker_read(
        racked: LocalCluster, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The brokers are read before the per-topic loop: a ZooKeeper failure there fails the request as a whole,
    answered and logged (``handleError``), rather than closing the client's connection unanswered."""
    from zkcontroller.protocol.wire.client_apis import CREATE_PARTITIONS

    async def lost(self: TopicAdmin) -> None:
        raise ConnectionLossError("/brokers/ids")

    monkeypatch.setattr(TopicAdmin, "broker_metadatas", lost)
    at = address(racked, controller(racked))
    m = schema_module(CREATE_PARTITIONS, 3, "request")
    request = m.CreatePartitionsRequest(topics=(m.CreatePartitionsTopic(name="any", count=3, assignments=None),),
                                        timeout=timedelta(seconds=5), validate_only=False)
    response: Any = await send(at, CREATE_PARTITIONS, 3, request, "CreatePartitionsResponse")
    assert [(r.name, int(r.error_code), r.error_message) for r in response.results] == [
        ("any", UNKNOWN_SERVER_ERROR, None)]
    [line] = [r.getMessage() for r in caplog.records if r.name == "kafka.server.RequestHandlerHelper"]
    # KafkaZkClient throws ZooKeeper's KeeperException.create(code, path): its class, as handleError's line names it
    assert line.endswith("\norg.apache.zookeeper.KeeperException$ConnectionLossException: CONNECTION_LOSS for "
                         "/brokers/ids")
