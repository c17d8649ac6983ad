"""``zkcontroller reassign ... --bootstrap-server``: Kafka 2.8.2's ReassignPartitionsCommand AdminClient path over
our wire-protocol admin client: AlterPartitionReassignments and ListPartitionReassignments at the controller,
Metadata for the current replicas and the brokers, IncrementalAlterConfigs to clear the throttles.

Each function returns the lines Kafka's tool prints; a failure is an `AdminClientError` with Kafka's message.
``--execute --throttle`` sets the topics' ``*.replication.throttled.replicas`` and the brokers'
``*.replication.throttled.rate`` through IncrementalAlterConfigs before submitting, as Kafka does (our brokers
store them; they do not slow replication down); ``--additional`` lets a new execute run beside ongoing ones
(and the throttles then cover those too). There are no log-dir moves: our brokers do not serve
AlterReplicaLogDirs.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from zkcontroller.admin.admin_client import ERROR_MESSAGES, AdminClient, AdminClientError
from zkcontroller.admin.errors import AdminError
from zkcontroller.admin.reassign import (
    BROKER_THROTTLES,
    EXISTING,
    ROLLBACK_NOTE,
    TOPIC_THROTTLES,
    VERIFY_PERIODICALLY,
    MoveMap,
    format_reassignment_json,
    proposed_move_map,
    reassigning_brokers,
    throttle_set_line,
    throttled_replicas,
)
from zkcontroller.admin.replica_assignment import (
    BrokerMetadata,
    RackAwareMode,
    assign_replicas_to_brokers,
    broker_metadatas_for,
)
from zkcontroller.model import TopicPartition, sorted_partitions
from zkcontroller.protocol.wire.alter_configs import DELETE, SET, AlterResource, ConfigChange

BROKER, TOPIC = 4, 2
LEADER_RATE, FOLLOWER_RATE = BROKER_THROTTLES[:2]
LEADER_REPLICAS, FOLLOWER_REPLICAS = TOPIC_THROTTLES


def _message(code: int, message: str | None) -> str:
    return message or ERROR_MESSAGES.get(code, f"Error code {code}.")


async def list_lines(admin: AdminClient) -> list[str]:
    """curReassignmentsToString."""
    found = await admin.list_reassignments(None)
    if not found:
        return ["No partition reassignments found."]
    lines = ["Current partition reassignments:"]
    for (topic, partition), r in sorted(found.items()):
        adding = f" adding: {','.join(map(str, r.adding))}." if r.adding else ""
        removing = f" removing: {','.join(map(str, r.removing))}." if r.removing else ""
        lines.append(f"{topic}-{partition}: replicas: {','.join(map(str, r.replicas))}.{adding}{removing}")
    return lines


async def _current_replicas(admin: AdminClient, topics: set[str]) -> dict[TopicPartition, tuple[int, ...]]:
    """getReplicaAssignmentForTopics: an unknown topic fails (UNKNOWN_TOPIC_OR_PARTITION's message)."""
    return {TopicPartition(t.name, p.partition): p.replicas
            for t in await admin.describe_topics(sorted(topics)) for p in t.partitions}


async def set_throttles(admin: AdminClient, moves: MoveMap, throttle: int) -> str:
    """modifyReassignmentThrottle: the topics' throttled replicas, then every broker that sends or receives gets
    both rates; the line Kafka prints once they are set."""
    await admin.incremental_alter_configs([
        AlterResource(TOPIC, topic, (ConfigChange(LEADER_REPLICAS, leader, SET),
                                     ConfigChange(FOLLOWER_REPLICAS, follower, SET)))
        for topic, (leader, follower) in throttled_replicas(moves).items()])
    await admin.incremental_alter_configs([
        AlterResource(BROKER, str(b), (ConfigChange(LEADER_RATE, str(throttle), SET),
                                       ConfigChange(FOLLOWER_RATE, str(throttle), SET)))
        for b in reassigning_brokers(moves)])
    return throttle_set_line(throttle)


async def execute(admin: AdminClient, targets: Mapping[TopicPartition, Sequence[int]], *, additional: bool = False,
                  throttle: int = -1) -> list[str]:
    """executeAssignment: refuse while any reassignment runs (unless ``additional``), check the brokers, print the
    rollback JSON, set the throttles (``throttle`` >= 0), submit."""
    ongoing = await admin.list_reassignments(None)
    if ongoing and not additional:
        raise AdminClientError(EXISTING)
    live = {b.id for b in await admin.live_brokers()}
    unknown = next((b for r in targets.values() for b in r if b not in live), None)
    if unknown is not None:
        raise AdminClientError(f"Unknown broker id {unknown}")
    current = await _current_replicas(admin, {tp.topic for tp in targets})
    rollback = {tp: r for tp, r in current.items() if tp in targets}
    lines = [f"Current partition replica assignment\n\n{format_reassignment_json(rollback)}\n\n{ROLLBACK_NOTE}"]
    if throttle >= 0:
        lines.append(VERIFY_PERIODICALLY)
        try:
            moves = proposed_move_map({k: (r.replicas, r.adding) for k, r in ongoing.items()}, targets, current)
            lines.append(await set_throttles(admin, moves, throttle))
        except (AdminClientError, AdminError) as e:
            raise PrintedThenFailed(lines, str(e)) from None
    results = await admin.alter_reassignments({(tp.topic, tp.partition): tuple(r) for tp, r in targets.items()})
    errors = {TopicPartition(t, p): _message(code, msg) for (t, p), (code, msg) in results.items() if code}
    if errors:
        raise PrintedThenFailed(lines, "Error reassigning partition(s):\n" + "\n".join(
            f"{tp}: {errors[tp]}" for tp in sorted_partitions(errors)))
    plural = "" if len(targets) == 1 else "s"
    lines.append(f"Successfully started partition reassignment{plural} for "
                 f"{','.join(str(tp) for tp in sorted_partitions(targets))}")
    return lines


class PrintedThenFailed(AdminClientError):
    """Lines Kafka's tool prints before it fails (the rollback JSON before a rejected submission)."""

    def __init__(self, lines: list[str], message: str) -> None:
        super().__init__(message)
        self.lines = lines


async def verify(admin: AdminClient, targets: Mapping[TopicPartition, Sequence[int]], preserve_throttles: bool
                 ) -> tuple[list[str], bool]:
    """verifyAssignment: each partition's state (sorted), then, once no reassignment at all is running and unless
    ``preserve_throttles``, clearAllThrottles. Returns the lines and whether every target partition is done."""
    ongoing = await admin.list_reassignments(None)
    lookup = {tp.topic for tp in targets if (tp.topic, tp.partition) not in ongoing}
    current: dict[TopicPartition, tuple[int, ...]] = {}
    for topic in sorted(lookup):
        try:
            current.update(await _current_replicas(admin, {topic}))
        except AdminClientError as e:
            if getattr(e, "code", None) != 3:  # an unknown topic: no current replicas, as Kafka's
                raise
    lines = ["Status of partition reassignment:"]
    all_done = True
    for tp in sorted_partitions(targets):
        target = tuple(targets[tp])
        if (tp.topic, tp.partition) in ongoing:
            all_done = False
            lines.append(f"Reassignment of partition {tp} is still in progress.")
            continue
        replicas = current.get(tp, ())
        if replicas == target:
            lines.append(f"Reassignment of partition {tp} is complete.")
        else:
            lines.append(f"There is no active reassignment of partition {tp}, but replica set is "
                         f"{','.join(map(str, replicas))} rather than {','.join(map(str, target))}.")
    lines.append("")  # verifyReplicaMoves: println of the (here always empty) log-dir move states
    if not ongoing and not preserve_throttles:
        await clear_all_throttles(admin, targets, lines)
    return lines, all_done


async def clear_all_throttles(admin: AdminClient, targets: Mapping[TopicPartition, Sequence[int]],
                              lines: list[str]) -> None:
    """clearAllThrottles: every live or target broker's throttle rates, then every target topic's throttled
    replicas, deleted through IncrementalAlterConfigs, each after Kafka's line (appended to ``lines``). A failure
    is `PrintedThenFailed` with the lines so far, as Kafka's tool has printed them by then."""
    try:
        brokers = sorted({b.id for b in await admin.live_brokers()} | {b for r in targets.values() for b in r})
        lines.append(f"Clearing broker-level throttles on broker{'' if len(brokers) == 1 else 's'} "
                     f"{','.join(map(str, brokers))}")
        await admin.incremental_alter_configs([
            AlterResource(BROKER, str(b), tuple(ConfigChange(k, None, DELETE) for k in BROKER_THROTTLES))
            for b in brokers])
        topics = sorted({tp.topic for tp in targets})
        lines.append(f"Clearing topic-level throttles on topic{'' if len(topics) == 1 else 's'} {','.join(topics)}")
        await admin.incremental_alter_configs([
            AlterResource(TOPIC, t, tuple(ConfigChange(k, None, DELETE) for k in TOPIC_THROTTLES)) for t in topics])
    except PrintedThenFailed:
        raise
    except AdminClientError as e:
        raise PrintedThenFailed(lines, str(e)) from None


async def cancel(admin: AdminClient, targets: Mapping[TopicPartition, Sequence[int]], preserve_throttles: bool = False
                 ) -> list[str]:
    """cancelAssignment: cancel those of ``targets`` being reassigned (adding or removing replicas), say that no
    log-dir move is active (there are none here), then clearAllThrottles unless ``preserve_throttles``."""
    found = await admin.list_reassignments([(tp.topic, tp.partition) for tp in targets])
    moving = sorted_partitions(TopicPartition(t, p) for (t, p), r in found.items() if r.adding or r.removing)
    if not moving:
        lines = ["None of the specified partition reassignments are active."]
    else:
        results = await admin.alter_reassignments({(tp.topic, tp.partition): None for tp in moving})
        errors = {TopicPartition(t, p): _message(code, msg) for (t, p), (code, msg) in results.items() if code}
        if errors:
            raise AdminClientError(f"Error cancelling partition reassignment{'' if len(errors) == 1 else 's'} for:"
                                   "\n" + "\n".join(f"{tp}: {errors[tp]}" for tp in sorted_partitions(errors)))
        lines = [f"Successfully cancelled partition reassignment{'' if len(moving) == 1 else 's'} for: "
                 f"{','.join(map(str, moving))}"]
    lines.append("None of the specified partition moves are active.")
    if not preserve_throttles:
        await clear_all_throttles(admin, targets, lines)
    return lines


async def generate(admin: AdminClient, topics: Sequence[str], brokers: Sequence[int], rack_aware: bool,
                   rng: random.Random) -> tuple[str, str]:
    """generateAssignment: (current, proposed) JSON; an unknown topic fails, brokers not in the cluster are left
    out (getBrokerMetadata), racks used unless ``rack_aware`` is off."""
    current = await _current_replicas(admin, set(topics))
    wanted = set(brokers)
    metadata = broker_metadatas_for(
        (BrokerMetadata(n.id, n.rack if rack_aware else None) for n in await admin.live_brokers() if n.id in wanted),
        RackAwareMode.ENFORCED if rack_aware else RackAwareMode.DISABLED)
    proposed: dict[TopicPartition, tuple[int, ...]] = {}
    for topic in topics:
        parts = {tp: r for tp, r in current.items() if tp.topic == topic}
        if not parts:
            continue
        placed = assign_replicas_to_brokers(metadata, len(parts), len(next(iter(parts.values()))), rng=rng)
        proposed.update({tp: tuple(placed[tp.partition]) for tp in parts})
    return format_reassignment_json(current), format_reassignment_json(proposed)
