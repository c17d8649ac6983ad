"""Partition reassignment (KIP-455, spec §9.7) in a whole cluster, on the embedded store and on a real ZooKeeper.

Brokers here do not fetch, so a new replica joins the ISR the way a Kafka 2.6 leader records it: a conditional
write of the partition state znode plus an ISR-change notification. Assertions are on ZooKeeper's contents at
each phase and on what brokers received.
"""

from __future__ import annotations

import json
import logging

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory, recording_transport
from tests.integration.test_controller_cluster import create_topic, wait_for_states
from tests.integration.test_topic_deletion import expire_now

from zkcontroller.admin.describe import describe_lines, describe_topics
from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.coordination.errors import BadVersionError
from zkcontroller.model import LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from zkcontroller.protocol.control_requests import Errors, LeaderAndIsrRequest, StopReplicaRequest
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes.topics import TopicPartitionStateZNode

pytestmark = pytest.mark.hand_written_isr  # ISRs are written by hand, as a Kafka 2.6 leader does

TP = TopicPartition("moving", 0)


async def assignment(admin: KafkaZkClient, tp: TopicPartition = TP) -> ReplicaAssignment:
    return (await admin.get_full_replica_assignment_for_topics([tp.topic])).values[tp]


async def state(admin: KafkaZkClient, tp: TopicPartition = TP) -> LeaderIsrAndControllerEpoch:
    return (await admin.get_topic_partition_states([tp])).values[tp]


async def wait_assignment(admin: KafkaZkClient, expected: ReplicaAssignment, what: str) -> None:
    async def probe() -> bool:
        return await assignment(admin) == expected

    await wait_until(probe, timeout_s=30.0, what=what, poll_s=0.02)


async def join_isr(admin: KafkaZkClient, session: CoordinationSession, replica: int, tp: TopicPartition = TP) -> None:
    """What a Kafka 2.6 leader does when a follower catches up: ISR += replica (conditional write, same leader
    epoch and controller epoch), then an ISR-change notification.

    The controller's phase A (leader epoch bump) may land between the read and the write; the leader then learns
    the new epoch from its LeaderAndIsr and tries again, as this does on BAD_VERSION (bounded)."""
    for _attempt in range(20):
        current = await state(admin, tp)
        lai = current.leader_and_isr
        grown = current._replace(leader_and_isr=lai._replace(isr=(*lai.isr, replica)))
        try:
            await session.set_data(TopicPartitionStateZNode.path(tp), TopicPartitionStateZNode.encode(grown),
                                   lai.zk_version)
        except BadVersionError:
            continue
        await admin.propagate_isr_changes([tp])
        return
    raise AssertionError(f"{tp}: the ISR write lost 20 version races in a row")


async def start_moving(make_cluster: ClusterFactory, admin: KafkaZkClient, brokers: list[int] | None = None):
    cluster = await make_cluster(brokers or [1, 2, 3])
    controller = await cluster.wait_for_controller()
    await create_topic(admin, "moving", {0: [1, 2]})
    await wait_for_states(admin, "moving", 1, lambda s: s[0].leader_and_isr.isr == (1, 2), "moving online")
    return cluster, controller


async def wait_reassigned(admin: KafkaZkClient) -> None:
    async def done() -> bool:
        return (await assignment(admin) == ReplicaAssignment((2, 3))
                and not await admin.path_exists(paths.REASSIGN_PARTITIONS))

    await wait_until(done, timeout_s=30.0, what="reassignment finished in ZooKeeper", poll_s=0.02)


