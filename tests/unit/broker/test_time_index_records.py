"""ListOffsets by timestamp names the record Kafka names inside a batch: the first record in the log whose timestamp
reaches the target (``LogSegment.findOffsetByTimestamp``'s scan, ``FileRecords.searchForTimestamp``), with that
record's offset and timestamp, not the batch's base offset with its max timestamp. A leader indexes each record that
is a new running maximum (`record_timestamps.running_maxima`, `TimeIndex.append_records`); checked against a plain
model of Kafka's search over the same produced history."""

from __future__ import annotations

import asyncio

from hypothesis import example, given, settings
from hypothesis import strategies as st
from kafka.record.memory_records import MemoryRecordsBuilder
from tests.unit.broker.replica_helpers import Brokers, state
from tests.unit.broker.test_produce_offload_bounds import KNOWN, Broker
from tests.unit.broker.test_produce_replica_manager import KNOWN as KNOWN_TOPICS
from tests.unit.broker.v2_batches import GZIP, ZSTD, v2_batch_of, v2_record

from zkcontroller.broker.partition import TimeIndex
from zkcontroller.broker.produce import ProducePartition, produce
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.inter_broker import EpochEntry, ReplicatedBatch, TimeIndexEntry
from zkcontroller.protocol.wire.fetch_codec import decode_batches, encode_records, record_batch
from zkcontroller.protocol.wire.record_sets import LONG_MAX, LONG_MIN, java_long
from zkcontroller.protocol.wire.record_timestamps import running_maxima

BASE = 1_000_000
TP = TopicPartition("t", 0)


def batch(deltas: list[int], codec: int = 0, base: int = BASE) -> bytes:
    return v2_batch_of([v2_record(i, timestamp_delta=d) for i, d in enumerate(deltas)], first_timestamp=base,
                       max_timestamp=base + max(deltas), codec=codec)


async def produced(batches: list[bytes], broker: Broker | None = None) -> Broker:
    broker = broker or Broker()
    for data in batches:
        [got] = await produce(9, 1, 30_000, "c", [ProducePartition("t", 0, data)], cache=KNOWN,
                              target=broker.target())  # type: ignore[arg-type]
        assert got.error == 0
    return broker


def kafka_lookup(timestamps: list[int], target: int) -> tuple[int, int] | None:
    """Kafka's answer over the log's records in offset order: the first whose timestamp reaches the target."""
    return next(((t, offset) for offset, t in enumerate(timestamps) if t >= target), None)


async def test_a_record_inside_the_batch_is_named_with_its_own_offset_and_timestamp() -> None:
    broker = await produced([batch([0, 50, 20, 100])])
    index = broker.parts[TP].time_index
    assert index.lookup(BASE + 30) == (BASE + 50, 1)  # before: (BASE + 100, 0), the batch's base with its max
    assert index.lookup(BASE + 60) == (BASE + 100, 3)
    assert index.lookup(BASE) == (BASE, 0)
    assert index.lookup(BASE + 101) is None


async def test_only_records_above_the_index_are_kept() -> None:
    """A batch whose records stay below what is indexed adds nothing; one whose later records rise above it adds
    those only, not its first (a target at or below the earlier max finds the earlier batch)."""
    broker = await produced([batch([0, 200]), batch([0, 100, 150]), batch([-10, 100, 300, 250, 301])])
    index = broker.parts[TP].time_index
    assert [tuple(e) for e in index.entries()] == [(0, BASE, BASE), (1, BASE + 200, BASE + 200),
                                                   (7, BASE + 300, BASE + 300), (9, BASE + 301, BASE + 301)]
    assert index.lookup(BASE + 201) == (BASE + 300, 7)  # before: (BASE + 301, 5)


async def test_a_compressed_batch_is_read_too() -> None:
    broker = await produced([batch([0, 5, 9], codec=GZIP), batch([0, 4, 8], codec=ZSTD, base=BASE + 10)])
    index = broker.parts[TP].time_index
    assert index.lookup(BASE + 3) == (BASE + 5, 1)
    assert index.lookup(BASE + 13) == (BASE + 14, 4)


def test_running_maxima_wraps_as_a_java_long() -> None:
    near = LONG_MAX - 5
    data = v2_batch_of([v2_record(0, timestamp_delta=0), v2_record(1, timestamp_delta=10),
                        v2_record(2, timestamp_delta=3)], first_timestamp=near, max_timestamp=near)
    assert running_maxima(data, -1) == [(0, near), (2, near + 3)]  # the second wraps to LONG_MIN + 4
    low = v2_batch_of([v2_record(0, timestamp_delta=-10), v2_record(1, timestamp_delta=-20)],
                      first_timestamp=-(2**63) + 5, max_timestamp=0)
    assert running_maxima(low, -1) == [(0, java_long(-(2**63) - 5))]


