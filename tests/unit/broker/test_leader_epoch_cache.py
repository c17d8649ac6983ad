"""The leader epoch cache (Kafka 2.8's ``LeaderEpochFileCache``) and truncation on fetch with it: the leader
answers where the follower's last epoch really ended in its log (before, an older epoch was answered the start of
the leader's own epoch), the follower truncates by its own cache (``getOffsetTruncationState``), followers build
the cache from the epochs of the batches they fetch, and a restart keeps it (the journal), so a restarted follower
with a known epoch keeps its log instead of truncating to its high watermark."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.leader_epoch_cache import LeaderEpochCache
from zkcontroller.broker.log_offsets_journal import JOURNAL_NAME, LogOffsetsJournal, RecoveredLog
from zkcontroller.broker.partition import Partition
from zkcontroller.broker.replica_manager import ReplicaManager
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import EpochEntry, FetchPartition, FetchRequest

from .helpers import MY_EPOCH, leader_and_isr, update_metadata
from .replica_helpers import Brokers, state

TP = TopicPartition("t", 0)
E = EpochEntry


def test_assign_adds_new_epochs_only_and_drops_conflicting_entries(caplog: pytest.LogCaptureFixture) -> None:
    cache = LeaderEpochCache(TP)
    assert cache.assign(0, 0) and cache.assign(2, 5)
    assert not cache.assign(2, 9)  # the same epoch further on: nothing new
    assert cache.assign(3, 5)  # epoch 2 had no records: replaced without a warning
    assert cache.entries == (E(0, 0), E(3, 5)) and caplog.records == []
    assert cache.assign(1, 3)  # conflicting: 3 at 5 goes, with Kafka's warning
    assert cache.entries == (E(0, 0), E(1, 3)) and cache.latest_epoch == 1
    assert caplog.messages == ["[LeaderEpochCache t-0] New epoch entry EpochEntry(epoch=1, startOffset=3) caused "
                               "truncation of conflicting entries ListBuffer(EpochEntry(epoch=3, startOffset=5)). "
                               "Cache now contains 1 entries."]  # counted before the put, as Kafka
    with pytest.raises(ValueError, match="invalid partition leader epoch entry"):
        cache.assign(-1, 4)


def test_end_offset_for_is_kafkas() -> None:
    """``endOffsetFor``: the latest epoch ends at the log end; another at the next epoch's start, answered with
    the largest epoch at most the one asked; below every epoch, the first start; above all, undefined."""
    cache = LeaderEpochCache(TP, (E(1, 0), E(3, 10), E(6, 25)))
    assert cache.end_offset_for(6, 40) == (6, 40)
    assert cache.end_offset_for(3, 40) == (3, 25)
    assert cache.end_offset_for(4, 40) == (3, 25)  # epoch 4 is unknown here: 3 is the largest below it
    assert cache.end_offset_for(0, 40) == (0, 0)
    assert cache.end_offset_for(7, 40) == (-1, -1)
    assert cache.end_offset_for(-1, 40) == (-1, -1)
    assert LeaderEpochCache(TP).end_offset_for(1, 40) == (-1, -1)


def test_epochs_in_a_range_and_truncation_from_the_end() -> None:
    flushed: list[tuple[EpochEntry, ...]] = []
    cache = LeaderEpochCache(TP, (E(1, 0), E(3, 10), E(6, 25)), flush=lambda _tp, entries: flushed.append(entries))
    assert cache.epochs_in(30, 35) == (E(6, 30),)
    assert cache.epochs_in(5, 26) == (E(1, 5), E(3, 10), E(6, 25))
    assert cache.epochs_in(10, 25) == (E(3, 10),)
    assert cache.epochs_in(5, 5) == ()
    cache.truncate_from_end(26)
    assert flushed == []  # nothing starts at or after 26
    cache.truncate_from_end(10)
    assert cache.entries == (E(1, 0),) and flushed == [(E(1, 0),)]


async def test_the_leader_answers_where_an_older_epoch_really_ended() -> None:
    """Follower 2 holds offsets 5-7 from epoch 0 (leader 1) that broker 3 never had. Broker 3, elected at epoch 1
    (unclean), appends 5-6, then leads on at epoch 2 from 7 (a new epoch, the same leader) and appends 7-9.
    Follower 2's epoch 0 ended at 5 in broker 3's log: it truncates there and fetches 5-9, epochs 1 and 2
    included. Without an epoch cache the leader answered its own epoch's start, 7, and 5-6 were kept."""
    brokers = Brokers()
    try:
        brokers.lead(state())
        brokers.rms[1].append(TP, 5)
        await brokers.fetch_all()
        brokers.rms[3].pause_fetchers()
        brokers.rms[1].append(TP, 3)
        await brokers.rms[2].fetchers[1].fetch_once()
        follower = brokers.rms[2].partition(TP)
        assert follower is not None and follower.log_end_offset == 8
        brokers.rms[3].handle_control_request(leader_and_isr(state(leader=3, leader_epoch=1, isr=(3,),
                                                                   zk_version=1)))
        brokers.rms[3].append(TP, 2)
        brokers.rms[3].handle_control_request(leader_and_isr(state(leader=3, leader_epoch=2, isr=(3,),
                                                                   zk_version=2)))
        brokers.rms[3].append(TP, 3)
        (answer,) = brokers.rms[3].handle_fetch(
            FetchRequest(2, (FetchPartition(TP, 2, 8, last_fetched_epoch=0),))).partitions
        assert (answer.error, answer.records, answer.diverging_epoch, answer.diverging_end_offset) == (
            Errors.NONE, 0, 0, 5)  # before: 7
        assert brokers.rms[3].partition(TP).epoch_cache.entries == (E(0, 0), E(1, 5), E(2, 7))  # type: ignore[union-attr]
        brokers.rms[2].handle_control_request(leader_and_isr(state(leader=3, leader_epoch=2, isr=(3,),
                                                                   zk_version=2)))
        await brokers.rms[2].fetchers[3].fetch_once()
        assert follower.log_end_offset == 5
        await brokers.rms[2].fetchers[3].fetch_once()
        assert follower.log_end_offset == 10
        assert follower.epoch_cache.entries == (E(0, 0), E(1, 5), E(2, 7))
    finally:
        brokers.close()


