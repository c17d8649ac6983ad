"""Broker-side fencing, row by row of spec §8: broker epoch, controller epoch per request kind, and the
per-partition LeaderAndIsr and StopReplica checks; plus what an accepted request leaves behind."""

from __future__ import annotations

import logging

import pytest

from zkcontroller.broker.control_plane import BrokerControlPlane, PartitionRole
from zkcontroller.model import ZERO_TOPIC_ID, TopicId, TopicPartition
from zkcontroller.protocol.control_requests import ApiKey, ControlResponse, Errors

from .helpers import MY_EPOCH, lai_state, leader_and_isr, stop_replica, um_state, update_metadata

TP0, TP1 = TopicPartition("t", 0), TopicPartition("t", 1)
ID_A, ID_B = TopicId(b"a" * 16), TopicId(b"b" * 16)


@pytest.fixture
def plane() -> BrokerControlPlane:
    """Broker 1 (epoch 100) with two log dirs, knowing brokers 1–3 are alive, controller epoch 1."""
    p = BrokerControlPlane(1, MY_EPOCH, log_dirs=("/d1", "/d2"))
    assert p.handle(update_metadata()).error is Errors.NONE
    return p


def errors(response: ControlResponse) -> dict[TopicPartition, Errors]:
    return response.partition_error_map()


# ---------------------------------------------------------------- §8.1 broker epoch


@pytest.mark.parametrize(("request_epoch", "stale"), [(99, True), (0, True), (-1, False), (100, False), (101, False)])
def test_broker_epoch_leader_and_isr(plane: BrokerControlPlane, request_epoch: int, stale: bool) -> None:
    response = plane.handle(leader_and_isr(lai_state(0), lai_state(1), broker_epoch=request_epoch,
                                           controller_epoch=2))
    expected = Errors.STALE_BROKER_EPOCH if stale else Errors.NONE
    assert response.api_key is ApiKey.LEADER_AND_ISR
    assert response.error is expected
    assert errors(response) == {TP0: expected, TP1: expected}  # the error on every partition
    assert (plane.partition(TP0) is None) == stale
    assert plane.controller_epoch == (1 if stale else 2)  # a stale request does not move the epoch


@pytest.mark.parametrize(("request_epoch", "stale"), [(99, True), (-1, False), (100, False), (101, False)])
def test_broker_epoch_stop_replica(plane: BrokerControlPlane, request_epoch: int, stale: bool) -> None:
    plane.handle(leader_and_isr(lai_state(0)))
    response = plane.handle(stop_replica((0, 5, True), broker_epoch=request_epoch))
    assert response.error is (Errors.STALE_BROKER_EPOCH if stale else Errors.NONE)
    assert errors(response) == ({} if stale else {TP0: Errors.NONE})  # top-level code only when stale
    assert (plane.partition(TP0) is not None) == stale


@pytest.mark.parametrize(("request_epoch", "stale"), [(99, True), (-1, False), (100, False), (101, False)])
def test_broker_epoch_update_metadata(plane: BrokerControlPlane, request_epoch: int, stale: bool) -> None:
    response = plane.handle(update_metadata(um_state(0), live=(1, 2), broker_epoch=request_epoch))
    assert response.error is (Errors.STALE_BROKER_EPOCH if stale else Errors.NONE)
    assert response.partition_errors == ()
    assert plane.metadata_cache.contains(TP0) == (not stale)


def test_reregistration_moves_the_broker_epoch(plane: BrokerControlPlane) -> None:
    plane.broker_epoch = 250  # the owner re-registered
    assert plane.handle(leader_and_isr(lai_state(0), broker_epoch=MY_EPOCH)).error is Errors.STALE_BROKER_EPOCH
    assert plane.handle(leader_and_isr(lai_state(0), broker_epoch=250)).error is Errors.NONE


def test_stale_broker_epoch_is_logged(plane: BrokerControlPlane, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="kafka.server.KafkaApis"):
        plane.handle(leader_and_isr(lai_state(0), broker_epoch=7))
    assert ("[KafkaApi-1] Received LeaderAndIsr request with broker epoch 7 smaller than the current broker "
            "epoch 100") in caplog.messages


# ---------------------------------------------------------------- §8.2 controller epoch


@pytest.mark.parametrize(("request_epoch", "accepted"), [(2, False), (3, True), (4, True)])
def test_controller_epoch_leader_and_isr(plane: BrokerControlPlane, request_epoch: int, accepted: bool) -> None:
    plane.handle(update_metadata(controller_epoch=3))
    response = plane.handle(leader_and_isr(lai_state(0), lai_state(1, leader=2), controller_epoch=request_epoch))
    expected = Errors.NONE if accepted else Errors.STALE_CONTROLLER_EPOCH
    assert response.error is expected
    assert errors(response) == {TP0: expected, TP1: expected}
    assert plane.controller_epoch == max(3, request_epoch)
    assert (plane.partition(TP0) is not None) == accepted


