"""The controller's behaviour in a whole cluster, on the embedded store and on a real ZooKeeper.

Each test states one behaviour the issue lists; assertions are on ZooKeeper's contents and on the requests
brokers actually received, never on calls.
"""

from __future__ import annotations

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory, recording_transport

from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from zkcontroller.protocol.control_requests import LeaderAndIsrRequest, UpdateMetadataRequest
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


async def create_topic(admin: KafkaZkClient, topic: str, replicas: dict[int, list[int]]) -> None:
    assignment = {TopicPartition(topic, p): ReplicaAssignment(tuple(r)) for p, r in replicas.items()}
    await admin.create_topic_assignment(topic, None, assignment)


async def partition_states(admin: KafkaZkClient, topic: str, n: int) -> dict[int, LeaderIsrAndControllerEpoch]:
    read = await admin.get_topic_partition_states([TopicPartition(topic, p) for p in range(n)])
    return {tp.partition: state for tp, state in read.values.items()}


async def wait_for_states(admin: KafkaZkClient, topic: str, n: int, check, what: str) -> dict:
    states: dict = {}

    async def probe() -> bool:
        nonlocal states
        states = await partition_states(admin, topic, n)
        return len(states) == n and check(states)

    await wait_until(probe, timeout_s=30.0, what=what, poll_s=0.02)
    return states


@pytest.mark.parametrize("how", ["stop", "kill"])
async def test_new_cluster_elects_one_controller_and_failover_bumps_epoch(
    make_cluster: ClusterFactory, admin: KafkaZkClient, how: str
) -> None:
    cluster = await make_cluster([1, 2, 3])
    first = await cluster.wait_for_controller()
    assert first.context.epoch == 1 and first.context.epoch_zk_version == 1
    assert await admin.get_controller_id() == first.controller_id
    assert sum(1 for s in cluster.running_brokers() if s.controller and s.controller.is_active) == 1

    transport = recording_transport(cluster)
    if how == "stop":
        await cluster.stop_broker(first.controller_id)
    else:  # killed: its session lingers until the store times it out (6 s here; on the embedded store the test
        # moves its clock past the timeout instead of waiting it out)
        await cluster.crash_broker(first.controller_id)
        if isinstance(cluster.backend, EmbeddedBackend):
            cluster.backend.server.clock.advance(6000)  # type: ignore[attr-defined]
            cluster.backend.server.tick()
    second = await cluster.wait_for_controller(exclude=first.controller_id)
    assert second.context.epoch == 2
    assert (await admin.get_controller_epoch())[0] == 2  # type: ignore[index]
    assert second.context.live_or_shutting_down_broker_ids == {1, 2, 3} - {first.controller_id}
    for broker_id in second.context.live_or_shutting_down_broker_ids:
        await wait_until(
            lambda b=broker_id: any(
                r.controller_epoch == 2 for r in transport.requests_to(b, UpdateMetadataRequest)
            ),
            what=f"UpdateMetadata from epoch 2 at broker {broker_id}",
        )


async def test_new_topic_partitions_come_online(make_cluster: ClusterFactory, admin: KafkaZkClient) -> None:
    cluster = await make_cluster([1, 2, 3])
    controller = await cluster.wait_for_controller()
    await create_topic(admin, "orders", {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]})
    states = await wait_for_states(admin, "orders", 3, lambda s: True, "partition states of orders")
    for p, expected_leader in {0: 1, 1: 2, 2: 3}.items():
        lai = states[p].leader_and_isr
        assert lai.leader == expected_leader and lai.leader_epoch == 0
        assert sorted(lai.isr) == [1, 2, 3]
        assert states[p].controller_epoch == controller.context.epoch
    transport = recording_transport(cluster)
    await wait_until(
        lambda: any(
            ps.topic == "orders" and ps.is_new
            for r in transport.requests_to(1, LeaderAndIsrRequest)
            for ps in r.partition_states  # type: ignore[union-attr]
        ),
        what="LeaderAndIsr marked new at broker 1",
    )