async def test_reassigning_1_2_to_2_3_goes_through_kafkas_phases(
    make_cluster: ClusterFactory, admin: KafkaZkClient, session: CoordinationSession,
    caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    cluster, controller = await start_moving(make_cluster, admin)
    assert (await state(admin)).leader_and_isr.leader_epoch == 0

    await admin.create_partition_reassignment({TP: [2, 3]})
    # phase U: RS = TRS ++ ORS, adding TRS - ORS, removing ORS - TRS; phase A: the leader epoch bumped
    await wait_assignment(admin, ReplicaAssignment((2, 3, 1), (3,), (1,)), "RS=[2,3,1], AR=[3], RR=[1]")
    await wait_until(lambda: TP in controller.context.partitions_being_reassigned, what="partition reassigning")

    async def bumped() -> bool:
        return (await state(admin)).leader_and_isr.leader_epoch == 1

    await wait_until(bumped, what="leader epoch 1 after phase A")
    mid = (await state(admin)).leader_and_isr
    # Kafka 2.8.1+ names the zkVersion the bump wrote; logged once the controller's write has returned, which
    # may be after the admin sees the new epoch
    await wait_until(lambda: any("Updated leader epoch for partition moving-0 to 1," in r.getMessage()
                                 for r in caplog.records), what="the bump logged")
    assert any(r.getMessage().endswith(f"Updated leader epoch for partition moving-0 to 1, zkVersion={mid.zk_version}")
               for r in caplog.records)
    assert (mid.leader, mid.isr) == (1, (1, 2))
    transport = recording_transport(cluster)
    await wait_until(lambda: any(ps.is_new and ps.adding_replicas == (3,) and ps.replicas == (2, 3, 1)
                                 for r in transport.requests_to(3, LeaderAndIsrRequest)
                                 for ps in r.partition_states), what="broker 3 told to start the new replica")
    assert await admin.path_exists(paths.REASSIGN_PARTITIONS)
    lines = describe_lines(await describe_topics(admin, ["moving"]), [1, 2, 3])
    assert lines[-1] == ("\tTopic: moving\tPartition: 0\tLeader: 1\tReplicas: 2,3,1\tIsr: 1,2"
                         "\tAdding Replicas: 3\tRemoving Replicas: 1")

    await join_isr(admin, session, 3)
    await wait_reassigned(admin)
    # KafkaController 2.8.2 prints targetReplicas, here an ArrayBuffer (reassignTo over the znode's asScala list)
    assert any(r.getMessage().endswith("Target replicas ArrayBuffer(2, 3) have all caught up with the leader for "
                                       "reassigning partition moving-0") for r in caplog.records)
    final = (await state(admin)).leader_and_isr
    # B3: leader 1 is not in TRS, re-elected (epoch 2); B4: 1 leaves the ISR (epoch 3)
    assert final.leader == 2 and final.isr == (2, 3) and final.leader_epoch == 3
    assert controller.context.partition_full_replica_assignment(TP) == ReplicaAssignment((2, 3))
    assert TP not in controller.context.partitions_being_reassigned
    steps = [(r["phase"], r["replicas"], r.get("adding_replicas"), r.get("removing_replicas"))
             for r in map(json.loads, make_cluster.records)  # type: ignore[attr-defined]
             if r["type"] == "partition_reassignment"]
    assert steps == [("started", [2, 3, 1], [3], [1]), ("awaiting_isr", [2, 3, 1], [3], [1]),
                     ("leader_moved", [2, 3], [], []), ("removed_replicas", [2, 3], [], []),
                     ("completed", [2, 3], [], [])]
    await wait_until(lambda: any(s.delete_partition and s.topic_partition == TP
                                 for r in transport.requests_to(1, StopReplicaRequest)
                                 for s in r.partition_states), what="broker 1's replica deleted")


async def test_reassignment_to_an_offline_broker_waits_and_resumes_when_it_starts(
    make_cluster: ClusterFactory, admin: KafkaZkClient, session: CoordinationSession
) -> None:
    cluster, controller = await start_moving(make_cluster, admin, [1, 2, 3, 4])
    target = 3 if controller.controller_id != 3 else 4
    await cluster.stop_broker(target)
    await wait_until(lambda: target not in controller.context.live_broker_ids, what="target offline")
    await admin.create_partition_reassignment({TP: [2, target]})
    await wait_assignment(admin, ReplicaAssignment((2, target, 1), (target,), (1,)), "reassignment started")

    await cluster.start_broker(target)
    transport = recording_transport(cluster)
    await wait_until(lambda: any(ps.topic == "moving" and target in ps.replicas
                                 for r in transport.requests_to(target, LeaderAndIsrRequest)
                                 for ps in r.partition_states), what="the returning broker told of its replica")
    assert await assignment(admin) == ReplicaAssignment((2, target, 1), (target,), (1,))  # still waiting on ISR
    await join_isr(admin, session, target)

    async def done() -> bool:
        return await assignment(admin) == ReplicaAssignment((2, target))

    await wait_until(done, what="reassignment completed once the broker caught up")


async def test_cancelling_restores_the_original_replicas(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    _cluster, controller = await start_moving(make_cluster, admin)
    results = await controller.alter_partition_reassignments({TP: [2, 3]})
    assert results == {TP: controller_api_ok()}
    assert await assignment(admin) == ReplicaAssignment((2, 3, 1), (3,), (1,))
    listed = await controller.list_partition_reassignments()
    assert listed == {TP: ReplicaAssignment((2, 3, 1), (3,), (1,))}

    cancelled = await controller.alter_partition_reassignments({TP: None})
    assert cancelled == {TP: controller_api_ok()}
    # Kafka 2.8 restores ORS = RS - AR in RS's order: the replicas 1 and 2 again, listed [2,1]
    assert await assignment(admin) == ReplicaAssignment((2, 1))
    assert await controller.list_partition_reassignments() == {}
    assert (await state(admin)).leader_and_isr.leader == 1
    again = await controller.alter_partition_reassignments({TP: None})
    assert isinstance(again, dict) and again[TP].error is Errors.NO_REASSIGNMENT_IN_PROGRESS


async def test_invalid_api_targets_are_refused_and_change_nothing(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    _cluster, controller = await start_moving(make_cluster, admin)
    cases = {(): "Empty replica list", (2, 2): "Duplicate replica ids", (2, -1): "Invalid broker id",
             (2, 9): "not alive"}
    for target, message in cases.items():
        result = await controller.alter_partition_reassignments({TP: list(target)})
        assert isinstance(result, dict)
        assert result[TP].error is Errors.INVALID_REPLICA_ASSIGNMENT and message in (result[TP].message or "")
    unknown = TopicPartition("nope", 0)
    result = await controller.alter_partition_reassignments({unknown: [1, 2]})
    assert isinstance(result, dict) and result[unknown].error is Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert await assignment(admin) == ReplicaAssignment((1, 2))


@pytest.mark.parametrize("phase", ["awaiting_isr", "after_isr"])
async def test_a_controller_killed_mid_reassignment_is_finished_by_the_next(
    make_cluster: ClusterFactory, admin: KafkaZkClient, session: CoordinationSession, phase: str
) -> None:
    cluster = await make_cluster([1, 2, 3, 4])
    first = await cluster.wait_for_controller()
    a, b, d = sorted({1, 2, 3, 4} - {first.controller_id})  # the controller hosts no replica of it
    await create_topic(admin, "moving", {0: [a, b]})
    await wait_for_states(admin, "moving", 1, lambda s: s[0].leader_and_isr.isr == (a, b), "moving online")
    await admin.create_partition_reassignment({TP: [b, d]})
    await wait_assignment(admin, ReplicaAssignment((b, d, a), (d,), (a,)), "reassignment started")
    await cluster.crash_broker(first.controller_id)
    if phase == "after_isr":  # the ISR grows while no controller is there to see it
        await join_isr(admin, session, d)
    expire_now(cluster)
    second = await cluster.wait_for_controller(exclude=first.controller_id)
    if phase == "awaiting_isr":
        await wait_until(lambda: TP in second.context.partitions_being_reassigned,
                         what="the new controller resumed the reassignment")
        await join_isr(admin, session, d)

    async def done() -> bool:
        return (await assignment(admin) == ReplicaAssignment((b, d))
                and not await admin.path_exists(paths.REASSIGN_PARTITIONS))

    await wait_until(done, timeout_s=30.0, what="the next controller finished the reassignment", poll_s=0.02)
    final = (await state(admin)).leader_and_isr
    assert final.isr == (b, d) and final.leader == b


async def test_a_reassignment_resumed_from_the_topic_znode_prints_its_target_as_a_list(
    make_cluster: ClusterFactory, admin: KafkaZkClient, session: CoordinationSession,
    caplog: pytest.LogCaptureFixture
) -> None:
    """An API reassignment's target is an ArrayBuffer in Kafka; the next controller decodes the assignment from the
    topic znode (a List) and resumes with that, so its caught-up line prints ``List(..)``."""
    caplog.set_level(logging.INFO)
    cluster = await make_cluster([1, 2, 3, 4])
    first = await cluster.wait_for_controller()
    a, b, d = sorted({1, 2, 3, 4} - {first.controller_id})
    await create_topic(admin, "moving", {0: [a, b]})
    await wait_for_states(admin, "moving", 1, lambda s: s[0].leader_and_isr.isr == (a, b), "moving online")
    assert await first.alter_partition_reassignments({TP: [b, d]}) == {TP: controller_api_ok()}
    await cluster.crash_broker(first.controller_id)
    expire_now(cluster)
    second = await cluster.wait_for_controller(exclude=first.controller_id)
    await wait_until(lambda: TP in second.context.partitions_being_reassigned, what="resumed by the next controller")
    await join_isr(admin, session, d)
    await wait_until(lambda: TP not in second.context.partitions_being_reassigned, what="completed")
    caught_up = [r.getMessage() for r in caplog.records if "have all caught up" in r.getMessage()]
    assert caught_up and all(m.endswith(f"Target replicas List({b}, {d}) have all caught up with the leader for "
                                        "reassigning partition moving-0") for m in caught_up), caught_up


def controller_api_ok():
    from zkcontroller.controller.events import ApiError

    return ApiError(Errors.NONE)


async def test_a_controller_killed_before_recording_a_completion_leaves_it_to_the_next(
    make_cluster: ClusterFactory, admin: KafkaZkClient, session: CoordinationSession
) -> None:
    """Completions reach ZooKeeper (B6, B7) in a flush event queued behind them; a controller that dies before
    that event leaves RS = ORS + TRS in ZooKeeper, as a Kafka controller dying between B5 and B6 does, and the
    next one completes the reassignment again from there."""
    from zkcontroller.controller.events import CompletedReassignmentsFlush

    cluster = await make_cluster([1, 2, 3, 4])
    first = await cluster.wait_for_controller()
    a, b, d = sorted({1, 2, 3, 4} - {first.controller_id})
    await create_topic(admin, "moving", {0: [a, b]})
    await wait_for_states(admin, "moving", 1, lambda s: s[0].leader_and_isr.isr == (a, b), "moving online")

    async def never(_event: CompletedReassignmentsFlush) -> None:
        return None

    first._handlers[CompletedReassignmentsFlush] = never  # the process dies before the flush runs
    await admin.create_partition_reassignment({TP: [b, d]})
    await wait_assignment(admin, ReplicaAssignment((b, d, a), (d,), (a,)), "reassignment started")
    await join_isr(admin, session, d)
    await wait_until(lambda: TP not in first.context.partitions_being_reassigned
                     and first.context.partition_full_replica_assignment(TP) == ReplicaAssignment((b, d)),
                     what="the first controller completed it in memory")
    assert await assignment(admin) == ReplicaAssignment((b, d, a), (d,), (a,))
    assert await admin.path_exists(paths.REASSIGN_PARTITIONS)
    await cluster.crash_broker(first.controller_id)
    expire_now(cluster)
    await cluster.wait_for_controller(exclude=first.controller_id)
    await wait_assignment(admin, ReplicaAssignment((b, d)), "the next controller recorded RS = TRS")

    async def znode_gone() -> bool:
        return not await admin.path_exists(paths.REASSIGN_PARTITIONS)

    await wait_until(znode_gone, what="the next controller deleted /admin/reassign_partitions")
    assert (await state(admin)).leader_and_isr.isr == (b, d)


async def test_the_partitions_of_one_request_start_together_with_one_leader_and_isr_per_broker(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    """Phase A for a request's partitions is one batch: each gets its own fenced leader-epoch bump, and the
    new replica's broker receives each of phase A's two LeaderAndIsr once for all of them, not per partition."""
    cluster = await make_cluster([1, 2, 3])
    controller = await cluster.wait_for_controller()
    await create_topic(admin, "many", {p: [1, 2] for p in range(6)})
    await wait_for_states(admin, "many", 6, lambda s: all(v.leader_and_isr.isr == (1, 2) for v in s.values()),
                          "many online")
    transport = recording_transport(cluster)
    before = len(transport.requests_to(3, LeaderAndIsrRequest))
    parts = [TopicPartition("many", p) for p in range(6)]
    await admin.create_partition_reassignment({tp: [2, 3] for tp in parts})

    await wait_until(lambda: set(parts) <= controller.context.partitions_being_reassigned,
                     what="all six reassigning")

    async def all_bumped() -> bool:
        states = (await admin.get_topic_partition_states(parts)).values
        return all(s.leader_and_isr.leader_epoch == 1 for s in states.values())

    await wait_until(all_bumped, what="every leader epoch bumped once")

    def started() -> list[LeaderAndIsrRequest]:
        return [r for r in transport.requests_to(3, LeaderAndIsrRequest)[before:]
                if isinstance(r, LeaderAndIsrRequest) and any(ps.is_new for ps in r.partition_states)]

    # A1 (the new assignment to every replica) and A2 (the new replica started): two requests, not twelve. The
    # second is delivered after the first, so waiting for one and counting two could count too early.
    await wait_until(lambda: len(started()) >= 2, what="broker 3 told to start its new replicas (A1 and A2)")
    assert len(started()) == 2
    for request in started():
        assert sorted(ps.topic_partition.partition for ps in request.partition_states) == list(range(6))
        assert all(ps.adding_replicas == (3,) and ps.replicas == (2, 3, 1) for ps in request.partition_states)
