"""Audit findings on the leader's ISR upkeep against Kafka 2.8.2 (Partition, ReplicaManager, AlterIsrManager)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from zkcontroller.broker.alter_isr_manager import AlterIsrManager
from zkcontroller.broker.partition import IsrProposal
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import (
    AlterIsrPartitionResult,
    AlterIsrRequest,
    AlterIsrResponse,
    FetchPartition,
    FetchRequest,
)

from .helpers import leader_and_isr, stop_replica
from .replica_helpers import (
    LAG_MS,
    Brokers,
    brokers_fixture,  # noqa: F401
    lagging_followers,
    state,
)

TP = TopicPartition("t", 0)


def queued_shrink(brokers: Brokers) -> AlterIsrManager:
    """Broker 1 leads TP with ISR 1,2,3; both followers lag, so its ISR check queues the shrink to (1,)."""
    leader = lagging_followers(brokers)
    assert len(leader.maybe_shrink_isr()) == 1
    manager = leader.isr_manager
    assert isinstance(manager, AlterIsrManager) and set(manager.unsent) == {TP}
    return manager


@pytest.mark.parametrize("new_leader", [1, 2])
async def test_a_new_leadership_clears_the_queued_alter_isr_item(brokers: Brokers, new_leader: int) -> None:
    """Audit #13: Kafka's makeLeader and makeFollower call alterIsrManager.clearPending(tp), so a queued proposal
    made at the old leader epoch is never sent."""
    manager = queued_shrink(brokers)
    brokers.lead(state(leader=new_leader, leader_epoch=1, zk_version=1))
    assert manager.unsent == {}


async def queued_expansion(brokers: Brokers) -> IsrProposal:
    """Broker 1 leads TP with ISR 1,2 (replicas 1,2,3); broker 3 catches up and the leader queues (1,2,3)."""
    brokers.lead(state(isr=(1, 2)))
    leader = brokers.rms[1]
    leader.append(TP, 5)
    await brokers.fetch_all()
    await brokers.fetch_all()
    manager = leader.isr_manager
    assert isinstance(manager, AlterIsrManager)
    proposal = manager.unsent.pop(TP)
    assert proposal.leader_and_isr.isr == (1, 2, 3) and leader.high_watermark(TP) == 5
    return proposal


@pytest.mark.parametrize("error", [Errors.INVALID_UPDATE_VERSION, Errors.FENCED_LEADER_EPOCH,
                                   Errors.UNKNOWN_TOPIC_OR_PARTITION], ids=lambda e: e.name)
async def test_a_refused_expansion_stays_pending_and_its_member_holds_the_high_watermark(
        brokers: Brokers, error: Errors) -> None:
    """Audit #7: Kafka's handleAlterIsrResponse gives up on these errors but leaves isrState in flight, so the
    maximal ISR (and with it the HW) still counts the replica being added."""
    proposal = await queued_expansion(brokers)
    leader = brokers.rms[1]
    leader._on_isr_result(proposal, error)
    partition = leader.partition(TP)
    assert partition is not None and partition.pending_isr == (1, 2, 3) and partition.isr == (1, 2)
    brokers.rms[3].pause_fetchers()
    brokers.clock.advance(LAG_MS + 1)  # broker 3 is no longer caught up within the lag time
    leader.append(TP, 5)
    await brokers.fetch_all()
    await brokers.fetch_all()
    assert partition.followers[2].log_end_offset == 10
    assert leader.high_watermark(TP) == 5  # broker 3, in the maximal ISR, holds it
    assert leader.maybe_shrink_isr() == []  # still one change in flight


async def test_an_unexpected_alter_isr_error_keeps_the_change_pending_and_sends_it_again() -> None:
    """Audit #7: on any other error Kafka re-sends the same proposal and stays pending (ours after the manager's
    back-off); its confirmation then applies."""
    answers = [Errors.UNKNOWN_SERVER_ERROR, Errors.NONE]
    requests: list[AlterIsrRequest] = []

    def controller(request: Any) -> AlterIsrResponse:
        assert isinstance(request, AlterIsrRequest)
        requests.append(request)
        (p,) = request.partitions
        error = answers.pop(0)
        if error is not Errors.NONE:
            return AlterIsrResponse(Errors.NONE, (AlterIsrPartitionResult(p.topic_partition, error),))
        return AlterIsrResponse(Errors.NONE, (AlterIsrPartitionResult(p.topic_partition, Errors.NONE, 1,
                                                                      p.leader_epoch, p.new_isr, 1),))

    brokers = Brokers(controller=controller)
    try:
        manager = queued_shrink(brokers)
        partition = brokers.rms[1].partition(TP)
        assert partition is not None
        assert await manager.send(dict(manager.unsent))
        assert partition.pending_isr == (1,) and partition.isr == (1, 2, 3) and set(manager.unsent) == {TP}
        assert manager._back_off  # the worker waits alter_isr_retry_backoff_ms before sending it again
        assert await manager.send(dict(manager.unsent))
        first, again = (r.partitions for r in requests)
        assert first == again
        assert (partition.isr, partition.pending_isr, partition.zk_version, manager.unsent) == ((1,), None, 1, {})
    finally:
        brokers.close()


async def test_an_ineligible_replica_answer_goes_back_to_the_committed_isr(brokers: Brokers) -> None:
    """Beyond 2.8 (KIP-841, which our controller answers): the change was not applied, the leader returns to its
    committed ISR and may propose again, as Kafka 3.3's handleAlterPartitionError."""
    proposal = await queued_expansion(brokers)
    leader = brokers.rms[1]
    leader._on_isr_result(proposal, Errors.INELIGIBLE_REPLICA)
    partition = leader.partition(TP)
    assert partition is not None and partition.pending_isr is None and not partition.isr_update_refused
    await brokers.rms[3].fetchers[1].fetch_once()
    assert leader.isr_manager.unsent[TP].leader_and_isr.isr == (1, 2, 3)  # type: ignore[attr-defined]


