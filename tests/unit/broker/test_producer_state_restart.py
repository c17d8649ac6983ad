"""Idempotent-producer state kept across a broker restart, as Kafka keeps it with its producer snapshots and the
log it replays after them (``Log.loadProducerState``): our logs hold offsets only, so the batches' headers are
journaled as they are appended (`LogOffsetsJournal.record_producer_batches`) and carried in `RecoveredLog` for an
in-process restart. Before, a restarted broker started with no producer state: leading again, it appended a retry of
a batch it already held a second time (the simulator's ``idempotent-failover`` duplicates)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.log_offsets_journal import JOURNAL_NAME, LogOffsetsJournal, RecoveredLog
from zkcontroller.broker.producer_state import DEFAULT_PRODUCER_ID_EXPIRATION_MS
from zkcontroller.broker.replica_manager import ReplicaManager
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import ReplicatedBatch

from .helpers import MY_EPOCH, leader_and_isr, update_metadata
from .replica_helpers import Brokers, state
from .test_producer_state_replica_manager import NONE, OUT_OF_ORDER_SEQUENCE_NUMBER, PID, TP, idempotent, send


def restart(brokers: Brokers, broker: int, recovered: dict[TopicPartition, tuple[int, int]],
            journal: LogOffsetsJournal | None = None) -> ReplicaManager:
    """Broker ``broker`` restarted with ``recovered`` logs, then elected leader of t-0 at epoch 1 (ISR 2,3)."""
    brokers.rms[broker].shutdown()
    rm = ReplicaManager(BrokerControlPlane(broker, MY_EPOCH), brokers.transport, brokers.runtime,
                        brokers.rms[broker].config, recovered_logs=recovered, journal=journal)
    brokers.rms[broker] = rm
    assert rm.control_plane.handle(update_metadata(live=(1, 2, 3), controller_id=1)).error is Errors.NONE
    response = rm.handle_control_request(leader_and_isr(state(leader=broker, leader_epoch=1, isr=(2, 3),
                                                              zk_version=1)))
    assert response.partition_errors[0][1] is Errors.NONE
    return rm


def journaled(brokers: Brokers, broker: int, log_dir: Path) -> LogOffsetsJournal:
    """Give broker ``broker`` a journal (a broker process's log dir), as `KafkaServer` does."""
    journal = LogOffsetsJournal(log_dir)
    old = brokers.rms[broker]
    rm = ReplicaManager(BrokerControlPlane(broker, MY_EPOCH), brokers.transport, brokers.runtime, old.config,
                        journal=journal)
    old.shutdown()
    assert rm.control_plane.handle(update_metadata(live=(1, 2, 3), controller_id=1)).error is Errors.NONE
    rm.isr_manager = old.isr_manager
    brokers.rms[broker] = rm
    brokers.transport.register(broker, brokers._handler(rm, None))
    return journal


async def test_an_in_process_restart_keeps_the_replicated_producer_state(brokers: Brokers) -> None:
    """Broker 2 replicated seq 0-2 and 3; restarted (LocalCluster, the simulator: `log_offsets`) and elected, it
    answers a retry of either with its original offsets and refuses a gap. Before: appended again at 4."""
    now = brokers.clock()
    brokers.lead(state())
    assert await send(brokers.rms[1], idempotent(3, 0, now)) == (NONE, 0)
    assert await send(brokers.rms[1], idempotent(1, 3, now)) == (NONE, 3)
    await brokers.fetch_all()
    kept = brokers.rms[2].log_offsets()
    leader = restart(brokers, 2, kept)
    assert await send(leader, idempotent(3, 0, now)) == (NONE, 0)
    assert await send(leader, idempotent(1, 3, now)) == (NONE, 3)
    assert leader.log_end_offset(TP) == 4
    assert await send(leader, idempotent(1, 5, now)) == (OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert await send(leader, idempotent(1, 4, now)) == (NONE, 4)
    assert kept[TP].producers == (ReplicatedBatch(0, 2, PID, 0, 0, now),  # type: ignore[attr-defined]
                                  ReplicatedBatch(3, 3, PID, 0, 3, now))


async def test_a_restart_from_the_journal_on_disk_keeps_the_producer_state(brokers: Brokers, tmp_path: Path) -> None:
    """The same through the journal a broker process writes: broker 2's replicated batches are journaled as it
    fetches them; a new process reading the journal, elected, deduplicates the retry. Before: appended again."""
    now = brokers.clock()
    journal = journaled(brokers, 2, tmp_path)
    brokers.lead(state())
    assert await send(brokers.rms[1], idempotent(3, 0, now)) == (NONE, 0)
    brokers.rms[1].append(TP, 2)  # plain records: no journal line of their own beyond the offsets
    assert await send(brokers.rms[1], idempotent(2, 3, now)) == (NONE, 5)
    await brokers.fetch_all()
    assert brokers.rms[2].log_end_offset(TP) == 7
    journal.close()
    text = (tmp_path / JOURNAL_NAME).read_text()
    assert text.count("\tproducers\t") == 1  # one fetch, one line (the three appends came in one answer)
    again = LogOffsetsJournal(tmp_path)
    leader = restart(brokers, 2, again.recovered(), again)
    try:
        assert await send(leader, idempotent(2, 3, now)) == (NONE, 5)
        assert await send(leader, idempotent(3, 0, now)) == (NONE, 0)
        assert await send(leader, idempotent(1, 5, now)) == (NONE, 7)
        assert leader.log_end_offset(TP) == 8
    finally:
        again.close()
    third = LogOffsetsJournal(tmp_path)  # the batch the restarted leader appended was journaled too
    assert [b.base_sequence for b in third.recovered()[TP].producers] == [0, 3, 5]  # type: ignore[attr-defined]
    third.close()


async def test_a_truncation_before_the_restart_is_respected(brokers: Brokers, tmp_path: Path) -> None:
    """Broker 2 replicated seq 0-2 (offsets 0-2) and seq 3-4 (offsets 3-4), then truncated to 3 (as on a
    diverging epoch). Restarted from its journal and elected, it deduplicates seq 0-2 but appends seq 3-4: its
    offsets 3-4 are gone, answering them would acknowledge records the log does not hold."""
    now = brokers.clock()
    journal = journaled(brokers, 2, tmp_path)
    brokers.lead(state())
    assert await send(brokers.rms[1], idempotent(3, 0, now)) == (NONE, 0)
    assert await send(brokers.rms[1], idempotent(2, 3, now)) == (NONE, 3)
    await brokers.fetch_all()
    follower = brokers.rms[2].partition(TP)
    assert follower is not None
    follower.truncate_to(3)
    journal.close()
    again = LogOffsetsJournal(tmp_path)
    recovered = again.recovered()
    leader = restart(brokers, 2, recovered, again)
    try:
        assert await send(leader, idempotent(3, 0, now)) == (NONE, 0)
        assert await send(leader, idempotent(2, 3, now)) == (NONE, 3)  # appended, at the log end 3
        assert leader.log_end_offset(TP) == 5
    finally:
        again.close()
    assert [b.last_offset for b in recovered[TP].producers] == [2]  # type: ignore[attr-defined]


async def test_a_journal_from_before_loads_with_no_producers(brokers: Brokers, tmp_path: Path) -> None:
    """A journal written before the producer lines: the logs load, with no producers (Kafka's rule for a
    producer with no entry then applies: any sequence is accepted)."""
    (tmp_path / JOURNAL_NAME).write_text("t\t0\t3\t3\nt\t0\tepochs\t0:0\n")
    journal = LogOffsetsJournal(tmp_path)
    recovered = journal.recovered()
    assert recovered == {TP: (3, 3)} and recovered[TP].producers == ()  # type: ignore[attr-defined]
    leader = restart(brokers, 2, recovered, journal)
    try:
        assert await send(leader, idempotent(1, 7, brokers.clock())) == (NONE, 3)
    finally:
        journal.close()


async def test_producers_expired_meanwhile_are_not_restored(brokers: Brokers) -> None:
    """``transactional.id.expiration.ms`` still applies across a restart (Kafka's ``loadFromSnapshot`` skips
    expired entries): a producer whose last batch is that old comes back with no entry."""
    now = brokers.clock()
    brokers.lead(state())
    assert await send(brokers.rms[1], idempotent(1, 0, now - DEFAULT_PRODUCER_ID_EXPIRATION_MS)) == (NONE, 0)
    await brokers.fetch_all()
    leader = restart(brokers, 2, brokers.rms[2].log_offsets())
    partition = leader.partition(TP)
    assert partition is not None and partition.producer_state.producers == {}


async def test_producers_expired_while_down_leave_the_journal_too(brokers: Brokers, tmp_path: Path) -> None:
    """A producer found expired at a restart is written through as expired: the journal read again no longer holds
    its batches. Before, only the in-memory state dropped it, and every later restart and compaction carried its
    batches on for ever."""
    now = brokers.clock()
    journal = journaled(brokers, 2, tmp_path)
    brokers.lead(state())
    assert await send(brokers.rms[1], idempotent(1, 0, now - DEFAULT_PRODUCER_ID_EXPIRATION_MS)) == (NONE, 0)
    await brokers.fetch_all()
    journal.close()
    again = LogOffsetsJournal(tmp_path)
    assert [b.producer_id for b in again.recovered()[TP].producers] == [PID]  # type: ignore[attr-defined]
    leader = restart(brokers, 2, again.recovered(), again)
    partition = leader.partition(TP)
    assert partition is not None and partition.producer_state.producers == {}
    again.close()
    third = LogOffsetsJournal(tmp_path)
    assert third.recovered()[TP].producers == ()  # type: ignore[attr-defined]
    third.close()


def test_the_journal_keeps_what_the_producer_state_index_keeps(tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    """Read back as `producer_state.compact` keeps them (each producer's last batch before the oldest snapshot,
    every batch after it, each producer's last 5), in offset order; trimmed by a lower log end (a truncation); an
    expired producer dropped; a rewrite keeps them and the snapshots; an unreadable producers line is skipped with
    a warning; forgotten with the log."""
    a0, a1 = TP, TopicPartition("t", 1)
    journal = LogOffsetsJournal(tmp_path, compact_bytes=600)
    for seq in range(7):
        journal.record_producer_batches(a0, [ReplicatedBatch(2 * seq, 2 * seq, 7, 0, seq, 100 + seq),
                                             ReplicatedBatch(2 * seq + 1, 2 * seq + 1, 8, 0, seq, 100 + seq)])
        journal.record(a0, 2 * seq + 2, 0)
        if seq == 2:
            journal.record_producer_snapshot(a0, 6)
    journal.record(a0, 13, 0)  # truncation: 7's seq 6 (offset 12) stays, 8's seq 6 (offset 13) goes, its seq 1
    # is still there (its last 5 below the truncation); seq 0 of both is neither among them nor the last before
    # the snapshot
    journal.record_producer_batches(a1, [ReplicatedBatch(0, 0, 9, 0, 0, 1)])
    journal.record(a1, 1, 1)
    journal.record_expired_producers(a1, [9])
    journal.close()
    again = LogOffsetsJournal(tmp_path, compact_bytes=600)
    recovered = again.recovered()
    batches = recovered[a0].producers  # type: ignore[attr-defined]
    assert [(b.producer_id, b.base_sequence) for b in batches if b.producer_id == 7] == [(7, s) for s in range(2, 7)]
    assert [(b.producer_id, b.base_sequence) for b in batches if b.producer_id == 8] == [(8, s) for s in range(1, 6)]
    assert recovered[a0].producer_snapshots == (6,)  # type: ignore[attr-defined]
    assert [b.base_offset for b in batches] == sorted(b.base_offset for b in batches)
    assert recovered[a1].producers == ()  # type: ignore[attr-defined]
    for offset in range(13, 40):  # past compact_bytes: rewritten whole
        again.record(a0, offset, offset)
    again.close()
    third = LogOffsetsJournal(tmp_path)
    assert isinstance(third.recovered()[a0], RecoveredLog)
    assert third.recovered()[a0].producers == batches  # type: ignore[attr-defined]
    assert third.recovered()[a0].producer_snapshots == (6,)  # type: ignore[attr-defined]
    third.forget(a0)
    third.record(a0, 1, 1)  # the log created again: its old producers do not come back
    third.close()
    fifth = LogOffsetsJournal(tmp_path)
    assert fifth.recovered()[a0].producers == ()  # type: ignore[attr-defined]
    fifth.close()
    (tmp_path / JOURNAL_NAME).write_text("t\t0\t5\t5\nt\t0\tproducers\t0:x:7:0:0:1\nt\t0\tproducers\t3:1:7:0:0:1\n"
                                         "t\t0\tproducers\t0:0:7:0:0:1\n")
    with caplog.at_level(logging.WARNING, "kafka.log.LogManager"):
        fourth = LogOffsetsJournal(tmp_path)
    assert fourth.recovered()[a0].producers == (ReplicatedBatch(0, 0, 7, 0, 0, 1),)  # type: ignore[attr-defined]
    assert [r.getMessage().split(" of ")[0] for r in caplog.records] == ["Skipping unreadable line 2",
                                                                          "Skipping unreadable line 3"]
    fourth.close()


def test_a_batch_journaled_beyond_the_last_log_end_is_dropped_at_open(tmp_path: Path) -> None:
    """A kill between a batch's line and the log end that holds it: the batch is not in the log, so it is dropped
    when the journal is read, not kept to come back once the log has grown past it with other records."""
    (tmp_path / JOURNAL_NAME).write_text("t\t0\t3\t3\nt\t0\tproducers\t0:2:7:0:0:1\nt\t0\tproducers\t3:5:7:0:3:1\n")
    journal = LogOffsetsJournal(tmp_path)
    journal.record(TP, 9, 9)  # plain records at 3-8
    journal.close()
    again = LogOffsetsJournal(tmp_path)
    assert [b.last_offset for b in again.recovered()[TP].producers] == [2]  # type: ignore[attr-defined]
    again.close()