def test_running_maxima_of_long_records_and_deltas() -> None:
    """Records longer than 63 bytes (a two-byte length) and deltas beyond one byte."""
    records = [v2_record(i, b"k" * 100, timestamp_delta=d) for i, d in enumerate([0, 70_000, 64, 80_000])]
    data = v2_batch_of(records, first_timestamp=BASE, max_timestamp=BASE)
    assert running_maxima(data, -1) == [(0, BASE), (1, BASE + 70_000), (3, BASE + 80_000)]
    assert running_maxima(data, BASE + 70_000) == [(3, BASE + 80_000)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(-3, 12), min_size=1, max_size=6), st.sampled_from([0, GZIP]),
                          st.integers(0, 12)), min_size=1, max_size=6),
       st.lists(st.integers(0, 30), min_size=1, max_size=8))
def test_the_same_answer_as_kafkas_search(history: list[tuple[list[int], int, int]], targets: list[int]) -> None:
    timestamps = [BASE + start + d for deltas, _, start in history for d in deltas]
    broker = asyncio.run(produced([batch(deltas, codec, BASE + start) for deltas, codec, start in history]))
    index = broker.parts[TP].time_index
    for target in targets:
        assert index.lookup(BASE + target) == kafka_lookup(timestamps, BASE + target), (target, timestamps)


def test_a_producer_batch_s_records_reach_the_follower_through_the_fetch_codec() -> None:
    """A leader serves an idempotent producer's batch whole (its producer state's), so the entries of records inside
    it travel as those records' timestamps; the follower reads them back. Before: only the batch's first and max
    timestamps in its header, and a new leader answered the batch's base offset with its max."""
    batches = (ReplicatedBatch(2, 6, 7, 0, 0, 400), ReplicatedBatch(7, 8, 7, 0, 5, 500))
    served = (TimeIndexEntry(0, 100, 100), TimeIndexEntry(3, 300, 300), TimeIndexEntry(4, 350, 350),
              TimeIndexEntry(6, 400, 400), TimeIndexEntry(7, 450, 450), TimeIndexEntry(8, 500, 500))
    data = encode_records(0, 9, batches, (EpochEntry(0, 0),), served)
    decoded: list[TimeIndexEntry] = []
    assert decode_batches(data, decoded)[2] == batches
    assert tuple(decoded) == served
    older = encode_records(0, 9, batches, (EpochEntry(0, 0),), (TimeIndexEntry(2, 200, 400),))
    decoded.clear()
    decode_batches(older, decoded)  # a batch whose records were not read: its own entry, as before
    assert decoded == [TimeIndexEntry(2, 200, 400), TimeIndexEntry(7, 500, 500)]


def java_read_varlong(buf: bytes, pos: int) -> tuple[int, int]:
    """Kafka 2.8.2's ``ByteUtils.readVarlong``: at most 10 bytes ("Varlong is too long"), bits past 64 lost."""
    value, shift = 0, 0
    while (b := buf[pos]) & 0x80:
        value |= (b & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        assert shift <= 63, "Varlong is too long"
    value = (value | b << shift) & 0xFFFFFFFFFFFFFFFF
    return java_long((value >> 1) ^ -(value & 1)), pos + 1


def java_record_timestamps(batch: bytes) -> list[int]:
    """Each record's timestamp as Kafka's ``DefaultRecord.readFrom`` reads an uncompressed v2 batch: the batch's
    ``baseTimestamp`` plus the record's ``timestampDelta``, as Java longs."""
    first = int.from_bytes(batch[27:35], "big", signed=True)
    pos, stamps = 61, []
    for _ in range(int.from_bytes(batch[57:61], "big")):
        length, at = java_read_varlong(batch, pos)
        delta, _ = java_read_varlong(batch, at + 1)  # past the attributes byte
        stamps.append(java_long(first + delta))
        pos = at + length
    return stamps


LONGS = st.one_of(st.sampled_from([LONG_MIN, LONG_MIN + 1, -2, -1, 0, 1, LONG_MAX - 1, LONG_MAX]),
                  st.integers(LONG_MIN, LONG_MAX))


@settings(max_examples=300, deadline=None)
@given(LONGS, st.lists(st.tuples(st.integers(1, 3), LONGS), min_size=1, max_size=6))
@example(first=-1, gaps=[(1, LONG_MAX)])  # a plain batch's first record without an entry, then Long.MAX_VALUE
@example(first=LONG_MIN, gaps=[(1, LONG_MAX)])
@example(first=LONG_MAX, gaps=[(1, LONG_MIN)])
def test_records_carry_any_64_bit_timestamps_as_kafka_reads_them(first: int, gaps: list[tuple[int, int]]) -> None:
    """Each record's ``timestampDelta`` is a varlong Java reads back to its timestamp (wrapped as Kafka's own
    writer wraps it) whatever the batch's first timestamp: before, ``Long.MAX_VALUE`` after a first timestamp of -1
    took 2^63, whose zig-zag needs 65 bits: Java reads that varlong as another timestamp, and so did we."""
    entries, at = [], 0
    for gap, timestamp in gaps:
        at += gap
        entries.append(TimeIndexEntry(at, timestamp, timestamp))
    data = record_batch(0, at + 1, first_timestamp=first, max_timestamp=entries[-1].max_timestamp,
                        inner=tuple(entries))
    expected, next_entry = [], 0
    for offset in range(at + 1):
        if next_entry < len(entries) and entries[next_entry].base_offset == offset:
            next_entry += 1
        expected.append(entries[next_entry - 1].max_timestamp if next_entry else first)
    assert java_record_timestamps(data) == expected
    decoded: list[TimeIndexEntry] = []
    decode_batches(data, decoded)
    top, named = -1, []  # what a follower indexes: the records above every earlier one (and above -1)
    for offset, timestamp in enumerate(expected):
        if timestamp > top:
            top = timestamp
            named.append(TimeIndexEntry(offset, timestamp, timestamp))
    largest = entries[-1].max_timestamp  # the header's max timestamp
    if largest < 0:
        assert decoded == []
    elif first < largest and named and named[-1].max_timestamp == largest:
        assert decoded == named
    else:  # the records do not carry the entries: the header's
        assert decoded == [TimeIndexEntry(0, first, largest)]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([-1, 0, 1]) | st.integers(0, LONG_MAX), st.lists(LONGS.filter(lambda t: t >= 0), min_size=1,
                                                                          max_size=5, unique=True))
