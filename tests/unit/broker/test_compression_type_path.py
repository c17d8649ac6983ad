"""A topic's ``compression.type`` picks Kafka 2.8's LogValidator path (``BrokerCompressionCodec``'s target codec):
with a codec named, even an uncompressed set takes ``validateMessagesAndAssignOffsetsCompressed``, which checks
every legacy message before it builds the converted batch (a negative timestamp fails that build only once the
record errors had their turn), and reads a compressed v2 batch whose codec differs with ``streamingIterator``
(``DefaultRecord``s) rather than in place (``PartialDefaultRecord``s). Before, the topic's codec was not known:
"producer" was assumed."""

from __future__ import annotations

import struct
import zlib

import pytest
from tests.unit.broker.test_produce_offload_bounds import KNOWN, Broker
from tests.unit.broker.v2_batches import LOG_APPEND_TIME, NONE, NOW, ZSTD, refusal, v2_batch, v2_record

from zkcontroller.broker.produce import ProducePartition, produce
from zkcontroller.protocol.wire.log_validator import validate
from zkcontroller.protocol.wire.record_sets import (
    INVALID_RECORD,
    INVALID_TIMESTAMP,
    UNKNOWN_SERVER_ERROR,
    inspect,
)


def v1_message(timestamp: int, attributes: int = 0, offset: int = 0) -> bytes:
    """An uncompressed magic-1 message (null key, value b"v"), its CRC right."""
    body = struct.pack(">bbqii", 1, attributes, timestamp, -1, 1) + b"v"
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


NEGATIVE_THEN_MARKED = v1_message(-5) + v1_message(NOW, LOG_APPEND_TIME, 1)


@pytest.mark.parametrize("compression_type", ["gzip", "snappy", "lz4", "zstd"])
def test_a_named_codec_checks_every_legacy_message_before_the_conversion(compression_type: str) -> None:
    e = refusal(NEGATIVE_THEN_MARKED, 2, compression_type=compression_type)
    assert (e.error, str(e), e.exception) == (
        INVALID_TIMESTAMP, "One or more records have been rejected due to invalid timestamp", None)
    assert [i for i, _ in e.record_errors] == [0]  # the second message is a batch of its own: index 0
    assert e.record_errors[0][1].startswith("Invalid timestamp type in message LegacyRecordBatch(offset=1, ")
    e = refusal(v1_message(-5) + v1_message(NOW, 0, 1), 2, compression_type=compression_type)
    assert (e.error, str(e)) == (UNKNOWN_SERVER_ERROR, "Invalid negative timestamp -5")  # at the build, then


@pytest.mark.parametrize("compression_type", ["producer", "uncompressed"])
def test_without_a_codec_the_first_messages_append_fails_at_once(compression_type: str) -> None:
    e = refusal(NEGATIVE_THEN_MARKED, 2, compression_type=compression_type)
    assert (e.error, str(e), e.exception) == (
        UNKNOWN_SERVER_ERROR, "Invalid negative timestamp -5", "java.lang.IllegalArgumentException")


@pytest.mark.parametrize(("compression_type", "text"), [
    ("producer", f"PartialDefaultRecord(offset=0, timestamp={NOW}, key=1 bytes, value=-1 bytes)"),
    ("zstd", f"PartialDefaultRecord(offset=0, timestamp={NOW}, key=1 bytes, value=-1 bytes)"),
    ("gzip", f"DefaultRecord(offset=0, timestamp={NOW}, key=1 bytes, value=0 bytes)"),
    ("uncompressed", f"DefaultRecord(offset=0, timestamp={NOW}, key=1 bytes, value=0 bytes)"),
])
def test_a_compressed_batch_is_read_in_place_only_when_the_codecs_agree(compression_type: str, text: str) -> None:
    e = refusal(v2_batch(v2_record(0), 1, codec=ZSTD, attributes=LOG_APPEND_TIME), 9, compression_type=compression_type)
    assert e.record_errors == ((0, f"Invalid timestamp type in message {text}. Producer should not set timestamp "
                                   "type to LogAppendTime."),)


@pytest.mark.parametrize(("compression_type", "message"), [
    ("producer", "Invalid record size: expected to read more bytes in record payload"),  # readPartiallyFrom
    ("gzip", "Found invalid record structure"),  # readFrom(DataInput): the key's slice past the record's buffer
])
def test_a_malformed_record_as_each_path_reads_it(compression_type: str, message: str) -> None:
    data = v2_batch(v2_record(0) + v2_record(1, key_length=50), 2, codec=ZSTD)
    e = refusal(data, 9, compression_type=compression_type)
    assert (e.error, str(e), e.exception) == (INVALID_RECORD, message, "org.apache.kafka.common.InvalidRecordException")


async def test_the_topics_compression_type_reaches_the_append() -> None:
    answers = []
    for compression_type in ("producer", "gzip"):
        broker = Broker()
        broker.compacted = False
        target = broker.target()
        target.compression_type = lambda _topic, c=compression_type: c  # type: ignore[misc]
        got = await produce(2, 1, 30_000, "c", [ProducePartition("t", 0, NEGATIVE_THEN_MARKED)],
                            cache=KNOWN, target=target)  # type: ignore[arg-type]
        answers.append(got[0].error)
    assert answers == [UNKNOWN_SERVER_ERROR, INVALID_TIMESTAMP]


@pytest.mark.parametrize("compressed", [True, False])
def test_a_rebuilt_batch_refuses_a_negative_timestamp_as_its_builder_does(compressed: bool) -> None:
    """A batch LogValidator rebuilds (the topic names another codec) is appended record by record to a new one,
    whose ``MemoryRecordsBuilder.appendWithOffset`` refuses a timestamp below -1; kept as it is, it is not read."""
    data = v2_batch(v2_record(0) + v2_record(1), 2, codec=ZSTD if compressed else NONE, first_timestamp=-5)
    e = refusal(data, 9, compression_type="gzip")
    assert (e.error, str(e), e.exception) == (
        UNKNOWN_SERVER_ERROR, "Invalid negative timestamp -5", "java.lang.IllegalArgumentException")
    for kept in ("producer", "zstd" if compressed else "uncompressed"):
        assert validate(data, inspect(data, 9), None, "orders-0", now_ms=NOW, compression_type=kept) == 2
