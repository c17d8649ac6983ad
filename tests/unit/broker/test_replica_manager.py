"""Leader and follower replicas (offsets only): fetch fencing by leader epoch, replication and the high
watermark, fetchers following LeaderAndIsr and StopReplica, and ISR shrink/expand decisions on the leader.
Time is a manual clock; fetches are driven one round at a time."""

from __future__ import annotations

import pytest

from zkcontroller.broker.config import ReplicationConfig, virtual_log_dirs
from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.replica_manager import NotLeaderError, ReplicaManager
from zkcontroller.cluster.kafka_server import BrokerConfig
from zkcontroller.model import LeaderAndIsr, TopicPartition
from zkcontroller.protocol.control_requests import Errors, LeaderAndIsrRequest
from zkcontroller.protocol.inter_broker import FetchPartition, FetchRequest

from .helpers import MY_EPOCH, leader_and_isr, stop_replica, um_state, update_metadata
from .replica_helpers import LAG_MS, Brokers, RecordingIsrManager, lagging_followers, state

TP = TopicPartition("t", 0)


def confirm(brokers: Brokers, leader: int = 1) -> None:
    rm = brokers.rms[leader]
    manager = rm.isr_manager
    assert isinstance(manager, RecordingIsrManager)
    for p in manager.proposals:
        rm._on_isr_result(p, p.leader_and_isr.with_zk_version(p.leader_and_isr.zk_version + 1))
    manager.proposals.clear()


def fetch(replica: int, epoch: int, offset: int = 0) -> FetchRequest:
    return FetchRequest(replica, (FetchPartition(TP, epoch, offset),))


async def test_leader_fences_older_and_newer_leader_epochs(brokers: Brokers) -> None:
    brokers.lead(state(leader_epoch=3))
    leader = brokers.rms[1]
    assert leader.handle_fetch(fetch(2, 2)).partitions[0].error is Errors.FENCED_LEADER_EPOCH
    assert leader.handle_fetch(fetch(2, 4)).partitions[0].error is Errors.UNKNOWN_LEADER_EPOCH
    assert leader.handle_fetch(fetch(2, 3)).partitions[0].error is Errors.NONE
    assert leader.handle_fetch(fetch(2, 3, offset=1)).partitions[0].error is Errors.OFFSET_OUT_OF_RANGE
    assert brokers.rms[2].handle_fetch(fetch(3, 3)).partitions[0].error is Errors.NOT_LEADER_OR_FOLLOWER


async def test_a_fetch_is_checked_for_its_leader_epoch_before_leadership(brokers: Brokers) -> None:
    """Kafka's getLocalLog: checkCurrentLeaderEpoch first, then requireLeader."""
    brokers.lead(state(leader=1, leader_epoch=0))
    brokers.lead(state(leader=2, leader_epoch=1))
    old_leader = brokers.rms[1]  # now a follower at epoch 1
    assert old_leader.handle_fetch(fetch(3, 0)).partitions[0].error is Errors.FENCED_LEADER_EPOCH
    assert old_leader.handle_fetch(fetch(3, 2)).partitions[0].error is Errors.UNKNOWN_LEADER_EPOCH
    assert old_leader.handle_fetch(fetch(3, 1)).partitions[0].error is Errors.NOT_LEADER_OR_FOLLOWER


