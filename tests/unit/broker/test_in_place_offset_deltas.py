"""A compressed v2 batch LogValidator keeps as it is (the topic's ``compression.type`` is ``producer`` or the
batch's codec) whose records' offset deltas are not 0, 1, 2, ...: Kafka 2.8.2's
``validateMessagesAndAssignOffsetsCompressed`` (LogValidator.scala 377-380, 406-407, 415-429) reads it with
``skipKeyValueIterator`` and, at the first record whose offset is not the expected one, gives up the in-place
assignment: the batch is rebuilt (449-457, ``buildRecordsAndAssignOffsets``) from the ``PartialDefaultRecord``s
read, whose size estimate (AbstractRecords.java 89-98, DefaultRecordBatch.sizeInBytes 496-510) asks their
``key()``, which throws ``UnsupportedOperationException("key is skipped in PartialDefaultRecord")``
(PartialDefaultRecord.java 77). ``Log.append`` wraps only an IOException (Log.scala 1219-1221), so
``appendToLocalLog``'s Throwable branch (ReplicaManager.scala 987-989) logs it and answers UNKNOWN_SERVER_ERROR
(``Errors.forException``: no mapping), with the log start offset and no message. Record errors (thrown first by
``processRecordErrors``, 443) and the reader's exceptions (thrown in the iteration) win over it. A batch rebuilt
anyway (another codec named) or uncompressed is read whole and numbered afresh: accepted.

Before, the batch was accepted and kept as it was."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.unit.broker.test_produce_offload_bounds import KNOWN, Broker
from tests.unit.broker.test_v2_well_formed import _record, _records_part
from tests.unit.broker.v2_batches import GZIP, NONE, ZSTD, accepted, refusal, v2_batch, v2_record, varint

from zkcontroller.broker.produce import ProducePartition, produce
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire.record_sets import (
    INVALID_RECORD,
    INVALID_TIMESTAMP,
    UNKNOWN_SERVER_ERROR,
)
from zkcontroller.protocol.wire.v2_records import (
    V2Record,
    _varint,
    _varlong,
    v2_well_formed,
    walk_v2_records,
)

SKIPPED = (UNKNOWN_SERVER_ERROR, "key is skipped in PartialDefaultRecord", "java.lang.UnsupportedOperationException",
           ())


def records(*offset_deltas: int, key: bytes | None = b"k") -> bytes:
    return b"".join(v2_record(d, key) for d in offset_deltas)


def outcome(data: bytes, **checks: object) -> tuple[object, ...]:
    e = refusal(data, **checks)
    return e.error, str(e), e.exception, e.record_errors


@pytest.mark.parametrize("codec", [ZSTD, GZIP])
@pytest.mark.parametrize("compression_type", ["producer", "same"])
@pytest.mark.parametrize("deltas", [(0, 2), (0, 0, 0), (1, 0), (0, 1, 2, 4), (0, -1)])
def test_offset_deltas_out_of_order_fail_the_rebuild_of_a_batch_kept_in_place(
        codec: int, compression_type: str, deltas: tuple[int, ...]) -> None:
    """With the default configs (the structure-only read) and with timestamps checked (the record walk)."""
    same = {ZSTD: "zstd", GZIP: "gzip"}[codec]
    data = v2_batch(records(*deltas), len(deltas), codec=codec)
    topic = compression_type if compression_type == "producer" else same
    assert outcome(data, compression_type=topic) == SKIPPED
    assert outcome(data, compression_type=topic, timestamp_difference_max_ms=60_000) == SKIPPED


@pytest.mark.parametrize(("codec", "compression_type"), [
    (ZSTD, "gzip"), (ZSTD, "uncompressed"), (GZIP, "lz4"),  # rebuilt from DefaultRecords: read whole
    (NONE, "producer"), (NONE, "uncompressed"), (NONE, "gzip")])  # uncompressed: its offsets are not compared
def test_offset_deltas_out_of_order_are_renumbered_elsewhere(codec: int, compression_type: str) -> None:
    assert accepted(v2_batch(records(0, 2, 2), 3, codec=codec), compression_type=compression_type) == 3


def test_offset_deltas_in_order_are_kept_in_place() -> None:
    assert accepted(v2_batch(records(*range(300)), 300, codec=ZSTD)) == 300  # two-byte varints from 64 on


def test_record_errors_win_over_the_rebuild() -> None:
    """``processRecordErrors`` throws before the rebuild: a keyless record of a compacted topic (its offset not
    compared either) is its record error alone."""
    data = v2_batch(records(0, 5) + v2_record(2, None), 3, codec=ZSTD)
    e = refusal(data, compacted=True)
    assert (e.error, e.exception, [i for i, _ in e.record_errors]) == (INVALID_RECORD, None, [2])
    marked = v2_batch(records(0, 5), 2, codec=ZSTD, attributes=0x08)
    assert refusal(marked).error == INVALID_TIMESTAMP


def test_the_readers_exception_wins_over_the_rebuild() -> None:
    data = v2_batch(records(0, 5) + v2_record(2, key_length=50), 3, codec=ZSTD)
    assert outcome(data) == (INVALID_RECORD, "Invalid record size: expected to read more bytes in record payload",
                             "org.apache.kafka.common.InvalidRecordException", ())


async def test_the_partition_answers_unknown_server_error_logged_without_a_message(
        caplog: pytest.LogCaptureFixture) -> None:
    broker = Broker()
    broker.compacted = False
    caplog.set_level(logging.ERROR, "kafka.server.ReplicaManager")
    got = await produce(9, 1, 30_000, "c", [ProducePartition("t", 0, v2_batch(records(0, 2), 2, codec=ZSTD))],
                        cache=KNOWN, target=broker.target())  # type: ignore[arg-type]
    assert (got[0].error, got[0].error_message, got[0].record_errors) == (UNKNOWN_SERVER_ERROR, None, ())
    assert got[0].log_start_offset == 0
    assert "java.lang.UnsupportedOperationException: key is skipped in PartialDefaultRecord" in caplog.text
    assert broker.parts[TopicPartition("t", 0)].log_end_offset == 0  # nothing appended


@settings(max_examples=300, deadline=None)
@given(st.lists(_record, min_size=1, max_size=12), st.data())
def test_the_structure_only_read_agrees_with_the_walk_on_offset_order(records_: list, data: st.DataObject) -> None:
    """`v2_well_formed`'s ``in_order`` is the walk's verdict and every offset delta its index (one-byte and longer
    varints, renumbered at random)."""
    body = bytearray(_records_part(records_))
    if data.draw(st.booleans()):  # an offset delta changed, at any width
        deltas = [i for i, _ in enumerate(records_)]
        deltas[data.draw(st.integers(0, len(deltas) - 1))] = data.draw(st.integers(-(1 << 31), (1 << 31) - 1))
        body = bytearray(b"".join(_renumbered(bytes(body), deltas)))
    walked = list(walk_v2_records(bytes(body), len(records_)))
    expected = all(isinstance(r, V2Record) and r.offset_delta == i for i, r in enumerate(walked))
    assert v2_well_formed(bytes(body), len(records_), in_order=True) == expected


def _renumbered(body: bytes, deltas: list[int]) -> list[bytes]:
    """The records of ``body`` (kafka-python's: offset delta right after a timestamp delta) with new offset
    deltas."""
    out, pos = [], 0
    for delta in deltas:
        length, at = _varint(body, pos)
        end = at + length
        _, field = _varlong(body, at + 1)
        _, rest = _varint(body, field)
        record = body[at:field] + varint(delta) + body[rest:end]
        out.append(varint(len(record)) + record)
        pos = end
    return out
