"""`parse_json` reads a znode as Kafka 2.8.2's ``Json.parseBytes`` (Jackson 2.10's ``ObjectMapper.readTree``,
``FAIL_ON_TRAILING_TOKENS`` off) does: the first complete value, whatever follows; Jackson's two looks past a
top-level number or literal; a UTF-8 byte order mark skipped; NaN/Infinity and invalid JSON still refused."""

from __future__ import annotations

from typing import Any

import pytest

from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.zk.errors import UnparseableZnodeError
from zkcontroller.zk.json_fields import parse_json
from zkcontroller.zk.znodes.config import ConfigEntityZNode
from zkcontroller.zk.znodes.topics import TopicZNode

PATH = "/config/topics/t"


@pytest.mark.parametrize(("data", "expected"), [
    (b'{"version":1,"config":{}}garbage', {"version": 1, "config": {}}),
    (b'{"a":1}}', {"a": 1}),
    (b'{"a":1} {"b":2}', {"a": 1}),
    (b"[1,2,3]+4", [1, 2, 3]),  # jackson-databind#3999
    (b"1 2", 1),  # jackson-core#808
    (b"1\nx", 1),
    (b"-1.5e3\tjunk", -1500.0),
    (b'"a"b', "a"),
    (b"true]", True),
    (b"null}", None),
    (b"false$", False),  # '$' is below '0': Jackson does not check it
    (b"true\xc2\xa0", True),  # U+00A0 does not continue an identifier
    (b'{"a":1}NaN', {"a": 1}),  # never read
    (b'{"a":1}\xff\xfe', {"a": 1}),  # bytes that are not UTF-8, after the value: never read
    (b'{"a":"\xc3\xa9"}', {"a": "\u00e9"}),
    (b' \r\n\t{"a":1}', {"a": 1}),
    (b'\xef\xbb\xbf{"a":1}', {"a": 1}),
])
def test_the_first_complete_value_is_read(data: bytes, expected: Any) -> None:
    assert parse_json(data, PATH) == expected


@pytest.mark.parametrize("data", [
    pytest.param(b"12x", id="number-then-letter"),
    pytest.param(b"12,", id="number-then-comma"),
    pytest.param(b"01", id="leading-zero"),
    pytest.param(b"1.", id="no-fraction-digit"),
    pytest.param(b"12\xff", id="number-then-not-utf8"),
    pytest.param(b"truex", id="literal-then-letter"),
    pytest.param(b"null0", id="literal-then-digit"),
    pytest.param(b"false_", id="literal-then-underscore"),
    pytest.param(b"true\xc3\xa9", id="literal-then-non-ascii-letter"),
    pytest.param(b"true\xe2\x82\xac", id="literal-then-currency"),
    pytest.param(b"true\xff", id="literal-then-not-utf8"),
    pytest.param(b'{"a":"\xff"}', id="not-utf8-inside"),
    pytest.param(b'{"a":1', id="incomplete"),
    pytest.param(b'{"a":1,}', id="trailing-comma"),
    pytest.param(b"NaN", id="nan"),
    pytest.param(b'{"a":-Infinity}garbage', id="infinity-inside"),
    pytest.param(b"", id="empty"),
    pytest.param(b"   ", id="only-whitespace"),
    pytest.param(b"garbage", id="garbage"),
    pytest.param(b"[" * 100_000, id="too-deep"),
])
def test_what_jackson_refuses_is_refused_naming_the_znode(data: bytes) -> None:
    with pytest.raises(UnparseableZnodeError) as raised:
        parse_json(data, PATH)
    assert raised.value.path == PATH and "invalid JSON" in raised.value.reason


def test_an_integer_past_pythons_length_limit_is_read_as_jacksons_biginteger() -> None:
    (value,) = parse_json(b"[" + b"1" * 5000 + b"]", PATH)
    assert str(value) == "1" * 5000 and value > 2**63  # its text kept; its value only past any Long


def test_the_error_names_the_character_after_a_top_level_number() -> None:
    with pytest.raises(UnparseableZnodeError, match=r"unexpected 'x' after the value at char 2"):
        parse_json(b"12x", PATH)


def test_znode_decoders_read_trailing_content_as_kafka_does() -> None:
    assert ConfigEntityZNode.decode(b'{"version":1,"config":{"retention.ms":"1"}}\x00junk', PATH) == {
        "retention.ms": "1"}
    topic = TopicZNode.decode(b'{"version":2,"partitions":{"0":[1,2]}}\n{"version":2}', "/brokers/topics/t")
    assert topic.assignment == {TopicPartition("t", 0): ReplicaAssignment((1, 2))}
