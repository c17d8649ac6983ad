"""Both prompts' preferred-replica election: kafka-preferred-replica-election's ZooKeeper path (write the election
znode, print its lines), then, once the controller has handled it, which partitions kept a leader other than their
preferred replica, and why.

Kafka's tool returns as soon as the znode is written; at a prompt the next ``describe`` then showed nothing moved
(right after ``start 2`` the preferred replica was not back in the ISR) with no word why. The controller deletes
the znode once done (``KafkaController.processReplicaLeaderElection``), so the wait here is for that, bounded.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection

from zkcontroller.admin.leader_election import all_partitions, kafka_election_sets, start_preferred_election
from zkcontroller.cluster.partition_wait import POLL_S
from zkcontroller.model import TopicPartition, sorted_partitions
from zkcontroller.runtime.poll import poll_until
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

ELECTION_WAIT_S = 10.0
"""How long to wait for the controller to handle the election znode (milliseconds, unless it is busy or moving)."""

LiveBrokers = Callable[[], Awaitable[Collection[int]]]
"""The brokers running now (the in-process cluster's) or registered (a processes cluster's, read from ZooKeeper)."""
OfflineReplica = Callable[[int, TopicPartition], bool]
"""Whether broker's replica of the partition is on a failed log dir (ZooKeeper does not record it)."""


async def elect_targets(admin: KafkaZkClient, args: list[str], usage: str) -> list[TopicPartition] | None:
    """The partitions of the prompts' ``elect [TOPIC]``: None (all) with no argument, else the topic's; a
    ValueError (the prompt's error line) for anything else or a topic that does not exist."""
    if len(args) > 1 or any(a.startswith("-") for a in args):
        raise ValueError(usage)
    if not args:
        return None
    partitions = [tp for tp in await all_partitions(admin) if tp.topic == args[0]]
    if not partitions:
        raise ValueError(f"topic {args[0]} does not exist")
    return partitions


async def elect_preferred(admin: KafkaZkClient, partitions: list[TopicPartition] | None, out: Callable[[str], None],
                          live: LiveBrokers, offline: OfflineReplica | None = None,
                          timeout_s: float = ELECTION_WAIT_S) -> None:
    """Start the election for ``partitions`` (None: all), print Kafka's lines, then the outcome (`outcome_lines`)."""
    started = await start_preferred_election(admin, partitions)
    kind, valid, invalid = kafka_election_sets(partitions, started)
    out(f"Created preferred replica election path with {','.join(map(str, valid))}")
    out(f"Successfully started preferred replica election for partitions {kind}({', '.join(map(str, valid))})")
    for tp in invalid:
        out(f"Skipping preferred replica leader election for partition {tp} since it doesn't exist.")
    for line in await outcome_lines(admin, started.requested, live, offline, timeout_s):
        out(line)


async def outcome_lines(admin: KafkaZkClient, partitions: list[TopicPartition], live: LiveBrokers,
                        offline: OfflineReplica | None = None, timeout_s: float = ELECTION_WAIT_S) -> list[str]:
    """Once the election znode is gone, one line per partition left on a leader other than its preferred
    replica, saying why: Kafka elects the preferred replica only if it is alive (online) and in the ISR."""
    async def done() -> bool:
        return await admin.get_preferred_replica_election() is None

    if not await poll_until(done, timeout_s, POLL_S):
        return [f"the controller has not finished the election within {timeout_s:g} s (`describe` shows the "
                "leaders)"]
    if not partitions:
        return []
    states = (await admin.get_topic_partition_states(partitions)).values
    assignments = (await admin.get_full_replica_assignment_for_topics({tp.topic for tp in partitions})).values
    alive = set(await live())
    lines = []
    for tp in sorted_partitions(partitions):
        state, assignment = states.get(tp), assignments.get(tp)
        if state is None or assignment is None or not assignment.replicas:
            continue  # deleted meanwhile: describe says so
        preferred, leader_and_isr = assignment.replicas[0], state.leader_and_isr
        if leader_and_isr.leader == preferred:
            continue
        if preferred not in alive:
            why = f"broker {preferred} is not running"
        elif offline is not None and offline(preferred, tp):
            why = f"its replica on broker {preferred} is offline (a failed log dir)"
        elif preferred not in leader_and_isr.isr:
            why = (f"it is not in the ISR [{','.join(map(str, leader_and_isr.isr))}] yet (it joins once caught up: "
                   "elect again then)")
        else:
            why = "the controller did not move it (controller.log says why)"
        leader = leader_and_isr.leader if leader_and_isr.leader >= 0 else "none"
        lines.append(f"{tp} kept leader {leader}, not its preferred replica {preferred}: {why}")
    return lines
