"""ListOffsets (API 2) through `KafkaApis.handle`, as Kafka 2.8's ``handleListOffsetRequestV1AndAbove`` with
``ReplicaManager.fetchOffsetForTimestamp`` answers it, over real `Partition` state and a real metadata cache:
latest is the HW for a consumer and the LEO for a replica, earliest the log start (0), the leader epoch from v4,
the epoch checks, leadership, unknown and unhosted partitions, duplicates, a lagging new leader, and timestamp
lookups in the leader's time index (`partition.TimeIndex`)."""

from __future__ import annotations

import io
import struct
from dataclasses import fields
from types import SimpleNamespace
from typing import Any

import pytest
from kio.serial import entity_reader, entity_writer

from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.broker.partition import Partition
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire.client_apis import LIST_OFFSETS, schema_module
from zkcontroller.protocol.wire.frames import decode_response_header

from .server_fixture import BROKER_EPOCH, request_frame, seed_metadata

LATEST, EARLIEST = -1, -2
NOW_MS = 1_700_000_000_000
ORDERS_0, ORDERS_1 = TopicPartition("orders", 0), TopicPartition("orders", 1)


class Replicas:
    """The two things `KafkaApis` reads from a replica manager: hosted partitions and failed ones."""

    def __init__(self) -> None:
        self.parts: dict[TopicPartition, Partition] = {}
        self.control_plane = SimpleNamespace(offline_partitions=frozenset())
        self.runtime = SimpleNamespace(now_ms=lambda: NOW_MS)
        self.old_format_topics: set[str] = set()
        """Topics whose ``message.format.version`` is before 0.10.0 (no timestamps in their messages)."""
        self.topic_configs = SimpleNamespace(timestamps_unsupported=lambda topic: topic in self.old_format_topics)

    def partition(self, tp: TopicPartition) -> Partition | None:
        return self.parts.get(tp)


def leader(tp: TopicPartition, epoch: int, leo: int, follower_leo: int) -> Partition:
    """Broker 1 leading ``tp`` at ``epoch`` with follower 2 in the ISR: LEO ``leo``, HW ``follower_leo``."""
    p = Partition(tp, 1)
    p.make_leader(epoch, (1, 2), (1, 2), 0, 1, now_ms=0)
    p.append_as_leader(leo, now_ms=0)
    p.record_follower_fetch(2, follower_leo, now_ms=0)
    assert (p.log_end_offset, p.high_watermark) == (leo, follower_leo)
    return p


@pytest.fixture
def apis() -> tuple[KafkaApis, Replicas]:
    plane = BrokerControlPlane(1, BROKER_EPOCH)
    seed_metadata(plane, 9092)  # orders-0 led by 1 at epoch 4, orders-1 led by 2
    replicas = Replicas()
    replicas.parts[ORDERS_0] = leader(ORDERS_0, 4, 10, 7)
    return KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: plane.metadata_cache,
                     cluster_id=lambda: "c", replica_manager=lambda: replicas), replicas  # type: ignore[arg-type,return-value]


def _build(cls: type, **values: Any) -> Any:
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in values.items() if k in names})


def frame(version: int, topics: list[tuple[str, list[tuple[int, int, int]]]], replica_id: int = -1,
          isolation_level: int = 0) -> bytes:
    """A ListOffsets request payload; ``topics``: (name, [(partition, timestamp, current leader epoch)])."""
    m = schema_module(LIST_OFFSETS, version, "request")
    request = _build(m.ListOffsetsRequest, replica_id=replica_id, isolation_level=isolation_level, topics=tuple(
        _build(m.ListOffsetsTopic, name=name, partitions=tuple(
            _build(m.ListOffsetsPartition, partition_index=p, timestamp=ts, current_leader_epoch=epoch,
                   max_num_offsets=1) for p, ts, epoch in parts)) for name, parts in topics))
    buf = io.BytesIO()
    entity_writer(type(request))(buf, request)
    return request_frame(LIST_OFFSETS, version, 7, buf.getvalue())[4:]


