"""Fetch on the wire with idempotent producers' batches and leader epochs: the range a leader serves travels as
several v2 record batches, each producer batch with its header's producerId, producerEpoch, baseSequence and
maxTimestamp, plain batches (producerId -1) between them, each batch's partitionLeaderEpoch the epoch of its
records (plain stretches cut where an epoch begins), and decodes back to the same descriptors; a follower
replicating through the codec then deduplicates a retry once elected, and builds the leader's epoch cache, as
in-process."""

from __future__ import annotations

import inspect
import itertools
import struct
from dataclasses import MISSING, fields
from typing import Any

import pytest
from crc32c import crc32c
from hypothesis import given
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch  # an independent reader of Kafka's format
from tests.unit.broker.replica_helpers import Brokers, RecordingIsrManager, state
from tests.unit.broker.test_producer_state_replica_manager import NONE, TP, idempotent, send
from tests.unit.broker.test_replicated_producer_state import elect

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import (
    EpochEntry,
    FetchPartition,
    FetchPartitionResult,
    FetchRequest,
    FetchResponse,
    ReplicatedBatch,
    TimeIndexEntry,
)
from zkcontroller.protocol.wire import control_codec, fetch_codec
from zkcontroller.protocol.wire.fetch_codec import (
    CorruptRecordError,
    OffsetsOutOfOrderError,
    OffsetsOutOfOrderResult,
    decode_batches,
    encode_records,
)

BATCHES = (ReplicatedBatch(102, 104, 7, 2, 40, 1_700_000_000_123), ReplicatedBatch(105, 105, 9, 0, 0, 5),
           ReplicatedBatch(110, 111, 7, 2, 43, 1_700_000_000_456))
EPOCHS = (EpochEntry(3, 100), EpochEntry(5, 107), EpochEntry(6, 110))
REQUEST = FetchRequest(2, (FetchPartition(TopicPartition("t", 0), 3, 100),
                           FetchPartition(TopicPartition("u", 1), 1, 0), FetchPartition(TopicPartition("u", 2), 1, 6)),
                       500)


STAMPS = (TimeIndexEntry(100, 1_699_999_999_000, 1_699_999_999_999),
          *(TimeIndexEntry(b.base_offset, b.max_timestamp - 1, b.max_timestamp) for b in BATCHES))
"""The time index entries served with them: a plain batch's, and each producer batch's (its header's max timestamp
read back as an entry, as a follower indexes it, whether the leader's index kept it or not)."""


@pytest.mark.parametrize("version", [11, 12])
def test_producer_batches_round_trip_in_a_fetch_answer(version: int) -> None:
    response = FetchResponse(Errors.NONE, (
        FetchPartitionResult(TopicPartition("t", 0), Errors.NONE, 120, 14, 100, batches=BATCHES, epochs=EPOCHS,
                             timestamps=STAMPS),
        FetchPartitionResult(TopicPartition("u", 1), Errors.NONE, 9, 9, 0, epochs=(EpochEntry(4, 0),)),
        FetchPartitionResult(TopicPartition("u", 2), Errors.NONE, 9, 3, 6)))
    answer = control_codec.encode_response(response, version, REQUEST)
    assert control_codec.decode_response(REQUEST, version, answer, 0) == response


def read_batches(data: bytes) -> list[tuple[int, int, int, int, int, int]]:
    """(base offset, last offset, partitionLeaderEpoch, producer id, producer epoch, base sequence) of each batch,
    as kafka-python reads them, every CRC checked."""
    read, pos = [], 0
    while pos < len(data):
        length = int.from_bytes(data[pos + 8:pos + 12], "big")
        batch = DefaultRecordBatch(data[pos:pos + 12 + length])
        assert batch.validate_crc()
        leader_epoch = int.from_bytes(data[pos + 12:pos + 16], "big", signed=True)
        read.append((batch.base_offset, [r.offset for r in batch][-1], leader_epoch, batch.producer_id,
                     batch.producer_epoch, batch.base_sequence))
        pos += 12 + length
    return read


