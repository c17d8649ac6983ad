"""A follower's time index: built from the leader's entries as served in a fetch (in process and through the wire's
batch headers), the same as the leader's; cut by truncation; a hostile leader's entries checked (order, range)."""

from __future__ import annotations

from zkcontroller.broker.partition import Partition, TimeIndex
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.inter_broker import EpochEntry, ReplicatedBatch, TimeIndexEntry
from zkcontroller.protocol.wire import fetch_codec

TP = TopicPartition("t", 0)


def leader_with(batches: list[tuple[int, int, int]]) -> Partition:
    """A leader that appended one batch per (records, first timestamp, max timestamp), indexed as Produce does."""
    p = Partition(TP, 1)
    p.make_leader(0, (1, 2), (1, 2), 0, 1, now_ms=0)
    for records, first, max_ts in batches:
        base = p.log_end_offset
        p.append_as_leader(records, 0)
        p.time_index.append(base, first, max_ts)
    return p


def follower() -> Partition:
    p = Partition(TP, 2)
    p.make_follower(1, 0, (1, 2), (1, 2), 0, 1)
    return p


def entries(index: TimeIndex) -> tuple[TimeIndexEntry, ...]:
    return index.entries_in(0, 1 << 62)


BATCHES = [(1, 1_000, 1_000), (3, 2_000, 4_000), (2, 3_000, 3_500), (1, 5_000, 5_000)]
"""The third batch's max (3,500) is below the second's: neither index keeps it."""


def test_a_follower_fetching_in_two_steps_builds_the_leaders_entries() -> None:
    leader = leader_with(BATCHES)
    assert [e.base_offset for e in entries(leader.time_index)] == [0, 1, 6]
    f = follower()
    for start, count in ((0, 3), (3, 4)):  # the second fetch begins inside the second batch
        f.append_as_follower(count, 0, epochs=(EpochEntry(0, start),),
                             timestamps=leader.time_index.entries_in(start, start + count))
    assert entries(f.time_index) == entries(leader.time_index)
    for target in (0, 1_000, 1_001, 3_000, 4_000, 4_001, 5_000, 5_001):
        assert f.time_index.lookup(target) == leader.time_index.lookup(target)


def test_the_entries_travel_in_the_wire_batches_headers() -> None:
    """Plain stretches are cut where an entry begins; a producer batch at an entry carries its first timestamp;
    what the follower decodes is what the leader served, epochs and producer batches unchanged."""
    leader = leader_with(BATCHES)
    producer = ReplicatedBatch(4, 5, 7, 0, 0, 3_500)
    epochs = (EpochEntry(0, 0), EpochEntry(1, 2))
    served = leader.time_index.entries_in(0, 7)
    data = fetch_codec.encode_records(0, 7, (producer,), epochs, served)
    decoded: list[TimeIndexEntry] = []
    assert fetch_codec.decode_batches(data, decoded) == (7, 0, (producer,), epochs)
    assert [e for e in decoded if e.base_offset != producer.base_offset] == list(served)
    f = follower()
    f.append_as_follower(7, 0, (producer,), epochs, tuple(decoded))
    assert entries(f.time_index) == entries(leader.time_index)
    # no entries: the encoding is as before (one plain batch, timestamps -1)
    assert fetch_codec.encode_records(0, 7) == fetch_codec.record_batch(0, 7)


def test_truncation_drops_the_entries_at_and_above_the_new_log_end() -> None:
    f = follower()
    leader = leader_with(BATCHES)
    f.append_as_follower(7, 7, timestamps=leader.time_index.entries_in(0, 7))
    f.truncate_to(6)  # the last batch (offset 6) goes
    assert [e.base_offset for e in entries(f.time_index)] == [0, 1]
    assert f.time_index.lookup(4_001) is None
    f.truncate_to(1)  # the batch at offset 1 goes too: a lookup between 1,000 and 4,000 finds none
    assert entries(f.time_index) == (TimeIndexEntry(0, 1_000, 1_000),)
    assert f.time_index.lookup(1_001) is None
    # the new leader's batches at the same offsets are indexed in their place
    f.append_as_follower(2, 8, timestamps=(TimeIndexEntry(1, 9_000, 9_000),))
    assert f.time_index.lookup(1_001) == (9_000, 1)


def test_a_follower_truncating_on_becoming_follower_drops_the_entries_above_its_high_watermark() -> None:
    """Kafka's path for a log without epochs: a new follower truncates to its HW, index included."""
    p = leader_with(BATCHES)
    p.high_watermark = 4
    p.last_fetched_epoch = -1  # no epochs known: truncated on becoming follower
    p.make_follower(2, 1, (2,), (1, 2), 1, 1)
    assert p.log_end_offset == 4
    assert [e.base_offset for e in entries(p.time_index)] == [0, 1]


def test_a_hostile_leaders_entries_are_checked() -> None:
    """Outside the records appended, out of order, or with a first timestamp above the max: not taken as such."""
    f = follower()
    f.append_as_follower(5, 0, timestamps=(
        TimeIndexEntry(-1, 10, 10),  # below the log end
        TimeIndexEntry(2, 100, 200),
        TimeIndexEntry(1, 300, 300),  # before the last one kept
        TimeIndexEntry(3, 900, 400),  # first above max: taken at max
        TimeIndexEntry(5, 1_000, 1_000),  # beyond the records appended
    ))
    assert entries(f.time_index) == (TimeIndexEntry(2, 100, 200), TimeIndexEntry(3, 400, 400))