async def ask(apis: KafkaApis, version: int, topics: list[tuple[str, list[tuple[int, int, int]]]],
              replica_id: int = -1, isolation_level: int = 0) -> list[tuple[str, int, int, int, int, int | None]]:
    """(topic, partition, error, timestamp, offset, leader epoch or None before v4) per answered partition."""
    payload = await apis.handle(frame(version, topics, replica_id, isolation_level))
    assert payload is not None
    correlation_id, offset = decode_response_header(payload, LIST_OFFSETS, version)
    assert correlation_id == 7
    m = schema_module(LIST_OFFSETS, version, "response")
    response, _ = entity_reader(m.ListOffsetsResponse)(memoryview(payload)[offset:], 0)
    return [(t.name, p.partition_index, int(p.error_code), p.timestamp, p.offset, getattr(p, "leader_epoch", None))
            for t in response.topics for p in t.partitions]


async def test_latest_is_the_high_watermark_for_a_consumer_at_either_isolation_level(apis) -> None:
    api, _ = apis
    for isolation in (0, 1):  # READ_UNCOMMITTED, READ_COMMITTED: no transactions, the LSO is the HW
        assert await ask(api, 6, [("orders", [(0, LATEST, -1)])], isolation_level=isolation) == [
            ("orders", 0, 0, -1, 7, 4)]


async def test_latest_is_the_log_end_offset_for_a_replica(apis) -> None:
    api, _ = apis
    assert await ask(api, 6, [("orders", [(0, LATEST, -1)])], replica_id=2) == [("orders", 0, 0, -1, 10, 4)]


async def test_earliest_is_the_log_start_offset_with_no_epoch(apis) -> None:
    api, _ = apis
    assert await ask(api, 6, [("orders", [(0, EARLIEST, -1)])]) == [("orders", 0, 0, -1, 0, -1)]


async def test_the_leader_epoch_is_answered_from_v4(apis) -> None:
    api, _ = apis
    assert await ask(api, 1, [("orders", [(0, LATEST, -1)])]) == [("orders", 0, 0, -1, 7, None)]
    assert await ask(api, 3, [("orders", [(0, LATEST, -1)])]) == [("orders", 0, 0, -1, 7, None)]
    assert await ask(api, 4, [("orders", [(0, LATEST, -1)])]) == [("orders", 0, 0, -1, 7, 4)]


async def test_current_leader_epoch_is_checked_as_kafka_does(apis) -> None:
    """Ours (4) newer than the client's: FENCED_LEADER_EPOCH (74); older: UNKNOWN_LEADER_EPOCH (75); -1: unchecked."""
    api, _ = apis
    answers = await ask(api, 6, [("orders", [(0, LATEST, 3)])]) + await ask(api, 6, [("orders", [(0, LATEST, 5)])])
    assert [(a[2], a[4]) for a in answers] == [(74, -1), (75, -1)]
    assert await ask(api, 6, [("orders", [(0, LATEST, 4)])]) == [("orders", 0, 0, -1, 7, 4)]


def follow_orders_1(replicas: Replicas) -> None:
    """Broker 1 hosts orders-1 as a follower of broker 2 (leader epoch 3, ISR and replicas 2,1): 5 records
    fetched, the leader's high watermark 3."""
    follower = Partition(ORDERS_1, 1)
    follower.make_follower(2, 3, (2, 1), (2, 1), 0, 1)
    follower.append_as_follower(5, 3)
    replicas.parts[ORDERS_1] = follower


async def test_a_follower_answers_not_leader_but_not_to_the_debugging_replica_id(apis) -> None:
    api, replicas = apis
    follow_orders_1(replicas)
    assert await ask(api, 6, [("orders", [(1, LATEST, -1)])]) == [("orders", 1, 6, -1, -1, -1)]
    assert await ask(api, 6, [("orders", [(1, LATEST, -1)])], replica_id=-2) == [("orders", 1, 0, -1, 5, 3)]
    # the epoch check comes before leadership
    assert (await ask(api, 6, [("orders", [(1, LATEST, 2)])]))[0][2] == 74


