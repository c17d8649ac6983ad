"""Bad input to AlterConfigs (0–1) and IncrementalAlterConfigs (0–1, flexible v1): valid frames, mutated by
Hypothesis, are either answered or close the connection (`CloseConnection`), never another exception; a valid
frame is answered after each, so nothing is left wedged. The pattern of `test_describe_configs_fuzz`; the handler
runs the real rules (`admin.zk_admin_manager`) on whatever names, values and operation ids the mutation left."""

from __future__ import annotations

import asyncio
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from zkcontroller.admin.zk_admin_manager import (
    TOPIC_CONFIG_KEYS,
    ConfigApiError,
    InvalidConfigValue,
    UnexpectedConfigError,
    check_changes,
    prepare_incremental,
    validate_broker,
    validate_topic,
)
from zkcontroller.broker.config_helper import BROKER_CONFIG_DEFAULTS, BROKER_RESOURCE, TOPIC_RESOURCE
from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.protocol.wire import alter_configs as ac
from zkcontroller.protocol.wire.alter_configs import (
    ALTER_CONFIGS,
    APPEND,
    DELETE,
    INCREMENTAL_ALTER_CONFIGS,
    SET,
    AlterConfigsQuery,
    AlterResource,
    AlterResult,
    ConfigChange,
)

from .frame_fuzz import (
    assert_answered_after,
    assert_every_frame_answered,
    assert_huge_lengths_close_in_a_child,
    mutate,
)
from .frame_fuzz import handle as _handle
from .server_fixture import request_frame, seeded_apis

RESOURCES = [AlterResource(TOPIC_RESOURCE, "orders", (ConfigChange("min.insync.replicas", "2", SET),
                                                       ConfigChange("cleanup.policy", "compact", APPEND),
                                                       ConfigChange("retention.ms", None, DELETE))),
             AlterResource(BROKER_RESOURCE, "1", (ConfigChange("log.retention.ms", "100", SET),))]


def _frame(api_key: int, version: int, resources: list[AlterResource]) -> bytes:
    query = AlterConfigsQuery(resources, True, api_key == INCREMENTAL_ALTER_CONFIGS)
    return request_frame(api_key, version, 3, ac.encode_request(api_key, version, query))[4:]


LEGACY = [AlterResource(r.resource_type, r.resource_name, tuple(c for c in r.configs if c.op == SET))
          for r in RESOURCES]
VALID = [*(_frame(ALTER_CONFIGS, v, LEGACY) for v in (0, 1)),
         *(_frame(INCREMENTAL_ALTER_CONFIGS, v, RESOURCES) for v in (0, 1))]


async def _alter(query: AlterConfigsQuery) -> list[AlterResult]:
    results = []
    for r in query.resources:
        try:
            check_changes(r.configs, incremental=query.incremental)
            if r.resource_type == TOPIC_RESOURCE:
                validate_topic(prepare_incremental(r.configs, {"retention.ms": "5"}, TOPIC_CONFIG_KEYS))
            else:
                validate_broker(prepare_incremental(r.configs, {}, BROKER_CONFIG_DEFAULTS), per_broker=True)
            results.append(AlterResult(r.resource_type, r.resource_name))
        except ConfigApiError as e:
            results.append(AlterResult(r.resource_type, r.resource_name, e.error, e.message))
        except InvalidConfigValue as e:
            results.append(AlterResult(r.resource_type, r.resource_name, 42, e.wrapped(r.resource_type,
                                                                                       r.resource_name)))
        except UnexpectedConfigError:
            results.append(AlterResult(r.resource_type, r.resource_name, -1))
    return results


def _apis() -> KafkaApis:
    return seeded_apis(alter_configs=_alter)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid frame with 1–4 flips, truncations, insertions or planted lengths after its header."""
    return mutate(draw, VALID)


@settings(max_examples=400, deadline=None)
@given(mutated())
def test_mutated_frames_are_answered_or_close_the_connection(payload: bytes) -> None:
    asyncio.run(assert_answered_after(_apis, payload, VALID[3]))


async def test_every_valid_frame_is_answered() -> None:
    await assert_every_frame_answered(_apis(), VALID)


async def test_nulls_where_the_schema_forbids_them_close_the_connection() -> None:
    apis = _apis()
    null_resources = request_frame(ALTER_CONFIGS, 1, 3, struct.pack(">i", -1) + b"\x00")[4:]
    null_name = request_frame(INCREMENTAL_ALTER_CONFIGS, 0, 3, struct.pack(">ibhi", 1, 2, -1, 0) + b"\x00")[4:]
    for payload in (null_resources, null_name):
        try:
            await apis.handle(payload)
        except CloseConnection:
            pass
        else:
            raise AssertionError(f"answered {payload.hex()}")
    null_value = request_frame(ALTER_CONFIGS, 0, 3, struct.pack(">ibh", 1, 2, 1) + b"t" + struct.pack(">ih", 1, 1)
                               + b"k" + struct.pack(">h", -1) + b"\x00")
    assert await _handle(apis, null_value[4:]) is not None


HUGE_LENGTHS = [
    request_frame(ALTER_CONFIGS, 1, 1, struct.pack(">i", 0x7FFFFFFF))[4:],
    request_frame(INCREMENTAL_ALTER_CONFIGS, 0, 1, struct.pack(">ibh", 1, 2, 0x7FFF))[4:],
    request_frame(ALTER_CONFIGS, 0, 1, struct.pack(">ibh", 1, 2, 1) + b"t" + struct.pack(">i", 0x7FFFFFFF))[4:],
]


def test_a_huge_announced_length_closes_the_connection_without_aborting_the_process() -> None:
    assert_huge_lengths_close_in_a_child("tests.wire.test_alter_configs_fuzz", len(HUGE_LENGTHS))