def test_a_follower_reads_back_entries_up_to_long_max(first: int, stamps: list[int]) -> None:
    """Served through `encode_records` (a plain batch: its first record's entry, else -1) and read back by a
    follower: the leader's entries, up to ``Long.MAX_VALUE``."""
    rising = sorted(t for t in stamps if t > first)
    served = ((TimeIndexEntry(0, first, first),) if first >= 0 else ()) + tuple(
        TimeIndexEntry(i + 1, t, t) for i, t in enumerate(rising))
    if not served:
        return
    data = encode_records(0, len(rising) + 1, (), (EpochEntry(0, 0),), served)
    decoded: list[TimeIndexEntry] = []
    assert decode_batches(data, decoded)[:2] == (len(rising) + 1, 0)
    assert tuple(decoded) == served


def idempotent(timestamps: list[int], sequence: int) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    builder.set_producer_state(producer_id=9, producer_epoch=0, base_sequence=sequence, is_transactional=False)
    for i, timestamp in enumerate(timestamps):
        builder.append(timestamp=timestamp, key=None, value=b"%d" % i)
    builder.close()
    return bytes(builder.buffer())


async def test_a_follower_indexes_an_idempotent_producer_s_records_as_its_leader(brokers: Brokers) -> None:
    """In process (the fetched entries handed over as they are): the follower keeps the leader's entries, so it
    answers as the leader once elected."""
    brokers.lead(state())
    rm = brokers.rms[1]
    for sequence, timestamps in ((0, [1_000]), (1, [2_000, 4_000, 3_000]), (4, [5_000, 4_500, 6_000])):
        [answer] = await produce(8, 1, 30_000, "c", [ProducePartition("t", 0, idempotent(timestamps, sequence))],
                                 cache=KNOWN_TOPICS, target=rm.produce_target())  # type: ignore[arg-type]
        assert answer.error == 0
    for _ in range(3):
        await brokers.fetch_all()
    leader = rm.partition(TP)
    follower = brokers.rms[2].partition(TP)
    assert leader is not None and follower is not None and follower.log_end_offset == 7
    assert follower.time_index.entries() == leader.time_index.entries()
    assert follower.time_index.lookup(3_500) == (4_000, 2)  # before: (4_000, 1)
    assert follower.time_index.lookup(5_500) == (6_000, 6)  # before: (6_000, 4)


def test_a_first_timestamp_below_the_max_is_kept_apart_and_truncated_with_its_entry() -> None:
    index = TimeIndex()
    for entry in ((0, 5, 9), (3, 10, 10), (5, 11, 20)):
        assert index.append(*entry)
    assert index.lookup(6) == (9, 0) and index.lookup(4) == (5, 0) and index.lookup(12) == (20, 5)
    index.truncate(5)
    assert index.append(5, 12, 12)
    assert index.entries() == (TimeIndexEntry(0, 5, 9), TimeIndexEntry(3, 10, 10), TimeIndexEntry(5, 12, 12))
    assert index.entries_in(1, 6) == (TimeIndexEntry(3, 10, 10), TimeIndexEntry(5, 12, 12))