async def test_unknown_unhosted_and_offline_partitions(apis) -> None:
    """Not in the cache: UNKNOWN_TOPIC_OR_PARTITION (3); in the cache but not hosted here: NOT_LEADER_OR_FOLLOWER
    (6); in a failed log dir: KAFKA_STORAGE_ERROR (56). Each partition is answered on its own."""
    api, replicas = apis
    answers = await ask(api, 6, [("orders", [(0, LATEST, -1), (1, LATEST, -1), (9, LATEST, -1)]),
                                 ("nope", [(0, LATEST, -1)])])
    assert [(t, p, e) for t, p, e, *_ in answers] == [("orders", 0, 0), ("orders", 1, 6), ("orders", 9, 3),
                                                      ("nope", 0, 3)]
    replicas.control_plane.offline_partitions = frozenset({ORDERS_0})
    assert (await ask(api, 6, [("orders", [(0, LATEST, -1)])]))[0][2] == 56


async def test_a_partition_asked_twice_is_an_invalid_request(apis) -> None:
    api, _ = apis
    answers = await ask(api, 6, [("orders", [(0, LATEST, -1), (0, EARLIEST, -1), (1, LATEST, -1)])])
    assert [(p, e, o) for _, p, e, _, o, _ in answers] == [(0, 42, -1), (0, 42, -1), (1, 6, -1)]


async def test_a_new_leader_behind_its_epoch_start_has_no_latest_offset_yet(apis) -> None:
    """``Partition.fetchOffsetForTimestamp``: a leader whose HW is below its epoch's start offset answers a
    consumer's latest with OFFSET_NOT_AVAILABLE (78) from v5, LEADER_NOT_AVAILABLE (5) before; a replica gets
    the LEO, and earliest is still answered."""
    api, replicas = apis
    p = Partition(ORDERS_0, 1)
    p.make_follower(2, 4, (1, 2), (1, 2), 0, 1)
    p.append_as_follower(10, 5)
    p.make_leader(5, (1, 2), (1, 2), 1, 1, now_ms=0)
    assert (p.leader_epoch_start_offset, p.high_watermark) == (10, 5)
    replicas.parts[ORDERS_0] = p
    assert (await ask(api, 5, [("orders", [(0, LATEST, -1)])]))[0][2:5] == (78, -1, -1)
    assert (await ask(api, 4, [("orders", [(0, LATEST, -1)])]))[0][2:5] == (5, -1, -1)
    assert (await ask(api, 6, [("orders", [(0, LATEST, -1)])], replica_id=2))[0][2:5] == (0, -1, 10)
    assert (await ask(api, 6, [("orders", [(0, EARLIEST, -1)])]))[0][2:5] == (0, -1, 0)


async def test_a_timestamp_no_batch_reaches_answers_minus_one(apis) -> None:
    """Kafka 2.8's ``buildErrorResponse(Errors.NONE)`` when ``fetchOffsetByTimestamp`` finds nothing (here: no
    batch timestamps known): NONE, timestamp and offset -1; not error 43. Leadership is checked first."""
    api, _ = apis
    assert await ask(api, 6, [("orders", [(0, 1_700_000_000_000, -1), (0 + 1, 0, -1)])]) == [
        ("orders", 0, 0, -1, -1, -1), ("orders", 1, 6, -1, -1, -1)]
    assert (await ask(api, 1, [("orders", [(0, 0, -1)])]))[0][2:5] == (0, -1, -1)


@pytest.mark.parametrize(("target", "replica_id", "expected"), [
    (100, -1, (0, 100, 0, 4)),  # the first batch's first record reaches it: Kafka's answer exactly
    (120, -1, (0, 150, 0, 4)),  # a record inside the first batch: its base offset, its max timestamp
    (250, -1, (0, 260, 3, 4)),
    (300, -1, (0, 300, 6, 4)),
    (350, -1, (0, -1, -1, -1)),  # only a batch at 8, above the HW (7): not for a consumer
    (350, 2, (0, 400, 8, 4)),  # a replica reads to the LEO
    (500, -1, (0, -1, -1, -1)),
])
async def test_a_timestamp_is_looked_up_in_the_time_index(apis, target: int, replica_id: int,
                                                          expected: tuple[int, ...]) -> None:
    """``Log.fetchOffsetByTimestamp``: the first batch whose max timestamp is >= the target, below the last
    fetchable offset (``Partition.fetchOffsetForTimestamp``'s filter), with the leader epoch of that offset."""
    api, replicas = apis
    index = replicas.parts[ORDERS_0].time_index
    for base, first, largest in ((0, 100, 150), (3, 200, 260), (5, 210, 240), (6, 300, 300), (8, 400, 400)):
        index.append(base, first, largest)
    assert len(index) == 4  # (5, 210, 240) kept no entry: its max is below an earlier batch's, as Kafka's index
    assert (await ask(api, 6, [("orders", [(0, target, -1)])], replica_id=replica_id))[0][2:] == expected


