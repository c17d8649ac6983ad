"""Produce to a compacted topic (``cleanup.policy`` has ``compact``): as Kafka 2.8's ``LogValidator.validateKey``,
every record needs a key; a batch with keyless records is INVALID_RECORD with "One or more records have been
rejected" and, from v8, one record error per keyless record (its index in the batch), and nothing is appended.
Before, keyless records were appended to compacted topics."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder

from zkcontroller.broker.kafka_apis import KafkaApis
from zkcontroller.broker.produce import ProduceTarget, is_compacted
from zkcontroller.protocol.wire import codec
from zkcontroller.protocol.wire.client_apis import PRODUCE, PRODUCE_RESPONSE
from zkcontroller.protocol.wire.frames import decode_response_header

from .test_produce_wire import ORDERS_0, Replicas, frame, legacy_frame
from .test_produce_wire import apis as apis

INVALID_RECORD = 87
KEYLESS = "Compacted topic cannot accept message without key in topic partition orders-0."


def records(keys: list[bytes | None], magic: int = 2, compression: int = 0) -> bytes:
    b = MemoryRecordsBuilder(magic=magic, compression_type=compression, batch_size=1 << 20)
    for i, key in enumerate(keys):
        b.append(timestamp=1_000, key=key, value=b"v%d" % i)
    b.close()
    return bytes(b.buffer())


@pytest.fixture
def compacted(apis: tuple[KafkaApis, Replicas]) -> tuple[KafkaApis, Replicas]:
    """The Produce fixture's broker, ``orders`` compacted."""
    api, replicas = apis
    original = replicas.produce_target

    def target() -> ProduceTarget:
        t = original()
        t.compacted = lambda topic: topic == "orders"
        return t
    replicas.produce_target = target  # type: ignore[method-assign]
    return api, replicas


async def answer(api: KafkaApis, version: int, data: bytes) -> dict[str, Any]:
    topics: list[tuple[str, list[tuple[int, bytes | None]]]] = [("orders", [(0, data)])]
    payload = await api.handle(frame(version, 1, topics) if version >= 3 else legacy_frame(version, 1, topics))
    assert payload is not None
    _, offset = decode_response_header(payload, PRODUCE, version)
    value = codec.decode(PRODUCE_RESPONSE, version, payload, offset)
    [[partition]] = [t["partitions"] for t in value["responses"]]
    return dict(partition)


@pytest.mark.parametrize("compression", [0, 1])  # none, gzip (kafka-python here writes no snappy or lz4)
async def test_keyless_records_are_refused_with_their_indexes(compacted: tuple[KafkaApis, Replicas],
                                                              compression: int) -> None:
    api, replicas = compacted
    got = await answer(api, 9, records([b"k0", None, b"k2", None], compression=compression))
    assert (got["error_code"], got["error_message"], got["base_offset"], got["log_start_offset"]) == (
        INVALID_RECORD, "One or more records have been rejected", -1, 0)
    assert [(e["batch_index"], e["batch_index_error_message"]) for e in got["record_errors"]] == [
        (1, KEYLESS), (3, KEYLESS)]
    assert replicas.parts[ORDERS_0].log_end_offset == 10  # nothing appended


async def test_keyed_records_are_appended(compacted: tuple[KafkaApis, Replicas]) -> None:
    api, replicas = compacted
    got = await answer(api, 9, records([b"a", b"b"]))
    assert (got["error_code"], got["base_offset"], got["record_errors"]) == (0, 10, [])
    assert replicas.parts[ORDERS_0].log_end_offset == 12


async def test_before_v8_the_error_alone(compacted: tuple[KafkaApis, Replicas]) -> None:
    api, replicas = compacted
    got = await answer(api, 7, records([None]))
    assert (got["error_code"], got["record_errors"]) == (INVALID_RECORD, [])  # no record errors in v7
    assert replicas.parts[ORDERS_0].log_end_offset == 10


@pytest.mark.parametrize(("magic", "compression"), [(0, 0), (1, 0), (1, 1)])
async def test_legacy_messages_need_keys_too(compacted: tuple[KafkaApis, Replicas], magic: int,
                                             compression: int) -> None:
    api, replicas = compacted
    got = await answer(api, 2, records([b"k", None], magic=magic, compression=compression))
    assert got["error_code"] == INVALID_RECORD
    assert replicas.parts[ORDERS_0].log_end_offset == 10
    got = await answer(api, 2, records([b"k", b"l"], magic=magic, compression=compression))
    assert (got["error_code"], got["base_offset"]) == (0, 10)


async def test_a_topic_not_compacted_takes_keyless_records(apis: tuple[KafkaApis, Replicas]) -> None:
    api, _ = apis
    got = await answer(api, 9, records([None, None]))
    assert (got["error_code"], got["base_offset"]) == (0, 10)


