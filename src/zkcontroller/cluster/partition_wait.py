"""A bounded wait for partitions to reach a state, read from ZooKeeper as ``describe`` reads it.

The prompt's verbs return once they have asked for something (``create``, ``fail-log-dir``), and the demo's
healing steps once the brokers have done it; the controller acts a moment later. Each of them used to poll the
partition states with its own copy of this loop. It polls with `runtime.poll.poll_until`, on the event loop's
clock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from zkcontroller.admin.leader_election import all_partitions
from zkcontroller.model import LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from zkcontroller.runtime.poll import poll_until
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

POLL_S = 0.05
"""How often a wait that reads ZooKeeper reads it again (this one, the prompts' election's)."""

PartitionCondition = Callable[[ReplicaAssignment, LeaderIsrAndControllerEpoch], bool]
"""True when one partition (its replica assignment, its leader and ISR) is where the caller wants it."""


@dataclass(frozen=True)
class PartitionWait:
    """How a wait ended: ``met`` (every partition satisfied the condition) or not within the bound; the last
    states read and how long it took (on the event loop's clock)."""

    met: bool
    states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch]
    elapsed_s: float


async def wait_for_partitions(
    admin: KafkaZkClient,
    condition: PartitionCondition,
    timeout_s: float,
    partitions: Sequence[TopicPartition] | None = None,
) -> PartitionWait:
    """Poll until every partition in ``partitions`` (None: every partition of every topic, listed again on
    each read) satisfies ``condition``, or ``timeout_s`` has passed. A partition without a state or an
    assignment (not created yet, or deleted) does not satisfy it. Never raises on time-out: each caller says
    in its own words what a time-out means."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    last: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}

    async def met() -> bool:
        wanted = list(partitions) if partitions is not None else await all_partitions(admin)
        states = (await admin.get_topic_partition_states(wanted)).values
        assignments = (await admin.get_full_replica_assignment_for_topics({tp.topic for tp in wanted})).values
        last.clear()
        last.update(states)
        return all(tp in states and tp in assignments and condition(assignments[tp], states[tp]) for tp in wanted)

    done = await poll_until(met, timeout_s, POLL_S)
    return PartitionWait(done, last, loop.time() - started)