async def test_a_topic_whose_messages_have_no_timestamps_refuses_a_search_by_timestamp(apis) -> None:
    """``Log.fetchOffsetByTimestamp``: a ``message.format.version`` before 0.10.0 has no timestamps to search,
    UNSUPPORTED_FOR_MESSAGE_FORMAT (43); latest and earliest are still answered, and leadership comes first."""
    api, replicas = apis
    replicas.parts[ORDERS_0].time_index.append(0, 100, 150)
    replicas.old_format_topics.add("orders")
    assert await ask(api, 6, [("orders", [(0, 100, -1), (1, 100, -1)])]) == [
        ("orders", 0, 43, -1, -1, -1), ("orders", 1, 6, -1, -1, -1)]
    assert await ask(api, 6, [("orders", [(0, LATEST, -1)])]) == [("orders", 0, 0, -1, 7, 4)]
    assert await ask(api, 6, [("orders", [(0, EARLIEST, -1)])]) == [("orders", 0, 0, -1, 0, -1)]
    replicas.old_format_topics.clear()
    assert await ask(api, 6, [("orders", [(0, 100, -1)])]) == [("orders", 0, 0, 100, 0, 4)]


def test_a_message_format_before_0_10_has_no_timestamps() -> None:
    from zkcontroller.broker.log_config import LogConfig, LogDefaults

    defaults = LogDefaults.from_properties()
    assert LogConfig.from_overrides(defaults, {"message.format.version": "0.9.0"}).timestamps_unsupported
    assert LogConfig.from_overrides(defaults, {"message.format.version": "0.8.2.1"}).timestamps_unsupported
    assert not LogConfig.from_overrides(defaults, {"message.format.version": "0.10.0"}).timestamps_unsupported
    assert not LogConfig.from_overrides(defaults, {}).timestamps_unsupported


def test_a_truncation_forgets_the_batches_above_the_new_end() -> None:
    p = leader(ORDERS_0, 4, 10, 10)
    p.time_index.append(0, 100, 100)
    p.time_index.append(6, 200, 200)
    p.truncate_to(6)
    assert (p.time_index.lookup(150), p.time_index.lookup(50)) == (None, (100, 0))


async def test_before_the_broker_has_a_replica_manager_every_partition_is_unhosted() -> None:
    plane = BrokerControlPlane(1, BROKER_EPOCH)
    seed_metadata(plane, 9092)
    api = KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: plane.metadata_cache,
                    cluster_id=lambda: "c")
    answers = await ask(api, 6, [("orders", [(0, LATEST, -1)]), ("nope", [(0, LATEST, -1)])])
    assert [a[2] for a in answers] == [6, 3]


async def test_a_malformed_body_closes_the_connection_and_the_next_request_is_answered(apis) -> None:
    api, _ = apis
    good = frame(6, [("orders", [(0, LATEST, -1)])])
    with pytest.raises(CloseConnection):
        await api.handle(good[:-9])
    assert await ask(api, 6, [("orders", [(0, LATEST, -1)])]) == [("orders", 0, 0, -1, 7, 4)]


# ------------------------------------------------------------------------------------ v0: old offsets arrays

def v0_frame(partitions: list[tuple[str, int, int, int]], replica_id: int = -1) -> bytes:
    """Kafka's v0 layout, by hand: replica id, then per topic its name and (partition, timestamp, max offsets)."""
    body = struct.pack(">ii", replica_id, len(partitions))
    for topic, partition, timestamp, max_offsets in partitions:
        name = topic.encode()
        body += struct.pack(">h", len(name)) + name + struct.pack(">iiqi", 1, partition, timestamp, max_offsets)
    return request_frame(LIST_OFFSETS, 0, 9, body)[4:]


