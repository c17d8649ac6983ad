"""ISR changes reported by leaders (spec §9.11, §9.14), log-directory failures (§9.12) and the auto leader
rebalance (§9.9), on the embedded store and on a real ZooKeeper."""

from __future__ import annotations

import json

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory, RecordingTransport, recording_transport
from tests.integration.test_healing_controlled_shutdown import (
    ASSIGNMENT,
    PARTITIONS,
    TOPIC,
    states,
    wait_full_isr,
)

from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.protocol.control_requests import Errors, UpdateMetadataRequest
from zkcontroller.protocol.inter_broker import (
    AlterIsrPartition,
    AlterIsrPartitionResult,
    AlterIsrRequest,
    AlterIsrResponse,
)
from zkcontroller.zk.kafka_zk_client import NO_FENCING, KafkaZkClient

pytestmark = pytest.mark.hand_written_isr  # ISRs are written by hand, as a Kafka 2.6 leader does


async def online_cluster(make_cluster: ClusterFactory, admin: KafkaZkClient,
                         **overrides: object) -> tuple[LocalCluster, KafkaController]:
    cluster = await make_cluster([1, 2, 3], **overrides)
    controller = await cluster.wait_for_controller()
    await wait_until(lambda: controller.context.live_broker_ids == {1, 2, 3}, what="three live brokers")
    await admin.create_topic_assignment(
        TOPIC, None, {tp: ReplicaAssignment(ASSIGNMENT[tp.partition]) for tp in PARTITIONS})
    await wait_full_isr(admin)
    await wait_until(lambda: all(controller.context.partition_leader_and_isr(tp) is not None for tp in PARTITIONS),
                     what="the controller knows every partition")
    return cluster, controller


def update_metadata_isrs(transport: RecordingTransport, broker_id: int, tp: TopicPartition) -> list[tuple[int, ...]]:
    return [s.isr for r in transport.requests_to(broker_id, UpdateMetadataRequest) for s in r.partition_states
            if s.topic_partition == tp]