def test_old_leader_and_isr_is_logged(plane: BrokerControlPlane, caplog: pytest.LogCaptureFixture) -> None:
    plane.handle(update_metadata(controller_epoch=2))
    with caplog.at_level(logging.INFO, logger="state.change.logger"):
        plane.handle(leader_and_isr(lai_state(0), controller_epoch=1), correlation_id=7)
    assert caplog.messages == [
        "[Broker id=1] Handling LeaderAndIsr request correlationId 7 from controller 9 for 1 partitions",
        "[Broker id=1] Ignoring LeaderAndIsr request from controller 9 with correlation id 7 since its controller "
        "epoch 1 is old. Latest known controller epoch is 2",
    ]


@pytest.mark.parametrize(("request_epoch", "accepted"), [(2, False), (3, True), (4, True)])
def test_controller_epoch_stop_replica(plane: BrokerControlPlane, request_epoch: int, accepted: bool) -> None:
    plane.handle(leader_and_isr(lai_state(0), controller_epoch=3))
    response = plane.handle(stop_replica((0, 5, True), controller_epoch=request_epoch))
    assert response.error is (Errors.NONE if accepted else Errors.STALE_CONTROLLER_EPOCH)
    assert errors(response) == ({TP0: Errors.NONE} if accepted else {})  # no partition errors when stale
    assert (plane.partition(TP0) is None) == accepted


@pytest.mark.parametrize(("request_epoch", "accepted"), [(2, False), (3, True), (4, True)])
def test_controller_epoch_update_metadata(plane: BrokerControlPlane, request_epoch: int, accepted: bool,
                                          caplog: pytest.LogCaptureFixture) -> None:
    plane.handle(stop_replica(controller_epoch=3))
    with caplog.at_level(logging.WARNING, logger="state.change.logger"):
        response = plane.handle(update_metadata(um_state(0), controller_epoch=request_epoch), correlation_id=4)
    assert response.error is (Errors.NONE if accepted else Errors.STALE_CONTROLLER_EPOCH)
    assert plane.metadata_cache.contains(TP0) == accepted
    assert plane.controller_epoch == max(3, request_epoch)
    if not accepted:
        assert caplog.messages == [
            "[Broker id=1] Received update metadata request with correlation id 4 from an old controller 9 with "
            "epoch 2. Latest known controller epoch is 3"]


# ---------------------------------------------------------------- §8.2 per-partition LeaderAndIsr


def test_new_leader_epoch_makes_leader_and_follower(plane: BrokerControlPlane) -> None:
    response = plane.handle(leader_and_isr(lai_state(0, leader=1, leader_epoch=0, isr=(1, 2)),
                                           lai_state(1, leader=2, leader_epoch=3), controller_epoch=2))
    assert errors(response) == {TP0: Errors.NONE, TP1: Errors.NONE}
    p0, p1 = plane.partition(TP0), plane.partition(TP1)
    assert p0 is not None and p1 is not None
    assert (p0.role, p0.leader, p0.leader_epoch, p0.isr, p0.replicas) == (PartitionRole.LEADER, 1, 0, (1, 2), (1, 2))
    assert (p1.role, p1.leader, p1.leader_epoch) == (PartitionRole.FOLLOWER, 2, 3)
    assert {p0.log_dir, p1.log_dir} == {"/d1", "/d2"}  # new partitions go to the emptiest dir
    assert plane.partitions_with_role(PartitionRole.LEADER) == [TP0]


@pytest.mark.parametrize(("leader_epoch", "expected"), [
    (4, Errors.STALE_CONTROLLER_EPOCH),  # older leader epoch
    (5, Errors.STALE_CONTROLLER_EPOCH),  # equal: the "stale" code is reused
    (6, Errors.NONE),
])
def test_leader_epoch_must_grow(plane: BrokerControlPlane, leader_epoch: int, expected: Errors) -> None:
    plane.handle(leader_and_isr(lai_state(0, leader=2, leader_epoch=5)))
    response = plane.handle(leader_and_isr(lai_state(0, leader=1, leader_epoch=leader_epoch), controller_epoch=2))
    assert errors(response) == {TP0: expected}
    assert response.error is Errors.NONE
    hosted = plane.partition(TP0)
    assert hosted is not None and hosted.role is (PartitionRole.LEADER if expected is Errors.NONE
                                                  else PartitionRole.FOLLOWER)
    assert plane.controller_epoch == 2  # adopted even though the partition was refused


def test_not_a_replica_is_unknown_topic_or_partition(plane: BrokerControlPlane) -> None:
    response = plane.handle(leader_and_isr(lai_state(0, leader=2, replicas=(2, 3)), lai_state(1)))
    assert errors(response) == {TP0: Errors.UNKNOWN_TOPIC_OR_PARTITION, TP1: Errors.NONE}
    assert plane.partition(TP0) is None


