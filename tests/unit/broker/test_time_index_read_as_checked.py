"""The append's time index reads a record set as its check read it (`log_validator.validate` leaves what it inflated,
cut where Kafka's reader meets the stream's end, in ``inflated``): a snappy stream Kafka stops reading at a
concatenated header of another magic is neither decompressed again past that end (which failed, after the producer
state was updated, and a retry of the same sequence was then answered as appended) nor read for messages Kafka never
stored. A set checked on the worker thread brings its running maxima from there, so the loop does not walk it again.
"""

from __future__ import annotations

import struct
import threading
import zlib

from tests.unit.broker.test_produce_offload_bounds import KNOWN, Broker
from tests.unit.broker.test_snappy_streams import OTHER_MAGIC, chunk, header
from tests.unit.broker.v2_batches import v2_batch, v2_batch_of, v2_record

from zkcontroller.broker import produce as produce_module
from zkcontroller.broker.produce import ProducePartition, produce
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire.record_sets import crc32c

SNAPPY = 2
BASE = 1_000_000
TP = TopicPartition("t", 0)

def message(offset: int, timestamp: int, attributes: int = 0, value: bytes | None = None) -> bytes:
    body = struct.pack(">bbqi", 1, attributes, timestamp, -1)
    body += struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value
    return struct.pack(">qiI", offset, len(body) + 4, zlib.crc32(body)) + body


def idempotent(data: bytes) -> bytes:
    """The v2 batch with producer id 7, epoch 0, first sequence 0."""
    out = bytearray(data)
    struct.pack_into(">qhi", out, 43, 7, 0, 0)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


def new_broker() -> Broker:
    """A broker whose topic takes keyless records (not compacted)."""
    made = Broker()
    made.compacted = False
    return made


async def append(broker: Broker, data: bytes, version: int = 9) -> produce_module.ProduceAnswer:
    [got] = await produce(version, 1, 30_000, "c", [ProducePartition("t", 0, data)], cache=KNOWN,
                          target=broker.target())  # type: ignore[arg-type]
    return got


async def test_a_v2_stream_ending_at_another_magic_before_a_cut_chunk_is_appended_and_indexed() -> None:
    records = b"".join(v2_record(i, key=b"k", timestamp_delta=d) for i, d in enumerate([0, 5, 9]))
    stream = header() + chunk(records) + OTHER_MAGIC + struct.pack(">i", 1000)  # then a chunk cut short
    data = idempotent(v2_batch(stream, 3, codec=SNAPPY, first_timestamp=BASE, max_timestamp=BASE + 9))
    broker = new_broker()
    partition = broker.parts[TP]
    got = await append(broker, data)  # before: StreamFailure escaped produce, the log end still 0
    assert (got.error, got.base_offset, got.count) == (0, 0, 3)
    assert partition.log_end_offset == 3
    assert [(e.base_offset, e.max_timestamp) for e in partition.time_index.entries()] == [
        (0, BASE), (1, BASE + 5), (2, BASE + 9)]
    retry = idempotent(v2_batch(records, 3, first_timestamp=BASE, max_timestamp=BASE + 9))
    again = await append(broker, retry)  # a duplicate of what was appended: answered, nothing appended
    assert (again.error, again.base_offset) == (0, 0) and partition.log_end_offset == 3


async def test_a_legacy_wrapper_s_messages_after_the_end_kafka_reads_are_not_indexed() -> None:
    first = b"".join(message(i, BASE + t) for i, t in enumerate([0, 5, 9]))
    more = b"".join(message(3 + i, BASE + t) for i, t in enumerate([20, 30]))
    stream = header() + chunk(first) + OTHER_MAGIC + chunk(more)
    broker = new_broker()
    partition = broker.parts[TP]
    got = await append(broker, message(2, BASE + 9, attributes=SNAPPY, value=stream), version=2)
    assert got.error == 0 and partition.log_end_offset == 3
    # before: entries at offsets 3 and 4 (BASE + 20, BASE + 30), past the log end, with timestamps never stored
    assert [(e.base_offset, e.max_timestamp) for e in partition.time_index.entries()] == [
        (0, BASE), (1, BASE + 5), (2, BASE + 9)]
    assert partition.time_index.lookup(BASE + 15) is None


async def test_a_set_checked_on_the_worker_brings_its_running_maxima_from_there(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    threads: list[str] = []
    real = produce_module.running_maxima

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(produce_module, "running_maxima", spy)
    n = 20_000  # a walk past INLINE_SCAN_BYTES: checked on the worker
    data = v2_batch_of([v2_record(i, timestamp_delta=i) for i in range(n)], first_timestamp=BASE,
                       max_timestamp=BASE + n - 1)
    assert len(data) > produce_module.INLINE_SCAN_BYTES
    broker = new_broker()
    got = await append(broker, data)
    assert got.error == 0 and got.count == n
    assert threads and threading.main_thread().name not in threads  # before: read again on the loop's thread
    index = broker.parts[TP].time_index
    assert len(index) == n and index.lookup(BASE + 1234) == (BASE + 1234, 1234)
    # the next set is indexed from above what is there: the worker's maxima from -1, its tail taken at the append
    more = v2_batch_of([v2_record(i, timestamp_delta=d) for i, d in enumerate(range(n - 10, 2 * n))],
                       first_timestamp=BASE, max_timestamp=BASE + 2 * n - 1)
    got = await append(broker, more)
    assert got.error == 0 and len(index) == 2 * n
    assert index.lookup(BASE + n) == (BASE + n, n + 10)  # the first record above the earlier max
