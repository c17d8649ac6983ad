"""ElectLeaders (API 43) as Kafka 2.8.2 answers it in ZooKeeper mode (``handleElectReplicaLeader``,
``ReplicaManager.electLeaders``, ``DelayedElectLeader``) on in-process brokers that listen on the wire, and the
wait itself (`wait_for_leaders`) on a runtime whose time the test drives.

Every wait is on a condition with a bound."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

import pytest
from tests.helpers import until_idle, wait_until

from zkcontroller.broker.delayed_elect_leader import wait_for_any_leader, wait_for_leaders
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire.client_apis import ELECT_LEADERS, schema_module

from .admin_fixture import (
    Cluster,
    address,
    admin_cluster_fixture,  # noqa: F401
    controller,
    create,
    isr,
    leader,
    others,
    send,
)
from .test_delete_topics_wire import DrivenRuntime, _update, cache_with

pytestmark = pytest.mark.timeout(120)

NONE, UNKNOWN_TOPIC_OR_PARTITION, REQUEST_TIMED_OUT, NOT_CONTROLLER = 0, 3, 7, 41
UNKNOWN_SERVER_ERROR = -1
PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE, ELECTION_NOT_NEEDED = 80, 83, 84
PREFERRED, UNCLEAN = 0, 1


def elect_request(version: int, partitions: dict[str, list[int]] | None, election_type: int = PREFERRED,
                  timeout_ms: int = 30_000) -> Any:
    m = schema_module(ELECT_LEADERS, version, "request")
    topics = None if partitions is None else tuple(
        m.TopicPartitions(topic=t, partitions=tuple(ps)) for t, ps in partitions.items())
    kwargs: dict[str, Any] = {"topic_partitions": topics, "timeout": timedelta(milliseconds=timeout_ms)}
    if version >= 1:
        kwargs["election_type"] = election_type
    return m.ElectLeadersRequest(**kwargs)


async def elect(at: str, version: int, partitions: dict[str, list[int]] | None, election_type: int = PREFERRED,
                timeout_ms: int = 30_000) -> tuple[int | None, dict[tuple[str, int], int]]:
    """(top-level error code, None before v1; error code per partition)."""
    response = await send(at, ELECT_LEADERS, version, elect_request(version, partitions, election_type, timeout_ms),
                          "ElectLeadersResponse")
    top = int(response.error_code) if version >= 1 else None
    return top, {(r.topic, p.partition_id): int(p.error_code)
                 for r in response.replica_election_results for p in r.partition_result}


async def displaced(cluster: LocalCluster, zk: Any, topic: str) -> int:
    """``topic`` with one partition whose preferred leader, a broker other than the controller, is stopped and
    started again: led by its second replica, the preferred one back in the ISR. That broker's id."""
    preferred = others(cluster)[0].broker_id
    second = next(b for b in cluster.broker_ids if b != preferred)
    await create(cluster, zk, topic, {0: [preferred, second]})
    await cluster.stop_broker(preferred)
    active = controller(cluster)
    await wait_until(lambda: leader(active, topic, 0) == second, timeout_s=30, what="leadership moved")
    await cluster.start_broker(preferred)
    await wait_until(lambda: preferred in isr(active, topic, 0), timeout_s=30, what="preferred back in the ISR")
    return preferred


