"""Kafka's replica placement for new topics and partitions (``AdminUtils.assignReplicasToBrokers``).

Goals, as Kafka states them: spread replicas evenly over brokers; for the partitions led by one broker,
spread their followers over the other brokers; when every broker has a rack, put a partition's replicas on
different racks where possible.

Rack-unaware: the first replica of each partition goes round-robin over the broker list from a start index;
the others follow at an increasing shift, so that the same follower sequence does not repeat. Rack-aware: the
same round-robin over a *rack-alternated* broker list, skipping brokers whose rack (or the broker itself)
already holds a replica of the partition until every rack (broker) has one.

The random start index and shift come from an injected ``random.Random`` (Kafka's ``rand.nextInt``), never
from module-level randomness, so the simulator and tests are reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from zkcontroller.admin.errors import AdminOperationError, InvalidPartitionsError, InvalidReplicationFactorError


@dataclass(frozen=True, slots=True, order=True)
class BrokerMetadata:
    """What placement needs to know of a broker (Kafka's ``kafka.admin.BrokerMetadata``)."""

    id: int
    rack: str | None = None


class RackAwareMode(Enum):
    """How rack information is used (``kafka.admin.RackAwareMode``)."""

    ENFORCED = "Enforced"
    """Use racks; fail if only some brokers have one."""
    SAFE = "Safe"
    """Use racks only if every broker has one."""
    DISABLED = "Disabled"
    """Ignore racks."""


def broker_metadatas_for(
    brokers: Iterable[BrokerMetadata], mode: RackAwareMode = RackAwareMode.ENFORCED
) -> list[BrokerMetadata]:
    """Kafka's ``AdminZkClient.getBrokerMetadatas``: the placement input for a mode, sorted by broker id."""
    brokers = list(brokers)
    with_rack = [b for b in brokers if b.rack is not None]
    if mode is RackAwareMode.ENFORCED and with_rack and len(with_rack) < len(brokers):
        raise AdminOperationError(
            "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica "
            "assignment without rack information.")
    if mode is RackAwareMode.DISABLED or (mode is RackAwareMode.SAFE and len(with_rack) < len(brokers)):
        brokers = [BrokerMetadata(b.id, None) for b in brokers]
    return sorted(brokers, key=lambda b: b.id)


MAX_PARTITIONS = 1_048_575 // 8
"""Beyond Kafka: the most partitions a topic znode can list within ZooKeeper's default ``jute.maxbuffer``
(1 MiB - 1), at 8 bytes for the shortest entry (``"0":[1],``). Kafka would compute a placement for any count
(2^31 - 1 exhausts its heap) and fail at the write; we refuse larger counts before placing, so one request (a
CreateTopics, a Metadata auto-creation with a huge ``num.partitions``, a CreatePartitions, a command) cannot
stall a broker's event loop placing billions of replicas."""


def assign_replicas_to_brokers(
    brokers: Sequence[BrokerMetadata],
    n_partitions: int,
    replication_factor: int,
    *,
    rng: random.Random | None = None,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
) -> dict[int, list[int]]:
    """Partition id → replica list (first replica is the preferred leader), in Kafka's placement.

    ``brokers`` are used in the order given (Kafka's callers sort them by id). ``fixed_start_index`` >= 0
    fixes both the start index and the initial shift (Kafka's tests and partition addition use it);
    otherwise both are drawn from ``rng``. ``start_partition_id`` numbers the first new partition (when
    adding partitions to a topic).
    """
    if n_partitions <= 0:
        raise InvalidPartitionsError("Number of partitions must be larger than 0.")
    total = n_partitions + max(start_partition_id, 0)
    if total > MAX_PARTITIONS:
        raise InvalidPartitionsError(f"Topic cannot have {total} partitions: a topic znode lists at most "
                                     f"{MAX_PARTITIONS}.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise InvalidReplicationFactorError(
            f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}.")
    if fixed_start_index < 0 and rng is None:
        raise ValueError("a random source is needed unless fixed_start_index is given")
    if all(b.rack is None for b in brokers):
        return _assign_rack_unaware(n_partitions, replication_factor, [b.id for b in brokers],
                                    fixed_start_index, start_partition_id, rng)
    if any(b.rack is None for b in brokers):
        raise AdminOperationError("Not all brokers have rack information for replica rack aware assignment.")
    racks = {b.id: b.rack for b in brokers if b.rack is not None}
    return _assign_rack_aware(n_partitions, replication_factor, racks, fixed_start_index, start_partition_id, rng)


def _start(fixed_start_index: int, n: int, rng: random.Random | None) -> int:
    if fixed_start_index >= 0:
        return fixed_start_index
    assert rng is not None
    return rng.randrange(n)


def _assign_rack_unaware(
    n_partitions: int,
    replication_factor: int,
    broker_ids: list[int],
    fixed_start_index: int,
    start_partition_id: int,
    rng: random.Random | None,
) -> dict[int, list[int]]:
    n = len(broker_ids)
    start_index = _start(fixed_start_index, n, rng)
    next_replica_shift = _start(fixed_start_index, n, rng)
    partition_id = max(0, start_partition_id)
    out: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if partition_id > 0 and partition_id % n == 0:
            next_replica_shift += 1
        first = (partition_id + start_index) % n
        replicas = [broker_ids[first]]
        replicas += [broker_ids[_replica_index(first, next_replica_shift, j, n)]
                     for j in range(replication_factor - 1)]
        out[partition_id] = replicas
        partition_id += 1
    return out


def _assign_rack_aware(
    n_partitions: int,
    replication_factor: int,
    broker_racks: Mapping[int, str],
    fixed_start_index: int,
    start_partition_id: int,
    rng: random.Random | None,
) -> dict[int, list[int]]:
    num_racks = len(set(broker_racks.values()))
    arranged = rack_alternated_broker_list(broker_racks)
    n = len(arranged)
    start_index = _start(fixed_start_index, n, rng)
    next_replica_shift = _start(fixed_start_index, n, rng)
    partition_id = max(0, start_partition_id)
    out: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if partition_id > 0 and partition_id % n == 0:
            next_replica_shift += 1
        first = (partition_id + start_index) % n
        leader = arranged[first]
        replicas = [leader]
        racks_with_replicas = {broker_racks[leader]}
        brokers_with_replicas = {leader}
        k = 0
        for _ in range(replication_factor - 1):
            while True:
                broker = arranged[_replica_index(first, next_replica_shift * num_racks, k, n)]
                rack = broker_racks[broker]
                k += 1
                # Skip a broker whose rack already has a replica while some rack has none, and a broker that
                # already has one while some broker has none.
                if ((rack not in racks_with_replicas or len(racks_with_replicas) == num_racks)
                        and (broker not in brokers_with_replicas or len(brokers_with_replicas) == n)):
                    replicas.append(broker)
                    racks_with_replicas.add(rack)
                    brokers_with_replicas.add(broker)
                    break
        out[partition_id] = replicas
        partition_id += 1
    return out


def rack_alternated_broker_list(broker_racks: Mapping[int, str]) -> list[int]:
    """Brokers taken one per rack in turn, racks in name order, brokers by id within a rack.

    Kafka's example: rack1: 0,1,2; rack2: 3,4,5; rack3: 6,7,8 → 0,3,6,1,4,7,2,5,8.
    """
    by_rack: dict[str, list[int]] = {}
    for broker, rack in broker_racks.items():
        by_rack.setdefault(rack, []).append(broker)
    iterators = {rack: iter(sorted(ids)) for rack, ids in by_rack.items()}
    racks = sorted(iterators)
    result: list[int] = []
    rack_index = 0
    while len(result) < len(broker_racks):
        taken = next(iterators[racks[rack_index]], None)
        if taken is not None:
            result.append(taken)
        rack_index = (rack_index + 1) % len(racks)
    return result


def _replica_index(first_replica_index: int, second_replica_shift: int, replica_index: int, n_brokers: int) -> int:
    shift = 1 + (second_replica_shift + replica_index) % (n_brokers - 1)
    return (first_replica_index + shift) % n_brokers
