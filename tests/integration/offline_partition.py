"""A partition left offline with a live replica outside its ISR: the set-up of the unclean-election tests."""

from __future__ import annotations

import json
from typing import Any

from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory

from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


async def lose_the_isr(cluster: LocalCluster, admin: KafkaZkClient, tp: TopicPartition
                       ) -> tuple[KafkaController, int]:
    """``tp`` created on brokers 1 and 2 of ``cluster``. The non-controller leaves (the ISR shrinks to the
    controller) and comes back outside the ISR; then the controller's broker stops, so the partition has no live
    ISR member. Returns the new controller (on the other broker) and the other broker's id."""
    controller = await cluster.wait_for_controller()
    await admin.create_topic_assignment(tp.topic, None, {tp: ReplicaAssignment((1, 2))})
    await wait_until(lambda: controller.context.partition_leader_and_isr(tp) is not None, what="online")
    other = 2 if controller.controller_id == 1 else 1
    await cluster.stop_broker(other)  # out of the ISR
    await cluster.start_broker(other)  # back, but not in the ISR
    await cluster.stop_broker(controller.controller_id)  # the last ISR member goes
    controller = await cluster.wait_for_controller(exclude=controller.controller_id)
    return controller, other


async def offline_partition(make_cluster: ClusterFactory, admin: KafkaZkClient, tp: TopicPartition
                            ) -> tuple[LocalCluster, KafkaController, int]:
    """A cluster of brokers 1 and 2 and ``lose_the_isr``, then waits until the new controller has left ``tp``
    offline (leader -1). Returns the cluster, the new controller and the broker outside the ISR."""
    cluster = await make_cluster([1, 2])
    controller, other = await lose_the_isr(cluster, admin, tp)
    await wait_until(lambda: (s := controller.context.partition_leader_and_isr(tp)) is not None and s.leader == -1,
                     what="the partition offline")
    return cluster, controller, other


def leader_elections(records: list[str]) -> list[dict[str, Any]]:
    """The ``leader_election`` records among event-log lines."""
    return [r for line in records if (r := json.loads(line))["type"] == "leader_election"]


async def zk_leader(admin: KafkaZkClient, tp: TopicPartition) -> int | None:
    """``tp``'s leader as ZooKeeper holds it (None: no state)."""
    state = await admin.get_topic_partition_state(tp)
    return None if state is None else state.leader_and_isr.leader


async def wait_for_zk_leader(admin: KafkaZkClient, tp: TopicPartition, leader: int,
                             what: str = "the unclean election") -> None:
    """Waits (30 s at the most) until ZooKeeper holds ``leader`` as ``tp``'s leader."""
    async def elected() -> bool:
        return await zk_leader(admin, tp) == leader

    await wait_until(elected, timeout_s=30, what=what, poll_s=0.02)
