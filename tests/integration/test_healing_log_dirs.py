"""Log-dir failures (spec §9.12) end to end, on the embedded store and a real ZooKeeper: brokers with two log
dirs replicate for real; failing one dir (the prompt's ``fail-log-dir``) takes exactly its replicas offline, the
broker writes a log-dir event notification, answers the controller's LeaderAndIsr with KAFKA_STORAGE_ERROR for
them, and the controller moves their leadership; the broker's replicas in its other dir keep leading and
replicating. Failing a broker's last online dir halts it, as Kafka does."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import RecordingTransport, make_local_cluster

from zkcontroller.broker.config import ReplicationConfig, virtual_log_dirs
from zkcontroller.cluster.cluster_shell import ClusterShell
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import LeaderAndIsr, ReplicaAssignment, TopicPartition
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

TOPIC = "dirs"
ASSIGNMENT = {0: (2, 1, 3), 1: (2, 3, 1), 2: (2, 1, 3), 3: (2, 3, 1), 4: (1, 2, 3), 5: (3, 2, 1)}
"""Broker 2 is the preferred leader of partitions 0-3 and follows 4 and 5: it leads in both of its dirs."""
PARTITIONS = [TopicPartition(TOPIC, p) for p in ASSIGNMENT]
FAILING = 2


class Running:
    def __init__(self, cluster: LocalCluster, admin: KafkaZkClient, records: list[str]) -> None:
        self.cluster, self.admin, self.records = cluster, admin, records
        self.lines: list[str] = []
        self.shell = ClusterShell(cluster, admin, out=self.lines.append, rng=random.Random(1))

    async def states(self) -> dict[TopicPartition, LeaderAndIsr]:
        read = await self.admin.get_topic_partition_states(PARTITIONS)
        return {tp: s.leader_and_isr for tp, s in read.values.items()}

    def replicated(self, partitions: list[TopicPartition]) -> bool:
        """Every running replica of ``partitions`` has its leader's log end offset."""
        leaders = self.cluster.leaders(TOPIC)
        for tp in partitions:
            if tp not in leaders:
                return False
            end = leaders[tp].replica_manager.log_end_offset(tp)  # type: ignore[union-attr]
            for replica in ASSIGNMENT[tp.partition]:
                server = self.cluster.brokers[replica]
                rm = server.replica_manager
                if server.running and rm is not None and rm.partition(tp) is not None \
                        and rm.log_end_offset(tp) != end:
                    return False
        return True


@pytest.fixture
async def start(backend: CoordinationBackend) -> AsyncIterator[Callable[[], Awaitable[Running]]]:
    started: list[tuple[LocalCluster, KafkaZkClient]] = []

    async def make() -> Running:
        records: list[str] = []
        replication = ReplicationConfig(log_dirs=virtual_log_dirs(2), replica_fetch_wait_max_ms=10,
                                        replica_fetch_backoff_ms=20)
        cluster = await make_local_cluster(backend, [1, 2, 3], RecordingTransport(), records, replication)
        admin = KafkaZkClient(await backend.new_session(), wall_clock_ms)
        started.append((cluster, admin))
        controller = await cluster.wait_for_controller()
        await wait_until(lambda: controller.context.live_broker_ids == {1, 2, 3}, what="three live brokers")
        await admin.create_topic_assignment(
            TOPIC, None, {tp: ReplicaAssignment(ASSIGNMENT[tp.partition]) for tp in PARTITIONS})
        r = Running(cluster, admin, records)

        async def online() -> bool:
            now = await r.states()
            return len(now) == len(PARTITIONS) and all(
                now[tp].leader == ASSIGNMENT[tp.partition][0] and set(now[tp].isr) == set(ASSIGNMENT[tp.partition])
                for tp in PARTITIONS)

        await wait_until(online, what="every partition led by its preferred replica with a full ISR", poll_s=0.02)
        await wait_until(lambda: len(cluster.leaders(TOPIC)) == len(PARTITIONS), what="the brokers leading")
        cluster.produce(TOPIC, 60)
        await wait_until(lambda: r.replicated(PARTITIONS), what="the first records replicated")
        return r

    yield make
    for cluster, admin in started:
        await cluster.shutdown()
        await admin.session.close()