def confirm_all(brokers: Brokers) -> None:
    """Answer every queued proposal of broker 1 as a controller that accepts it (version + 1)."""
    leader = brokers.rms[1]
    manager = leader.isr_manager
    assert isinstance(manager, AlterIsrManager)
    for proposal in list(manager.unsent.values()):
        manager.done(proposal)
        leader._on_isr_result(proposal, proposal.leader_and_isr.with_zk_version(proposal.leader_and_isr.zk_version + 1))


async def test_a_leader_and_isr_naming_a_dead_leader_leaves_the_leader_s_isr_and_version_alone(
        brokers: Brokers) -> None:
    """Audit #6: Kafka's makeFollowers only creates the log when the new leader is not alive: the Partition (ISR,
    zkVersion, pending change) stays as AlterIsr left it, rather than going back to the last LeaderAndIsr's."""
    queued_shrink(brokers)
    confirm_all(brokers)
    leader = brokers.rms[1]
    partition = leader.partition(TP)
    assert partition is not None and (partition.isr, partition.zk_version) == ((1,), 1)
    response = leader.handle_control_request(leader_and_isr(state(leader=7, leader_epoch=1, isr=(7,),
                                                                  replicas=(1, 2, 3, 7))))
    assert response.partition_errors == ((TP, Errors.NONE),)
    assert (partition.is_leader, partition.leader_epoch, partition.isr, partition.zk_version) == (True, 0, (1,), 1)


async def test_a_leader_and_isr_naming_a_dead_leader_leaves_a_follower_s_fetcher_alone(brokers: Brokers) -> None:
    """Audit #6, the follower side: a partition its fetcher dropped (fenced) is not re-added for the old leader."""
    brokers.lead(state(leader_epoch=0))
    brokers.rms[1].handle_control_request(leader_and_isr(state(leader=1, leader_epoch=1)))
    fetcher = brokers.rms[2].fetchers[1]
    await fetcher.fetch_once()
    assert fetcher.fetching == {}  # fenced: awaits the new LeaderAndIsr
    brokers.rms[2].handle_control_request(leader_and_isr(state(leader=7, leader_epoch=1, replicas=(1, 2, 3, 7))))
    assert all(not f.fetching for f in brokers.rms[2].fetchers.values())


async def test_a_new_partition_whose_leader_is_dead_gets_a_log_and_no_role(brokers: Brokers) -> None:
    """Kafka's createLogIfNotExists: the log exists (a restart's offsets are kept), no leadership, no fetcher."""
    rm = brokers.rms[2]
    rm.handle_control_request(leader_and_isr(state(leader=7, leader_epoch=0, replicas=(2, 7))))
    partition = rm.partition(TP)
    assert partition is not None and partition.leader == -1 and not rm.fetchers