def test_compacted_is_a_cleanup_policy_with_compact() -> None:
    assert is_compacted({"cleanup.policy": ["delete", "compact"]}) and is_compacted({"cleanup.policy": ["compact"]})
    assert not is_compacted({"cleanup.policy": ["delete"]}) and not is_compacted({})



@pytest.mark.timeout(60)
def test_a_record_length_pointing_back_ends_the_scan() -> None:
    """A record whose length is negative (here -1, back onto itself) in a batch announcing 2**31 - 1 records (its
    count and offset delta agree, CRC recomputed): the walk stops there instead of reading the same bytes for every
    record announced, and the batch is refused as Kafka's ``DefaultRecord.readFrom`` refuses it."""
    import struct

    from zkcontroller.protocol.wire import log_validator, record_sets

    batch = bytearray(records([b"k"]))
    struct.pack_into(">i", batch, 23, 2**31 - 2)  # last offset delta
    struct.pack_into(">i", batch, 57, 2**31 - 1)  # records count
    batch[record_sets.RECORD_BATCH_OVERHEAD] = 0x01  # the first record's length: zig-zag -1
    struct.pack_into(">I", batch, 17, record_sets.crc32c(bytes(batch[21:])))
    data = bytes(batch)
    with pytest.raises(record_sets.RecordSetError) as refused:
        log_validator.validate(data, record_sets.inspect(data, 9), None, "orders-0", compacted=True)
    assert refused.value.error == INVALID_RECORD
    assert str(refused.value) == "Invalid record size: expected to read -1 bytes in record payload, but instead read 9"


def _batch_of(records_bytes: bytes, count: int, codec: int = 0) -> bytes:
    """A v2 batch around ``records_bytes`` announcing ``count`` records (CRC right), as a crafted client sends."""
    import struct

    from zkcontroller.protocol.wire import record_sets

    body = struct.pack(">hiqqqhii", codec, count - 1, 0, 0, -1, -1, -1, count) + records_bytes
    after_length = struct.pack(">ibI", 0, 2, record_sets.crc32c(body)) + body
    return struct.pack(">qi", 0, len(after_length)) + after_length


@pytest.mark.timeout(120)
def test_a_run_of_empty_records_in_a_zip_bomb_is_not_walked_byte_by_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    """8 MiB of zero bytes gzipped into 8 KiB, announcing 2**31 - 1 records: each zero byte reads as a record of
    length 0, which no record can have (its body holds at least 6 bytes), so the walk stops at the first instead
    of reading one record per byte (8 million varints, 4.6 s of the event loop per 8 KiB request before), and the
    batch is refused with Kafka's "Found invalid record structure"."""
    import gzip

    from zkcontroller.protocol.wire import log_validator, record_sets, v2_records
    from zkcontroller.protocol.wire.compression import GZIP

    data = _batch_of(gzip.compress(bytes(8 * 1024 * 1024)), 2**31 - 1, GZIP)
    reads = 0
    varint = v2_records._varint

    def counted(buf: Any, pos: int) -> tuple[int, int]:
        nonlocal reads
        reads += 1
        return varint(buf, pos)

    monkeypatch.setattr(v2_records, "_varint", counted)
    with pytest.raises(record_sets.RecordSetError) as refused:
        log_validator.validate(data, record_sets.inspect(data, 9), None, "orders-0", compacted=True)
    assert (refused.value.error, str(refused.value)) == (INVALID_RECORD, "Found invalid record structure")
    assert 0 < reads <= 10


def test_the_walk_reads_no_more_records_than_the_bytes_can_hold() -> None:
    """Three smallest keyless records (7 bytes each: length 6, attributes, four one-byte varints, header count)
    under a count of 2**31 - 1: exactly those three are read, and the walk ends with the bytes: the fourth record
    announced is past the batch's end, which Kafka's iterator refuses before any record error counts."""
    from zkcontroller.protocol.wire import log_validator, record_sets, v2_records

    smallest_keyless = bytes([0x0C, 0, 0, 0, 0x01, 0x01, 0])  # length 6, attrs, ts 0, offset 0, key -1, value -1, 0
    data = _batch_of(smallest_keyless * 3, 2**31 - 1)
    walked = list(v2_records.walk_v2_records(memoryview(data)[61:], 2**31 - 1))  # the records after the header
    assert [type(r) for r in walked] == [v2_records.V2Record] * 3 + [v2_records.Malformed]
    with pytest.raises(record_sets.RecordSetError) as refused:
        log_validator.validate(data, record_sets.inspect(data, 9), None, "orders-0", compacted=True)
    assert (refused.value.error, str(refused.value)) == (INVALID_RECORD,
                                                         "Incorrect declared batch size, premature EOF reached")
    assert not refused.value.record_errors