async def test_isr_change_notification_refreshes_the_cache_and_tells_every_broker(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    cluster, controller = await online_cluster(make_cluster, admin)
    transport = recording_transport(cluster)
    tp = PARTITIONS[0]
    current = (await states(admin))[tp]
    shrunk = current._replace(isr=tuple(r for r in current.isr if r != 3))
    # a Kafka 2.6 leader: the state znode (same leader epoch), then a notification
    result = await admin.update_leader_and_isr({tp: shrunk}, controller.context.epoch, NO_FENCING)
    assert not result.failed and not result.to_retry
    await admin.propagate_isr_changes([tp])

    async def handled() -> bool:
        return not await admin.get_all_isr_change_notifications()

    await wait_until(handled, what="the notification read and deleted", poll_s=0.02)
    await wait_until(lambda: all(shrunk.isr in update_metadata_isrs(transport, b, tp) for b in (1, 2, 3)),
                     what="UpdateMetadata with the new ISR to every broker")
    cached = controller.context.partition_leader_and_isr(tp)
    assert cached is not None and cached.isr == shrunk.isr and cached.zk_version == current.zk_version + 1


async def test_alter_isr_checks_epochs_and_version_then_writes_fenced(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    cluster, controller = await online_cluster(make_cluster, admin)
    transport = recording_transport(cluster)
    tp = PARTITIONS[0]
    current = (await states(admin))[tp]
    leader = current.leader
    epoch = controller.context.live_broker_id_and_epochs[leader]
    new_isr = tuple(r for r in current.isr if r != 3)

    def request(broker_epoch: int = epoch, leader_epoch: int = current.leader_epoch,
                version: int = current.zk_version, partition: TopicPartition = tp) -> AlterIsrRequest:
        return AlterIsrRequest(leader, broker_epoch, (AlterIsrPartition(partition, leader_epoch, new_isr, version),))

    assert await controller.handle_broker_request(request(broker_epoch=epoch - 1)) == AlterIsrResponse(
        Errors.STALE_BROKER_EPOCH)
    fenced = await controller.handle_broker_request(request(leader_epoch=current.leader_epoch - 1))
    assert fenced == AlterIsrResponse(Errors.NONE, (AlterIsrPartitionResult(tp, Errors.FENCED_LEADER_EPOCH),))
    bad_version = await controller.handle_broker_request(request(version=current.zk_version + 7))
    assert bad_version == AlterIsrResponse(Errors.NONE, (AlterIsrPartitionResult(tp, Errors.INVALID_UPDATE_VERSION),))
    unknown = TopicPartition("nope", 0)
    missing = await controller.handle_broker_request(request(partition=unknown))
    assert missing == AlterIsrResponse(
        Errors.NONE, (AlterIsrPartitionResult(unknown, Errors.UNKNOWN_TOPIC_OR_PARTITION),))
    assert (await states(admin))[tp] == current  # none of those wrote anything

    accepted = await controller.handle_broker_request(request())
    expected = AlterIsrPartitionResult(tp, Errors.NONE, leader, current.leader_epoch, new_isr, current.zk_version + 1)
    assert accepted == AlterIsrResponse(Errors.NONE, (expected,))
    stored = await admin.get_topic_partition_state(tp)
    assert stored is not None and stored.leader_and_isr.isr == new_isr
    assert stored.controller_epoch == controller.context.epoch
    again = await controller.handle_broker_request(request(version=current.zk_version + 1))
    assert again == AlterIsrResponse(Errors.NONE, (expected,))  # already in force: answered from the cache
    await wait_until(lambda: all(new_isr in update_metadata_isrs(transport, b, tp) for b in (1, 2, 3)),
                     what="UpdateMetadata with the new ISR to every broker")

    other = next(s.controller for s in cluster.running_brokers() if s.controller is not controller)
    assert other is not None
    assert (await other.handle_broker_request(request())).error is Errors.NOT_CONTROLLER


async def test_log_dir_failure_takes_the_broker_replicas_offline(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    cluster, controller = await online_cluster(make_cluster, admin)
    failing = next(b for b in (1, 2, 3) if b != controller.controller_id)
    plane = cluster.brokers[failing].control_plane
    assert plane is not None
    await wait_until(lambda: len(plane.partitions) == len(PARTITIONS), what="the broker hosts its replicas")
    assert plane.fail_log_dir(plane.log_dirs[0])
    await admin.propagate_log_dir_event(failing)

    async def moved() -> bool:
        now = await states(admin)
        return all(s.leader != failing and failing not in s.isr for s in now.values())

    await wait_until(moved, timeout_s=30, what="leadership and ISR membership off the failed log dir", poll_s=0.02)
    assert not await admin.get_all_log_dir_event_notifications()
    assert all(s.leader != -1 for s in (await states(admin)).values())
    assert controller.context.replicas_on_offline_dirs[failing] == set(PARTITIONS)


async def test_auto_leader_rebalance_moves_leaders_back_to_preferred_replicas(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    cluster, _ = await online_cluster(make_cluster, admin, auto_leader_rebalance_enable=True,
                                      auto_leader_rebalance_first_delay_ms=50,
                                      leader_imbalance_check_interval_seconds=1)
    records: list[str] = make_cluster.records  # type: ignore[attr-defined]
    await cluster.stop_broker(3)  # its leadership moves away (controlled shutdown)
    led_elsewhere = [tp for tp in PARTITIONS if ASSIGNMENT[tp.partition][0] == 3]
    # counted from here, while 3 is down and cannot lead: once it is back, the brokers' own fetches may take it
    # into an ISR and the rebalance elect it at any moment, before or during the AlterIsr below (both did, under
    # load: counted after 3's return, the elections had already been made, and none was seen)
    first_record = len(records)
    assert all(s.leader != 3 for tp, s in (await states(admin)).items() if tp in led_elsewhere)
    await cluster.start_broker(3)
    controller = await cluster.wait_for_controller()
    await wait_until(lambda: 3 in controller.context.live_broker_ids, what="broker 3 back")
    # the leaders take 3 back into their ISRs, as 2.7+ brokers do, without waiting for its fetches to catch up
    for tp, lai in (await states(admin)).items():
        if 3 in lai.isr:  # its fetches got there first
            continue
        epoch = controller.context.live_broker_id_and_epochs[lai.leader]
        answer = await controller.handle_broker_request(AlterIsrRequest(lai.leader, epoch, (
            AlterIsrPartition(tp, lai.leader_epoch, tuple(sorted(ASSIGNMENT[tp.partition])), lai.zk_version),)))
        assert answer.error is Errors.NONE
        # the brokers' own AlterIsr (or an election it allowed) may have changed the partition since it was read
        assert answer.partitions[0].error in (Errors.NONE, Errors.INVALID_UPDATE_VERSION, Errors.FENCED_LEADER_EPOCH)

    async def balanced() -> bool:
        current = await states(admin)
        return all(current[tp].leader == ASSIGNMENT[tp.partition][0] for tp in PARTITIONS)

    await wait_until(balanced, timeout_s=30, what="every partition led by its preferred replica", poll_s=0.05)

    def elections() -> list[dict[str, object]]:
        return [r for line in records[first_record:] if (r := json.loads(line))["type"] == "leader_election"]

    # each election is recorded once its ZooKeeper write has returned, after the admin may see the last leader
    await wait_until(lambda: len(elections()) >= len(led_elsewhere), what="the elections' records")
    assert sorted((r["partition"], r["strategy"], r["trigger"], r["leader"]) for r in elections()) == [
        (tp.partition, "preferred", "auto", 3) for tp in led_elsewhere]