async def test_a_replica_outside_the_assignment_gets_no_records_and_no_error(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    brokers.lead(state(isr=(1, 2), replicas=(1, 2)))
    leader = brokers.rms[1]
    leader.append(TP, 4)
    (answer,) = leader.handle_fetch(fetch(3, 0)).partitions
    assert (answer.error, answer.records, answer.high_watermark) == (Errors.NONE, 0, 0)
    assert "[ReplicaManager broker=1] Leader 1 failed to record follower 3's position 0, and last sent HW since the " \
           "replica is not recognized to be one of the assigned replicas 1,2 for partition t-0. Empty records will " \
           "be returned for this partition." in caplog.messages
    assert 3 not in leader.partition(TP).followers  # type: ignore[union-attr]
    assert leader.handle_fetch(fetch(3, 0, offset=5)).partitions[0].error is Errors.OFFSET_OUT_OF_RANGE


async def test_a_partition_not_hosted_is_not_leader_or_follower_when_the_metadata_knows_it(brokers: Brokers) -> None:
    """Kafka's getPartitionOrError: NOT_LEADER_OR_FOLLOWER for a partition in the metadata cache, else
    UNKNOWN_TOPIC_OR_PARTITION."""
    other = brokers.rms[3]
    assert other.handle_fetch(fetch(2, 0)).partitions[0].error is Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert other.handle_control_request(update_metadata(um_state(), controller_id=1)).error is Errors.NONE
    assert other.handle_fetch(fetch(2, 0)).partitions[0].error is Errors.NOT_LEADER_OR_FOLLOWER
    unknown = FetchRequest(2, (FetchPartition(TopicPartition("u", 0), 0, 0),))
    assert other.handle_fetch(unknown).partitions[0].error is Errors.UNKNOWN_TOPIC_OR_PARTITION


async def test_the_follower_logs_fetch_errors_as_kafkas_fetcher_and_backs_off(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    brokers.lead(state())
    brokers.rms[1].handle_control_request(stop_replica((0, 1, True)))  # the leader forgets t-0
    fetcher = brokers.rms[2].fetchers[1]
    await fetcher.fetch_once()
    assert ("WARNING", "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Received UNKNOWN_TOPIC_OR_PARTITION "
            "from the leader for partition t-0. This error may be returned transiently when the partition is being "
            "created or deleted, but it is not expected to persist.") in [(r.levelname, r.getMessage())
                                                                          for r in caplog.records]
    assert fetcher.fetching == {TP: 0} and await fetcher.fetch_once() is None  # delayed, still fetched
    brokers.clock.advance(brokers.rms[2].config.replica_fetch_backoff_ms)
    (log_dir,) = brokers.rms[3].control_plane.log_dirs
    brokers.rms[3].handle_log_dir_failure(log_dir)
    brokers.rms[1].handle_control_request(brokers_lai(leader=3, leader_epoch=1))
    brokers.rms[2].handle_control_request(brokers_lai(leader=3, leader_epoch=1))
    await brokers.rms[2].fetchers[3].fetch_once()  # broker 3's replica is offline: KAFKA_STORAGE_ERROR
    assert ("ERROR", "[ReplicaFetcher replicaId=2, leaderId=3, fetcherId=0] Error for partition t-0 at offset 0"
            ) in [(r.levelname, r.getMessage()) for r in caplog.records]


async def test_followers_replicate_and_the_high_watermark_follows_the_slowest_isr_member(brokers: Brokers) -> None:
    brokers.lead(state())
    leader = brokers.rms[1]
    assert leader.append(TP, 10) == 10
    assert leader.high_watermark(TP) == 0
    brokers.rms[3].pause_fetchers()
    await brokers.fetch_all()
    assert brokers.rms[2].log_end_offset(TP) == 10 and brokers.rms[3].log_end_offset(TP) == 0
    assert leader.high_watermark(TP) == 0  # broker 3, in the ISR, has nothing yet
    brokers.rms[3].resume_fetchers()
    await brokers.fetch_all()
    assert brokers.rms[3].log_end_offset(TP) == 10
    assert leader.high_watermark(TP) == 0  # the leader learns a follower's LEO from its next fetch
    await brokers.fetch_all()
    assert leader.high_watermark(TP) == 10
    await brokers.fetch_all()  # the next fetch carries the new high watermark to the followers
    assert brokers.rms[2].high_watermark(TP) == 10 and brokers.rms[3].high_watermark(TP) == 10
    with pytest.raises(NotLeaderError, match="broker 2 is not the leader of t-0"):
        brokers.rms[2].append(TP, 1)


async def test_the_high_watermark_waits_for_a_follower_outside_the_isr_caught_up_within_the_lag_time(
        brokers: Brokers) -> None:
    """Kafka's maybeIncrementLeaderHW counts a follower outside the maximal ISR while ``now - lastCaughtUpTimeMs
    <= replica.lag.time.max.ms`` (so a rejoining follower is not outrun); time alone does not move the HW."""
    brokers.lead(state(isr=(1, 2)))
    leader = brokers.rms[1]
    leader.partition(TP).isr_update_refused = True  # type: ignore[union-attr]  # broker 3 cannot join the ISR
    brokers.rms[3].pause_fetchers()
    leader.append(TP, 10)
    await brokers.fetch_all()  # broker 2 gets 10 records
    brokers.rms[3].resume_fetchers()
    await brokers.fetch_all()  # HW 10 (broker 3 never caught up yet); broker 3 fetches from 0: caught up as of then
    assert leader.high_watermark(TP) == 10
    leader.append(TP, 5)
    await brokers.fetch_all()  # both at 10 (broker 3 fetched the leader's LEO of its previous fetch: caught up)
    await brokers.fetch_all()  # both at 15
    assert leader.high_watermark(TP) == 15
    brokers.rms[3].pause_fetchers()
    leader.append(TP, 5)
    await brokers.fetch_all()
    await brokers.fetch_all()  # broker 2 at 20; broker 3, at 15, caught up less than the lag time ago
    assert leader.high_watermark(TP) == 15
    brokers.clock.advance(LAG_MS + 1)
    await brokers.fetch_all()  # broker 2's LEO does not move: the HW is not looked at
    assert leader.high_watermark(TP) == 15
    leader.append(TP, 1)  # an append looks again: broker 3 is no longer caught up within the lag time
    assert leader.high_watermark(TP) == 20


async def test_fetchers_follow_leader_and_isr_and_stop_replica(brokers: Brokers) -> None:
    brokers.lead(state(leader=1))
    assert set(brokers.rms[2].fetchers) == {1} and not brokers.rms[1].fetchers
    brokers.lead(state(leader=3, leader_epoch=1))
    assert set(brokers.rms[2].fetchers) == {3} and set(brokers.rms[1].fetchers) == {3}
    assert not brokers.rms[3].fetchers and brokers.rms[3].partition(TP).is_leader  # type: ignore[union-attr]
    brokers.rms[2].handle_control_request(stop_replica((0, 2, False)))
    assert not brokers.rms[2].fetchers and brokers.rms[2].partition(TP) is not None
    brokers.rms[1].handle_control_request(stop_replica((0, 2, True)))
    assert not brokers.rms[1].fetchers and brokers.rms[1].partition(TP) is None


async def test_a_stale_leader_and_isr_changes_nothing(brokers: Brokers) -> None:
    brokers.lead(state(leader=1, leader_epoch=5))
    brokers.rms[2].handle_control_request(brokers_lai(leader=3, leader_epoch=4))
    assert set(brokers.rms[2].fetchers) == {1}


def brokers_lai(**kw: int) -> LeaderAndIsrRequest:
    return leader_and_isr(state(**kw))


async def test_fenced_follower_stops_fetching_until_a_new_leader_and_isr(brokers: Brokers) -> None:
    brokers.lead(state(leader_epoch=0))
    # the leader moves on to epoch 1 (its LeaderAndIsr reached it), broker 2's did not yet
    brokers.rms[1].handle_control_request(brokers_lai(leader=1, leader_epoch=1))
    await brokers.rms[2].fetchers[1].fetch_once()
    assert brokers.rms[2].fetchers[1].fetching == {}  # dropped until a LeaderAndIsr brings epoch 1
    brokers.rms[2].handle_control_request(brokers_lai(leader=1, leader_epoch=1))
    assert brokers.rms[2].fetchers[1].fetching == {TP: 1}


async def test_a_lagging_follower_leaves_the_isr_after_the_lag_time_and_rejoins_once_caught_up(
        brokers: Brokers) -> None:
    brokers.lead(state())
    leader = brokers.rms[1]
    leader.append(TP, 5)
    await brokers.fetch_all()
    brokers.rms[3].pause_fetchers()
    leader.append(TP, 5)
    brokers.clock.advance(LAG_MS)
    await brokers.fetch_all()  # broker 2 catches up (as of its previous fetch, LAG_MS ago) ...
    await brokers.fetch_all()  # ... and now asks for the leader's LEO: caught up now; broker 3 is paused
    assert leader.maybe_shrink_isr() == []  # exactly the lag time: not yet
    brokers.clock.advance(1)
    (shrink,) = leader.maybe_shrink_isr()
    assert shrink.leader_and_isr == LeaderAndIsr(1, 0, (1, 2), 0)
    assert leader.maybe_shrink_isr() == []  # one change in flight at a time
    confirm(brokers)
    assert leader.partition(TP).isr == (1, 2) and leader.partition(TP).zk_version == 1  # type: ignore[union-attr]
    assert leader.high_watermark(TP) == 10  # no longer held back by broker 3
    brokers.rms[3].resume_fetchers()
    await brokers.fetch_all()  # fetches from offset 5: below the high watermark, still out
    assert leader.isr_manager.proposals == []  # type: ignore[attr-defined]
    await brokers.fetch_all()  # fetches from offset 10: reached the high watermark
    proposals = leader.isr_manager.proposals  # type: ignore[attr-defined]
    assert [p.leader_and_isr for p in proposals] == [LeaderAndIsr(1, 0, (1, 2, 3), 1)]
    confirm(brokers)
    assert leader.partition(TP).isr == (1, 2, 3) and leader.isr_shrinks == 1 and leader.isr_expands == 1  # type: ignore[union-attr]


async def test_an_idle_follower_that_has_everything_stays_in_the_isr(brokers: Brokers) -> None:
    brokers.lead(state())
    brokers.rms[1].append(TP, 3)
    await brokers.fetch_all()
    await brokers.fetch_all()  # the leader now knows both followers have offset 3
    brokers.clock.advance(10 * LAG_MS)
    assert brokers.rms[1].maybe_shrink_isr() == []


async def test_a_refused_isr_change_is_not_proposed_again_until_a_new_leader_and_isr(brokers: Brokers) -> None:
    leader = lagging_followers(brokers)
    (proposal,) = leader.maybe_shrink_isr()
    leader._on_isr_result(proposal, Errors.INVALID_UPDATE_VERSION)
    assert leader.partition(TP).isr == (1, 2, 3)  # type: ignore[union-attr]
    assert leader.maybe_shrink_isr() == []
    brokers.rms[1].handle_control_request(brokers_lai(leader=1, leader_epoch=1, zk_version=3))
    brokers.clock.advance(LAG_MS + 1)
    (again,) = leader.maybe_shrink_isr()
    assert again.leader_and_isr == LeaderAndIsr(1, 1, (1,), 3)


async def _old_leader_with_an_unreplicated_tail(brokers: Brokers) -> ReplicaManager:
    """Broker 1 led with 4 records replicated and 6 more never replicated; broker 2 now leads at epoch 1 and has
    appended 1 record. The old leader, now its follower."""
    brokers.lead(state(isr=(1, 2), replicas=(1, 2)))
    old_leader = brokers.rms[1]
    old_leader.append(TP, 4)
    await brokers.fetch_all()
    await brokers.fetch_all()
    old_leader.append(TP, 6)  # never replicated
    brokers.lead(state(leader=2, leader_epoch=1, isr=(2,), replicas=(1, 2)))
    brokers.rms[2].append(TP, 1)
    return old_leader


async def test_an_old_leaders_tail_is_truncated_at_its_first_fetch_from_the_new_leader(brokers: Brokers) -> None:
    """IBP 2.8: the old leader keeps its log on becoming follower; the new leader's answer to its fetch (last
    fetched epoch 0, older than the leader's 1, offset 10 past where epoch 1 began, 4) is the diverging epoch's
    end, and the follower truncates there before fetching the new leader's record."""
    old_leader = await _old_leader_with_an_unreplicated_tail(brokers)
    assert old_leader.log_end_offset(TP) == 10
    await brokers.fetch_all()
    assert old_leader.log_end_offset(TP) == 4
    await brokers.fetch_all()
    assert old_leader.log_end_offset(TP) == 5


async def test_below_ibp_2_7_iv1_a_new_follower_truncates_to_its_high_watermark() -> None:
    brokers = Brokers(cfg=ReplicationConfig(inter_broker_protocol_version="2.7-IV0"))
    try:
        old_leader = await _old_leader_with_an_unreplicated_tail(brokers)
        assert old_leader.log_end_offset(TP) == 4
        await brokers.fetch_all()
        assert old_leader.log_end_offset(TP) == 5
    finally:
        brokers.close()


async def test_a_restarted_replica_manager_keeps_its_logs(brokers: Brokers) -> None:
    brokers.lead(state())
    brokers.rms[1].append(TP, 4)
    for _ in range(3):  # records; the followers' LEOs reach the leader; the new HW reaches the followers
        await brokers.fetch_all()
    kept = brokers.rms[2].log_offsets()
    assert kept == {TP: (4, 4)}
    restarted = ReplicaManager(BrokerControlPlane(2, MY_EPOCH), brokers.transport, brokers.runtime,
                               brokers.rms[2].config, recovered_logs=kept)
    restarted.control_plane.handle(update_metadata(live=(1, 2, 3), controller_id=1))
    restarted.handle_control_request(brokers_lai(leader=1, leader_epoch=1))
    assert restarted.log_end_offset(TP) == 4 and restarted.high_watermark(TP) == 4
    restarted.shutdown()


async def test_a_failed_log_dir_stops_its_replicas(brokers: Brokers) -> None:
    brokers.lead(state())
    follower = brokers.rms[2]
    (log_dir,) = follower.control_plane.log_dirs
    assert follower.control_plane.fail_log_dir(log_dir) == [TP]
    follower.sync_offline_log_dirs()
    assert not follower.fetchers and follower.partition(TP) is None


async def test_a_leader_with_a_failed_log_dir_answers_fetches_with_a_storage_error(brokers: Brokers) -> None:
    brokers.lead(state())
    leader = brokers.rms[1]
    (log_dir,) = leader.control_plane.log_dirs
    with pytest.raises(ValueError, match=r"broker 1 has no log dir '/elsewhere'; its log dirs are /tmp/kafka-logs"):
        leader.handle_log_dir_failure("/elsewhere")
    assert leader.leader_partitions() == [TP]  # refused: nothing changed
    assert leader.handle_log_dir_failure(log_dir) == [TP]
    assert leader.leader_partitions() == [] and leader.all_log_dirs_offline
    answer = leader.handle_fetch(fetch(replica=2, epoch=0))
    assert [p.error for p in answer.partitions] == [Errors.KAFKA_STORAGE_ERROR]
    assert leader.handle_log_dir_failure(log_dir) == []  # already offline: ignored, as Kafka does
    with pytest.raises(NotLeaderError):
        leader.append(TP, 1)


def test_log_dirs_come_from_server_properties_else_the_replication_config() -> None:
    two = ReplicationConfig(log_dirs=virtual_log_dirs(2))
    assert two.log_dirs == ("/tmp/kafka-logs-0", "/tmp/kafka-logs-1")
    assert BrokerConfig(1, replication=two).log_dirs == two.log_dirs
    assert BrokerConfig(1, replication=two, extra={"log.dirs": "/data/a, /data/b"}).log_dirs == ("/data/a", "/data/b")
    assert BrokerConfig(1).log_dirs == ("/tmp/kafka-logs",)
    for bad in ((), ("/a", "/a"), ("/a", " ")):
        with pytest.raises(ValueError, match=r"ReplicationConfig\.log_dirs must be distinct non-empty paths"):
            ReplicationConfig(log_dirs=bad)
    with pytest.raises(ValueError, match="at least one log dir"):
        virtual_log_dirs(0)