async def test_stop_replica_without_delete_leaves_a_leader_leading(brokers: Brokers) -> None:
    """Audit #10: Kafka's stopPartitions(delete=false) only removes fetchers, so a leader keeps serving its
    followers' fetches and checking its ISR until a LeaderAndIsr or a deleting StopReplica."""
    brokers.lead(state())
    leader = brokers.rms[1]
    leader.append(TP, 3)
    response = leader.handle_control_request(stop_replica((0, 1, False)))
    assert response.partition_errors == ((TP, Errors.NONE),)
    partition = leader.partition(TP)
    assert partition is not None and partition.is_leader and leader.leader_partitions() == [TP]
    await brokers.rms[2].fetchers[1].fetch_once()
    assert brokers.rms[2].log_end_offset(TP) == 3
    brokers.rms[2].handle_control_request(stop_replica((0, 1, False)))
    assert all(not f.fetching for f in brokers.rms[2].fetchers.values())  # the follower stops fetching
    brokers.rms[3].pause_fetchers()
    brokers.clock.advance(LAG_MS + 1)
    assert [p.leader_and_isr.isr for p in leader.maybe_shrink_isr()] == [(1,)]


async def test_a_leader_and_isr_that_leaves_a_partition_without_a_log_marks_it_offline(brokers: Brokers) -> None:
    """Audit #11: Kafka's becomeLeaderOrFollower ends with markPartitionOffline for every named partition without
    a local log (here: refused, as this broker is not in its replicas); later requests get KAFKA_STORAGE_ERROR."""
    rm = brokers.rms[3]
    refused = rm.handle_control_request(leader_and_isr(state(isr=(1, 2), replicas=(1, 2))))
    assert refused.partition_errors == ((TP, Errors.UNKNOWN_TOPIC_OR_PARTITION),)
    assert rm.control_plane.offline_partitions == {TP} and rm.partition(TP) is None
    again = rm.handle_control_request(leader_and_isr(state(leader_epoch=1)))
    assert again.partition_errors == ((TP, Errors.KAFKA_STORAGE_ERROR),)
    assert rm.handle_control_request(stop_replica((0, 1, True))).partition_errors == (
        (TP, Errors.KAFKA_STORAGE_ERROR),)
    fetch = FetchRequest(1, (FetchPartition(TP, 1, 0),))
    assert rm.handle_fetch(fetch).partitions[0].error is Errors.KAFKA_STORAGE_ERROR


async def test_partitions_accepted_or_already_hosted_are_not_marked_offline(brokers: Brokers) -> None:
    rm = brokers.rms[3]
    rm.handle_control_request(leader_and_isr(state(leader_epoch=2)))
    stale = rm.handle_control_request(leader_and_isr(state(leader_epoch=1)))
    assert stale.partition_errors == ((TP, Errors.STALE_CONTROLLER_EPOCH),)
    dead_leader = rm.handle_control_request(leader_and_isr(state(leader=7, leader_epoch=0, partition=1,
                                                                 replicas=(3, 7))))
    assert dead_leader.partition_errors == ((TopicPartition("t", 1), Errors.NONE),)
    assert rm.control_plane.offline_partitions == frozenset()


async def test_a_new_leader_does_not_count_a_follower_caught_up_by_the_election_time_log_end(
        brokers: Brokers) -> None:
    """Audit #17: Kafka's makeLeader, for a broker that was not leading, resets each remote replica's fetch state
    (lastFetchLeaderLogEndOffset -1, lastFetchTimeMs 0): a non-ISR follower whose first fetch reaches the LEO of
    the election, but not the current LEO, is not caught up."""
    brokers.lead(state(isr=(1, 2)))
    brokers.rms[1].append(TP, 10)
    await brokers.fetch_all()
    await brokers.fetch_all()
    brokers.lead(state(leader=2, leader_epoch=1, isr=(2,)))
    new_leader = brokers.rms[2]
    brokers.clock.advance(5)
    new_leader.append(TP, 5)
    assert brokers.rms[3].log_end_offset(TP) == 10
    await brokers.rms[3].fetchers[2].fetch_once()
    follower = new_leader.partition(TP).followers[3]  # type: ignore[union-attr]
    assert (follower.log_end_offset, follower.last_caught_up_time_ms) == (10, 0)
    await brokers.rms[3].fetchers[2].fetch_once()  # now at the leader's LEO: caught up
    assert follower.last_caught_up_time_ms == brokers.clock()


async def test_the_shrink_line_joins_out_of_sync_replicas_with_a_space(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    """Audit #16: Kafka's maybeShrinkIsr joins them with mkString(" ")."""
    caplog.set_level(logging.INFO, logger="kafka.cluster.Partition")
    queued_shrink(brokers)
    assert "[Partition t-0 broker=1] Shrinking ISR from 1,2,3 to 1. Leader: (highWatermark: 0, endOffset: 1). " \
           "Out of sync replicas: (brokerId: 2, endOffset: -1) (brokerId: 3, endOffset: -1)." in caplog.messages
