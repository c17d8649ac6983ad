"""Audit #16: the broker's per-partition lines read as Kafka 2.8.2's, text, level and logger: the ISR proposal
and its failed answers (``Partition.sendAlterIsrRequest`` / ``handleAlterIsrResponse``), the AlterIsr manager's
warnings (``DefaultAlterIsrManager.handleAlterIsrResponse``) and the topic-id mismatch
(``Partition.checkOrSetTopicId``)."""

from __future__ import annotations

import logging
import random

import pytest
from tests.helpers import ManualClock

from zkcontroller.broker.alter_isr_manager import AlterIsrManager
from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.partition import IsrProposal, Partition
from zkcontroller.broker.replica_fetcher import ReplicaFetcher
from zkcontroller.model import Broker, LeaderAndIsr, TopicId, TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import AlterIsrResponse
from zkcontroller.runtime.runtime import AsyncioRuntime

from .helpers import MY_EPOCH, broker, lai_state, leader_and_isr, update_metadata
from .replica_helpers import Brokers, state

TP = TopicPartition("t", 0)
PARTITION_LOGGER = "kafka.cluster.Partition"
SHRINK = "PendingShrinkIsr(isr=Set(1, 2, 3), outOfSyncReplicaIds=Set(2, 3))"


def lines(caplog: pytest.LogCaptureFixture, logger: str = PARTITION_LOGGER) -> list[tuple[int, str]]:
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == logger]


def proposed_shrink() -> tuple[Partition, IsrProposal]:
    """Broker 1 leads t-0 with ISR 1,2,3 and LEO 5; neither follower has fetched, so both go."""
    partition = Partition(TP, 1, replica_lag_time_max_ms=100)
    partition.make_leader(4, (1, 2, 3), (1, 2, 3), 7, 1, now_ms=0)
    partition.append_as_leader(5, 0)
    proposal = partition.maybe_shrink_isr(1_000, 100)
    assert proposal is not None and proposal.leader_and_isr.isr == (1,)
    return partition, proposal


def test_a_proposed_shrink_is_enqueued_with_kafkas_debug_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, PARTITION_LOGGER)
    proposed_shrink()
    assert lines(caplog) == [
        (logging.INFO, "[Partition t-0 broker=1] Shrinking ISR from 1,2,3 to 1. Leader: (highWatermark: 0, "
                       "endOffset: 5). Out of sync replicas: (brokerId: 2, endOffset: -1) (brokerId: 3, endOffset: "
                       "-1)."),
        (logging.DEBUG, "[Partition t-0 broker=1] Enqueued ISR change to state LeaderAndIsr(leader=1, "
                        f"leaderEpoch=4, isr=List(1), zkVersion=7) after transition to {SHRINK}"),
    ]


def test_a_proposed_expansion_is_enqueued_without_2_6s_expanding_line(caplog: pytest.LogCaptureFixture) -> None:
    """Kafka 2.8.2's expandIsr writes no "Expanding ISR" (2.6 did, at INFO): only the DEBUG "Enqueued"."""
    caplog.set_level(logging.DEBUG, PARTITION_LOGGER)
    partition = Partition(TP, 1)
    partition.make_leader(4, (1, 2), (1, 2, 3), 7, 1, now_ms=0)
    partition.followers[3].log_end_offset = 0
    assert partition.maybe_expand_isr(3) is not None
    assert lines(caplog) == [(logging.DEBUG, "[Partition t-0 broker=1] Enqueued ISR change to state LeaderAndIsr("
                                             "leader=1, leaderEpoch=4, isr=List(1, 2, 3), zkVersion=7) after "
                                             "transition to PendingExpandIsr(isr=Set(1, 2), newInSyncReplicaId=3)")]


@pytest.mark.parametrize(("error", "level", "text"), [
    (Errors.FENCED_LEADER_EPOCH, logging.DEBUG, "since we sent an old leader epoch. Giving up."),
    (Errors.INVALID_UPDATE_VERSION, logging.DEBUG, "due to invalid version. Giving up."),
    (Errors.UNKNOWN_TOPIC_OR_PARTITION, logging.DEBUG,
     "since it doesn't know about this topic or partition. Giving up."),
    (Errors.UNKNOWN_SERVER_ERROR, logging.WARNING, "due to unexpected UNKNOWN_SERVER_ERROR. Retrying."),
    (Errors.INELIGIBLE_REPLICA, logging.INFO, "since the controller rejected the request with INELIGIBLE_REPLICA. "
                                              "ISR state has been reset to the latest committed state "
                                              "CommittedIsr(isr=Set(1, 2, 3))."),
], ids=lambda v: v.name if isinstance(v, Errors) else "")
def test_a_failed_isr_update_is_logged_as_kafkas_handle_alter_isr_response(
        caplog: pytest.LogCaptureFixture, error: Errors, level: int, text: str) -> None:
    """Kafka 2.8.2 gives a refusal up at DEBUG and retries anything else at WARN (ours warned on every error);
    INELIGIBLE_REPLICA, beyond 2.8, is said at INFO as Kafka 3.3's reset."""
    partition, proposal = proposed_shrink()
    caplog.set_level(logging.DEBUG, PARTITION_LOGGER)
    caplog.clear()
    partition.on_isr_update(proposal, error, 1_000)
    assert lines(caplog) == [(level, f"[Partition t-0 broker=1] Failed to update ISR to {SHRINK} {text}")]