async def test_a_follower_truncates_to_its_own_end_of_an_epoch_it_does_not_know_then_asks_again(
        caplog: pytest.LogCaptureFixture) -> None:
    """``getOffsetTruncationState``: the leader answers epoch 1 ending at 7; follower 2 never had epoch 1 (its
    cache is 0 at 0, 2 at 4: it led at epoch 2 and appended 4-8 alone), so it truncates to where its largest epoch
    below 1 ends, 4, logs Kafka's INFO line, and the next fetch asks again with epoch 0: the leader's epoch 0 ends at
    4 too, so nothing diverges any more and 4-... is fetched."""
    brokers = Brokers()
    try:
        brokers.lead(state())
        brokers.rms[1].append(TP, 4)
        await brokers.fetch_all()
        follower = brokers.rms[2].partition(TP)
        assert follower is not None
        follower.append_as_follower(5, 4, epochs=(E(2, 4),))  # as if it had led epoch 2 alone
        assert follower.epoch_cache.entries == (E(0, 0), E(2, 4)) and follower.log_end_offset == 9
        leader = brokers.rms[3]
        leader.handle_control_request(leader_and_isr(state(leader=3, leader_epoch=1, isr=(3,), zk_version=1)))
        leader.append(TP, 3)
        leader.handle_control_request(leader_and_isr(state(leader=3, leader_epoch=3, isr=(3,), zk_version=2)))
        leader.append(TP, 1)
        brokers.rms[2].handle_control_request(leader_and_isr(state(leader=3, leader_epoch=3, isr=(3,),
                                                                   zk_version=2)))
        with caplog.at_level(logging.INFO, "kafka.server.ReplicaFetcherThread"):
            await brokers.rms[2].fetchers[3].fetch_once()
        assert follower.log_end_offset == 4 and follower.last_fetched_epoch == 0
        assert ("Based on replica's leader epoch, leader replied with epoch 1 unknown to the replica for t-0. Will "
                "truncate to 4 and send another leader epoch request to the leader.") in caplog.messages[-1]
        await brokers.rms[2].fetchers[3].fetch_once()
        assert follower.log_end_offset == 8
        assert follower.epoch_cache.entries == (E(0, 0), E(1, 4), E(3, 7))
    finally:
        brokers.close()


