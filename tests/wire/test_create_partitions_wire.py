"""CreatePartitions (API 37) v0–3 as Kafka 2.8.2 answers it in ZooKeeper mode (``handleCreatePartitionsRequest``,
``ZkAdminManager.createPartitions``, ``DelayedCreatePartitions``), on in-process brokers that listen on the wire
over the embedded store. Every wait is on a condition with a bound."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest
from tests.helpers import ManualRuntime, wait_until

from zkcontroller.broker.client_quota_manager import ANONYMOUS
from zkcontroller.broker.controller_mutation_quota import THROTTLING_QUOTA_EXCEEDED, ControllerMutationQuotaManager
from zkcontroller.cluster.admin_apis.create_partitions import create_partitions_handler
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.protocol.wire.client_apis import CREATE_PARTITIONS, PartitionsToCreate, schema_module
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

from .admin_fixture import (
    Cluster,
    address,
    admin_cluster_fixture,  # noqa: F401
    controller,
    create,
    leader,
    others,
    send,
)
from .test_reassignments_wire import alter

pytestmark = pytest.mark.timeout(120)

NONE, UNKNOWN_TOPIC_OR_PARTITION, REQUEST_TIMED_OUT, INVALID_TOPIC_EXCEPTION = 0, 3, 7, 17
INVALID_PARTITIONS, INVALID_REPLICA_ASSIGNMENT, NOT_CONTROLLER, INVALID_REQUEST = 37, 39, 41, 42
REASSIGNMENT_IN_PROGRESS = 60

Asked = tuple[str, int, list[list[int]] | None]


async def grow(at: str, version: int, topics: list[Asked], *, timeout_ms: int = 30_000,
               validate_only: bool = False) -> dict[str, int]:
    """Error code per topic in the answer to a CreatePartitions on the wire (each topic answered once)."""
    m = schema_module(CREATE_PARTITIONS, version, "request")
    request = m.CreatePartitionsRequest(
        topics=tuple(m.CreatePartitionsTopic(name=t, count=n, assignments=None if a is None else tuple(
            m.CreatePartitionsAssignment(broker_ids=tuple(r)) for r in a)) for t, n, a in topics),
        timeout=timedelta(milliseconds=timeout_ms), validate_only=validate_only)
    response = await send(at, CREATE_PARTITIONS, version, request, "CreatePartitionsResponse")
    names = [r.name for r in response.results]
    assert len(names) == len(set(names)), names
    return {r.name: int(r.error_code) for r in response.results}


async def partitions_in_zk(zk: KafkaZkClient, topic: str) -> int:
    found = (await zk.get_topic_assignments([topic])).values.get(topic)
    return 0 if found is None else len(found.assignment)


def led(server: KafkaServer, topic: str, count: int) -> bool:
    return all(leader(server, topic, p) not in (None, -1) for p in range(count))


@pytest.mark.parametrize("version", [0, 3])
async def test_the_controller_adds_partitions_and_answers_once_they_have_leaders(admin_cluster: Cluster,
                                                                                  version: int) -> None:
    cluster, zk = admin_cluster
    await create(cluster, zk, "growing")
    active = controller(cluster)
    assert await grow(address(cluster, active), version, [("growing", 4, None)]) == {"growing": NONE}
    assert led(active, "growing", 4)  # answered after this broker's cache had a leader for each
    assert await partitions_in_zk(zk, "growing") == 4


async def test_only_the_controller_adds(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    await create(cluster, zk, "fixed")
    assert await grow(address(cluster, others(cluster)[0]), 3, [("fixed", 3, None), ("nope", 2, None)]) == {
        "fixed": NOT_CONTROLLER, "nope": NOT_CONTROLLER}
    assert await partitions_in_zk(zk, "fixed") == 2


async def test_validate_only_writes_nothing(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    a, b, _ = cluster.broker_ids
    await create(cluster, zk, "checked")
    at = address(cluster, controller(cluster))
    assert await grow(at, 2, [("checked", 3, [[a, b]])], validate_only=True) == {"checked": NONE}
    assert await grow(at, 2, [("checked", 3, [[a, 99]])], validate_only=True) == {
        "checked": INVALID_REPLICA_ASSIGNMENT}
    assert await partitions_in_zk(zk, "checked") == 2


async def test_kafkas_errors_per_topic(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    a, b, c = cluster.broker_ids
    for t in ("same", "fewer", "unknown-broker", "too-few", "dup-brokers", "rf", "twice"):
        await create(cluster, zk, t)
    at = address(cluster, controller(cluster))
    assert await grow(at, 3, [
        ("ghost", 3, None), ("same", 2, None), ("fewer", 1, None), ("unknown-broker", 3, [[a, 99]]),
        ("too-few", 4, [[a, b]]), ("dup-brokers", 3, [[c, c]]), ("rf", 3, [[a, b, c]]),
        ("twice", 3, None), ("twice", 4, None)]) == {
        "ghost": UNKNOWN_TOPIC_OR_PARTITION, "same": INVALID_PARTITIONS, "fewer": INVALID_PARTITIONS,
        "unknown-broker": INVALID_REPLICA_ASSIGNMENT, "too-few": INVALID_REPLICA_ASSIGNMENT,
        "dup-brokers": INVALID_REPLICA_ASSIGNMENT, "rf": INVALID_REPLICA_ASSIGNMENT, "twice": INVALID_REQUEST}
    for t in ("same", "fewer", "unknown-broker", "too-few", "dup-brokers", "rf", "twice"):
        assert await partitions_in_zk(zk, t) == 2, t


async def test_a_timeout_of_zero_adds_and_answers_request_timed_out_at_once(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    await create(cluster, zk, "hasty")
    active = controller(cluster)
    assert await grow(address(cluster, active), 3, [("hasty", 3, None)], timeout_ms=0) == {
        "hasty": REQUEST_TIMED_OUT}
    assert await partitions_in_zk(zk, "hasty") == 3
    await wait_until(lambda: led(active, "hasty", 3), timeout_s=30, what="the new partition led")


async def test_topics_being_deleted_or_reassigned_are_refused(admin_cluster: Cluster) -> None:
    """A broker killed (registered until its session times out) holds up the deletion of a topic it hosts, and a
    reassignment onto it: INVALID_TOPIC_EXCEPTION and REASSIGNMENT_IN_PROGRESS."""
    cluster, zk = admin_cluster
    dead = others(cluster)[0].broker_id
    a, b = (x for x in cluster.broker_ids if x != dead)
    await create(cluster, zk, "doomed", {0: [a, dead]})
    await create(cluster, zk, "moving", {0: [a, b]})
    await cluster.crash_broker(dead)
    active = controller(cluster)
    at = address(cluster, active)
    assert await alter(at, {("moving", 0): [a, b, dead]}) == (NONE, {("moving", 0): NONE})
    await zk.create_delete_topic_path("doomed")
    assert active.controller is not None
    await wait_until(lambda: active.controller.context.is_topic_queued_up_for_deletion("doomed"),  # type: ignore[union-attr]
                     timeout_s=30, what="doomed queued for deletion")
    assert await grow(at, 1, [("doomed", 2, None), ("moving", 2, None)]) == {
        "doomed": INVALID_TOPIC_EXCEPTION, "moving": REASSIGNMENT_IN_PROGRESS}
    assert await partitions_in_zk(zk, "moving") == 1


async def test_an_internal_topic_is_refused_as_the_admin_layer_refuses_it(admin_cluster: Cluster) -> None:
    """Differs from Kafka 2.8's API, which would grow it: ``kafka-topics --alter`` refuses, and so does our admin
    layer for both."""
    cluster, zk = admin_cluster
    await create(cluster, zk, "__consumer_offsets")
    assert await grow(address(cluster, controller(cluster)), 3, [("__consumer_offsets", 4, None)]) == {
        "__consumer_offsets": INVALID_PARTITIONS}
    assert await partitions_in_zk(zk, "__consumer_offsets") == 2


async def test_a_count_no_topic_znode_could_hold_is_refused_at_once(admin_cluster: Cluster) -> None:
    """Beyond Kafka (which would try to place 2^31 - 1 partitions): INVALID_PARTITIONS before any placement, and
    the broker answers the next request."""
    from zkcontroller.cluster.admin_apis.create_partitions import MAX_PARTITIONS

    cluster, zk = admin_cluster
    await create(cluster, zk, "bounded")
    at = address(cluster, controller(cluster))
    assert await grow(at, 3, [("bounded", 2**31 - 1, None)]) == {"bounded": INVALID_PARTITIONS}
    assert await grow(at, 3, [("bounded", MAX_PARTITIONS + 1, None)]) == {"bounded": INVALID_PARTITIONS}
    assert await grow(at, 3, [("bounded", 3, None)]) == {"bounded": NONE}


class _TaskReads:
    """Counts the store reads the test's own task makes on ``session`` (not the controller's own, in its tasks)."""

    def __init__(self, session: object, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        self._task = asyncio.current_task()
        for name in ("get_data", "get_data_many", "get_children", "exists"):
            monkeypatch.setattr(session, name, self._counting(getattr(session, name)))

    def _counting(self, read: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def counted(*args: Any, **kwargs: Any) -> Any:
            if asyncio.current_task() is self._task:
                self.count += 1
            return await read(*args, **kwargs)
        return counted

    def take(self) -> int:
        count, self.count = self.count, 0
        return count


async def test_a_mutation_quota_is_charged_in_the_one_pass(admin_cluster: Cluster,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``ZkAdminManager.createPartitions`` charges the quota per topic after its checks and placement, just before
    the write: with a quota the request reads what it reads without one (no dry run first), the increment is
    counted, and a strict quota then below zero refuses the next topic before anything is written.
    Q = 0.05/s: B = 0.55; growing 1 -> 3 records 2: tokens -1.45."""
    cluster, zk = admin_cluster
    for topic in ("plain", "counted", "refused"):
        await create(cluster, zk, topic, partitions=1)
    server = controller(cluster)
    assert server.zk is not None
    handler = create_partitions_handler(lambda: server)
    quotas = ControllerMutationQuotaManager(ManualRuntime())  # type: ignore[arg-type]
    quotas.update_quota(None, "c", 0.05)
    reads = _TaskReads(server.zk.session, monkeypatch)

    assert [r.error for r in await handler([PartitionsToCreate("plain", 3)], 0, False)] == [REQUEST_TIMED_OUT]
    unquoted = reads.take()
    quota = quotas.new_quota_for(ANONYMOUS, "c", 3, 3)
    assert [r.error for r in await handler([PartitionsToCreate("counted", 3)], 0, False, quota=quota)] == [
        REQUEST_TIMED_OUT]  # written; a timeout of 0 answers at once
    assert reads.take() == unquoted
    assert (await partitions_in_zk(zk, "plain"), await partitions_in_zk(zk, "counted")) == (3, 3)

    refused = await handler([PartitionsToCreate("refused", 2)], 0, False,
                            quota=quotas.new_quota_for(ANONYMOUS, "c", 3, 3))
    assert [(r.name, r.error) for r in refused] == [("refused", THROTTLING_QUOTA_EXCEEDED)]
    assert await partitions_in_zk(zk, "refused") == 1
