"""Kafka's replica placement: Kafka's own example assignments, the errors, and Hypothesis properties."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkcontroller.admin.errors import AdminOperationError, InvalidPartitionsError, InvalidReplicationFactorError
from zkcontroller.admin.replica_assignment import (
    MAX_PARTITIONS,
    BrokerMetadata,
    RackAwareMode,
    assign_replicas_to_brokers,
    broker_metadatas_for,
    rack_alternated_broker_list,
)


def unracked(*ids: int) -> list[BrokerMetadata]:
    return [BrokerMetadata(i) for i in ids]


def racked(racks: dict[int, str]) -> list[BrokerMetadata]:
    return [BrokerMetadata(i, r) for i, r in sorted(racks.items())]


# ---------------------------------------------------------------- Kafka's examples


def test_rack_unaware_example_from_admin_test() -> None:
    """AdminTest.testReplicaAssignment: 5 brokers, 10 partitions, RF 3, fixed start index 0."""
    assert assign_replicas_to_brokers(unracked(0, 1, 2, 3, 4), 10, 3, fixed_start_index=0) == {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2],
    }


def test_rack_unaware_uses_broker_ids_not_positions() -> None:
    assert assign_replicas_to_brokers(unracked(10, 20, 30), 3, 2, fixed_start_index=0) == {
        0: [10, 20], 1: [20, 30], 2: [30, 10],
    }


def test_rack_alternated_list_examples() -> None:
    rack_map = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_broker_list(rack_map) == [0, 3, 1, 5, 4, 2]
    assert rack_alternated_broker_list({k: v for k, v in rack_map.items() if k != 5}) == [0, 3, 1, 4, 2]
    nine = {b: f"rack{b // 3 + 1}" for b in range(9)}
    assert rack_alternated_broker_list(nine) == [0, 3, 6, 1, 4, 7, 2, 5, 8]


def test_rack_aware_example_from_admin_rack_aware_test() -> None:
    """AdminRackAwareTest: after one round over the alternated list the followers shift (partition 6)."""
    rack_map = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert assign_replicas_to_brokers(racked(rack_map), 7, 3, fixed_start_index=0, start_partition_id=0) == {
        0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3], 6: [0, 4, 2],
    }


def test_start_partition_id_numbers_new_partitions() -> None:
    """Adding partitions continues the numbering and the shift as if the topic had been created whole."""
    whole = assign_replicas_to_brokers(unracked(0, 1, 2, 3, 4), 10, 3, fixed_start_index=0)
    tail = assign_replicas_to_brokers(unracked(0, 1, 2, 3, 4), 4, 3, fixed_start_index=0, start_partition_id=6)
    assert list(tail) == [6, 7, 8, 9]
    assert tail[6][0] == whole[6][0] and tail[9][0] == whole[9][0]


def test_random_start_is_drawn_from_the_injected_source() -> None:
    brokers = unracked(1, 2, 3, 4, 5)
    first = assign_replicas_to_brokers(brokers, 8, 3, rng=random.Random(7))
    again = assign_replicas_to_brokers(brokers, 8, 3, rng=random.Random(7))
    assert first == again
    starts = {assign_replicas_to_brokers(brokers, 1, 1, rng=random.Random(s))[0][0] for s in range(40)}
    assert len(starts) > 1  # the start really is random


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(("partitions", "rf", "error", "message"), [
    (0, 1, InvalidPartitionsError, "Number of partitions must be larger than 0."),
    (3, 0, InvalidReplicationFactorError, "Replication factor must be larger than 0."),
    (3, 4, InvalidReplicationFactorError, "Replication factor: 4 larger than available brokers: 3."),
])
def test_invalid_arguments(partitions: int, rf: int, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as raised:
        assign_replicas_to_brokers(unracked(1, 2, 3), partitions, rf, fixed_start_index=0)
    assert str(raised.value) == message  # AdminUtils.assignReplicasToBrokers' wording, to the letter


def test_more_partitions_than_a_topic_znode_can_list_are_refused_before_placing() -> None:
    """2^31 - 1 partitions (from CreateTopics, a huge num.partitions or a command) used to be placed one by one,
    stalling the event loop for an hour; the limit holds for additions too (their ids start past the old ones)."""
    with pytest.raises(InvalidPartitionsError, match=f"a topic znode lists at most {MAX_PARTITIONS}"):
        assign_replicas_to_brokers(unracked(1, 2, 3), MAX_PARTITIONS + 1, 1, fixed_start_index=0)
    with pytest.raises(InvalidPartitionsError, match=f"Topic cannot have {MAX_PARTITIONS + 1} partitions"):
        assign_replicas_to_brokers(unracked(1, 2), 2, 1, fixed_start_index=0, start_partition_id=MAX_PARTITIONS - 1)
    assert len(assign_replicas_to_brokers(unracked(1, 2), 1, 1, fixed_start_index=0,
                                          start_partition_id=MAX_PARTITIONS - 1)) == 1


def test_rack_aware_needs_every_broker_to_have_a_rack() -> None:
    brokers = [BrokerMetadata(1, "a"), BrokerMetadata(2, None), BrokerMetadata(3, "b")]
    with pytest.raises(AdminOperationError, match="Not all brokers have rack information"):
        assign_replicas_to_brokers(brokers, 3, 2, fixed_start_index=0)


def test_random_start_needs_a_random_source() -> None:
    with pytest.raises(ValueError, match="random source"):
        assign_replicas_to_brokers(unracked(1, 2), 1, 1)


def test_rack_aware_modes() -> None:
    mixed = [BrokerMetadata(2, "a"), BrokerMetadata(1, None)]
    with pytest.raises(AdminOperationError, match="--disable-rack-aware"):
        broker_metadatas_for(mixed, RackAwareMode.ENFORCED)
    assert broker_metadatas_for(mixed, RackAwareMode.SAFE) == unracked(1, 2)
    assert broker_metadatas_for(mixed, RackAwareMode.DISABLED) == unracked(1, 2)
    full = racked({2: "a", 1: "b"})
    assert broker_metadatas_for(full, RackAwareMode.SAFE) == racked({1: "b", 2: "a"})
    assert broker_metadatas_for(full, RackAwareMode.DISABLED) == unracked(1, 2)


# ---------------------------------------------------------------- properties

broker_ids = st.lists(st.integers(0, 1000), min_size=1, max_size=12, unique=True).map(sorted)


@st.composite
def placement_case(draw: st.DrawFn, with_racks: bool) -> tuple[list[BrokerMetadata], int, int, int]:
    ids = draw(broker_ids)
    if with_racks:
        n_racks = draw(st.integers(1, len(ids)))
        brokers = [BrokerMetadata(i, f"r{draw(st.integers(0, n_racks - 1))}") for i in ids]
    else:
        brokers = unracked(*ids)
    rf = draw(st.integers(1, len(ids)))
    partitions = draw(st.integers(1, 60))
    seed = draw(st.integers(0, 2**32))
    return brokers, partitions, rf, seed


def check_common(brokers: list[BrokerMetadata], partitions: int, rf: int, out: dict[int, list[int]]) -> None:
    ids = {b.id for b in brokers}
    assert sorted(out) == list(range(partitions))
    for replicas in out.values():
        assert len(replicas) == rf
        assert len(set(replicas)) == rf
        assert set(replicas) <= ids
    leaders = Counter(replicas[0] for replicas in out.values())
    counts = [leaders.get(b, 0) for b in ids]
    assert max(counts) - min(counts) <= 1, f"leaders not spread evenly: {leaders}"


@given(placement_case(with_racks=False))
def test_rack_unaware_properties(case: tuple[list[BrokerMetadata], int, int, int]) -> None:
    brokers, partitions, rf, seed = case
    out = assign_replicas_to_brokers(brokers, partitions, rf, rng=random.Random(seed))
    check_common(brokers, partitions, rf, out)


@given(placement_case(with_racks=True))
def test_rack_aware_properties(case: tuple[list[BrokerMetadata], int, int, int]) -> None:
    brokers, partitions, rf, seed = case
    out = assign_replicas_to_brokers(brokers, partitions, rf, rng=random.Random(seed))
    check_common(brokers, partitions, rf, out)
    rack_of = {b.id: b.rack for b in brokers}
    n_racks = len(set(rack_of.values()))
    for replicas in out.values():
        assert len({rack_of[r] for r in replicas}) == min(rf, n_racks), replicas


@given(placement_case(with_racks=False), st.integers(0, 30))
def test_fixed_start_is_deterministic(case: tuple[list[BrokerMetadata], int, int, int], start: int) -> None:
    brokers, partitions, rf, _ = case
    start %= len(brokers)
    first = assign_replicas_to_brokers(brokers, partitions, rf, fixed_start_index=start)
    assert first == assign_replicas_to_brokers(brokers, partitions, rf, fixed_start_index=start)
    assert first[0][0] == brokers[start].id
