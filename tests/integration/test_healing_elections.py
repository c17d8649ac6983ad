"""Replica leader elections (spec §9.8): the /admin/preferred_replica_election znode and the admin API
(preferred and unclean), on the embedded store and on a real ZooKeeper."""

from __future__ import annotations

import logging

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory
from tests.integration.offline_partition import leader_elections, offline_partition
from tests.integration.test_healing_controlled_shutdown import (
    ASSIGNMENT,
    PARTITIONS,
    TOPIC,
    restore_isr,
    states,
    wait_full_isr,
)

from zkcontroller.admin.errors import AdminError
from zkcontroller.admin.leader_election import (
    ElectionInProgressError,
    PreferredElectionStarted,
    parse_partitions_json,
    start_preferred_election,
)
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.controller.elections import ApiError
from zkcontroller.controller.events import ElectionType
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = pytest.mark.hand_written_isr  # ISRs are written by hand, as a Kafka 2.6 leader does


async def imbalanced_cluster(make_cluster: ClusterFactory, admin: KafkaZkClient,
                             **overrides: object) -> tuple[LocalCluster, KafkaController]:
    """3 brokers, RF 3; broker 1 was stopped and came back, so the partitions it prefers are led by others
    (its ISR membership restored as the leaders would)."""
    cluster = await make_cluster([1, 2, 3], **overrides)
    await cluster.wait_for_controller()
    await admin.create_topic_assignment(
        TOPIC, None, {tp: ReplicaAssignment(ASSIGNMENT[tp.partition]) for tp in PARTITIONS})
    await wait_full_isr(admin)
    await cluster.stop_broker(1)
    await cluster.start_broker(1)
    controller = await cluster.wait_for_controller()
    await wait_until(lambda: 1 in controller.context.live_broker_ids, what="broker 1 back")
    await restore_isr(admin)
    await wait_full_isr(admin)
    # ZooKeeper holds the full ISRs; the controller learns them from the ISR-change notification, whose watch
    # may fire after a test's next request (on a loaded machine a preferred election then found broker 1
    # outside the ISR)
    await wait_until(lambda: all((s := controller.context.partition_leader_and_isr(tp)) is not None
                                 and len(s.isr) == 3 for tp in PARTITIONS),
                     what="the controller's copy of the full ISRs")
    return cluster, controller


def preferred_by(broker_id: int) -> list[TopicPartition]:
    return [tp for tp in PARTITIONS if ASSIGNMENT[tp.partition][0] == broker_id]