def batch_count(data: bytes) -> int:
    count, pos = 0, 0
    while pos < len(data):
        pos += 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
        count += 1
    return count


def test_plain_records_carry_their_entries_and_an_unread_batch_s_entry_stands_alone() -> None:
    """Records' own entries ride in one plain batch as its records' timestamps (before: a batch cut at each, so a
    producer whose records' timestamps increase made a fetched answer a batch per record); an entry whose first
    timestamp is below its max (a legacy set's) keeps a batch of its own, carrying both."""
    served = (TimeIndexEntry(0, 100, 100), TimeIndexEntry(1, 101, 101), TimeIndexEntry(2, 102, 102),
              TimeIndexEntry(5, 150, 180), TimeIndexEntry(8, 190, 190), TimeIndexEntry(9, 195, 195))
    data = encode_records(0, 12, (), (EpochEntry(0, 0),), served)
    decoded: list[TimeIndexEntry] = []
    assert decode_batches(data, decoded)[:2] == (12, 0)
    assert tuple(decoded) == served
    assert batch_count(data) == 3  # [0, 5), [5, 8), [8, 12): before, 6 (one per entry, one before the first)
    later = encode_records(3, 9, (), (EpochEntry(0, 0),), served[3:])
    decoded.clear()
    decode_batches(later, decoded)
    assert tuple(decoded) == served[3:]


def legacy_set(timestamps: list[int], codec: int) -> bytes:
    builder = MemoryRecordsBuilder(magic=1, compression_type=codec, batch_size=1 << 20)
    for i, timestamp in enumerate(timestamps):
        builder.append(timestamp=timestamp, key=b"k", value=b"%d" % i)
    builder.close()
    return bytes(builder.buffer())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 12), min_size=1, max_size=5), st.sampled_from([0, GZIP])),
                min_size=1, max_size=5),
       st.lists(st.integers(0, 14), min_size=1, max_size=6))
def test_a_legacy_sets_messages_answer_as_kafkas_converted_batch(history: list[tuple[list[int], int]],
                                                                 targets: list[int]) -> None:
    """Magic 1 sets, plain or in a gzip wrapper (Produce v2): Kafka 2.8 converts each to one v2 batch of its
    messages, so the message reaching the target is named (before: the set's base offset with its max)."""
    async def produced_legacy() -> Broker:
        broker = Broker()
        for stamps, codec in history:
            [got] = await produce(2, 1, 30_000, "c", [ProducePartition("t", 0, legacy_set(
                [BASE + t for t in stamps], codec))], cache=KNOWN, target=broker.target())  # type: ignore[arg-type]
            assert got.error == 0
        return broker
    timestamps = [BASE + t for stamps, _ in history for t in stamps]
    index = asyncio.run(produced_legacy()).parts[TP].time_index
    for target in targets:
        assert index.lookup(BASE + target) == kafka_lookup(timestamps, BASE + target), (target, timestamps)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 30), min_size=1, max_size=5), st.booleans()), min_size=1,
                max_size=8),
       st.integers(0, 3))
@example(history=[([0], False), ([0, 1], True)], skip=1)  # the only entry served lies inside a producer batch
def test_a_follower_fetching_any_range_keeps_the_leaders_entries(history: list[tuple[list[int], bool]],
                                                                 skip: int) -> None:
    """Batches of records (each its timestamps; some an idempotent producer's, served whole) indexed by the leader's
    rule, served from a batch boundary through the fetch codec and read back by a follower: the follower's entries
    are the leader's, so it answers every target as the leader (and Kafka) does."""
    leader, follower = TimeIndex(), TimeIndex()
    producer_batches, starts, at = [], [], 0
    for stamps, idempotent in history:
        first, largest = stamps[0], max(stamps)
        if first < largest and largest > leader.last_timestamp:
            top, points = leader.last_timestamp, []
            for i, t in enumerate(stamps):
                if t > top:
                    top = t
                    points.append((i, t))
            leader.append_records(at, points)
        else:
            leader.append(at, first, largest)
        if idempotent:
            producer_batches.append(ReplicatedBatch(at, at + len(stamps) - 1, 5, 0, at, largest))
        starts.append(at)
        at += len(stamps)
    start = starts[min(skip, len(starts) - 1)]
    follower.extend(leader.entries_in(0, start))  # fetched before
    served = encode_records(start, at - start, tuple(b for b in producer_batches if b.base_offset >= start),
                            (EpochEntry(0, 0),), leader.entries_in(start, at))
    decoded: list[TimeIndexEntry] = []
    decode_batches(served, decoded)
    follower.extend(decoded)
    assert follower.entries() == leader.entries()