async def test_a_restarted_follower_with_a_known_epoch_keeps_its_log(brokers: Brokers) -> None:
    """Broker 2 has 8 records of epoch 0, its HW 6 (the answer that would have brought 8 was lost); it restarts
    and, from its recovered logs, follows the new leader 1 at epoch 1. Its epoch survived the restart, so it keeps
    6-7 for truncation on fetch (which finds nothing to truncate) instead of truncating to its HW 6."""
    brokers.lead(state())
    brokers.rms[1].append(TP, 8)
    for _ in range(3):
        await brokers.fetch_all()
    before = brokers.rms[2].partition(TP)
    assert before is not None
    before.high_watermark = 6
    kept = brokers.rms[2].log_offsets()
    assert kept == {TP: (8, 6)}
    restarted = ReplicaManager(BrokerControlPlane(2, MY_EPOCH), brokers.transport, brokers.runtime,
                               brokers.rms[2].config, recovered_logs=kept)
    try:
        restarted.control_plane.handle(update_metadata(live=(1, 2, 3), controller_id=1))
        restarted.handle_control_request(leader_and_isr(state(leader_epoch=1, zk_version=1)))
        assert restarted.log_end_offset(TP) == 8  # before: truncated to 6
        partition = restarted.partition(TP)
        assert partition is not None and partition.last_fetched_epoch == 0
        assert kept[TP].epochs == (E(0, 0),)  # type: ignore[attr-defined]
    finally:
        restarted.shutdown()


def test_the_journal_keeps_each_logs_epochs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Written through as the cache changes, read back last-line-wins (a rewrite keeps them), forgotten with the
    log; an unreadable epochs line is skipped with the journal's warning, an older journal gives no epochs."""
    a0, a1 = TP, TopicPartition("t", 1)
    journal = LogOffsetsJournal(tmp_path, compact_bytes=300)
    p = Partition(a0, 1)
    p.journal, p.epoch_cache.flush = journal.record, journal.record_epochs
    p.make_leader(3, (1,), (1,), 0, 1, now_ms=0)
    p.append_as_leader(4, now_ms=0)
    p.make_leader(5, (1,), (1,), 1, 1, now_ms=0)
    journal.record(a1, 9, 9)
    journal.record_epochs(a1, (E(1, 0),))
    journal.forget(a1)
    journal.close()
    again = LogOffsetsJournal(tmp_path, compact_bytes=300)
    recovered = again.recovered()
    assert recovered == {a0: (4, 4)} and isinstance(recovered[a0], RecoveredLog)
    assert recovered[a0].epochs == (E(3, 0), E(5, 4))  # type: ignore[attr-defined]
    for offset in range(5, 40):  # past compact_bytes: rewritten whole
        again.record(a0, offset, offset)
    again.close()
    third = LogOffsetsJournal(tmp_path)
    assert third.recovered()[a0].epochs == (E(3, 0), E(5, 4))  # type: ignore[attr-defined]
    third.close()
    (tmp_path / JOURNAL_NAME).write_text("t\t0\t5\t5\nt\t0\tepochs\t3:0,2:4\nt\t1\t2\t2\n")
    with caplog.at_level(logging.WARNING, "kafka.log.LogManager"):
        fourth = LogOffsetsJournal(tmp_path)
    assert {tp: log.epochs for tp, log in fourth.recovered().items()} == {a0: (), a1: ()}  # type: ignore[attr-defined]
    assert any("Skipping unreadable line 2" in r.getMessage() for r in caplog.records)
    fourth.close()


def test_a_restart_drops_epochs_beyond_the_log_end() -> None:
    """As Kafka's ``Log`` on load (``truncateFromEnd`` at the log end): an epoch begun as leader without records
    is not a last epoch after a restart."""
    p = Partition(TP, 1)
    p.log_end_offset = 4
    p.restore_epochs((E(0, 0), E(2, 4)))
    assert p.epoch_cache.entries == (E(0, 0),) and p.last_fetched_epoch == 0


def test_a_leader_restarted_at_its_epoch_adds_no_entry_and_still_resets_its_followers() -> None:
    """A restarted broker told to lead at the epoch its cache already ends with (Kafka's ``assign`` ignores the
    same epoch further on): the cache is unchanged, and the followers in the ISR count as caught up now, as for
    any new leadership."""
    p = Partition(TP, 1)
    p.log_end_offset = 8
    p.restore_epochs((E(0, 0), E(3, 5)))
    p.make_leader(3, (1, 2), (1, 2), 0, 1, now_ms=500)
    assert p.epoch_cache.entries == (E(0, 0), E(3, 5)) and p.last_fetched_epoch == 3
    assert p.followers[2].last_caught_up_time_ms == 500
