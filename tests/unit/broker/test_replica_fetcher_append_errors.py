"""What a follower's fetcher logs when ``Log.appendAsFollower`` would throw: the records' real offsets in
``UnexpectedAppendOffsetException`` (a compacted, compressed batch's are not consecutive), and
``OffsetsOutOfOrderException`` for an answer handed over in process as for one read off the wire."""

from __future__ import annotations

import dataclasses

import pytest
from tests.wire.test_record_offsets import compacted_batch, raw_batch

from zkcontroller.model import Broker, TopicPartition
from zkcontroller.protocol.inter_broker import FetchPartition, FetchRequest, ReplicatedBatch
from zkcontroller.protocol.wire import fetch_codec

from .replica_helpers import (
    Brokers,
    brokers_fixture,  # noqa: F401
    state,
)

TP = TopicPartition("t", 0)
PREFIX = "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] "


class _Replaced:
    """The leader's answers with their records replaced by ``record_set`` on the wire (decoded as a follower reads
    it), or their producer batches by ``batches`` in process."""

    def __init__(self, inner: object, record_set: bytes | None = None,
                 batches: tuple[ReplicatedBatch, ...] | None = None) -> None:
        self.inner = inner
        self.record_set = record_set
        self.batches = batches

    async def send(self, broker: Broker, request: object) -> object:
        response = await self.inner.send(broker, request)  # type: ignore[attr-defined]

        def replaced(r: object) -> object:
            if self.record_set is not None:
                return fetch_codec._partition_result(TP.topic, {
                    "partition": TP.partition, "record_set": self.record_set,
                    "high_watermark": r.high_watermark, "error_code": 0})  # type: ignore[attr-defined]
            return dataclasses.replace(r, batches=self.batches)  # type: ignore[type-var]

        return dataclasses.replace(response, partitions=tuple(
            replaced(r) if r.records else r for r in response.partitions))


async def _fetch_with(brokers: Brokers, transport: _Replaced) -> None:
    brokers.lead(state())
    brokers.rms[1].append(TP, 2)
    await brokers.fetch_all()
    brokers.rms[1].append(TP, 5)
    fetcher = brokers.rms[2].fetchers[1]
    fetcher._transport = transport  # type: ignore[assignment]
    assert await fetcher.fetch_once() is True  # records came (refused): fetch again at once, as Kafka's fetcher
    assert brokers.rms[2].log_end_offset(TP) == 2 and TP not in fetcher.fetching


@pytest.mark.parametrize("codec", ["none", "gzip", "zstd"])
async def test_unexpected_append_offset_lists_the_records_real_offsets(
        brokers: Brokers, caplog: pytest.LogCaptureFixture, codec: str) -> None:
    """A compacted batch at 1 (records 1, 3, 4) fetched at 2: Kafka lists ``List(1, 3, 4)``; it used to list
    ``List(1, 2, 3, 4)``, counted from the base offset."""
    await _fetch_with(brokers, _Replaced(brokers.transport, record_set=compacted_batch(1, [0, 2, 3], codec)))
    assert (f"{PREFIX}Unexpected error occurred while processing data for partition t-0 at offset 2\n"
            "kafka.common.UnexpectedAppendOffsetException: Unexpected offset in append to t-0. First offset 1 is less "
            "than the next offset 2. First 10 offsets in append: List(1, 3, 4), last offset in append: 4. Log start "
            "offset = 0") in caplog.messages
    assert f"{PREFIX}Partition t-0 marked as failed" in caplog.messages


async def test_out_of_order_batches_handed_over_in_process_mark_the_partition_failed(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    """The wire's decoder refuses last offsets that go back; an in-process answer used to be appended, its
    producer batches recorded out of order."""
    batches = (ReplicatedBatch(2, 4, 7, 0, 0, 1_000), ReplicatedBatch(3, 3, 8, 0, 0, 1_000))
    await _fetch_with(brokers, _Replaced(brokers.transport, batches=batches))
    assert (f"{PREFIX}Unexpected error occurred while processing data for partition t-0 at offset 2\n"
            "kafka.common.OffsetsOutOfOrderException: Out of order offsets found in append to t-0: "
            "List(2, 3, 4, 3, 5, 6)") in caplog.messages
    partition = brokers.rms[2].partition(TP)
    assert partition is not None and partition.producer_state.producers == {}


async def test_a_leader_serves_the_batch_holding_the_fetch_offset_whole(brokers: Brokers) -> None:
    """A leader whose log holds A [0..9] and B [5..12] (B overlapping A, as a follower took them) answers a fetch
    from 10 with B whole, from 5 (Kafka's read starts at the first batch whose last offset reaches the fetch
    offset); it used to serve plain records 10-12, B never reaching the follower. The follower then fails with
    ``UnexpectedAppendOffsetException``, as Kafka's does (`test_unexpected_append_offset_...`)."""
    brokers.lead(state())
    leader = brokers.rms[1]
    leader.append(TP, 13)
    overlapping = (ReplicatedBatch(0, 9, 7, 0, 0, 1_000), ReplicatedBatch(5, 12, 8, 0, 0, 1_000))
    partition = leader.partition(TP)
    assert partition is not None
    partition.producer_state.append_replicated(overlapping)
    response = leader.handle_fetch(FetchRequest(2, (FetchPartition(TP, 0, 10),), max_records=3))
    (result,) = response.partitions
    assert (result.base_offset, result.records, result.batches) == (5, 8, overlapping[1:])
    data = fetch_codec.encode_records(result.base_offset, result.records, result.batches, result.epochs)
    assert fetch_codec.decode_batches(data)[:3] == (8, 5, overlapping[1:])


async def test_a_crafted_out_of_order_response_lists_what_its_bytes_hold(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    """A 122-byte response whose first batch counts 2**31-1 records (it used to be listed offset by offset, the
    follower killed for memory): the message lists the one record the bytes hold."""
    data = raw_batch(100, 2**31 - 2, 2**31 - 1, 0, b"\xff") + compacted_batch(0, [0])
    await _fetch_with(brokers, _Replaced(brokers.transport, record_set=data))
    assert (f"{PREFIX}Unexpected error occurred while processing data for partition t-0 at offset 2\n"
            "kafka.common.OffsetsOutOfOrderException: Out of order offsets found in append to t-0: List(0)"
            ) in caplog.messages


async def test_a_long_out_of_order_list_is_cut(brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    """Kafka lists every offset; the follower's message stops after `fetch_codec.OUT_OF_ORDER_LISTED`."""
    data = compacted_batch(2, list(range(3000))) + compacted_batch(0, [0])
    await _fetch_with(brokers, _Replaced(brokers.transport, record_set=data))
    (message,) = [m for m in caplog.messages if "OffsetsOutOfOrderException" in m]
    assert message.endswith(f"List({', '.join(map(str, range(2, 2 + fetch_codec.OUT_OF_ORDER_LISTED)))}, ...)")