async def test_preferred_replica_election_znode_moves_leaders_back_and_is_deleted(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    _, controller = await imbalanced_cluster(make_cluster, admin)
    records: list[str] = make_cluster.records  # type: ignore[attr-defined]
    before = await states(admin)
    moved = preferred_by(1)
    assert all(before[tp].leader != 1 for tp in moved)
    first_record = len(records)

    await admin.create_preferred_replica_election([*moved, TopicPartition("nope", 0)])

    async def done() -> bool:
        now = await states(admin)
        return all(now[tp].leader == 1 for tp in moved) and not await admin.path_exists(
            paths.PREFERRED_REPLICA_ELECTION)

    await wait_until(done, timeout_s=30, what="preferred leaders back and the znode gone", poll_s=0.02)
    after = await states(admin)
    for tp in moved:
        assert after[tp].leader_epoch == before[tp].leader_epoch + 1
        assert after[tp].isr == before[tp].isr  # the preferred election keeps the ISR
    for tp in set(PARTITIONS) - set(moved):
        assert after[tp] == before[tp]  # not asked for: untouched
    elections = leader_elections(records[first_record:])
    assert sorted((r["partition"], r["strategy"], r["trigger"]) for r in elections) == [
        (tp.partition, "preferred", "zk") for tp in moved]

    # a request no election can satisfy is still removed, and the watch stays armed for the next one
    await admin.create_preferred_replica_election([TopicPartition("nope", 1)])
    await wait_until(lambda: _absent(admin), timeout_s=30, what="the unsatisfiable request removed", poll_s=0.02)
    assert controller.is_active


async def _absent(admin: KafkaZkClient) -> bool:
    return not await admin.path_exists(paths.PREFERRED_REPLICA_ELECTION)


async def test_admin_preferred_election_answers_per_partition(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    cluster, controller = await imbalanced_cluster(make_cluster, admin)
    moved, already = preferred_by(1), preferred_by(2)
    unknown = TopicPartition("nope", 0)
    results = await controller.elections.elect_leaders([*moved, *already, unknown], ElectionType.PREFERRED)
    assert results == {
        **dict.fromkeys(moved, 1),
        **dict.fromkeys(already, ApiError(Errors.ELECTION_NOT_NEEDED)),
        unknown: ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist."),
    }
    now = await states(admin)
    assert all(now[tp].leader == 1 for tp in moved)
    assert not await admin.path_exists(paths.PREFERRED_REPLICA_ELECTION)  # the admin path leaves ZooKeeper be

    other = next(s.controller for s in cluster.running_brokers() if s.controller is not controller)
    assert other is not None
    refused = await other.elections.elect_leaders(moved, ElectionType.PREFERRED)
    assert refused == dict.fromkeys(moved, ApiError(Errors.NOT_CONTROLLER))


async def test_admin_unclean_election_picks_a_live_replica_outside_the_isr(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    records: list[str] = make_cluster.records  # type: ignore[attr-defined]
    tp = TopicPartition("ledger", 0)
    # the non-controller leaves (ISR shrinks to the controller), comes back outside the ISR; then the
    # controller's broker stops: the partition has no live ISR member
    _cluster, controller, other = await offline_partition(make_cluster, admin, tp)

    preferred = await controller.elections.elect_leaders([tp], ElectionType.PREFERRED)
    assert isinstance(preferred[tp], ApiError) and preferred[tp].error is Errors.PREFERRED_LEADER_NOT_AVAILABLE
    first_record = len(records)
    results = await controller.elections.elect_leaders([tp], ElectionType.UNCLEAN)
    assert results == {tp: other}
    state = (await admin.get_topic_partition_state(tp))
    assert state is not None and state.leader_and_isr.leader == other and state.leader_and_isr.isr == (other,)
    elections = leader_elections(records[first_record:])
    assert [(r["strategy"], r["clean"], r["trigger"]) for r in elections] == [("offline", False, "admin")]
    again = await controller.elections.elect_leaders([tp], ElectionType.UNCLEAN)
    assert again == {tp: ApiError(Errors.ELECTION_NOT_NEEDED)}


async def test_leader_election_command_requests_preferred_election_through_zookeeper(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    await imbalanced_cluster(make_cluster, admin)
    started = await start_preferred_election(admin, None)
    assert started.requested == PARTITIONS and started.skipped == []

    async def balanced() -> bool:
        now = await states(admin)
        return all(now[tp].leader == ASSIGNMENT[tp.partition][0] for tp in PARTITIONS) and await _absent(admin)

    await wait_until(balanced, timeout_s=30, what="every partition led by its preferred replica", poll_s=0.02)


async def test_leader_election_command_skips_unknown_partitions_and_refuses_a_second_request(
    admin: KafkaZkClient
) -> None:
    await admin.create_top_level_paths()
    await admin.create_topic_assignment(TOPIC, None, {PARTITIONS[0]: ReplicaAssignment((1, 2))})
    unknown = TopicPartition("nope", 3)
    started = await start_preferred_election(admin, [PARTITIONS[0], unknown])
    assert started == PreferredElectionStarted([PARTITIONS[0]], [unknown])
    assert await admin.get_preferred_replica_election() == frozenset({PARTITIONS[0]})
    with pytest.raises(ElectionInProgressError, match="currently in progress for orders-0"):
        await start_preferred_election(admin, None)


def test_election_json_file_is_parsed_and_bad_ones_are_named() -> None:
    text = '{"partitions": [{"topic": "a", "partition": 1}, {"topic": "b", "partition": 0}]}'
    assert parse_partitions_json(text, "f.json") == [TopicPartition("a", 1), TopicPartition("b", 0)]
    with pytest.raises(AdminError, match=r"Invalid election JSON in f\.json"):
        parse_partitions_json('{"partitions": [{"topic": "a"}]}', "f.json")
    with pytest.raises(AdminError, match="duplicate partitions: a-1"):
        parse_partitions_json('{"partitions": [{"topic": "a", "partition": 1}, {"topic": "a", "partition": 1}]}',
                              "f.json")


@pytest.mark.parametrize("entry", ['{"topic": "a", "partition": 0.7}', '{"topic": "a", "partition": true}',
                                   '{"topic": "a", "partition": "1"}', '{"topic": "a", "partition": Infinity}',
                                   '{"topic": null, "partition": 1}', '{"topic": 5, "partition": 1}', '3'])
def test_election_json_file_refuses_values_kafka_would_not_decode(entry: str) -> None:
    """A partition must be a JSON integer and a topic a string: 0.7 is not coerced to partition 0, true to 1."""
    with pytest.raises(AdminError, match=r"Invalid election JSON in f\.json.*partitions\[0\]"):
        parse_partitions_json(f'{{"partitions": [{entry}]}}', "f.json")


async def test_the_auto_rebalance_check_logs_the_partitions_off_their_preferred_leader_as_kafka(
        make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture) -> None:
    """``Topics not in preferred replica for broker N <map>``: each partition with its replicas (``List(..)``),
    in the kind of map Kafka's groupBy made for that broker (``Map`` up to four partitions): a real 2.8 log
    shows ``HashMap(<topic>-1 -> List(0, 1))``; ours printed the partitions alone."""
    _, controller = await imbalanced_cluster(make_cluster, admin)
    off_preferred = [tp for tp in preferred_by(1)
                     if (s := controller.context.partition_leader_and_isr(tp)) is not None and s.leader != 1]
    assert off_preferred
    with caplog.at_level(logging.DEBUG, "kafka.controller.KafkaController"):
        await controller.elections.check_and_trigger_auto_leader_rebalance()
    shown = ", ".join(f"{tp} -> List({', '.join(map(str, ASSIGNMENT[tp.partition]))})" for tp in off_preferred)
    kind = "Map" if len(preferred_by(1)) <= 4 else "HashMap"
    assert f"[Controller id={controller.controller_id}] Topics not in preferred replica for broker 1 {kind}({shown})" \
        in [r.getMessage() for r in caplog.records]
