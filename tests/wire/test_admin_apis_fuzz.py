"""Bad input to CreatePartitions (0–3), ElectLeaders (0–2), AlterPartitionReassignments and
ListPartitionReassignments (0): valid frames, mutated by Hypothesis, are either answered or close the connection
(`CloseConnection`), never another exception; a valid frame is answered after each, so nothing is left wedged.
The pattern of `test_offsets_delete_fuzz`."""

from __future__ import annotations

import asyncio
import io
import struct
from datetime import timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from kio.serial import entity_writer

from zkcontroller.broker.kafka_apis import AdminHandlers, CloseConnection, KafkaApis
from zkcontroller.protocol.wire.client_apis import (
    ALTER_PARTITION_REASSIGNMENTS,
    CREATE_PARTITIONS,
    ELECT_LEADERS,
    LIST_PARTITION_REASSIGNMENTS,
    OngoingReassignment,
    PartitionError,
    PartitionsCreated,
    PartitionsToCreate,
    schema_module,
)

from .frame_fuzz import (
    assert_answered_after,
    assert_every_frame_answered,
    assert_huge_lengths_close_in_a_child,
    mutate,
)
from .frame_fuzz import handle as _handle
from .server_fixture import request_frame, seeded_apis


def _frame(api_key: int, version: int, request: Any) -> bytes:
    buf = io.BytesIO()
    entity_writer(type(request))(buf, request)
    return request_frame(api_key, version, 3, buf.getvalue())[4:]


def _create_partitions(version: int) -> bytes:
    m = schema_module(CREATE_PARTITIONS, version, "request")
    return _frame(CREATE_PARTITIONS, version, m.CreatePartitionsRequest(
        topics=(m.CreatePartitionsTopic(name="orders", count=3, assignments=(
            m.CreatePartitionsAssignment(broker_ids=(1, 2)),)),
                m.CreatePartitionsTopic(name="x", count=5, assignments=None)),
        timeout=timedelta(milliseconds=100), validate_only=False))


def _elect(version: int) -> bytes:
    m = schema_module(ELECT_LEADERS, version, "request")
    kwargs: dict[str, Any] = {"timeout": timedelta(milliseconds=100), "topic_partitions": (
        m.TopicPartitions(topic="orders", partitions=(0, 1)),)}
    if version >= 1:
        kwargs["election_type"] = 1
    return _frame(ELECT_LEADERS, version, m.ElectLeadersRequest(**kwargs))


def _alter() -> bytes:
    m = schema_module(ALTER_PARTITION_REASSIGNMENTS, 0, "request")
    return _frame(ALTER_PARTITION_REASSIGNMENTS, 0, m.AlterPartitionReassignmentsRequest(
        timeout=timedelta(milliseconds=100), topics=(m.ReassignableTopic(name="orders", partitions=(
            m.ReassignablePartition(partition_index=0, replicas=(1, 2)),
            m.ReassignablePartition(partition_index=1, replicas=None))),)))


def _list() -> bytes:
    m = schema_module(LIST_PARTITION_REASSIGNMENTS, 0, "request")
    return _frame(LIST_PARTITION_REASSIGNMENTS, 0, m.ListPartitionReassignmentsRequest(
        timeout=timedelta(milliseconds=100), topics=(
            m.ListPartitionReassignmentsTopics(name="orders", partition_indexes=(0, 1)),)))


VALID = [
    *(_create_partitions(v) for v in range(4)),
    *(_elect(v) for v in range(3)),
    _alter(),
    _list(),
]


async def _create(topics: list[PartitionsToCreate], timeout_ms: int,
                  validate_only: bool) -> list[PartitionsCreated]:
    return [PartitionsCreated(t.name, 41) for t in dict((t.name, t) for t in topics).values()]


async def _elected(election_type: int, partitions: list[tuple[str, int]] | None,
                   timeout_ms: int) -> list[PartitionError]:
    return [PartitionError(t, p, 41) for t, p in partitions or ()]


async def _altered(targets: dict[tuple[str, int], list[int] | None]) -> list[PartitionError] | PartitionError:
    return [PartitionError(t, p) for t, p in targets]


async def _listed(partitions: list[tuple[str, int]] | None) -> list[OngoingReassignment] | PartitionError:
    return [OngoingReassignment(t, p, (1, 2), (2,), ()) for t, p in partitions or ()]


