"""``controller_mutation_rate`` on the wire (KIP-599, Kafka 2.8.2's ``handleCreateTopicsRequest``,
``handleCreatePartitionsRequest``, ``handleDeleteTopicsRequest`` with ``ZkAdminManager`` and
``sendResponseMaybeThrottleWithControllerQuota``): the quota strict from CreateTopics v6, DeleteTopics v5 and
CreatePartitions v3, permissive before; THROTTLING_QUOTA_EXCEEDED per topic; the throttle in the answer and the
connection muted after it; and a real client (kafka-python) refused past its quota.

Burst ``B = 11 x 1 s x Q``; a refused or permissive mutation's throttle is ``round(-tokens / Q * 1000)`` ms."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from kio.serial import entity_reader
from tests.helpers import ManualRuntime, assert_sleeps_exactly, wait_until
from tests.integration.listening import Cluster

from zkcontroller.admin.client_quotas import change_quota_config
from zkcontroller.broker.client_quota_manager import ANONYMOUS
from zkcontroller.broker.controller_mutation_quota import (
    UNBOUNDED,
    ControllerMutationQuota,
    ControllerMutationQuotaManager,
    ThrottlingQuotaExceeded,
)
from zkcontroller.broker.kafka_apis import KafkaApis
from zkcontroller.protocol.wire.client_apis import (
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    TopicCreated,
    TopicToCreate,
    schema_module,
)
from zkcontroller.protocol.wire.frames import decode_response_header
from zkcontroller.runtime.socket_server import ThrottledResponse

from .admin_fixture import address, admin_cluster_fixture, build, controller, encode, send  # noqa: F401 (the fixture)
from .server_fixture import request_frame

THROTTLED = 89
MESSAGE = "The throttling quota has been exceeded."
T0 = 1_000_000


def throttle_ms(response: Any) -> int:
    return round(response.throttle_time / timedelta(milliseconds=1))


# ---------------------------------------------------------------------------------------------- KafkaApis alone


def create_topics_frame(version: int, topics: dict[str, int]) -> bytes:
    m = schema_module(CREATE_TOPICS, version, "request")
    request = build(m.CreateTopicsRequest, topics=tuple(
        m.CreatableTopic(name=n, num_partitions=p, replication_factor=1, assignments=(), configs=())
        for n, p in topics.items()), timeout=timedelta(seconds=1), validate_only=False)
    return request_frame(CREATE_TOPICS, version, 1, encode(request), client_id="c")[4:]


def answer(payload: bytes, version: int) -> Any:
    _, offset = decode_response_header(payload, CREATE_TOPICS, version)
    cls = schema_module(CREATE_TOPICS, version, "response").CreateTopicsResponse
    return entity_reader(cls)(memoryview(payload)[offset:], 0)[0]


async def counting_creator(topics: list[TopicToCreate], validate_only: bool, timeout_ms: int,
                           quota: ControllerMutationQuota = UNBOUNDED) -> list[TopicCreated]:
    """A handler counting each topic's partitions as ZkAdminManager does (the real one: the cluster tests below)."""
    results = []
    for t in topics:
        try:
            quota.record(t.num_partitions)
            results.append(TopicCreated(t.name, 0, None, t.num_partitions, 1))
        except ThrottlingQuotaExceeded as e:
            results.append(TopicCreated(t.name, THROTTLED, str(e)))
    return results


async def test_the_answer_carries_the_throttle_strict_by_version_and_mutes_after_it() -> None:
    """Q = 2/s for client "c": B = 22, full at T0.
    v6 {a: 30}: strict, 22 >= 0, accepted: tokens -8, no violation, throttle 0, not muted.
    v6 {b: 1}: -8 < 0, refused: THROTTLING_QUOTA_EXCEEDED, throttle 8 / 2 s = 4000 ms, muted for it.
    4 s later v5 {c: 2}: permissive; tokens -8 + 2 x 4 = 0, recorded: -2, created, throttle 2 / 2 s = 1000 ms."""
    runtime = ManualRuntime()
    runtime.now = T0
    quotas = ControllerMutationQuotaManager(runtime)  # type: ignore[arg-type]
    quotas.update_quota(None, "c", 2.0)
    api = KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: None, cluster_id=lambda: "c",
                    create_topics=counting_creator, controller_mutation_quotas=lambda: quotas)

    first = await api.handle(create_topics_frame(6, {"a": 30}))
    assert not isinstance(first, ThrottledResponse)
    response = answer(first, 6)  # type: ignore[arg-type]
    assert throttle_ms(response) == 0 and [int(t.error_code) for t in response.topics] == [0]

    second = await api.handle(create_topics_frame(6, {"b": 1}))
    assert isinstance(second, ThrottledResponse)
    response = answer(second, 6)
    assert throttle_ms(response) == 4000
    assert [(t.name, int(t.error_code), t.error_message) for t in response.topics] == [("b", THROTTLED, MESSAGE)]
    await assert_sleeps_exactly(asyncio.ensure_future(second.throttle()), runtime, 4000)

    third = await api.handle(create_topics_frame(5, {"c": 2}))
    assert isinstance(third, ThrottledResponse)
    response = answer(third, 5)
    assert throttle_ms(response) == 1000 and [int(t.error_code) for t in response.topics] == [0]


