"""`protocol.error_names`: the one table of Kafka's error names, used by the broker's produce path (its log lines,
the simulator's producer traces) and the TCP transport (ApiVersions errors). Before it, produce's own table gave a
bare number for codes it did not list (INVALID_TIMESTAMP was "32") and the transport named codes by kio's table,
a newer Kafka's."""

from __future__ import annotations

import pytest
from kio.schema.errors import ErrorCode

from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.error_names import BEYOND_2_8, KAFKA_2_8_ERROR_NAMES, error_name


def test_every_code_of_kafka_2_8_is_named_once() -> None:
    assert sorted(KAFKA_2_8_ERROR_NAMES) == list(range(-1, 105))  # UNKNOWN_SERVER_ERROR .. INCONSISTENT_CLUSTER_ID
    assert len(set(KAFKA_2_8_ERROR_NAMES.values())) == len(KAFKA_2_8_ERROR_NAMES)


@pytest.mark.parametrize(("code", "name"), [
    (-1, "UNKNOWN_SERVER_ERROR"), (0, "NONE"), (6, "NOT_LEADER_OR_FOLLOWER"), (19, "NOT_ENOUGH_REPLICAS"),
    (20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND"), (21, "INVALID_REQUIRED_ACKS"), (32, "INVALID_TIMESTAMP"),
    (45, "OUT_OF_ORDER_SEQUENCE_NUMBER"), (47, "INVALID_PRODUCER_EPOCH"), (76, "UNSUPPORTED_COMPRESSION_TYPE"),
    (87, "INVALID_RECORD"), (99, "POSITION_OUT_OF_RANGE"), (104, "INCONSISTENT_CLUSTER_ID"),
    (107, "INELIGIBLE_REPLICA"),
])
def test_names_are_kafkas(code: int, name: str) -> None:
    assert error_name(code) == name


def test_the_table_agrees_with_our_enum_and_with_kio() -> None:
    """Two other spellings of the same constants: our `Errors` (a subset, plus INELIGIBLE_REPLICA beyond 2.8) and
    kio's table (a newer Kafka's: the same names up to 104, more codes after)."""
    for member in Errors:
        assert error_name(member) == member.name
    for code, name in KAFKA_2_8_ERROR_NAMES.items():
        assert ErrorCode(code).name.upper() == name
    for code, name in BEYOND_2_8.items():
        assert ErrorCode(code).name.upper() == name


@pytest.mark.parametrize("code", [105, 133, 1000, -2])
def test_an_unknown_code_is_kafkas_fallback_with_the_code_kept(code: int) -> None:
    # Kafka 2.8's Errors.forCode reads a code it does not know as UNKNOWN_SERVER_ERROR
    assert error_name(code) == f"UNKNOWN_SERVER_ERROR (unknown error code {code})"