async def test_broker_failure_moves_leadership(make_cluster: ClusterFactory, admin: KafkaZkClient) -> None:
    cluster = await make_cluster([1, 2, 3])
    controller = await cluster.wait_for_controller()
    victim = 3 if controller.controller_id != 3 else 2
    others = sorted({1, 2, 3} - {victim})
    await create_topic(admin, "t", {0: [victim, others[0], others[1]], 1: [others[0], victim, others[1]]})
    await wait_for_states(admin, "t", 2, lambda s: s[0].leader_and_isr.leader == victim, "initial leaders")
    await cluster.stop_broker(victim)
    states = await wait_for_states(
        admin, "t", 2, lambda s: s[0].leader_and_isr.leader != victim and victim not in s[1].leader_and_isr.isr,
        "leadership moved off the dead broker",
    )
    moved = states[0].leader_and_isr
    assert moved.leader == others[0] and moved.leader_epoch == 1 and victim not in moved.isr
    kept = states[1].leader_and_isr
    assert kept.leader == others[0] and sorted(kept.isr) == others


async def test_whole_isr_dead_leaves_no_leader_and_keeps_last_isr_member(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    cluster = await make_cluster([1, 2, 3])
    controller = await cluster.wait_for_controller()
    a, b = sorted({1, 2, 3} - {controller.controller_id})
    await create_topic(admin, "fragile", {0: [a, b]})
    await wait_for_states(admin, "fragile", 1, lambda s: s[0].leader_and_isr.leader == a, "leader a")
    await cluster.stop_broker(a)
    await wait_for_states(admin, "fragile", 1, lambda s: s[0].leader_and_isr.leader == b, "leader b")
    await cluster.stop_broker(b)
    states = await wait_for_states(admin, "fragile", 1, lambda s: s[0].leader_and_isr.leader == -1, "no leader")
    assert states[0].leader_and_isr.isr == (b,)


async def test_unclean_election_when_enabled_for_the_topic(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    cluster = await make_cluster([1, 2, 3])
    controller = await cluster.wait_for_controller()
    a, b = sorted({1, 2, 3} - {controller.controller_id})
    await admin.set_or_create_entity_configs("topics", "dirty", {"unclean.leader.election.enable": "true"})
    await create_topic(admin, "dirty", {0: [a, b]})
    await wait_for_states(admin, "dirty", 1, lambda s: s[0].leader_and_isr.leader == a, "leader a")
    await cluster.stop_broker(b)  # ISR shrinks to [a]
    await wait_for_states(admin, "dirty", 1, lambda s: s[0].leader_and_isr.isr == (a,), "isr [a]")
    await cluster.stop_broker(a)
    await wait_for_states(admin, "dirty", 1, lambda s: s[0].leader_and_isr.leader == -1, "no leader")
    before = controller.context.stats.unclean_leader_elections
    await cluster.start_broker(b)  # b is alive but was not in the ISR
    states = await wait_for_states(admin, "dirty", 1, lambda s: s[0].leader_and_isr.leader == b, "unclean leader b")
    assert states[0].leader_and_isr.isr == (b,)
    assert controller.context.stats.unclean_leader_elections == before + 1


async def test_malformed_znodes_are_skipped(make_cluster: ClusterFactory, admin: KafkaZkClient) -> None:
    cluster = await make_cluster([1, 2])
    await cluster.wait_for_controller()
    await admin.session.create("/brokers/topics/broken", b'{"version":3,"partitions":"nope"}')
    await create_topic(admin, "fine", {0: [1, 2]})
    states = await wait_for_states(admin, "fine", 1, lambda s: True, "the good topic served")
    assert states[0].leader_and_isr.leader == 1
    assert await partition_states(admin, "broken", 1) == {}
    # A failover re-reads everything, malformed nodes included: still fine.
    old = cluster.active_controller()
    assert old is not None
    await cluster.stop_broker(old.controller_id)
    new = await cluster.wait_for_controller(exclude=old.controller_id)
    assert "fine" in new.context.all_topics


async def test_deleting_controller_znode_elects_next_epoch(make_cluster: ClusterFactory, admin: KafkaZkClient) -> None:
    cluster = await make_cluster([1, 2, 3])
    first_epoch = (await cluster.wait_for_controller()).context.epoch
    await create_topic(admin, "stuck", {0: [1, 2]})
    await wait_for_states(admin, "stuck", 1, lambda s: True, "topic online")
    await admin.session.delete("/controller")  # the seed article's remedy for partitions stuck at -1
    await wait_until(
        lambda: _epoch_at_least(admin, first_epoch + 1),
        timeout_s=30.0,
        what="a new controller epoch after /controller was deleted",
        poll_s=0.02,
    )
    controller = await cluster.wait_for_controller()
    assert controller.context.epoch == first_epoch + 1
    assert TopicPartition("stuck", 0) in controller.context.partitions_with_leaders
    transport = recording_transport(cluster)
    await wait_until(
        lambda: any(
            r.controller_epoch == first_epoch + 1 and any(ps.topic == "stuck" for ps in r.partition_states)
            for r in transport.requests_to(2, UpdateMetadataRequest)  # type: ignore[union-attr]
        ),
        what="the new controller's UpdateMetadata with the partition's state",
    )


async def _epoch_at_least(admin: KafkaZkClient, epoch: int) -> bool:
    found = await admin.get_controller_epoch()
    return found is not None and found[0] >= epoch and await admin.get_controller_id() is not None


async def test_controller_rearms_watches_after_a_dropped_connection(
    make_cluster: ClusterFactory, admin: KafkaZkClient, backend: CoordinationBackend
) -> None:
    """A dropped connection disarms watches (see coordination.api); once reconnected, the controller must
    still see new topics and broker failures."""
    from zkcontroller.coordination.embedded_backend import EmbeddedBackend

    if not isinstance(backend, EmbeddedBackend):
        pytest.skip("cutting one client's connection is an embedded-store drill (a real server would need a proxy)")
    cluster = await make_cluster([1, 2, 3])
    controller = await cluster.wait_for_controller()
    session_id = controller.zk.session.session_id
    backend.server.disconnect(session_id)
    await create_topic(admin, "while-away", {0: [1, 2]})  # its watch fired into the disconnection
    backend.server.reconnect(session_id)
    states = await wait_for_states(admin, "while-away", 1, lambda s: True, "the topic created while disconnected")
    assert states[0].controller_epoch == controller.context.epoch
    other = max({1, 2, 3} - {controller.controller_id})
    await cluster.stop_broker(other)  # needs the re-armed /brokers/ids watch
    await wait_until(lambda: other not in controller.context.live_or_shutting_down_broker_ids, what="failure seen")


async def test_admin_requests_made_while_the_controller_was_disconnected_are_seen_once_reconnected(
    make_cluster: ClusterFactory, admin: KafkaZkClient, backend: CoordinationBackend
) -> None:
    """Beyond brokers and topics, the controller's other watches are re-armed on reconnecting too: a
    reassignment requested while it was away starts, and a later topic deletion and preferred election (which
    need the re-armed `/admin` watches) happen."""
    from zkcontroller.coordination.embedded_backend import EmbeddedBackend

    if not isinstance(backend, EmbeddedBackend):
        pytest.skip("cutting one client's connection is an embedded-store drill (a real server would need a proxy)")
    cluster = await make_cluster([1, 2, 3])
    controller = await cluster.wait_for_controller()
    await create_topic(admin, "moving", {0: [1, 2]})
    await create_topic(admin, "doomed", {0: [2, 3]})
    await wait_for_states(admin, "moving", 1, lambda s: s[0].leader_and_isr.isr == (1, 2), "moving online")
    await wait_for_states(admin, "doomed", 1, lambda s: True, "doomed online")
    session_id = controller.zk.session.session_id
    moving = TopicPartition("moving", 0)

    backend.server.disconnect(session_id)
    await admin.create_partition_reassignment({moving: [2, 3]})  # its creation watch fired into the disconnection
    backend.server.reconnect(session_id)
    async def reassigned() -> bool:  # started (RS = TRS + ORS) or already done (RS = TRS)
        found = (await admin.get_full_replica_assignment_for_topics(["moving"])).values[moving]
        return found.replicas != (1, 2)

    await wait_until(reassigned, timeout_s=30.0, what="the reassignment requested while disconnected", poll_s=0.02)

    await admin.create_delete_topic_path("doomed")

    async def deleted() -> bool:
        return not await admin.path_exists(paths.topic_path("doomed"))

    await wait_until(deleted, timeout_s=30.0, what="the topic deletion requested after reconnecting", poll_s=0.02)
    await admin.create_preferred_replica_election([TopicPartition("doomed-not-there", 0)])

    async def election_znode_gone() -> bool:
        return not await admin.path_exists(paths.PREFERRED_REPLICA_ELECTION)

    await wait_until(election_znode_gone, timeout_s=30.0, what="the preferred-election znode read and deleted",
                     poll_s=0.02)