def placement(cluster: LocalCluster, broker_id: int) -> dict[TopicPartition, str]:
    plane = cluster.brokers[broker_id].control_plane
    assert plane is not None
    return {tp: p.log_dir for tp, p in plane.partitions.items()}


async def test_a_failed_log_dir_moves_leadership_off_exactly_the_replicas_in_it(
        start: Callable[[], Awaitable[Running]], caplog: pytest.LogCaptureFixture) -> None:
    r = await start()
    cluster = r.cluster
    dirs = placement(cluster, FAILING)
    assert set(dirs) == set(PARTITIONS)
    failed_dir, other_dir = virtual_log_dirs(2)
    in_failed = {tp for tp, d in dirs.items() if d == failed_dir}
    in_other = set(PARTITIONS) - in_failed
    before = await r.states()
    led_in_failed = {tp for tp in in_failed if before[tp].leader == FAILING}
    led_in_other = {tp for tp in in_other if before[tp].leader == FAILING}
    # Kafka's placement (the dir with fewest partitions) spreads the six replicas, and broker 2 leads in both
    assert len(in_failed) == len(in_other) == 3 and led_in_failed and led_in_other

    with pytest.raises(ValueError, match=r"broker 2 has no log dir '/nope'; its log dirs are /tmp/kafka-logs-0, "):
        await cluster.fail_log_dir(FAILING, "/nope")
    assert placement(cluster, FAILING) == dirs  # refused: nothing changed

    await r.shell.run_command(f"fail-log-dir {FAILING} {failed_dir}")
    names = ", ".join(str(tp) for tp in sorted(in_failed))
    assert r.lines[-2:] == [f"log dir {failed_dir} of broker {FAILING} failed; replicas offline: {names}",
                            f"the controller moved leadership and ISR membership of them off broker {FAILING}"]
    # the verb returns once the controller has acted, so a `describe` right after it is right: it used to
    # return first, and the next describe could still show broker 2 leading a replica in the failed dir
    right_after = await r.states()
    assert all(right_after[tp].leader != FAILING and FAILING not in right_after[tp].isr for tp in in_failed)
    kafka_lines = [(rec.name, rec.getMessage()) for rec in caplog.records]
    assert ("kafka.server.ReplicaManager", f"[ReplicaManager broker={FAILING}] Broker {FAILING} stopped fetcher for "
            f"partitions {names.replace(', ', ',')} and stopped moving logs for partitions  because they are in the "
            f"failed log directory {failed_dir}.") in kafka_lines
    assert ("kafka.server.ReplicaManager", f"[ReplicaManager broker={FAILING}] Stopped serving replicas in dir "
            f"{failed_dir}") in kafka_lines

    controller = await cluster.wait_for_controller()

    async def moved() -> bool:
        now = await r.states()
        return all(now[tp].leader not in (FAILING, -1) and FAILING not in now[tp].isr for tp in in_failed)

    await wait_until(moved, timeout_s=30, what="leadership and ISR membership off the failed dir", poll_s=0.02)
    await wait_until(lambda: controller.context.replicas_on_offline_dirs.get(FAILING) == in_failed,
                     what="the controller marking exactly the failed dir's replicas offline")
    after = await r.states()
    for tp in in_failed:  # each moved once, to a replica that was in the ISR
        assert after[tp].leader_epoch == before[tp].leader_epoch + 1 and after[tp].leader in before[tp].isr
    for tp in in_other:  # untouched: same leader, same epoch, broker 2 still in the ISR
        assert after[tp].leader == before[tp].leader and after[tp].leader_epoch == before[tp].leader_epoch
        assert FAILING in after[tp].isr
    assert {tp for tp in in_other if after[tp].leader == FAILING} == led_in_other

    # the controller learnt it from the notification (deleted once read) and the LeaderAndIsr answers
    async def notifications_deleted() -> bool:
        return not await r.admin.get_all_log_dir_event_notifications()

    await wait_until(notifications_deleted, what="the log-dir event notification read and deleted", poll_s=0.02)
    events = [json.loads(line) for line in r.records]
    assert any(e["type"] == "controller_event" and e["event"] == "LogDirEventNotification" for e in events)
    offline = {(e["topic"], e["partition"]) for e in events if e["type"] == "replica_state_change"
               and e["broker_id"] == FAILING and e["to_state"] == "OfflineReplica"}
    assert offline == {(tp.topic, tp.partition) for tp in in_failed}

    # the broker's other dir keeps serving: it leads and follows there, and takes the new records
    cluster.produce(TOPIC, 60)
    leaders = cluster.leaders(TOPIC)
    assert {tp for tp, s in leaders.items() if s.broker_id == FAILING} == led_in_other
    await wait_until(lambda: r.replicated(PARTITIONS), what="records replicated, broker 2's other dir included")
    rm = cluster.brokers[FAILING].replica_manager
    assert rm is not None and all(rm.partition(tp) is None for tp in in_failed)
    assert all(rm.log_end_offset(tp) == leaders[tp].replica_manager.log_end_offset(tp)  # type: ignore[union-attr]
               for tp in in_other)

    r.lines.clear()
    await r.shell.run_command(f"describe {TOPIC}")
    assert r.lines[-1] == (f"Offline replicas on broker {FAILING} (failed log dirs {failed_dir}): {names}")
    assert any(f"Partition: {sorted(in_failed)[0].partition}\t" in line and "Isr: " in line for line in r.lines)

    # failing it again does nothing (Kafka ignores a dir already offline): no new notification
    assert await cluster.fail_log_dir(FAILING, failed_dir) == []
    assert not await r.admin.get_all_log_dir_event_notifications()
    assert other_dir not in cluster.brokers[FAILING].control_plane.offline_log_dirs  # type: ignore[union-attr]