def test_offline_log_dir_is_kafka_storage_error(plane: BrokerControlPlane) -> None:
    plane.handle(leader_and_isr(lai_state(0), lai_state(1)))
    failed_dir = plane.partition(TP0).log_dir  # type: ignore[union-attr]
    assert plane.fail_log_dir(failed_dir) == [TP0]
    assert plane.offline_partitions == {TP0} and plane.offline_log_dirs == {failed_dir}
    response = plane.handle(leader_and_isr(lai_state(0, leader_epoch=1), lai_state(1, leader_epoch=1)))
    assert errors(response) == {TP0: Errors.KAFKA_STORAGE_ERROR, TP1: Errors.NONE}
    # A brand-new partition goes to the surviving dir; with none left it cannot be created.
    other = plane.partition(TP1).log_dir  # type: ignore[union-attr]
    assert plane.handle(leader_and_isr(lai_state(2))).partition_errors[0][1] is Errors.NONE
    assert plane.partition(TopicPartition("t", 2)).log_dir == other  # type: ignore[union-attr]
    plane.fail_log_dir(other)
    assert plane.handle(leader_and_isr(lai_state(3))).partition_errors[0][1] is Errors.KAFKA_STORAGE_ERROR


def test_topic_id_checks(plane: BrokerControlPlane) -> None:
    plane.handle(leader_and_isr(lai_state(0)))  # no id yet: the log takes the next one given
    assert plane.partition(TP0).topic_id is None  # type: ignore[union-attr]
    plane.handle(leader_and_isr(lai_state(0, leader_epoch=1), topic_ids={"t": ID_A}))
    assert plane.partition(TP0).topic_id == ID_A  # type: ignore[union-attr]
    conflict = plane.handle(leader_and_isr(lai_state(0, leader_epoch=2), topic_ids={"t": ID_B}))
    assert errors(conflict) == {TP0: Errors.INCONSISTENT_TOPIC_ID}
    for absent in ({}, {"t": None}, {"t": ZERO_TOPIC_ID}):  # no id in the request is never a conflict
        assert errors(plane.handle(leader_and_isr(lai_state(0, leader_epoch=3), topic_ids=absent))) == {
            TP0: Errors.NONE}
        plane.handle(stop_replica((0, -1, True)))
    assert plane.partition(TP0) is None


def test_follower_of_an_unknown_leader_keeps_its_state(plane: BrokerControlPlane) -> None:
    """Kafka's makeFollowers: the leader must be alive in the metadata cache, else only the log is created."""
    response = plane.handle(leader_and_isr(lai_state(0, leader=7, leader_epoch=4, replicas=(7, 1))))
    assert errors(response) == {TP0: Errors.NONE}
    hosted = plane.partition(TP0)
    assert hosted is not None and (hosted.role, hosted.leader_epoch) == (PartitionRole.NONE, -1)


# ---------------------------------------------------------------- §8.2 per-partition StopReplica


@pytest.mark.parametrize(("leader_epoch", "expected"), [
    (-2, Errors.NONE),  # EpochDuringDelete
    (-1, Errors.NONE),  # NoEpoch
    (4, Errors.FENCED_LEADER_EPOCH),
    (5, Errors.FENCED_LEADER_EPOCH),
    (6, Errors.NONE),
])
def test_stop_replica_leader_epoch(plane: BrokerControlPlane, leader_epoch: int, expected: Errors) -> None:
    plane.handle(leader_and_isr(lai_state(0, leader_epoch=5)))
    response = plane.handle(stop_replica((0, leader_epoch, True)))
    assert response.error is Errors.NONE and errors(response) == {TP0: expected}
    assert (plane.partition(TP0) is None) == (expected is Errors.NONE)


def test_stop_replica_without_delete_leaves_the_partition_as_it_was(plane: BrokerControlPlane) -> None:
    """Kafka's stopPartitions (delete=false) only stops the fetcher; the Partition keeps its role (audit #10)."""
    plane.handle(leader_and_isr(lai_state(0, leader_epoch=5)))
    assert errors(plane.handle(stop_replica((0, 6, False)))) == {TP0: Errors.NONE}
    hosted = plane.partition(TP0)
    assert hosted is not None and (hosted.role, hosted.leader_epoch) == (PartitionRole.LEADER, 5)


def test_stop_replica_not_hosted_and_offline(plane: BrokerControlPlane) -> None:
    plane.handle(leader_and_isr(lai_state(0)))
    plane.fail_log_dir(plane.partition(TP0).log_dir)  # type: ignore[union-attr]
    response = plane.handle(stop_replica((0, 3, True), (1, 3, True)))
    assert errors(response) == {TP0: Errors.KAFKA_STORAGE_ERROR, TP1: Errors.NONE}


def test_fencing_a_deposed_controller_end_to_end(plane: BrokerControlPlane) -> None:
    """A new controller (epoch 2) has spoken; the old one (epoch 1) can no longer move leadership."""
    plane.handle(leader_and_isr(lai_state(0, leader=2, leader_epoch=1), controller_epoch=2))
    stale = [
        plane.handle(leader_and_isr(lai_state(0, leader=1, leader_epoch=9), controller_epoch=1)),
        plane.handle(stop_replica((0, 9, True), controller_epoch=1)),
        plane.handle(update_metadata(um_state(0, leader=1), controller_epoch=1)),
    ]
    assert [r.error for r in stale] == [Errors.STALE_CONTROLLER_EPOCH] * 3
    hosted = plane.partition(TP0)
    assert hosted is not None and (hosted.leader, hosted.leader_epoch) == (2, 1)
    assert not plane.metadata_cache.contains(TP0)
