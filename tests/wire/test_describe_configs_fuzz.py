"""Bad input to DescribeConfigs (0–3): valid frames, mutated by Hypothesis, are either answered or close the
connection (`CloseConnection`), never another exception; a valid frame is answered after each, so nothing is
left wedged. The pattern of `test_admin_apis_fuzz`; the handler builds real entries (`broker.config_helper`) for
whatever names and keys the mutation left."""

from __future__ import annotations

import asyncio
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from zkcontroller.broker.config_helper import BROKER_RESOURCE, TOPIC_RESOURCE, describe_broker, describe_topic
from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.broker.log_config import LogDefaults
from zkcontroller.protocol.wire import describe_configs as dc
from zkcontroller.protocol.wire.describe_configs import ConfigResourceQuery, DescribeConfigsQuery

from .frame_fuzz import (
    assert_answered_after,
    assert_every_frame_answered,
    assert_huge_lengths_close_in_a_child,
    mutate,
)
from .frame_fuzz import handle as _handle
from .server_fixture import request_frame, seeded_apis

DEFAULTS = LogDefaults.from_properties({"min.insync.replicas": "2"})


def _frame(version: int, query: DescribeConfigsQuery) -> bytes:
    return request_frame(dc.DESCRIBE_CONFIGS, version, 3, dc.encode_request(version, query))[4:]


VALID = [_frame(v, DescribeConfigsQuery([ConfigResourceQuery(TOPIC_RESOURCE, "orders", None),
                                         ConfigResourceQuery(TOPIC_RESOURCE, "orders", ("retention.ms", "x")),
                                         ConfigResourceQuery(BROKER_RESOURCE, "1", ())], True, True))
         for v in range(4)]


async def _describe(query: DescribeConfigsQuery) -> list[dc.ConfigResourceResult]:
    results = []
    for r in query.resources:
        if r.resource_type == TOPIC_RESOURCE:
            entries = describe_topic(DEFAULTS, {"retention.ms": "5", r.resource_name: "v"},
                                     include_synonyms=query.include_synonyms, keys=r.keys)
        else:
            entries = describe_broker({"broker.id": "1", r.resource_name: "v"},
                                      include_synonyms=query.include_synonyms, keys=r.keys)
        results.append(dc.ConfigResourceResult(r.resource_type, r.resource_name, configs=tuple(entries)))
    return results


def _apis() -> KafkaApis:
    return seeded_apis(describe_configs=_describe)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid frame with 1–4 flips, truncations, insertions or planted lengths after its header."""
    return mutate(draw, VALID)


@settings(max_examples=400, deadline=None)
@given(mutated())
def test_mutated_frames_are_answered_or_close_the_connection(payload: bytes) -> None:
    asyncio.run(assert_answered_after(_apis, payload, VALID[1]))


async def test_every_valid_frame_is_answered() -> None:
    await assert_every_frame_answered(_apis(), VALID)


async def test_nulls_where_the_schema_forbids_them_close_the_connection_and_null_keys_mean_all() -> None:
    apis = _apis()
    null_resources = request_frame(dc.DESCRIBE_CONFIGS, 1, 3, struct.pack(">i", -1) + b"\x00")[4:]
    null_name = request_frame(dc.DESCRIBE_CONFIGS, 0, 3, struct.pack(">ibhi", 1, 2, -1, -1))[4:]
    for payload in (null_resources, null_name):
        try:
            await apis.handle(payload)
        except CloseConnection:
            pass
        else:
            raise AssertionError(f"answered {payload.hex()}")
    null_keys = request_frame(dc.DESCRIBE_CONFIGS, 0, 3, struct.pack(">ibh", 1, 2, 1) + b"t" + struct.pack(">i", -1))
    assert await _handle(apis, null_keys[4:]) is not None


HUGE_LENGTHS = [
    request_frame(dc.DESCRIBE_CONFIGS, 1, 1, struct.pack(">i", 0x7FFFFFFF))[4:],
    request_frame(dc.DESCRIBE_CONFIGS, 3, 1, struct.pack(">ibh", 1, 2, 0x7FFF))[4:],
    request_frame(dc.DESCRIBE_CONFIGS, 2, 1, struct.pack(">ibh", 1, 2, 1) + b"t" + struct.pack(">i", 0x7FFFFFFF))[4:],
]


def test_a_huge_announced_length_closes_the_connection_without_aborting_the_process() -> None:
    assert_huge_lengths_close_in_a_child("tests.wire.test_describe_configs_fuzz", len(HUGE_LENGTHS))
