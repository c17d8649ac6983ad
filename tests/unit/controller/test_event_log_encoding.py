"""The event log's fast encoder writes exactly the text `json` wrote, for every record the schema allows."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from zkcontroller.controller.event_log import EventLog, encode_record

scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.text(max_size=12))
values = st.one_of(scalars, st.lists(st.one_of(st.integers(-(2**40), 2**40), st.text(max_size=6)), max_size=4))
records = st.dictionaries(st.text(max_size=10), values, max_size=8)


@given(records)
def test_same_text_as_json(record: dict) -> None:
    expected = json.dumps(record, separators=(",", ":"))
    assert encode_record(record) == expected
    assert encode_record(record).isascii()


def test_non_ascii_and_huge_integers_take_the_json_path() -> None:
    record = {"type": "topic_created", "topic": "café", "big": 2**65, "isr": [1, 2]}
    assert encode_record(record) == (
        '{"type":"topic_created","topic":"caf\\u00e9","big":36893488147419103232,"isr":[1,2]}')


def test_event_log_lines_parse_back() -> None:
    lines: list[str] = []
    EventLog("c1", lambda: 42, lines.append).emit("isr_change", topic="t", partition=0, isr=[1, 2], leader=None)
    assert [json.loads(line) for line in lines] == [
        {"schema_version": json.loads(lines[0])["schema_version"], "type": "isr_change", "ts_ms": 42,
         "cluster": "c1", "topic": "t", "partition": 0, "isr": [1, 2]}]


def test_del_is_escaped_as_json_escapes_it() -> None:
    """DEL is ASCII: the fast path took orjson's raw byte, where `json` writes \\u007f (hypothesis found it)."""
    record = {"\x7f": None, "topic": "a\x7fb"}
    assert encode_record(record) == json.dumps(record, separators=(",", ":")) == '{"\\u007f":null,"topic":"a\\u007fb"}'
