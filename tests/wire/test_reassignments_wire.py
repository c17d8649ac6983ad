"""AlterPartitionReassignments (45) and ListPartitionReassignments (46) v0 as Kafka 2.8.2 answers them in
ZooKeeper mode (``handleAlterPartitionReassignmentsRequest`` / ``handleListPartitionReassignmentsRequest``), on
in-process brokers that listen on the wire. Every wait is on a condition with a bound."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from tests.helpers import wait_until

from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire.client_apis import (
    ALTER_PARTITION_REASSIGNMENTS,
    LIST_PARTITION_REASSIGNMENTS,
    schema_module,
)

from .admin_fixture import (
    Cluster,
    address,
    admin_cluster_fixture,  # noqa: F401
    controller,
    create,
    others,
    send,
)

pytestmark = pytest.mark.timeout(120)

NONE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT, NOT_CONTROLLER = 0, 3, 39, 41
NO_REASSIGNMENT_IN_PROGRESS = 85

Targets = dict[tuple[str, int], list[int] | None]


async def alter(at: str, targets: Targets) -> tuple[int, dict[tuple[str, int], int]]:
    """(top-level error, error per partition) of an AlterPartitionReassignments v0 on the wire."""
    m = schema_module(ALTER_PARTITION_REASSIGNMENTS, 0, "request")
    topics: dict[str, list[Any]] = {}
    for (t, p), replicas in targets.items():
        topics.setdefault(t, []).append(m.ReassignablePartition(
            partition_index=p, replicas=None if replicas is None else tuple(replicas)))
    request = m.AlterPartitionReassignmentsRequest(
        timeout=timedelta(seconds=30),
        topics=tuple(m.ReassignableTopic(name=t, partitions=tuple(ps)) for t, ps in topics.items()))
    response = await send(at, ALTER_PARTITION_REASSIGNMENTS, 0, request, "AlterPartitionReassignmentsResponse")
    return int(response.error_code), {(r.name, p.partition_index): int(p.error_code)
                                      for r in response.responses for p in r.partitions}


async def listed(at: str, partitions: dict[str, list[int]] | None = None
                 ) -> tuple[int, dict[tuple[str, int], tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]]:
    """(top-level error, (replicas, adding, removing) per partition being reassigned)."""
    m = schema_module(LIST_PARTITION_REASSIGNMENTS, 0, "request")
    topics = None if partitions is None else tuple(
        m.ListPartitionReassignmentsTopics(name=t, partition_indexes=tuple(ps)) for t, ps in partitions.items())
    request = m.ListPartitionReassignmentsRequest(timeout=timedelta(seconds=30), topics=topics)
    response = await send(at, LIST_PARTITION_REASSIGNMENTS, 0, request, "ListPartitionReassignmentsResponse")
    return int(response.error_code), {
        (t.name, p.partition_index): (tuple(p.replicas), tuple(p.adding_replicas), tuple(p.removing_replicas))
        for t in response.topics for p in t.partitions}


def replicas(server: KafkaServer, topic: str, partition: int) -> tuple[int, ...]:
    assert server.control_plane is not None
    state = server.control_plane.metadata_cache.partition_info(TopicPartition(topic, partition))
    return () if state is None else tuple(state.replicas)


async def test_only_the_active_controller_answers(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    await create(cluster, zk, "t")
    at = address(cluster, others(cluster)[0])
    assert await alter(at, {("t", 0): [1, 2, 3]}) == (NOT_CONTROLLER, {})
    assert await listed(at) == (NOT_CONTROLLER, {})


async def test_a_reassignment_completes(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    a, b, c = cluster.broker_ids
    await create(cluster, zk, "moving", {0: [a, b]})
    active = controller(cluster)
    at = address(cluster, active)
    assert await alter(at, {("moving", 0): [b, c]}) == (NONE, {("moving", 0): NONE})
    await wait_until(lambda: replicas(active, "moving", 0) == (b, c), timeout_s=30, what="the move completed")
    assert await listed(at) == (NONE, {})


async def test_an_ongoing_reassignment_is_listed_and_cancelled_with_null_replicas(admin_cluster: Cluster) -> None:
    """A target on a broker that was just killed (still registered until its session times out) cannot catch up:
    the reassignment stays, listed with its adding replica, until cancelled."""
    cluster, zk = admin_cluster
    dead = others(cluster)[0].broker_id
    a, b = (x for x in cluster.broker_ids if x != dead)
    await create(cluster, zk, "stuck", {0: [a, b]})
    await create(cluster, zk, "still", {0: [a, b]})
    await cluster.crash_broker(dead)
    at = address(cluster, controller(cluster))
    assert await alter(at, {("stuck", 0): [a, b, dead]}) == (NONE, {("stuck", 0): NONE})
    ongoing = {("stuck", 0): ((a, b, dead), (dead,), ())}
    assert await listed(at) == (NONE, ongoing)
    assert await listed(at, {"stuck": [0, 5], "still": [0], "ghost": [0]}) == (NONE, ongoing)
    assert await alter(at, {("stuck", 0): None, ("still", 0): None}) == (
        NONE, {("stuck", 0): NONE, ("still", 0): NO_REASSIGNMENT_IN_PROGRESS})
    assert await listed(at) == (NONE, {})


async def test_per_partition_errors_and_the_broker_keeps_running(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    a, b, c = cluster.broker_ids
    await create(cluster, zk, "kept", {0: [a, b], 1: [b, c]})
    at = address(cluster, controller(cluster))
    assert await alter(at, {("kept", 0): [], ("kept", 1): [c, c], ("kept", 7): [a], ("ghost", 0): [a],
                            ("kept", 2): [a, 99]}) == (NONE, {
        ("kept", 0): INVALID_REPLICA_ASSIGNMENT, ("kept", 1): INVALID_REPLICA_ASSIGNMENT,
        ("kept", 7): UNKNOWN_TOPIC_OR_PARTITION, ("ghost", 0): UNKNOWN_TOPIC_OR_PARTITION,
        ("kept", 2): INVALID_REPLICA_ASSIGNMENT})  # validateReplicas comes before the existence check, as Kafka
    assert await alter(at, {("kept", 0): [a, 99]}) == (NONE, {("kept", 0): INVALID_REPLICA_ASSIGNMENT})
    assert await alter(at, {("kept", 0): [a, -1]}) == (NONE, {("kept", 0): INVALID_REPLICA_ASSIGNMENT})
    assert await listed(at) == (NONE, {})


async def test_error_messages_are_kafkas(admin_cluster: Cluster) -> None:
    """``new ApiError(error)`` carries the error's own message: the top-level NOT_CONTROLLER and a per-partition
    NO_REASSIGNMENT_IN_PROGRESS have Kafka's text; success has none."""
    cluster, zk = admin_cluster
    await create(cluster, zk, "quiet")
    m = schema_module(ALTER_PARTITION_REASSIGNMENTS, 0, "request")
    request = m.AlterPartitionReassignmentsRequest(timeout=timedelta(seconds=30), topics=(m.ReassignableTopic(
        name="quiet", partitions=(m.ReassignablePartition(partition_index=0, replicas=None),)),))
    name = "AlterPartitionReassignmentsResponse"
    off = await send(address(cluster, others(cluster)[0]), ALTER_PARTITION_REASSIGNMENTS, 0, request, name)
    assert off.error_message == "This is not the correct controller for this cluster."
    on = await send(address(cluster, controller(cluster)), ALTER_PARTITION_REASSIGNMENTS, 0, request, name)
    assert on.error_message is None
    assert [p.error_message for t in on.responses for p in t.partitions] == [
        "No partition reassignment is in progress."]
