"""ISR upkeep in a whole cluster (issue 12), on the embedded store and a real ZooKeeper: a restarted broker
rejoins every ISR, a paused follower leaves the ISR after replica.lag.time.max.ms and rejoins once it
resumes, and the AlterIsr path and the ZooKeeper-notification path leave the same partition states.

Until the controller handles AlterIsr (issue 12's controller half), the AlterIsr path runs against a fake
controller that does what Kafka's does: check leader epoch and partition-state version, write fenced, answer.
Assertions are on ZooKeeper's contents and the brokers' offsets.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from tests.helpers import OffsetClock, wait_until

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.produce import ProduceWorkload, produce_command
from zkcontroller.controller.event_log import EventLog
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import AlterIsrPartitionResult, AlterIsrRequest, AlterIsrResponse
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import TopicPartitionStateZNode

LAG_MS = 1000
ZK_PATH_IBP = "2.6-IV0"
ALTER_ISR_IBP = "2.8-IV1"
_chroots = itertools.count()


def replication(ibp: str = ZK_PATH_IBP) -> ReplicationConfig:
    return ReplicationConfig(replica_lag_time_max_ms=LAG_MS, replica_fetch_wait_max_ms=10,
                             replica_fetch_backoff_ms=20, inter_broker_protocol_version=ibp,
                             alter_isr_retry_backoff_ms=20, isr_change_notification_check_interval_ms=50,
                             isr_change_notification_linger_ms=100, isr_change_notification_max_delay_ms=1000)


BackendFactory = Callable[[], Awaitable[CoordinationBackend]]


@pytest.fixture(params=["embedded", "zookeeper"])
async def new_backend(request: pytest.FixtureRequest) -> AsyncIterator[BackendFactory]:
    """Fresh isolated stores on demand (a test comparing two histories needs two)."""
    made: list[CoordinationBackend] = []

    async def make() -> CoordinationBackend:
        if request.param == "embedded":
            b: CoordinationBackend = EmbeddedBackend(OffsetClock(wall_clock_ms))
        else:
            server = request.getfixturevalue("zookeeper_server")
            b = ZooKeeperBackend(server.connect_string, f"/isr-{os.getpid()}-{next(_chroots)}")
        made.append(b)
        return b

    yield make
    for b in made:
        await b.close()


class Running:
    def __init__(self, cluster: LocalCluster, admin: KafkaZkClient) -> None:
        self.cluster, self.admin = cluster, admin

    async def states(self, topic: str, n: int) -> dict[int, LeaderIsrAndControllerEpoch]:
        read = await self.admin.get_topic_partition_states([TopicPartition(topic, p) for p in range(n)])
        return {tp.partition: s for tp, s in read.values.items()}

    async def wait_isrs(self, topic: str, n: int, check: Callable[[dict[int, tuple[int, ...]]], bool],
                        what: str, timeout_s: float = 30.0) -> None:
        async def probe() -> bool:
            states = await self.states(topic, n)
            return len(states) == n and check({p: s.leader_and_isr.isr for p, s in states.items()})
        await wait_until(probe, timeout_s=timeout_s, what=what, poll_s=0.01)


@pytest.fixture
async def start_cluster(new_backend: BackendFactory) -> AsyncIterator[Callable[..., Awaitable[Running]]]:
    running: list[tuple[LocalCluster, Any]] = []

    async def start(ibp: str = ZK_PATH_IBP, topics: dict[str, dict[int, list[int]]] | None = None) -> Running:
        backend = await new_backend()
        cluster = LocalCluster(backend, [1, 2, 3], wall_clock_ms, event_log=EventLog("test", wall_clock_ms, None),
                               session_timeout_ms=6000, replication=replication(ibp), seed=5)
        await cluster.start()
        session = await backend.new_session()
        running.append((cluster, session))
        admin = KafkaZkClient(session, wall_clock_ms)
        await cluster.wait_for_controller()
        for topic, replicas in (topics or {}).items():
            assignment = {TopicPartition(topic, p): ReplicaAssignment(tuple(r)) for p, r in replicas.items()}
            await admin.create_topic_assignment(topic, None, assignment)
        r = Running(cluster, admin)
        for topic, replicas in (topics or {}).items():
            await r.wait_isrs(topic, len(replicas), lambda isrs, rs=replicas: all(
                set(isrs[p]) == set(rs[p]) for p in rs), f"{topic} online with full ISRs")
        return r

    yield start
    for cluster, session in running:
        await cluster.shutdown()
        await session.close()


def replicated(cluster: LocalCluster, topic: str) -> bool:
    """Every live replica of every partition of ``topic`` has its leader's log end offset."""
    leaders = cluster.leaders(topic)
    for tp, leader in leaders.items():
        end = leader.replica_manager.log_end_offset(tp)  # type: ignore[union-attr]
        for server in cluster.running_brokers():
            offset = server.replica_manager.log_end_offset(tp)  # type: ignore[union-attr]
            if offset is not None and offset != end:
                return False
    return bool(leaders)


