"""Fetch on the wire: the follower's request and the leader's answer survive the codec at the versions the
inter-broker protocol uses, and the offsets travel as a record batch of that many records."""

from __future__ import annotations

import struct

import pytest

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import FetchPartition, FetchPartitionResult, FetchRequest, FetchResponse
from zkcontroller.protocol.wire import control_codec
from zkcontroller.protocol.wire.codec import WireFormatError
from zkcontroller.protocol.wire.fetch_codec import CorruptRecordError, decode_batches, encode_records

REQUEST = FetchRequest(2, (FetchPartition(TopicPartition("t", 0), 3, 100),
                           FetchPartition(TopicPartition("u", 1), 1, 0)), 500)
RESPONSE = FetchResponse(Errors.NONE, (FetchPartitionResult(TopicPartition("t", 0), Errors.NONE, 120, 20, 100),
                                       FetchPartitionResult(TopicPartition("u", 1), Errors.FENCED_LEADER_EPOCH, -1, 0)))
INCREMENTAL = FetchRequest(2, (FetchPartition(TopicPartition("t", 0), 3, 120),), 500, 1234, 7,
                           (TopicPartition("u", 1), TopicPartition("u", 4), TopicPartition("v", 0)))


@pytest.mark.parametrize("version", [11, 12])
def test_a_fetch_and_its_answer_round_trip(version: int) -> None:
    body = control_codec.encode_request(REQUEST, version)
    assert control_codec.decode_request(1, version, body, 0) == REQUEST
    answer = control_codec.encode_response(RESPONSE, version, REQUEST)
    assert control_codec.decode_response(REQUEST, version, answer, 0) == RESPONSE


@pytest.mark.parametrize("version", [11, 12])
def test_a_fetch_session_travels_with_its_id_epoch_and_forgotten_partitions(version: int) -> None:
    back = control_codec.decode_request(1, version, control_codec.encode_request(INCREMENTAL, version), 0)
    assert back == INCREMENTAL and not back.is_full
    empty = FetchRequest(2, (), 500, 1234, 8)  # nothing changed: the partitions come from the leader's session
    assert control_codec.decode_request(1, version, control_codec.encode_request(empty, version), 0).session_epoch == 8
    answer = FetchResponse(Errors.NONE, RESPONSE.partitions[:1], 1234)
    assert control_codec.decode_response(INCREMENTAL, version, control_codec.encode_response(answer, version),
                                         0) == answer
    refused = FetchResponse(Errors.INVALID_FETCH_SESSION_EPOCH)
    assert control_codec.decode_response(INCREMENTAL, version, control_codec.encode_response(refused, version),
                                         0) == refused


def test_the_batch_crc_is_kafkas_and_a_corrupt_batch_fails_its_partition_alone() -> None:
    from kafka.record.default_records import DefaultRecordBatch  # an independent reader of Kafka's format

    batch = DefaultRecordBatch(encode_records(41, 3))
    assert batch.validate_crc() and [r.offset for r in batch] == [41, 42, 43]
    answer = control_codec.encode_response(RESPONSE, 12)
    good = encode_records(100, 20)
    at = answer.index(good)
    corrupt = answer[:at + 70] + bytes([answer[at + 70] ^ 1]) + answer[at + 71:]  # a bit of a record flips
    results = control_codec.decode_response(REQUEST, 12, corrupt, 0).partitions
    assert [(r.error, r.records) for r in results] == [(Errors.CORRUPT_MESSAGE, 0), (Errors.FENCED_LEADER_EPOCH, 0)]
    with pytest.raises(CorruptRecordError, match="base offset 100"):
        decode_batches(corrupt[at:at + len(good)])[0]


def test_before_v9_a_fetch_cannot_carry_the_leader_epoch() -> None:
    back = control_codec.decode_request(1, 4, control_codec.encode_request(REQUEST, 4), 0)
    assert [p.current_leader_epoch for p in back.partitions] == [-1, -1]
    assert [p.fetch_offset for p in back.partitions] == [100, 0]


@pytest.mark.parametrize("count", [1, 2, 127, 128, 10_000])
def test_offsets_travel_as_a_batch_of_that_many_records(count: int) -> None:
    batch = encode_records(41, count)
    base, length, _, magic = struct.unpack_from(">qiib", batch)
    assert (base, magic, length + 12) == (41, 2, len(batch))
    assert struct.unpack_from(">i", batch, 23)[0] == count - 1  # lastOffsetDelta
    assert decode_batches(batch)[0] == count


def test_no_records_is_an_empty_record_set_and_a_foreign_batch_is_refused() -> None:
    assert encode_records(0, 0) == b"" and decode_batches(b"")[0] == 0
    batch = bytearray(encode_records(0, 3))
    batch[16] = 1  # magic 1: a batch format we do not read
    with pytest.raises(WireFormatError, match="magic 1"):
        decode_batches(bytes(batch))[0]
