"""Controlled shutdown (spec §8.3, §9.10) in a whole cluster, on the embedded store and on a real ZooKeeper.

A stopping broker hands its leadership over before it deregisters: no partition is ever without a leader, the
stopped broker leads nothing and is in no ISR, and each moved partition's leader epoch goes up by exactly one.
"""

from __future__ import annotations

import asyncio
import json

from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory, RecordingTransport, recording_transport

from zkcontroller.model import LeaderAndIsr, ReplicaAssignment, TopicPartition
from zkcontroller.protocol.control_requests import Errors, StopReplicaRequest
from zkcontroller.protocol.inter_broker import ControlledShutdownRequest, ControlledShutdownResponse, FetchRequest
from zkcontroller.zk.kafka_zk_client import NO_FENCING, KafkaZkClient

TOPIC = "orders"
ASSIGNMENT = {0: (1, 2, 3), 1: (2, 3, 1), 2: (3, 1, 2), 3: (1, 3, 2), 4: (2, 1, 3), 5: (3, 2, 1)}
PARTITIONS = [TopicPartition(TOPIC, p) for p in sorted(ASSIGNMENT)]


async def states(admin: KafkaZkClient) -> dict[TopicPartition, LeaderAndIsr]:
    read = await admin.get_topic_partition_states(PARTITIONS)
    return {tp: s.leader_and_isr for tp, s in read.values.items()}


async def wait_full_isr(admin: KafkaZkClient) -> dict[TopicPartition, LeaderAndIsr]:
    found: dict[TopicPartition, LeaderAndIsr] = {}

    async def full() -> bool:
        nonlocal found
        found = await states(admin)
        return len(found) == len(PARTITIONS) and all(len(s.isr) == 3 for s in found.values())

    await wait_until(full, timeout_s=30, what="every partition online with a full ISR", poll_s=0.02)
    return found


async def restore_isr(admin: KafkaZkClient) -> None:
    """For modules whose brokers run no fetchers (``hand_written_isr``): what the leaders would write once
    the restarted follower caught up (Kafka 2.6 brokers: the state
    znode, same leader epoch, then an ISR-change notification)."""
    current = await admin.get_topic_partition_states(PARTITIONS)
    grown = {tp: s.leader_and_isr._replace(isr=tuple(sorted(ASSIGNMENT[tp.partition])))
             for tp, s in current.values.items()}
    controller_epoch = max(s.controller_epoch for s in current.values.values())
    result = await admin.update_leader_and_isr(grown, controller_epoch, NO_FENCING)
    assert not result.failed and not result.to_retry
    await admin.propagate_isr_changes(grown)


def shutdown_requests_sent(transport: RecordingTransport) -> list[ControlledShutdownRequest]:
    return [r for _, r in transport.delivered if isinstance(r, ControlledShutdownRequest)]  # type: ignore[misc]


