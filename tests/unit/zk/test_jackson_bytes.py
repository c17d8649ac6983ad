"""Every znode is written as Kafka 2.8's ``Json.encodeAsBytes`` writes it: Jackson 2.10.5's ``UTF8JsonGenerator``.

The expected bytes come from Jackson, not from our encoder: its source (``UTF8JsonGenerator._writeStringSegment2``:
``\\"`` ``\\\\`` ``\\b`` ``\\t`` ``\\f`` ``\\n`` ``\\r`` short, other control characters by
``_writeGenericEscape`` as ``\\u00XX`` from ``HEX_CHARS``, ``CharTypes``' ``"0123456789ABCDEF"``; any other
character up to U+FFFF raw in UTF-8, except a UTF-16 surrogate, which ``_outputMultiByteChar`` writes as a
``\\uXXXX`` escape, so a character outside the BMP is two escapes), and its test suite (2.10.5's
``failing/Surrogate223Test.testSurrogatesByteBacked``: U+1F602 takes "2 x 6 byte JSON escape"). The strings below
were also written by jackson-core's own generator (2.14.1, the same code path, its defaults unchanged) on JDK 17,
which printed exactly these bytes.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkcontroller.zk.json_fields import dumps, jackson_dumps, parse_json
from zkcontroller.zk.znodes.config import ConfigEntityZNode

JACKSON_WRITES = [
    ("a\x1fb", b'"a\\u001Fb"'),  # upper-case hex; Python's encoder writes \u001f
    ("\x00\x01\x0b\x7f", b'"\\u0000\\u0001\\u000B\x7f"'),  # DEL is not a JSON control character
    ('"\\/\b\t\n\f\r', b'"\\"\\\\/\\b\\t\\n\\f\\r"'),  # the short escapes; '/' is left alone
    ("caf\u00e9 \u0085\u00a0\u2028\uffff", "\"caf\u00e9 \u0085\u00a0\u2028\uffff\"".encode()),  # BMP: raw UTF-8
    ("\U0001F600", b'"\\uD83D\\uDE00"'),  # outside the BMP: Java's two surrogates, escaped
    ("x\U0001F602y", b'"x\\uD83D\\uDE02y"'),
    ("\ud800", b'"\\uD800"'),  # a lone surrogate (read from "\ud800" in a znode): escaped, not an error
    ("a\udc00b\udbff", b'"a\\uDC00b\\uDBFF"'),
]


@pytest.mark.parametrize(("text", "jackson"), JACKSON_WRITES)
def test_a_string_is_written_as_jackson_writes_it(text: str, jackson: bytes) -> None:
    assert dumps(text) == jackson
    assert dumps({text: [text]}) == b"{" + jackson + b":[" + jackson + b"]}"  # keys take the same path


def test_a_config_read_back_with_an_escaped_surrogate_is_written_back_as_jackson_writes_it() -> None:
    """Kafka reads ``"\\ud800"`` into a Java string holding the lone surrogate and writes it back escaped;
    Python's UTF-8 encoding raised UnicodeEncodeError on the rewrite."""
    path = "/config/topics/t"
    config = ConfigEntityZNode.decode(b'{"version":1,"config":{"a":"\\ud800","b":"\\u001f\\ud83d\\ude00"}}', path)
    assert ConfigEntityZNode.encode(config) == b'{"version":1,"config":{"a":"\\uD800","b":"\\u001F\\uD83D\\uDE00"}}'


@pytest.mark.parametrize(("value", "jackson"), [
    (1e-05, b"1.0E-5"),  # Double.toString, where Python writes 1e-05
    ([1.5, 1e16, 10000000.0], b"[1.5,1.0E16,1.0E7]"),
    ({"a": -0.001}, b'{"a":-0.001}'),
    ({"a": float("inf")}, b'{"a":"Infinity"}'),  # QUOTE_NON_NUMERIC_NUMBERS
    ({"n": 10**5000}, b'{"n":1' + b"0" * 5000 + b"}"),  # past Python's str(int) limit
])
def test_numbers_python_writes_otherwise_take_javas_text(value: object, jackson: bytes) -> None:
    assert dumps(value) == jackson


_JSON_TEXT = st.text(st.characters(codec=None, blacklist_categories=()), max_size=8)


def _json_values(floats: st.SearchStrategy[float]) -> st.SearchStrategy[object]:
    return st.recursive(
        st.none() | st.booleans() | st.integers(-(2**70), 2**70) | floats | _JSON_TEXT,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_JSON_TEXT | st.integers(), inner, max_size=4),
        max_leaves=12)


@given(_json_values(st.floats(allow_nan=False)))
def test_the_fast_path_writes_what_the_jackson_writer_writes(value: object) -> None:
    """`dumps` keeps Python's C encoder's output only where it is Jackson's: the slow writer is the reference."""
    assert dumps(value) == jackson_dumps(value)


@given(_json_values(st.floats(allow_nan=False, allow_infinity=False)))  # Infinity is written as a string
def test_what_is_written_reads_back(value: object) -> None:
    written = parse_json(dumps(value), "/x")
    assert dumps(written) == dumps(_keys_as_text(value))


def _keys_as_text(value: object) -> object:
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): _keys_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_keys_as_text(v) for v in value]
    return value