def test_a_stale_isr_answer_is_ignored_with_kafkas_debug_line(caplog: pytest.LogCaptureFixture) -> None:
    partition, proposal = proposed_shrink()
    caplog.set_level(logging.DEBUG, PARTITION_LOGGER)
    caplog.clear()
    partition.on_isr_update(proposal, LeaderAndIsr(1, 5, (1,), 8), 1_000)
    partition.on_isr_update(proposal, LeaderAndIsr(1, 4, (1,), 6), 1_000)
    assert [m for _, m in lines(caplog)] == [
        "[Partition t-0 broker=1] Ignoring new ISR LeaderAndIsr(leader=1, leaderEpoch=5, isr=List(1), zkVersion=8) "
        "since we have a stale leader epoch 4.",
        "[Partition t-0 broker=1] Ignoring new ISR LeaderAndIsr(leader=1, leaderEpoch=4, isr=List(1), zkVersion=6) "
        "since we have a newer version 7.",
    ]


def test_nothing_is_formatted_when_the_level_is_off(caplog: pytest.LogCaptureFixture,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A controller failover can refuse thousands of proposals at once: at INFO the DEBUG lines cost nothing."""
    caplog.set_level(logging.INFO, PARTITION_LOGGER)
    partition, proposal = proposed_shrink()

    def never(*_: object) -> str:
        raise AssertionError("formatted a line nobody logs")

    monkeypatch.setattr(Partition, "_proposed_state", never)
    monkeypatch.setattr("zkcontroller.broker.partition._leader_and_isr", never)
    partition.on_isr_update(proposal, Errors.FENCED_LEADER_EPOCH, 1_000)
    partition.on_isr_update(proposal, LeaderAndIsr(1, 5, (1,), 8), 1_000)
    partition.isr_update_refused = False
    partition.pending_isr = None
    assert partition.maybe_shrink_isr(2_000, 100) is not None  # the "Enqueued" line is DEBUG too


def test_a_topic_id_mismatch_is_logged_with_kafkas_text(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "state.change.logger")
    plane = BrokerControlPlane(1, MY_EPOCH)
    plane.handle(update_metadata())
    id_a, id_b = TopicId(b"a" * 16), TopicId(b"b" * 16)
    plane.handle(leader_and_isr(lai_state(0), topic_ids={"t": id_a}))
    plane.handle(leader_and_isr(lai_state(0, leader_epoch=1), topic_ids={"t": id_b}))
    assert (logging.ERROR, f"[Broker id=1] Topic Id in memory: {id_a} does not match the topic Id for partition "
                           f"t-0 provided in the request: {id_b}.") in lines(caplog, "state.change.logger")


@pytest.mark.parametrize(("answer", "level", "text"), [
    (AlterIsrResponse(Errors.STALE_BROKER_EPOCH), logging.WARNING, "Broker had a stale broker epoch (77), retrying."),
    (AlterIsrResponse(Errors.UNKNOWN_SERVER_ERROR), logging.WARNING,
     "Controller returned an unexpected top-level error when handling AlterIsr request: UNKNOWN_SERVER_ERROR"),
    (AlterIsrResponse(Errors.NONE), logging.WARNING, "Partition t-0 was sent but not included in the response"),
    (AlterIsrResponse(Errors.NOT_CONTROLLER), logging.DEBUG,
     "Controller 2 answered AlterIsr with NOT_CONTROLLER; retrying"),
], ids=["stale-broker-epoch", "unexpected", "not-answered", "not-controller"])
async def test_the_alter_isr_managers_lines_are_kafkas(caplog: pytest.LogCaptureFixture, answer: AlterIsrResponse,
                                                       level: int, text: str) -> None:
    """Kafka 2.8.2's DefaultAlterIsrManager warns on a stale broker epoch, an unexpected top-level error and a
    partition missing from the answer (ours said all three at DEBUG); NOT_CONTROLLER its channel re-queues
    silently."""
    caplog.set_level(logging.DEBUG, "kafka.server.DefaultAlterIsrManager")
    _, proposal = proposed_shrink()

    class Answers:
        async def send(self, broker: Broker, request: object) -> AlterIsrResponse:
            return answer

    results: list[object] = []
    manager = AlterIsrManager(1, lambda: 77, lambda: broker(2), Answers(),  # type: ignore[arg-type]
                              AsyncioRuntime(random.Random(0), ManualClock()), ReplicationConfig(),
                              lambda p, r: results.append(r))
    assert await manager.send({TP: proposal}) is (answer.error is Errors.NONE)
    assert lines(caplog, "kafka.server.DefaultAlterIsrManager") == [(level, text)]  # no logIdent, as Kafka's
    assert results == []  # nothing answered: the proposal stays to be sent again


async def test_the_fetchers_per_partition_debug_lines_are_formatted_only_when_enabled(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Broker 2 follows broker 1 at leader epoch 1 while broker 1 is still at 0: UNKNOWN_LEADER_EPOCH, one DEBUG
    line per partition (Kafka's processFetchRequest), built only when DEBUG is on."""
    brokers = Brokers()
    try:
        brokers.lead(state())
        brokers.rms[3].pause_fetchers()
        follower = brokers.rms[2]
        assert follower.handle_control_request(leader_and_isr(state(leader_epoch=1))).error is Errors.NONE
        built: list[int] = []
        monkeypatch.setattr(ReplicaFetcher, "_log", lambda self, level, message: built.append(level))
        caplog.set_level(logging.INFO, "kafka.server.ReplicaFetcherThread")
        await brokers.fetch_all()
        assert built == []
        monkeypatch.undo()
        caplog.set_level(logging.DEBUG, "kafka.server.ReplicaFetcherThread")
        brokers.clock.advance(10_000)  # past the partition's fetch back-off
        await brokers.fetch_all()
        assert (logging.DEBUG, "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Remote broker has a smaller "
                               "leader epoch for partition t-0 than this replica's current leader epoch of 1.") in \
            lines(caplog, "kafka.server.ReplicaFetcherThread")
    finally:
        brokers.close()