def _apis() -> KafkaApis:
    return seeded_apis(admin=AdminHandlers(_create, _elected, _altered, _listed))


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid frame with 1–4 flips, truncations, insertions or planted lengths after its header."""
    return mutate(draw, VALID)


@settings(max_examples=400, deadline=None)
@given(mutated())
def test_mutated_frames_are_answered_or_close_the_connection(payload: bytes) -> None:
    asyncio.run(assert_answered_after(_apis, payload, VALID[4]))


async def test_every_valid_frame_is_answered() -> None:
    await assert_every_frame_answered(_apis(), VALID)


async def test_a_null_array_where_the_schema_forbids_one_closes_the_connection() -> None:
    """CreatePartitions v1's topics and AlterPartitionReassignments' topics are not nullable; ElectLeaders' are
    (all partitions) and ListPartitionReassignments' are (all reassignments): those are answered."""
    apis = _apis()
    null_topics = request_frame(CREATE_PARTITIONS, 1, 3, struct.pack(">i", -1) + struct.pack(">i", 100) + b"\x00")
    null_alter = request_frame(ALTER_PARTITION_REASSIGNMENTS, 0, 3, struct.pack(">i", 100) + b"\x00\x00")
    for payload in (null_topics[4:], null_alter[4:]):
        try:
            await apis.handle(payload)
        except CloseConnection as e:
            assert "serialized as null" in str(e)
        else:
            raise AssertionError("answered")
    null_elect = request_frame(ELECT_LEADERS, 1, 3, b"\x00" + struct.pack(">i", -1) + struct.pack(">i", 100))
    null_list = request_frame(LIST_PARTITION_REASSIGNMENTS, 0, 3, struct.pack(">i", 100) + b"\x00\x00")
    for payload in (null_elect[4:], null_list[4:]):
        assert await _handle(apis, payload) is not None


NULL_INSIDE_NULLABLE = [
    # ListPartitionReassignments v0 (flexible): one topic whose partition_indexes is null (found by the live fuzz:
    # the handler iterated None, as kio checked only the top level's non-nullable fields)
    request_frame(LIST_PARTITION_REASSIGNMENTS, 0, 1, struct.pack(">i", 100) + b"\x02\x02t\x00\x00\x00")[4:],
    # ElectLeaders v1: a topic whose partitions array is null
    request_frame(ELECT_LEADERS, 1, 1, b"\x00" + struct.pack(">ih", 1, 1) + b"t" + struct.pack(">ii", -1, 100))[4:],
    # CreatePartitions v1: an assignment whose broker ids are null
    request_frame(CREATE_PARTITIONS, 1, 1, struct.pack(">ih", 1, 1) + b"t" + struct.pack(">iiii", 3, 1, -1, 100)
                  + b"\x00")[4:],
]


async def test_a_null_non_nullable_field_inside_a_nullable_array_closes_the_connection() -> None:
    apis = _apis()
    for payload in NULL_INSIDE_NULLABLE:
        try:
            await apis.handle(payload)
        except CloseConnection as e:
            assert "serialized as null" in str(e), e
        else:
            raise AssertionError(f"answered {payload[:4].hex()}")


HUGE_LENGTHS = [
    request_frame(CREATE_PARTITIONS, 1, 1, struct.pack(">i", 0x7FFFFFFF))[4:],
    request_frame(CREATE_PARTITIONS, 2, 1, b"\xff\xff\xff\xff\x0f\x00")[4:],
    request_frame(ELECT_LEADERS, 1, 1, b"\x00" + struct.pack(">i", 0x7FFFFFFF))[4:],
    request_frame(ELECT_LEADERS, 2, 1, b"\x00\xff\xff\xff\xff\x0f")[4:],
    request_frame(ALTER_PARTITION_REASSIGNMENTS, 0, 1, struct.pack(">i", 100) + b"\xff\xff\xff\xff\x0f")[4:],
    request_frame(LIST_PARTITION_REASSIGNMENTS, 0, 1, struct.pack(">i", 100) + b"\xff\xff\xff\xff\x0f")[4:],
]


def test_a_huge_announced_length_closes_the_connection_without_aborting_the_process() -> None:
    """Run in a child process: if kio's native reader were reached it would abort the interpreter, not fail."""
    assert_huge_lengths_close_in_a_child("tests.wire.test_admin_apis_fuzz", len(HUGE_LENGTHS))