async def test_without_quota_managers_the_handler_gets_no_quota() -> None:
    """A KafkaApis without controller mutation quotas passes the handler its three arguments alone."""
    async def three(topics: list[TopicToCreate], validate_only: bool, timeout_ms: int) -> list[TopicCreated]:
        return [TopicCreated(t.name) for t in topics]

    api = KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: None, cluster_id=lambda: "c",
                    create_topics=three)
    response = answer(await api.handle(create_topics_frame(6, {"a": 1})), 6)  # type: ignore[arg-type]
    assert throttle_ms(response) == 0


# ---------------------------------------------------------------------------------------------- a cluster

QUOTA = 0.001
"""Mutations per second: B = 0.011 tokens, and the refill over a test's few seconds (0.001 per s) stays far below
one throttle second; the brokers' clock is the wall clock, so the throttles are checked within the seconds the test
may take (``SLACK_MS``)."""
SLACK_MS = 60_000


async def quota_everywhere(cluster: Cluster, client: str, value: float) -> None:
    def taken() -> bool:
        return all(s.replica_manager is not None
                   and s.replica_manager.topic_configs.controller_mutation_quotas.quota(ANONYMOUS, client) == value
                   for s in cluster.running_brokers())
    await wait_until(taken, timeout_s=10, what="every broker took the quota up")


async def create(at: str, version: int, topics: dict[str, int]) -> Any:
    m = schema_module(CREATE_TOPICS, version, "request")
    request = build(m.CreateTopicsRequest, topics=tuple(
        m.CreatableTopic(name=n, num_partitions=p, replication_factor=2, assignments=(), configs=())
        for n, p in topics.items()), timeout=timedelta(seconds=30), validate_only=False)
    return await send(at, CREATE_TOPICS, version, request, "CreateTopicsResponse")


def within(throttle: int, expected: int) -> bool:
    """The throttle computed ``expected`` at the first record, less up to `SLACK_MS` of refill and waiting."""
    return expected - SLACK_MS < throttle <= expected


async def test_the_active_controller_counts_created_and_deleted_partitions(admin_cluster: Cluster) -> None:
    """Client "test", Q = 0.001/s, B = 0.011 (full):
    CreateTopics v6 {one: 2}: accepted (0.011 >= 0): tokens -1.989, throttle 0.
    CreateTopics v6 {two: 1}: refused, throttle 1.989 / 0.001 s = 1 989 000 ms (less the refill since).
    CreateTopics v5 {three: 1}: permissive, created: tokens -2.989, throttle 2 989 000 ms.
    DeleteTopics v5 [one]: refused, the code alone (no message in 2.8's DeleteTopics answer).
    CreatePartitions v3 {three: 2}: refused, with the message; DeleteTopics v4 [one]: permissive, its 2 partitions
    counted: tokens -4.989, throttle 4 989 000 ms."""
    cluster, zk = admin_cluster
    await change_quota_config(zk, "clients", "test", {"controller_mutation_rate": str(QUOTA)})
    await quota_everywhere(cluster, "test", QUOTA)
    at = address(cluster, controller(cluster))

    first = await create(at, 6, {"one": 2})
    assert [(t.name, int(t.error_code)) for t in first.topics] == [("one", 0)] and throttle_ms(first) == 0
    second = await create(at, 6, {"two": 1})
    assert [(t.name, int(t.error_code), t.error_message, t.num_partitions) for t in second.topics] == \
        [("two", THROTTLED, MESSAGE, -1)]
    assert within(throttle_ms(second), 1_989_000)
    assert not await zk.path_exists("/brokers/topics/two")
    third = await create(at, 5, {"three": 1})
    assert [(t.name, int(t.error_code)) for t in third.topics] == [("three", 0)]
    assert within(throttle_ms(third), 2_989_000)

    m = schema_module(DELETE_TOPICS, 5, "request")
    deleted = await send(at, DELETE_TOPICS, 5, build(m.DeleteTopicsRequest, topic_names=("one",),
                                                     timeout=timedelta(seconds=30)), "DeleteTopicsResponse")
    assert [(r.name, int(r.error_code), r.error_message) for r in deleted.responses] == [("one", THROTTLED, None)]
    assert within(throttle_ms(deleted), 2_989_000)

    m = schema_module(CREATE_PARTITIONS, 3, "request")
    grown = await send(at, CREATE_PARTITIONS, 3, build(
        m.CreatePartitionsRequest, topics=(m.CreatePartitionsTopic(name="three", count=2, assignments=None),),
        timeout=timedelta(seconds=30), validate_only=False), "CreatePartitionsResponse")
    assert [(r.name, int(r.error_code), r.error_message) for r in grown.results] == [("three", THROTTLED, MESSAGE)]
    assert within(throttle_ms(grown), 2_989_000)

    m = schema_module(DELETE_TOPICS, 4, "request")
    deleted = await send(at, DELETE_TOPICS, 4, build(m.DeleteTopicsRequest, topic_names=("one",),
                                                     timeout=timedelta(seconds=30)), "DeleteTopicsResponse")
    assert [(r.name, int(r.error_code)) for r in deleted.responses] == [("one", 0)]
    assert within(throttle_ms(deleted), 4_989_000)