def test_each_producer_batch_is_a_v2_batch_with_its_header_and_plain_ones_fill_the_gaps() -> None:
    data = encode_records(100, 14, BATCHES, EPOCHS)
    assert read_batches(data) == [(100, 101, 3, -1, -1, -1), (102, 104, 3, 7, 2, 40), (105, 105, 3, 9, 0, 0),
                                  (106, 106, 3, -1, -1, -1), (107, 109, 5, -1, -1, -1), (110, 111, 6, 7, 2, 43),
                                  (112, 113, 6, -1, -1, -1)]
    assert decode_batches(data) == (14, 100, BATCHES, EPOCHS)
    assert read_batches(encode_records(100, 14)) == [(100, 113, -1, -1, -1, -1)]
    assert decode_batches(encode_records(100, 14)) == (14, 100, (), ())
    assert decode_batches(encode_records(100, 14, epochs=(EpochEntry(2, 100),))) == (14, 100, (),
                                                                                       (EpochEntry(2, 100),))


def test_a_gap_between_batches_is_taken_out_of_order_offsets_are_refused_and_a_batch_outside_the_range_too() -> None:
    """Kafka's follower takes the offsets it is given (``appendAsFollower``), gaps included (a compacted log's): the
    set spans from the first base offset to the last offset. Kafka checks that the batches' last offsets increase
    (``lastOffset >= batch.lastOffset``, not the base against the previous last): a batch beginning inside the one
    before but ending after it is taken; one ending at or before it is its ``OffsetsOutOfOrderException``, which
    lists every record's offset, a distinct error (it used to be corrupt), and a partition result of its own."""
    first = encode_records(100, 2)
    assert decode_batches(first + encode_records(103, 2, (ReplicatedBatch(103, 104, 7, 0, 0, 1),))) == (
        5, 100, (ReplicatedBatch(103, 104, 7, 0, 0, 1),), ())
    assert decode_batches(first + encode_records(101, 2))[:2] == (3, 100)
    for second, offsets in ((encode_records(100, 1), "100, 101, 100"),
                            (encode_records(99, 3), "100, 101, 99, 100, 101")):
        with pytest.raises(OffsetsOutOfOrderError, match=rf"^Out of order offsets: List\({offsets}\)$") as refused:
            decode_batches(first + second)
        assert not isinstance(refused.value, CorruptRecordError)
    result = fetch_codec._partition_result("t", {"partition": 0, "record_set": first + encode_records(100, 1),
                                                 "high_watermark": 7, "error_code": 0})
    assert isinstance(result, OffsetsOutOfOrderResult)
    assert (result.error, result.records) == (Errors.NONE, 0)
    assert fetch_codec.out_of_order_offsets(result.record_set) == "List(100, 101, 100)"
    with pytest.raises(ValueError, match=r"not within offsets 100\.\.101"):
        encode_records(100, 2, (ReplicatedBatch(101, 102, 7, 0, 0, 1),))


def test_a_corrupt_batch_after_out_of_order_offsets_is_corrupt() -> None:
    """Kafka's append checks every batch (CRC included) before acting on the offsets' order."""
    first = encode_records(100, 2)
    bad = bytearray(encode_records(100, 1))
    bad[-1] ^= 1
    with pytest.raises(CorruptRecordError):
        decode_batches(first + bytes(bad))