async def crash(cluster: LocalCluster, broker_id: int) -> None:
    """Kill a broker and expire its session at once (what the store does once its timeout has passed; moving
    the store's clock instead could time out a busy survivor's session too)."""
    server = cluster.brokers[broker_id]
    await cluster.crash_broker(broker_id)
    if isinstance(cluster.backend, EmbeddedBackend):
        assert server.zk is not None
        await cluster.backend.expire_session(server.zk.session)


async def produce_when_led(cluster: LocalCluster, topic: str, partitions: int, records: int) -> None:
    """Produce once every partition has a running leader again (LeaderAndIsr follows the ZooKeeper write)."""
    await wait_until(lambda: len(cluster.leaders(topic)) == partitions, what=f"a leader for every {topic} partition")
    cluster.produce(topic, records)


THREE = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}


async def test_a_restarted_broker_rejoins_every_isr_within_twice_the_lag_time(
        start_cluster: Callable[..., Awaitable[Running]]) -> None:
    r = await start_cluster(topics={"t": THREE})
    cluster = r.cluster
    await produce_when_led(cluster, "t", 3, 30)
    await wait_until(lambda: replicated(cluster, "t"), what="the first records replicated")
    await crash(cluster, 3)
    await r.wait_isrs("t", 3, lambda isrs: all(3 not in isr for isr in isrs.values()), "broker 3 out of every ISR")
    await produce_when_led(cluster, "t", 3, 30)  # the new leaders take appends
    restarted: KafkaServer = await cluster.start_broker(3)
    rm = restarted.replica_manager
    assert rm is not None
    await wait_until(lambda: len(rm.control_plane.partitions) == 3 and all(
        rm.partition(tp) is not None and rm.partition(tp).leader in (1, 2)  # type: ignore[union-attr]
        for tp in rm.control_plane.partitions), what="broker 3 following its partitions")
    following_since = wall_clock_ms()
    await r.wait_isrs("t", 3, lambda isrs: all(set(isr) == {1, 2, 3} for isr in isrs.values()),
                      "broker 3 back in every ISR")
    rejoined_ms = wall_clock_ms() - following_since
    assert rejoined_ms <= 2 * LAG_MS, f"rejoined after {rejoined_ms} ms"
    await wait_until(lambda: replicated(cluster, "t"), what="broker 3 caught up")
    assert sum(rm.log_end_offset(TopicPartition("t", p)) for p in range(3)) == 60  # type: ignore[misc]


async def paused_follower_history(r: Running) -> int:
    """Pause broker 3's fetching, produce, wait for the shrink, resume, wait for the expansion. Returns how
    long after broker 3 was last caught up (as the leader recorded it) ZooKeeper's state was rewritten."""
    cluster = r.cluster
    tp = TopicPartition("p", 0)
    await produce_when_led(cluster, "p", 1, 10)
    await wait_until(lambda: replicated(cluster, "p"), what="replicated before the pause")
    follower, leader = cluster.brokers[3].replica_manager, cluster.brokers[1].replica_manager
    assert follower is not None and leader is not None
    follower.pause_fetchers()
    cluster.produce("p", 10)
    await r.wait_isrs("p", 1, lambda isrs: isrs[0] == (1, 2), "broker 3 out of the ISR")
    found = await r.admin.get_data_and_stat(TopicPartitionStateZNode.path(tp))
    assert found is not None
    last_caught_up = leader.partition(tp).followers[3].last_caught_up_time_ms  # type: ignore[union-attr]
    follower.resume_fetchers()
    await r.wait_isrs("p", 1, lambda isrs: isrs[0] == (1, 2, 3), "broker 3 back in the ISR")
    assert follower.log_end_offset(tp) == 20
    return found[1].mtime - last_caught_up


async def test_a_paused_follower_leaves_the_isr_after_the_lag_time_and_rejoins_after_it_resumes(
        start_cluster: Callable[..., Awaitable[Running]]) -> None:
    r = await start_cluster(topics={"p": {0: [1, 2, 3]}})
    shrunk_after_ms = await paused_follower_history(r)
    assert shrunk_after_ms > LAG_MS  # never shrunk before the lag time had passed
    leader = r.cluster.brokers[1].replica_manager
    assert leader is not None and leader.isr_shrinks >= 1
    # The leader wrote the expansion; the answer to its own write may reach it after another session (the test's)
    # already read the new state: on a real ZooKeeper the two replies come over different connections.
    await wait_until(lambda: leader.isr_expands >= 1, what="the leader applying its own ISR expansion")
    # pre-2.7-IV2: the leader published both changes as ISR-change notifications (in one batch or two)
    await wait_until(lambda: leader.isr_manager.notifications_written >= 1,  # type: ignore[attr-defined]
                     what="an ISR-change notification")