async def test_a_broker_not_controller_counts_nothing(admin_cluster: Cluster) -> None:
    """NOT_CONTROLLER from another broker: nothing recorded (Kafka records in ZkAdminManager only), no throttle."""
    cluster, zk = admin_cluster
    await change_quota_config(zk, "clients", "test", {"controller_mutation_rate": "0"})
    await quota_everywhere(cluster, "test", 0.0)
    other = next(s for s in cluster.running_brokers() if s is not controller(cluster))
    for _ in range(2):
        refused = await create(address(cluster, other), 6, {"x": 5})
        assert [int(t.error_code) for t in refused.topics] == [41] and throttle_ms(refused) == 0


def _create_with_kafka_python(at: str) -> list[tuple[str, int, str | None]]:
    """kafka-python 3.0.12's admin client (CreateTopics v7 against 2.8: strict), client id "mutator": two
    requests; each topic's (name, error code, message)."""
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=at, client_id="mutator", request_timeout_ms=30000)
    try:
        outcome = []
        for name in ("first", "second"):
            result = admin.create_topics({name: {"num_partitions": 2, "replication_factor": 2}},
                                         timeout_ms=30000, raise_errors=False)
            outcome += [(t["name"], t["error_code"], t["error_message"]) for t in result["topics"]]
        return outcome
    finally:
        admin.close()


async def test_kafka_python_is_refused_past_its_quota(admin_cluster: Cluster) -> None:
    """Q = 0.001/s: the first topic (2 partitions) takes the full bucket below zero, the second is refused."""
    cluster, zk = admin_cluster
    await change_quota_config(zk, "clients", "mutator", {"controller_mutation_rate": str(QUOTA)})
    await quota_everywhere(cluster, "mutator", QUOTA)
    outcome = await asyncio.to_thread(_create_with_kafka_python, address(cluster, controller(cluster)))
    assert outcome == [("first", 0, None), ("second", THROTTLED, MESSAGE)]
    assert await zk.path_exists("/brokers/topics/first") and not await zk.path_exists("/brokers/topics/second")


async def test_older_versions_are_recorded_permissively(admin_cluster: Cluster) -> None:
    """Q = 0.001/s, B = 0.011. CreateTopics v4 is never refused: {p: 1} then {q: 1}, both created; a permissive
    quota checks after recording, so the first answer is throttled too: 0.011 - 1 = -0.989 tokens, 989 000 ms; the
    second 0.011 - 1 - 1 = -1.989 tokens, 1 989 000 ms. DeleteTopics v1 (before KIP-219) [p, q]: both
    deleted, -3.989 tokens: 3 989 000 ms."""
    cluster, zk = admin_cluster
    await change_quota_config(zk, "clients", "test", {"controller_mutation_rate": str(QUOTA)})
    await quota_everywhere(cluster, "test", QUOTA)
    at = address(cluster, controller(cluster))
    first, second = await create(at, 4, {"p": 1}), await create(at, 4, {"q": 1})
    assert [int(t.error_code) for t in (*first.topics, *second.topics)] == [0, 0]
    assert within(throttle_ms(first), 989_000) and within(throttle_ms(second), 1_989_000)
    m = schema_module(DELETE_TOPICS, 1, "request")
    deleted = await send(at, DELETE_TOPICS, 1, build(m.DeleteTopicsRequest, topic_names=("p", "q"),
                                                     timeout=timedelta(seconds=30)), "DeleteTopicsResponse")
    assert sorted((r.name, int(r.error_code)) for r in deleted.responses) == [("p", 0), ("q", 0)]
    assert within(throttle_ms(deleted), 3_989_000)


async def test_metadata_auto_creation_counts_permissively(admin_cluster: Cluster) -> None:
    """Metadata's auto-creation (``newPermissiveQuotaFor``): the topic is created whatever the quota, and its
    partitions are counted, so a CreateTopics v6 from the same client on that broker is then refused. Client "test",
    Q = 0.001/s: the full bucket (0.011) less the auto-created topic's partitions is below zero."""
    from .test_metadata_auto_create import metadata_v9

    cluster, zk = admin_cluster
    await change_quota_config(zk, "clients", "test", {"controller_mutation_rate": str(QUOTA)})
    await quota_everywhere(cluster, "test", QUOTA)
    at = address(cluster, controller(cluster))
    error, _ = await asyncio.to_thread(metadata_v9, at, "auto", True)
    assert error == 5  # LEADER_NOT_AVAILABLE: created, leaders to come
    assert await zk.path_exists("/brokers/topics/auto")
    refused = await create(at, 6, {"after": 1})
    assert [(t.name, int(t.error_code)) for t in refused.topics] == [("after", THROTTLED)]