class WireTransport:
    """Fetches between in-process replica managers, each answer encoded on Fetch v12 and decoded back."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler

    def __call__(self, request: Any) -> Any:
        if not isinstance(request, FetchRequest):
            return self.handler(request)
        wire_request = control_codec.decode_request(1, 12, control_codec.encode_request(request, 12), 0)
        answer = control_codec.encode_response(self.handler(wire_request), 12, wire_request)
        return control_codec.decode_response(request, 12, answer, 0)


async def test_a_follower_replicating_over_the_codec_deduplicates_a_retry_once_elected() -> None:
    brokers = Brokers()
    try:
        for i, rm in brokers.rms.items():
            rm.isr_manager = RecordingIsrManager()  # type: ignore[assignment]
            brokers.transport.register(i, WireTransport(brokers._handler(rm, None)))
        brokers.lead(state())
        first = idempotent(3, 0)
        assert await send(brokers.rms[1], first) == (NONE, 0)
        brokers.rms[1].append(TP, 2)  # plain records after it
        await brokers.fetch_all()
        assert brokers.rms[2].log_end_offset(TP) == 5
        follower = brokers.rms[2].partition(TP)
        assert follower is not None and follower.epoch_cache.entries == (EpochEntry(0, 0),)
        elect(brokers, leader=2, leader_epoch=1, isr=(2, 3), zk_version=1)
        assert await send(brokers.rms[2], first) == (NONE, 0)
        assert brokers.rms[2].log_end_offset(TP) == 5
        assert follower.epoch_cache.entries == (EpochEntry(0, 0), EpochEntry(1, 5))
        brokers.rms[2].append(TP, 3)
        await brokers.fetch_all()  # broker 3 fetches both epochs through the codec
        assert brokers.rms[3].partition(TP).epoch_cache.entries == (  # type: ignore[union-attr]
            EpochEntry(0, 0), EpochEntry(1, 5))
    finally:
        brokers.close()


def test_the_fetch_result_constructor_agrees_with_its_fields() -> None:
    """`FetchPartitionResult` has a hand-written ``__init__`` (a leader makes one per partition per fetch): its
    parameters are the dataclass fields, in order, with the same defaults."""
    parameters = list(inspect.signature(FetchPartitionResult.__init__).parameters.values())[1:]
    assert [(p.name, p.default) for p in parameters] == [
        (f.name, inspect.Parameter.empty if f.default is MISSING else f.default) for f in fields(FetchPartitionResult)]


@st.composite
def fetched_ranges(draw: st.DrawFn) -> tuple[int, int, tuple[ReplicatedBatch, ...], tuple[EpochEntry, ...]]:
    """A fetched range as a leader serves it: producer batches within it, no two overlapping, and leader epochs (the
    first at the base offset, then increasing, none beginning inside a producer batch)."""
    base = draw(st.integers(0, 2**40))
    count = draw(st.integers(1, 40))
    cuts = sorted(draw(st.sets(st.integers(base, base + count), max_size=10)) | {base, base + count})
    batches = []
    for start, stop in itertools.pairwise(cuts):
        if draw(st.booleans()):
            batches.append(ReplicatedBatch(start, stop - 1, draw(st.integers(0, 2**62)),
                                           draw(st.integers(0, 2**15 - 1)), draw(st.integers(0, 2**31 - 1)),
                                           draw(st.integers(-1, 2**45))))
    inside = {o for b in batches for o in range(b.base_offset + 1, b.last_offset + 1)}
    starts = sorted(draw(st.sets(st.integers(base + 1, base + count - 1).filter(lambda o: o not in inside),
                                 max_size=4)) | {base}) if count > 1 else [base]
    epochs = sorted(draw(st.sets(st.integers(0, 2**31 - 1), min_size=len(starts), max_size=len(starts))))
    with_epochs = draw(st.booleans())
    return base, count, tuple(batches), tuple(EpochEntry(e, s) for e, s in zip(epochs, starts, strict=True)
                                              ) if with_epochs else ()


@given(fetched_ranges())
def test_any_fetched_range_round_trips(fetched: tuple[int, int, tuple[ReplicatedBatch, ...], tuple[EpochEntry, ...]]
                                       ) -> None:
    base, count, batches, epochs = fetched
    assert decode_batches(encode_records(base, count, batches, epochs)) == (count, base, batches, epochs)


def _with_offset_delta(delta: int) -> bytes:
    batch = bytearray(encode_records(10, 3))
    struct.pack_into(">i", batch, 23, delta)  # lastOffsetDelta, inside the CRC's range
    struct.pack_into(">I", batch, 17, crc32c(bytes(batch[21:])))
    return bytes(batch)


@pytest.mark.parametrize("delta", [-5, 0])
def test_a_batch_whose_offset_delta_cannot_hold_its_records_is_corrupt_even_with_a_valid_crc(delta: int) -> None:
    """A CRC only proves the bytes arrived as sent: a lastOffsetDelta below 0 (a negative count of offsets, which
    gave a follower a negative log end) or below its record count minus one is refused, not appended. (Kafka's
    follower does not look; its leader refuses such a batch at produce, ``LogValidator``'s words, so none is
    served.)"""
    with pytest.raises(CorruptRecordError, match=rf"Inconsistent batch offset range \[10, {10 + delta}\] and count "
                                                 "of records 3"):
        decode_batches(_with_offset_delta(delta))


def test_a_compacted_batch_with_fewer_records_than_offsets_spans_its_offsets() -> None:
    """A compacted log's batch keeps its offset range with fewer records in it: the follower's log end goes to its
    last offset + 1, as Kafka's (``nextOffset = lastOffset + 1``)."""
    assert decode_batches(_with_offset_delta(6)) == (7, 10, (), ())
