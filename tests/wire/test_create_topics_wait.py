"""CreateTopics answers as Kafka 2.8.2's ``ZkAdminManager.createTopics`` does after the znodes are written: with a
timeout, once every partition of each created topic has a leader in the answering broker's metadata cache
(``DelayedCreatePartitions``); with none (<= 0), REQUEST_TIMED_OUT at once for the created topics, which go on
being created; a name given twice, INVALID_REQUEST for each entry and nothing created. Ours answered NONE as soon
as the znodes were written, and created the first of two entries with one name."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

import pytest
from tests.helpers import wait_until

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire.client_apis import CREATE_TOPICS, schema_module

from .admin_fixture import Cluster, address, admin_cluster_fixture, controller, leader, send  # noqa: F401
from .test_create_partitions_wire import partitions_in_zk

pytestmark = pytest.mark.timeout(120)

NONE, REQUEST_TIMED_OUT, INVALID_REQUEST = 0, 7, 42


async def create_on_wire(at: str, names: list[str], *, partitions: int = 3, timeout_ms: int = 30_000,
                         validate_only: bool = False, version: int = 5) -> list[tuple[str, int, int]]:
    """(name, error code, partitions) per entry of the answer, in order."""
    m = schema_module(CREATE_TOPICS, version, "request")
    request = m.CreateTopicsRequest(
        topics=tuple(m.CreatableTopic(name=n, num_partitions=partitions, replication_factor=2, assignments=(),
                                      configs=()) for n in names),
        timeout=timedelta(milliseconds=timeout_ms), validate_only=validate_only)
    response = await send(at, CREATE_TOPICS, version, request, "CreateTopicsResponse")
    return [(t.name, int(t.error_code), t.num_partitions) for t in response.topics]


async def test_the_answer_waits_for_a_leader_of_every_partition(admin_cluster: Cluster,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The controller is held before it elects the new topic's leaders: the znodes are written, and the answer
    must not come until the controller is let go and the leaders reach the cache."""
    cluster, zk = admin_cluster
    active = controller(cluster)
    assert active.controller is not None
    topics = active.controller.topics
    gate, at_gate = asyncio.Event(), asyncio.Event()
    elect = topics.on_new_partition_creation

    async def held(partitions: list[TopicPartition]) -> None:
        at_gate.set()
        await gate.wait()
        await elect(partitions)

    monkeypatch.setattr(topics, "on_new_partition_creation", held)
    answer = asyncio.ensure_future(create_on_wire(address(cluster, active), ["waited"], partitions=4))
    await asyncio.wait_for(at_gate.wait(), 30)  # the controller read the new topic and is held before electing
    assert await partitions_in_zk(zk, "waited") == 4
    assert active.control_plane is not None
    cache = active.control_plane.metadata_cache
    try:
        await wait_until(lambda: len(cache._listeners) == 1 or answer.done(),
                         what="the answer waiting on the cache for leaders")
        assert not answer.done()  # znodes written, no leader yet: still waiting
        assert all(leader(active, "waited", p) in (None, -1) for p in range(4))
    finally:
        gate.set()  # a failure above must not leave the controller held for the cluster's shutdown
    assert await asyncio.wait_for(answer, 30) == [("waited", NONE, 4)]
    assert all(leader(active, "waited", p) not in (None, -1) for p in range(4))  # in the cache when answered


async def test_no_timeout_answers_request_timed_out_and_creates_the_topic(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    assert await create_on_wire(address(cluster, controller(cluster)), ["hasty"], timeout_ms=0) == [
        ("hasty", REQUEST_TIMED_OUT, -1)]
    assert await partitions_in_zk(zk, "hasty") == 3


async def test_validate_only_does_not_wait_or_create(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    assert await create_on_wire(address(cluster, controller(cluster)), ["checked"], timeout_ms=0,
                                validate_only=True) == [("checked", NONE, 3)]
    assert await partitions_in_zk(zk, "checked") == 0


async def test_a_name_given_twice_is_invalid_for_both_entries(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    answer = await create_on_wire(address(cluster, controller(cluster)), ["twice", "once", "twice"])
    assert answer == [("twice", INVALID_REQUEST, -1), ("once", NONE, 3), ("twice", INVALID_REQUEST, -1)]
    assert await partitions_in_zk(zk, "twice") == 0


async def test_a_refused_topic_is_logged_as_zk_admin_manager_logs_it(admin_cluster: Cluster,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """INFO for a client's error, with the request entry as Kafka's ``CreatableTopic.toString`` prints it and the
    exception on the next line; DEBUG for a topic that exists; both with ZkAdminManager's ``logIdent``."""
    cluster, _ = admin_cluster
    active = controller(cluster)
    at = address(cluster, active)
    assert await create_on_wire(at, ["made"]) == [("made", NONE, 3)]
    with caplog.at_level(logging.DEBUG, "kafka.server.ZkAdminManager"):
        assert await create_on_wire(at, ["bad/name", "made"]) == [("bad/name", 17, -1), ("made", 36, -1)]
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "kafka.server.ZkAdminManager"]
    prefix = f"[Admin Manager on Broker {active.broker_id}]: "
    # in the order of Kafka's toCreate, a Scala 2.13 HashMap: "made" hashes to bucket 6, "bad/name" to 11
    assert lines[1][0] == "INFO" and lines[1][1].startswith(
        f"{prefix}Error processing create topic request CreatableTopic(name='bad/name', numPartitions=3, "
        "replicationFactor=2, assignments=[], configs=[])\norg.apache.kafka.common.errors.InvalidTopicException: ")
    assert lines[0] == ("DEBUG", f"{prefix}Topic creation failed since topic 'made' already exists.\n"
                                 "org.apache.kafka.common.errors.TopicExistsException: Topic 'made' already exists.")