def install_fake_alter_isr(server: KafkaServer) -> list[AlterIsrRequest]:
    """Answer AlterIsr as Kafka's active controller does (spec §9.8), writing ZooKeeper fenced; any other broker
    request (ControlledShutdown at teardown) goes to the real controller, as before."""
    controller = server.controller
    assert controller is not None
    seen: list[AlterIsrRequest] = []
    real = controller.handle_broker_request

    async def handle(request: Any) -> Any:
        if not isinstance(request, AlterIsrRequest):
            return await real(request)
        if not controller.is_active:
            return AlterIsrResponse(Errors.NOT_CONTROLLER)
        seen.append(request)
        context, results = controller.context, []
        for p in request.partitions:
            tp, current = p.topic_partition, controller.context.partition_leader_and_isr(p.topic_partition)
            if current is None:
                results.append(AlterIsrPartitionResult(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION))
            elif p.leader_epoch < current.leader_epoch:
                results.append(AlterIsrPartitionResult(tp, Errors.FENCED_LEADER_EPOCH))
            elif p.current_isr_version != current.zk_version:
                results.append(AlterIsrPartitionResult(tp, Errors.INVALID_UPDATE_VERSION))
            else:
                proposed = LeaderAndIsr(current.leader, current.leader_epoch, p.new_isr, current.zk_version)
                written = await controller.zk.update_leader_and_isr(
                    {tp: proposed}, context.epoch, context.fencing.epoch_zk_version)
                lai = written.finished[tp]
                context.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(lai, context.epoch))
                results.append(AlterIsrPartitionResult(tp, Errors.NONE, lai.leader, lai.leader_epoch, lai.isr,
                                                       lai.zk_version))
        return AlterIsrResponse(Errors.NONE, tuple(results))

    controller.handle_broker_request = handle  # type: ignore[method-assign]
    return seen


async def test_alter_isr_and_zookeeper_notification_paths_leave_the_same_partition_state(
        start_cluster: Callable[..., Awaitable[Running]]) -> None:
    final: dict[str, tuple[LeaderIsrAndControllerEpoch, int]] = {}
    for ibp in (ZK_PATH_IBP, ALTER_ISR_IBP):
        r = await start_cluster(ibp)
        requests = [install_fake_alter_isr(s) for s in r.cluster.running_brokers()]
        await r.admin.create_topic_assignment("p", None, {TopicPartition("p", 0): ReplicaAssignment((1, 2, 3))})
        await r.wait_isrs("p", 1, lambda isrs: isrs[0] == (1, 2, 3), "p online")
        await paused_follower_history(r)
        (state,) = (await r.states("p", 1)).values()
        final[ibp] = (state, state.leader_and_isr.zk_version)
        alter_isrs = sum(len(seen) for seen in requests)
        assert (alter_isrs >= 2) if ibp == ALTER_ISR_IBP else (alter_isrs == 0)
        if ibp == ALTER_ISR_IBP:
            assert await r.admin.get_all_isr_change_notifications() == []
    assert final[ZK_PATH_IBP] == final[ALTER_ISR_IBP]
    assert final[ZK_PATH_IBP][0] == LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2, 3), 2), 1)


async def test_the_produce_verb_appends_on_the_leaders_once_or_at_a_rate(
        start_cluster: Callable[..., Awaitable[Running]]) -> None:
    r = await start_cluster(topics={"t": THREE})
    cluster, workload = r.cluster, ProduceWorkload(r.cluster)
    try:
        await wait_until(lambda: len(cluster.leaders("t")) == 3, what="leaders for t")
        assert produce_command(cluster, workload, ["t", "7"]) == [
            "Produced 7 records to t (log end offsets 0:3, 1:2, 2:2)."]
        for bad in (["t"], ["t", "x"], ["t", "--rate", "-1"], ["t", "1", "2"]):
            with pytest.raises(ValueError, match="usage: produce TOPIC RECORDS"):
                produce_command(cluster, workload, bad)
        with pytest.raises(ValueError, match="no running broker leads a partition of topic 'nope'"):
            produce_command(cluster, workload, ["nope", "1"])
        assert produce_command(cluster, workload, ["t", "--rate", "200"])[0].startswith("producing 200 records/s")
        await wait_until(lambda: workload.produced.get("t", 0) >= 40, what="40 records produced at a rate")
        assert produce_command(cluster, workload, ["--stop"]) == [
            f"stopped producing to t: {workload.produced['t']} records produced, 0 failed"]
        produced = 7 + workload.produced["t"]
        await wait_until(lambda: replicated(cluster, "t"), what="everything replicated")
        leaders = cluster.leaders("t")
        assert sum(s.replica_manager.log_end_offset(tp) for tp, s in leaders.items()) == produced  # type: ignore[misc, union-attr]
        assert produce_command(cluster, workload, ["--stop", "t"]) == ["no producer was running"]
    finally:
        await workload.close()