async def ask_v0(api: KafkaApis, partitions: list[tuple[str, int, int, int]], replica_id: int = -1
                 ) -> list[tuple[str, int, int, list[int]]]:
    """(topic, partition, error, old-style offsets), read by hand from the v0 response."""
    payload = await api.handle(v0_frame(partitions, replica_id))
    assert payload is not None
    correlation_id, pos = struct.unpack_from(">i", payload)[0], 4  # response header v0: the correlation id
    assert correlation_id == 9
    out = []
    (topics,), pos = struct.unpack_from(">i", payload, pos), pos + 4
    for _ in range(topics):
        (n,), pos = struct.unpack_from(">h", payload, pos), pos + 2
        name, pos = payload[pos:pos + n].decode(), pos + n
        (parts,), pos = struct.unpack_from(">i", payload, pos), pos + 4
        for _ in range(parts):
            partition, error, count = struct.unpack_from(">ihi", payload, pos)
            pos += 10
            offsets = list(struct.unpack_from(f">{count}q", payload, pos))
            pos += 8 * count
            out.append((name, partition, error, offsets))
    assert pos == len(payload)
    return out


async def test_v0_latest_and_earliest_as_old_style_offset_arrays(apis) -> None:
    """``legacyFetchOffsetsBefore``: latest is [LEO, 0] cut to max_num_offsets, and a consumer's offsets above
    the HW (7) become the HW; a replica gets the LEO (10); earliest is [0]."""
    api, _ = apis
    assert await ask_v0(api, [("orders", 0, LATEST, 1)]) == [("orders", 0, 0, [7])]
    assert await ask_v0(api, [("orders", 0, LATEST, 5)]) == [("orders", 0, 0, [7, 0])]
    assert await ask_v0(api, [("orders", 0, LATEST, 5)], replica_id=2) == [("orders", 0, 0, [10, 0])]
    assert await ask_v0(api, [("orders", 0, EARLIEST, 5)]) == [("orders", 0, 0, [0])]
    assert await ask_v0(api, [("orders", 0, LATEST, 0)]) == [("orders", 0, 0, [])]


async def test_v0_timestamps_know_only_the_log_end_offset_now(apis) -> None:
    """No segment times are kept: a timestamp at or after now answers as latest, an earlier one nothing."""
    api, _ = apis
    assert await ask_v0(api, [("orders", 0, NOW_MS, 5)], replica_id=2) == [("orders", 0, 0, [10, 0])]
    assert await ask_v0(api, [("orders", 0, NOW_MS - 1, 5)], replica_id=2) == [("orders", 0, 0, [])]


async def test_v0_errors(apis) -> None:
    """Not hosted but known 6, unknown 3, in a failed log dir 56; no epoch field and no duplicate check at v0."""
    api, replicas = apis
    assert await ask_v0(api, [("orders", 1, LATEST, 1), ("nope", 0, LATEST, 1), ("orders", 0, LATEST, 1),
                              ("orders", 0, LATEST, 1)]) == [
        ("orders", 1, 6, []), ("nope", 0, 3, []), ("orders", 0, 0, [7]), ("orders", 0, 0, [7])]
    replicas.control_plane.offline_partitions = frozenset({ORDERS_0})
    assert await ask_v0(api, [("orders", 0, LATEST, 1)]) == [("orders", 0, 56, [])]


async def test_v0_a_follower_answers_only_the_debugging_replica_id(apis) -> None:
    api, replicas = apis
    follow_orders_1(replicas)
    assert await ask_v0(api, [("orders", 1, LATEST, 2)]) == [("orders", 1, 6, [])]
    assert await ask_v0(api, [("orders", 1, LATEST, 2)], replica_id=-2) == [("orders", 1, 0, [5, 0])]


async def test_v0_malformed_closes_the_connection(apis) -> None:
    api, _ = apis
    with pytest.raises(CloseConnection):
        await api.handle(v0_frame([("orders", 0, LATEST, 1)])[:-3])
    assert await ask_v0(api, [("orders", 0, LATEST, 1)]) == [("orders", 0, 0, [7])]