async def test_failing_a_brokers_last_online_log_dir_halts_it_and_a_restart_brings_its_replicas_back(
        start: Callable[[], Awaitable[Running]], caplog: pytest.LogCaptureFixture) -> None:
    r = await start()
    cluster = r.cluster
    first, last = virtual_log_dirs(2)
    await cluster.fail_log_dir(FAILING, first)
    await r.shell.run_command(f"fail-log-dir {FAILING} {last}")
    assert r.lines[-1].startswith(f"broker {FAILING} halted: all its log dirs have failed")
    halted = cluster.brokers[FAILING]
    assert not halted.running
    if isinstance(cluster.backend, EmbeddedBackend):  # its session goes at once, as once ZooKeeper's timeout passed
        assert halted.zk is not None
        await cluster.backend.expire_session(halted.zk.session)
    assert ("kafka.log.LogManager", f"Shutdown broker because all log dirs in {first}, {last} have failed") in [
        (rec.name, rec.getMessage()) for rec in caplog.records]
    await cluster.wait_for_controller(min_epoch=1)

    async def all_moved() -> bool:
        now = await r.states()
        return all(now[tp].leader not in (FAILING, -1) and FAILING not in now[tp].isr for tp in PARTITIONS)

    await wait_until(all_moved, timeout_s=30, what="every partition led off the halted broker", poll_s=0.02)

    # a restart (the disks replaced) brings every dir back: the lost replicas start empty and catch up
    restarted = await cluster.start_broker(FAILING)
    assert restarted.control_plane is not None and not restarted.control_plane.offline_log_dirs

    async def rejoined() -> bool:
        now = await r.states()
        return all(FAILING in now[tp].isr for tp in PARTITIONS)

    await wait_until(rejoined, timeout_s=30, what="the restarted broker back in every ISR", poll_s=0.02)
    assert r.replicated(PARTITIONS)