async def test_a_preferred_election_answers_once_the_cache_shows_the_preferred_leader(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    preferred = await displaced(cluster, zk, "pref")
    active = controller(cluster)
    assert await elect(address(cluster, active), 2, {"pref": [0]}) == (NONE, {("pref", 0): NONE})
    assert leader(active, "pref", 0) == preferred  # answered after this broker's cache saw it
    # again: nothing to do
    assert await elect(address(cluster, active), 1, {"pref": [0]}) == (NONE, {("pref", 0): ELECTION_NOT_NEEDED})


async def test_only_the_active_controller_elects(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    await create(cluster, zk, "t")
    at = address(cluster, others(cluster)[0])
    assert await elect(at, 2, {"t": [0, 1]}) == (NONE, {("t", 0): NOT_CONTROLLER, ("t", 1): NOT_CONTROLLER})
    # null: every partition the broker's cache knows
    assert await elect(at, 2, None) == (NONE, {("t", 0): NOT_CONTROLLER, ("t", 1): NOT_CONTROLLER})


async def test_unknown_partitions_duplicates_and_v0(admin_cluster: Cluster) -> None:
    """An unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION; a partition named twice is answered once
    (Kafka reads them into a set); v0 has no top-level error code and is always a preferred election."""
    cluster, zk = admin_cluster
    await create(cluster, zk, "known")
    at = address(cluster, controller(cluster))
    top, results = await elect(at, 0, {"known": [0, 0, 7], "ghost": [0]})
    assert top is None
    assert results == {("known", 0): ELECTION_NOT_NEEDED, ("known", 7): UNKNOWN_TOPIC_OR_PARTITION,
                       ("ghost", 0): UNKNOWN_TOPIC_OR_PARTITION}


async def test_null_partitions_leave_out_those_that_need_no_election(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    await create(cluster, zk, "settled")
    assert await elect(address(cluster, controller(cluster)), 2, None) == (NONE, {})


async def test_preferred_leader_not_available_and_unclean_elections(admin_cluster: Cluster) -> None:
    """The preferred replica offline: PREFERRED_LEADER_NOT_AVAILABLE. Unclean: a partition with a live leader needs
    no election; one whose only replica is offline has no eligible leader."""
    cluster, zk = admin_cluster
    gone = others(cluster)[0].broker_id
    alive = next(b for b in cluster.broker_ids if b != gone)
    await create(cluster, zk, "half", {0: [gone, alive]})
    await create(cluster, zk, "single", {0: [gone]})
    await cluster.stop_broker(gone)
    active = controller(cluster)
    await wait_until(lambda: leader(active, "half", 0) == alive and leader(active, "single", 0) == -1,
                     timeout_s=30, what="leaders after the stop")
    at = address(cluster, active)
    assert await elect(at, 2, {"half": [0]}) == (NONE, {("half", 0): PREFERRED_LEADER_NOT_AVAILABLE})
    assert await elect(at, 2, {"half": [0], "single": [0]}, UNCLEAN) == (
        NONE, {("half", 0): ELECTION_NOT_NEEDED, ("single", 0): ELIGIBLE_LEADERS_NOT_AVAILABLE})


async def test_an_invalid_election_type_is_an_error_and_the_broker_keeps_running(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    await create(cluster, zk, "typed")
    at = address(cluster, controller(cluster))
    assert await elect(at, 2, {"typed": [0]}, election_type=7) == (-1, {("typed", 0): -1})
    assert await elect(at, 2, {"typed": [0]}) == (NONE, {("typed", 0): ELECTION_NOT_NEEDED})


# ------------------------------------------------------------------------------------ the wait, on driven time

async def test_the_wait_ends_when_the_cache_shows_every_expected_leader() -> None:
    runtime = DrivenRuntime()
    cache = cache_with("a", "b")  # led by 1
    expected = {TopicPartition("a", 0): 2, TopicPartition("b", 0): 2}
    waiting = asyncio.ensure_future(wait_for_leaders(cache, expected, 30_000, runtime))  # type: ignore[arg-type]
    await wait_until(lambda: runtime.sleeps == [30_000], timeout_s=5, what="the timer armed")
    cache.update_metadata(2, _update(("a", 0), leader=2))
    await until_idle()  # the update checked: b-0 is not led by 2 yet
    assert not waiting.done() and len(cache._listeners) == 1
    cache.update_metadata(3, _update(("b", 0), leader=2))
    assert await asyncio.wait_for(waiting, 5) == set()
    assert cache._listeners == []


async def test_at_the_timeout_the_partitions_not_yet_led_as_expected_are_returned() -> None:
    runtime = DrivenRuntime()
    cache = cache_with("a", "b")
    expected = {TopicPartition("a", 0): 2, TopicPartition("b", 0): 2}
    waiting = asyncio.ensure_future(wait_for_leaders(cache, expected, 500, runtime))  # type: ignore[arg-type]
    await wait_until(lambda: runtime.sleeps == [500], timeout_s=5, what="the timer armed")
    cache.update_metadata(2, _update(("a", 0), leader=2))
    runtime.elapsed.set()
    assert await asyncio.wait_for(waiting, 5) == {TopicPartition("b", 0)}
    assert cache._listeners == []


async def test_the_create_partitions_wait_is_for_any_leader_of_every_partition() -> None:
    runtime = DrivenRuntime()
    cache = cache_with("a")
    new = [TopicPartition("a", 0), TopicPartition("a", 1)]
    waiting = asyncio.ensure_future(wait_for_any_leader(cache, new, 1000, runtime))  # type: ignore[arg-type]
    await wait_until(lambda: runtime.sleeps == [1000], timeout_s=5, what="the timer armed")
    cache.update_metadata(2, _update(("a", 1), leader=-1))  # known, leaderless
    await until_idle()  # the update checked: a-1 has no leader
    assert not waiting.done() and len(cache._listeners) == 1
    cache.update_metadata(3, _update(("a", 1), leader=3))
    assert await asyncio.wait_for(waiting, 5) == set()
    assert await wait_for_any_leader(cache, new, 0, runtime) == set()  # type: ignore[arg-type]


class _Elections:
    def __init__(self, outcome: dict[TopicPartition, Any]) -> None:
        self.outcome = outcome
        self.asked: list[tuple[list[TopicPartition], Any]] = []

    async def elect_leaders(self, partitions: list[TopicPartition], election_type: Any) -> dict[TopicPartition, Any]:
        self.asked.append((list(partitions), election_type))
        return self.outcome


async def test_the_handler_answers_request_timed_out_for_elected_leaders_the_cache_never_shows() -> None:
    """`elect_leaders_handler` over a stand-in server: the controller elects broker 2 for a-0 and finds b-0 needs
    no election; this broker's cache never shows 2 leading a-0, so at the (driven) timeout a-0 is
    REQUEST_TIMED_OUT while b-0 keeps the controller's answer."""
    from types import SimpleNamespace

    from zkcontroller.cluster.admin_apis.elect_leaders import elect_leaders_handler
    from zkcontroller.controller.events import ApiError, ElectionType
    from zkcontroller.protocol.control_requests import Errors

    runtime = DrivenRuntime()
    cache = cache_with("a", "b")
    elections = _Elections({TopicPartition("a", 0): 2,
                            TopicPartition("b", 0): ApiError(Errors.ELECTION_NOT_NEEDED)})
    active = SimpleNamespace(is_active=True, elections=elections)
    server = SimpleNamespace(controller=active, active_controller=active,
                             control_plane=SimpleNamespace(metadata_cache=cache), runtime=runtime)
    handler = elect_leaders_handler(lambda: server)  # type: ignore[arg-type, return-value]
    answering = asyncio.ensure_future(handler(UNCLEAN, None, 700))
    await wait_until(lambda: runtime.sleeps == [700], timeout_s=5, what="the timer armed")
    assert elections.asked == [([TopicPartition("a", 0), TopicPartition("b", 0)], ElectionType.UNCLEAN)]
    await until_idle()
    assert not answering.done()  # held by the timer alone
    runtime.elapsed.set()
    results = await asyncio.wait_for(answering, 5)
    assert {(r.topic, r.partition): r.error for r in results} == {
        ("a", 0): REQUEST_TIMED_OUT, ("b", 0): ELECTION_NOT_NEEDED}
    assert cache._listeners == []


async def test_election_not_needed_carries_kafkas_message_and_not_controller_none(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    await create(cluster, zk, "worded")
    request = elect_request(2, {"worded": [0]})
    on = await send(address(cluster, controller(cluster)), ELECT_LEADERS, 2, request, "ElectLeadersResponse")
    assert [p.error_message for r in on.replica_election_results for p in r.partition_result] == [
        "Leader election not needed for topic partition."]
    off = await send(address(cluster, others(cluster)[0]), ELECT_LEADERS, 2, request, "ElectLeadersResponse")
    assert [p.error_message for r in off.replica_election_results for p in r.partition_result] == [None]


async def test_an_unknown_election_type_fails_the_request_logged_with_its_body(
        admin_cluster: Cluster, caplog: pytest.LogCaptureFixture) -> None:
    """``ElectionType.valueOf`` throws in ``handleElectReplicaLeader``: ``handleError`` answers every partition
    UNKNOWN_SERVER_ERROR and logs the request, its body as ElectLeadersRequest.json's generated ``toString``."""
    cluster, _zk = admin_cluster
    active = controller(cluster)
    with caplog.at_level(logging.ERROR, "kafka.server.RequestHandlerHelper"):
        assert await elect(address(cluster, active), 1, {"pref": [0, 1]}, election_type=2) == (
            UNKNOWN_SERVER_ERROR, {("pref", 0): UNKNOWN_SERVER_ERROR, ("pref", 1): UNKNOWN_SERVER_ERROR})
    [line] = [r.getMessage() for r in caplog.records if r.name == "kafka.server.RequestHandlerHelper"]
    assert line == (
        f"[KafkaApi-{active.broker_id}] Error when handling request: clientId=test, correlationId=9, "
        "api=ELECT_LEADERS, version=1, body=ElectLeadersRequestData(electionType=2, topicPartitions=["
        "TopicPartitions(topic='pref', partitionId=[0, 1])], timeoutMs=30000)\n"
        "java.lang.IllegalArgumentException: Value 2 must be one of [PREFERRED, UNCLEAN]")
