"""The generic codec against the 2.8 table: every message at every version round-trips any value the schema
allows; fixed byte layouts from Kafka's rules; malformed input fails with WireFormatError only."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zkcontroller.protocol.wire import codec
from zkcontroller.protocol.wire.codec import WireFormatError
from zkcontroller.protocol.wire.messages import FETCH, INTER_BROKER_APIS, UPDATE_METADATA

from .strategies import message_and_value

SPECS = [m for api in INTER_BROKER_APIS.values() for m in (api.request, api.response)]


@settings(max_examples=400, deadline=None)
@given(message_and_value(SPECS))
def test_every_message_round_trips_at_every_version(case):
    spec, version, value = case
    assert codec.decode(spec, version, codec.encode(spec, version, value)) == value


@settings(max_examples=300, deadline=None)
@given(message_and_value(SPECS), st.data())
def test_truncated_bodies_fail_cleanly(case, data):
    spec, version, value = case
    body = codec.encode(spec, version, value)
    cut = data.draw(st.integers(0, max(0, len(body) - 1)))
    if cut == len(body):
        return
    with pytest.raises(WireFormatError):
        codec.decode(spec, version, body[:cut])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SPECS), st.data(), st.binary(max_size=64))
def test_arbitrary_bytes_decode_or_raise_wire_format_error(spec, data, junk):
    version = data.draw(st.integers(spec.min_version, spec.max_version))
    try:
        value = codec.decode(spec, version, junk)
    except WireFormatError:
        return
    assert codec.decode(spec, version, codec.encode(spec, version, value)) == value  # what it read is well-formed


def test_update_metadata_v7_layout_is_kafkas():
    """Flexible v7: compact lengths (+1), uuid of 16 bytes, a tagged-field byte closing every struct."""
    body = codec.encode(UPDATE_METADATA.request, 7, {
        "controller_id": 1, "controller_epoch": 2, "broker_epoch": 3,
        "topic_states": [{"topic_name": "t", "topic_id": bytes(range(16)), "partition_states": []}],
        "live_brokers": [],
    })
    assert body == (b"\x00\x00\x00\x01" b"\x00\x00\x00\x02" b"\x00\x00\x00\x00\x00\x00\x00\x03"
                    b"\x02" b"\x02t" + bytes(range(16)) + b"\x01" b"\x00"  # one topic, no partitions, no tags
                    b"\x01"  # no live brokers
                    b"\x00")


def test_update_metadata_v0_layout_is_kafkas():
    body = codec.encode(UPDATE_METADATA.request, 0, {
        "controller_id": 1, "controller_epoch": 2,
        "ungrouped_partition_states": [],
        "live_brokers": [{"id": 5, "v0_host": "h", "v0_port": 9092}],
    })
    assert body == (b"\x00\x00\x00\x01\x00\x00\x00\x02" b"\x00\x00\x00\x00"
                    b"\x00\x00\x00\x01" b"\x00\x00\x00\x05" b"\x00\x01h" b"\x00\x00\x23\x84")


def test_tagged_fields_left_out_at_default_and_read_back():
    spec = FETCH.response
    part = {"partition": 0, "error_code": 0, "high_watermark": 5, "record_set": None,
            "current_leader": {"leader_id": 2, "leader_epoch": 7}}
    value = {"responses": [{"topic": "t", "partition_responses": [part]}]}
    decoded = codec.decode(spec, 12, codec.encode(spec, 12, value))
    got = decoded["responses"][0]["partition_responses"][0]
    assert got["current_leader"] == {"leader_id": 2, "leader_epoch": 7}
    assert got["diverging_epoch"] == {"epoch": -1, "end_offset": -1}
    with_default = codec.encode(spec, 12, {"responses": [{"topic": "t", "partition_responses": [
        {**part, "current_leader": {"leader_id": -1, "leader_epoch": -1}}]}]})
    assert len(with_default) < len(codec.encode(spec, 12, value))


def test_unknown_tags_are_skipped():
    spec = UPDATE_METADATA.response
    body = b"\x00\x00" + b"\x01" + b"\x09\x02ab"  # error 0; one tagged field, tag 9, two bytes
    assert codec.decode(spec, 7, body) == {"error_code": 0}


def test_huge_array_count_is_refused_without_allocating():
    spec = UPDATE_METADATA.request
    body = b"\x00\x00\x00\x01\x00\x00\x00\x02" + b"\x7f\xff\xff\xff"
    with pytest.raises(WireFormatError, match="ungrouped_partition_states: length 2147483647 exceeds"):
        codec.decode(spec, 0, body)


def test_null_where_not_nullable_is_malformed():
    with pytest.raises(WireFormatError, match="null"):
        codec.decode(UPDATE_METADATA.request, 0, b"\x00\x00\x00\x01\x00\x00\x00\x02\xff\xff\xff\xff")


def test_version_outside_the_schema_is_refused():
    with pytest.raises(ValueError, match="no version 8"):
        codec.encode(UPDATE_METADATA.request, 8, {})
