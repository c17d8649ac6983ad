"""Fetch on the wire with idempotent producers' batches: the range a leader serves travels as several v2 record
batches, each producer batch with its header's producerId, producerEpoch, baseSequence and maxTimestamp, plain
batches (producerId -1) between them, and decodes back to the same descriptors; a follower replicating through the
codec then deduplicates a retry once elected, as in-process."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.record.default_records import DefaultRecordBatch  # an independent reader of Kafka's format
from tests.unit.broker.replica_helpers import Brokers, RecordingIsrManager, state
from tests.unit.broker.test_producer_state_replica_manager import NONE, TP, idempotent, send
from tests.unit.broker.test_replicated_producer_state import elect

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import (
    FetchPartition,
    FetchPartitionResult,
    FetchRequest,
    FetchResponse,
    ReplicatedBatch,
)
from zkcontroller.protocol.wire import control_codec
from zkcontroller.protocol.wire.fetch_codec import CorruptRecordError, decode_batches, encode_records

BATCHES = (ReplicatedBatch(102, 104, 7, 2, 40, 1_700_000_000_123), ReplicatedBatch(105, 105, 9, 0, 0, 5),
           ReplicatedBatch(110, 111, 7, 2, 43, 1_700_000_000_456))
REQUEST = FetchRequest(2, (FetchPartition(TopicPartition("t", 0), 3, 100),
                           FetchPartition(TopicPartition("u", 1), 1, 0)), 500)


@pytest.mark.parametrize("version", [11, 12])
def test_producer_batches_round_trip_in_a_fetch_answer(version: int) -> None:
    response = FetchResponse(Errors.NONE, (
        FetchPartitionResult(TopicPartition("t", 0), Errors.NONE, 120, 14, 100, batches=BATCHES),
        FetchPartitionResult(TopicPartition("u", 1), Errors.NONE, 9, 9, 0)))
    answer = control_codec.encode_response(response, version, REQUEST)
    assert control_codec.decode_response(REQUEST, version, answer, 0) == response


def test_each_producer_batch_is_a_v2_batch_with_its_header_and_plain_ones_fill_the_gaps() -> None:
    data = encode_records(100, 14, BATCHES)
    read, pos = [], 0
    while pos < len(data):
        length = int.from_bytes(data[pos + 8:pos + 12], "big")
        batch = DefaultRecordBatch(data[pos:pos + 12 + length])
        assert batch.validate_crc()
        read.append((batch.base_offset, [r.offset for r in batch][-1], batch.producer_id, batch.producer_epoch,
                     batch.base_sequence))
        pos += 12 + length
    assert read == [(100, 101, -1, -1, -1), (102, 104, 7, 2, 40), (105, 105, 9, 0, 0), (106, 109, -1, -1, -1),
                    (110, 111, 7, 2, 43), (112, 113, -1, -1, -1)]
    assert decode_batches(data) == (14, 100, BATCHES)
    assert decode_batches(encode_records(100, 14)) == (14, 100, ())


def test_a_gap_between_batches_fails_the_partition_and_a_batch_outside_the_range_is_refused() -> None:
    first, second = encode_records(100, 2), encode_records(103, 2)
    with pytest.raises(CorruptRecordError, match="base offset 103, expected 102"):
        decode_batches(first + second)
    with pytest.raises(ValueError, match="not within offsets 100..101"):
        encode_records(100, 2, (ReplicatedBatch(101, 102, 7, 0, 0, 1),))


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
        elect(brokers, leader=2, leader_epoch=1, isr=(2, 3), zk_version=1)
        assert await send(brokers.rms[2], first) == (NONE, 0)
        assert brokers.rms[2].log_end_offset(TP) == 5
    finally:
        brokers.close()