class LeaderMonitor:
    """Reads every partition state as often as the loop lets it while a broker stops."""

    def __init__(self, admin: KafkaZkClient) -> None:
        self.admin = admin
        self.leaderless: list[tuple[TopicPartition, LeaderAndIsr]] = []
        self.samples = 0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            for tp, lai in (await states(self.admin)).items():
                if lai.leader == -1:
                    self.leaderless.append((tp, lai))
            self.samples += 1
            await asyncio.sleep(0)

    def __enter__(self) -> LeaderMonitor:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *_: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def test_stopping_each_broker_in_turn_moves_leadership_first(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    cluster = await make_cluster([1, 2, 3])
    await cluster.wait_for_controller()
    await admin.create_topic_assignment(
        TOPIC, None, {tp: ReplicaAssignment(ASSIGNMENT[tp.partition]) for tp in PARTITIONS})
    await wait_full_isr(admin)
    transport = recording_transport(cluster)
    records: list[str] = make_cluster.records  # type: ignore[attr-defined]

    for stopping in (1, 2, 3):
        before = await states(admin)
        led_before = {tp for tp, s in before.items() if s.leader == stopping}
        assert led_before, f"broker {stopping} should lead something before it stops"
        shutdown_requests = len(shutdown_requests_sent(transport))
        stop_replicas_before = len(transport.requests_to(stopping, StopReplicaRequest))
        first_record = len(records)
        first_delivered = len(transport.delivered)
        with LeaderMonitor(admin) as monitor:
            await cluster.stop_broker(stopping)
            await asyncio.sleep(0)
        after = await states(admin)
        # it follows what it led once the controller moved it, but a broker shutting down adds no fetcher
        # (Kafka's makeFollowers skips that step while isShuttingDown), so it never rejoins those ISRs
        refetched = [r for _, r in transport.delivered[first_delivered:]
                     if isinstance(r, FetchRequest) and r.replica_id == stopping
                     and any(p.topic_partition in led_before for p in r.partitions)]
        assert refetched == [], f"{stopping} fetched partitions it stopped leading while it shut down"

        assert monitor.samples > 0
        assert monitor.leaderless == [], f"partitions without a leader while {stopping} stopped"
        assert all(s.leader != -1 for s in after.values())
        assert not [tp for tp, s in after.items() if s.leader == stopping], f"{stopping} still leads"
        assert not [tp for tp, s in after.items() if stopping in s.isr], f"{stopping} still in an ISR"
        for tp in led_before:
            assert after[tp].leader_epoch == before[tp].leader_epoch + 1, (tp, before[tp], after[tp])
            assert after[tp].leader in ASSIGNMENT[tp.partition]
        written = [json.loads(line) for line in records[first_record:]]
        writes = [r for r in written if r["type"] in ("leader_election", "isr_change")]
        assert writes and all(r["leader"] != -1 for r in writes)
        moves = [r for r in written if r["type"] == "leader_election"]
        assert {(r["topic"], r["partition"]) for r in moves} == {(tp.topic, tp.partition) for tp in led_before}
        assert all(r["strategy"] == "controlled_shutdown" and r["old_leader"] == stopping for r in moves)
        # one request, answered with nothing left to move; the followed partitions were stopped, not deleted
        assert len(shutdown_requests_sent(transport)) == shutdown_requests + 1
        stops = transport.requests_to(stopping, StopReplicaRequest)[stop_replicas_before:]
        assert stops and not any(p.delete_partition for r in stops for p in r.partition_states)

        await cluster.start_broker(stopping)
        controller = await cluster.wait_for_controller()
        await wait_until(lambda c=controller, s=stopping: s in c.context.live_broker_ids,
                         what=f"{stopping} live again")
        await wait_full_isr(admin)  # the restarted broker fetches, catches up and its leaders expand the ISR


async def test_controller_refuses_stale_epoch_unknown_broker_and_non_controller(make_cluster: ClusterFactory) -> None:
    cluster = await make_cluster([1, 2])
    controller = await cluster.wait_for_controller()
    other = next(s.controller for s in cluster.running_brokers() if s.broker_id != controller.controller_id)
    assert other is not None
    await wait_until(lambda: controller.context.live_broker_ids == {1, 2}, what="both brokers known")
    epoch = controller.context.live_broker_id_and_epochs[other.controller_id]

    stale = await controller.handle_broker_request(ControlledShutdownRequest(other.controller_id, epoch - 1))
    assert stale == ControlledShutdownResponse(Errors.STALE_BROKER_EPOCH)
    assert controller.context.shutting_down_broker_ids == set()

    missing = await controller.handle_broker_request(ControlledShutdownRequest(9, -1))
    assert missing == ControlledShutdownResponse(Errors.BROKER_NOT_AVAILABLE)

    not_controller = await other.handle_broker_request(ControlledShutdownRequest(other.controller_id, epoch))
    assert not_controller.error is Errors.NOT_CONTROLLER

    accepted = await controller.handle_broker_request(ControlledShutdownRequest(other.controller_id, epoch))
    assert accepted == ControlledShutdownResponse(Errors.NONE, ())
    assert controller.context.shutting_down_broker_ids == {other.controller_id}
    assert other.controller_id not in controller.context.live_broker_ids
