"""`parse_json` reads the first complete JSON value of any bytes and ignores what follows it, as Jackson's
``readTree`` does (Kafka 2.8.2's ``Json.parseBytes``), and otherwise fails only with `UnparseableZnodeError`."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from zkcontroller.zk.errors import UnparseableZnodeError
from zkcontroller.zk.json_fields import dumps, parse_json

PATH = "/brokers/topics/t"

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                     st.text(max_size=8))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(st.text(max_size=4), inner, max_size=4)),
                       max_leaves=12)
_WHITESPACE = st.text(alphabet=" \t\r\n", max_size=3)


@settings(max_examples=300)
@given(value=_VALUES, before=_WHITESPACE, gap=st.sampled_from(" \t\r\n"), after=st.binary(max_size=16))
def test_a_value_then_whitespace_then_anything_reads_as_the_value(value: Any, before: str, gap: str,
                                                                  after: bytes) -> None:
    data = before.encode() + dumps(value) + gap.encode() + after
    assert parse_json(data, PATH) == value


@settings(max_examples=300)
@given(value=st.one_of(st.text(max_size=8), st.lists(_SCALARS, max_size=3),
                       st.dictionaries(st.text(max_size=4), _SCALARS, max_size=3)), after=st.binary(max_size=16))
def test_a_string_array_or_object_ends_where_it_closes(value: Any, after: bytes) -> None:
    assert parse_json(dumps(value) + after, PATH) == value


@settings(max_examples=300)
@given(value=_VALUES)
def test_a_whole_document_reads_as_json_loads_reads_it(value: Any) -> None:
    data = json.dumps(value, indent=1).encode()
    assert parse_json(data, PATH) == json.loads(data)


@settings(max_examples=200)
@given(prefix=st.dictionaries(st.text(max_size=4), _SCALARS, max_size=3),
       constant=st.sampled_from(["NaN", "Infinity", "-Infinity"]), after=st.binary(max_size=8))
def test_nan_and_infinity_in_the_value_are_refused(prefix: dict[str, Any], constant: str, after: bytes) -> None:
    data = dumps(prefix)[:-1] + (b"," if prefix else b"") + b'"k":' + constant.encode() + b"}" + after
    try:
        parse_json(data, PATH)
    except UnparseableZnodeError as e:
        assert e.path == PATH
    else:
        raise AssertionError(f"{data!r} was read")


@settings(max_examples=500)
@given(data=st.one_of(st.binary(max_size=40), _VALUES.map(dumps).flatmap(
    lambda doc: st.integers(0, len(doc)).map(lambda cut: doc[:cut] + doc[cut + 1:]))))
def test_any_bytes_give_a_value_or_an_error_naming_the_znode(data: bytes) -> None:
    try:
        parse_json(data, PATH)
    except UnparseableZnodeError as e:
        assert e.path == PATH
