"""Strict, typed access to the JSON Kafka stores in znodes.

Kafka reads znodes with Jackson and ``DecodeJson``: an ``Int`` must be a JSON integer that fits in 32 bits
(not a boolean, float or string), a ``String`` must be a JSON string, and key order never matters. Every
failure here becomes a `ZnodeDecodeError` naming the znode and the offending field.

Parsing follows ``Json.parseBytes`` (Jackson 2.10's ``ObjectMapper.readTree`` with its defaults): the first
complete JSON value is the znode's content and whatever follows it is never read (``FAIL_ON_TRAILING_TOKENS`` is
off), so ``{"version":1}garbage`` reads as ``{"version":1}``. Jackson still looks one character past a value at
the top level in two cases, and so does `parse_json`: a number must be followed by whitespace (or the end), and
``true``/``false``/``null`` by no character that may continue a Java identifier. A UTF-8 byte order mark is
skipped, as Jackson's encoding detection does.

Writing (`dumps`) mirrors Jackson's compact output byte for byte: no spaces, UTF-8, BMP characters left
unescaped, control characters and UTF-16 surrogates escaped in upper-case hex.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterator, Mapping
from decimal import Decimal
from itertools import chain
from typing import Any, NoReturn

from zkcontroller.java_double import java_double
from zkcontroller.zk.errors import UnparseableZnodeError, ZnodeDecodeError, require_data

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)

_FLOAT_TOKEN = re.compile(r"(?:^|[:,\[])-?[0-9]+(?:\.|e[-+])")
"""A number with a fraction or an exponent (``repr``'s ``1e-05``, ``1e+16``) where `_ENCODER` writes a value, or
a string holding such text (which only costs the slower path): Java writes a ``Double`` as ``Double.toString``."""
_SURROGATE_OR_ASTRAL = re.compile(r"[\ud800-\udfff\U00010000-\U0010ffff]")
"""What Jackson escapes and Python's encoder writes raw: surrogates (Java's halves of a character outside the BMP,
or a lone one, which Python cannot encode to UTF-8)."""


def dumps(value: Any) -> bytes:
    """Encode as Kafka's ``Json.encodeAsBytes`` (Jackson 2.10's ``UTF8JsonGenerator``) does, byte for byte but for
    map key order, which is the caller's dict's (`scala_maps` gives the partition state, topic and broker znodes
    Kafka's): every znode Kafka writes as JSON is written here.

    Python's C encoder writes the same bytes as Jackson for the common content (ASCII text, integers, booleans,
    null; also other BMP text): that output is kept when nothing in it can differ, found by substring tests in C
    (``str.isascii`` is constant-time) and a regex only when a ``.``, ``e-`` or ``e+`` is there; otherwise the
    value is written by `jackson_dumps` (a control character's ``\\u00XX``, in upper-case hex; a character
    outside the BMP or a lone surrogate as ``\\uXXXX`` escapes; a float in Java's layout; an integer past
    Python's digit limit). Map keys are ``str`` or ``int``, as in every znode."""
    try:
        text = _ENCODER.encode(value)
    except ValueError:  # an integer past Python's digit limit, a float not finite: Jackson writes both
        return jackson_dumps(value)
    if "\\u" in text:  # an escape Python writes in lower case
        return jackson_dumps(value)
    if ("." in text or "e-" in text or "e+" in text) and _FLOAT_TOKEN.search(text) is not None:
        return jackson_dumps(value)
    if text.isascii():
        return text.encode("ascii")
    if _SURROGATE_OR_ASTRAL.search(text) is None:
        return text.encode("utf-8")
    return jackson_dumps(value)


_PLAIN_JSON_TEXT = re.compile(r'[^"\\\x00-\x1f\ud800-\udfff\U00010000-\U0010ffff]*')
"""Text Jackson's ``UTF8JsonGenerator`` writes as is (UTF-8): no quote, backslash, control or surrogate character,
nothing outside the BMP (Java holds that as a surrogate pair)."""
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\f": "\\f", "\n": "\\n",
                  "\r": "\\r"}


def _jackson_string(text: str) -> str:
    """A string as Jackson 2.10's ``UTF8JsonGenerator`` writes it: ``\\"`` ``\\\\`` ``\\b`` ``\\t`` ``\\f``
    ``\\n`` ``\\r``, other control characters as ``\\u00XX``, and every UTF-16 surrogate (a lone one, or either
    half of a character outside the BMP) as ``\\uXXXX``, hex upper-case (``_outputMultiByteChar``); the rest as
    UTF-8. Python's encoder writes lower-case hex and raw astral characters, and a lone surrogate cannot be
    encoded to UTF-8 at all."""
    if _PLAIN_JSON_TEXT.fullmatch(text):
        return f'"{text}"'
    out = ['"']
    for char in text:
        code = ord(char)
        if char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04X}")
        elif code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04X}\\u{0xDC00 + (code & 0x3FF):04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def java_integer_text(value: int) -> str:
    """An integer's decimal digits, as Java's ``BigInteger.toString`` writes them, of any length: `JsonBigInteger`'s
    text as read, else ``Decimal`` (not subject to Python's 4,300-digit ``str(int)`` limit, which is process-wide
    and must stay as it is)."""
    if isinstance(value, JsonBigInteger):
        return value.text
    if -_STR_SAFE < value < _STR_SAFE:
        return int.__repr__(value)
    return str(Decimal(value))


def jackson_dumps(value: Any) -> bytes:
    """Encode values Jackson bound into ``Object`` (``Map``, ``List``, ``String``, ``Integer``/``Long``/
    ``BigInteger``, ``Double``, ``Boolean``, null) as Kafka's ``Json.encodeAsBytes`` writes them back: compact,
    UTF-8, strings as `_jackson_string`, integers of any length, a ``Double`` as `java_double`, an infinite one
    quoted (``QUOTE_NON_NUMERIC_NUMBERS`` is on by default: ``"Infinity"``). `dumps` writes the same bytes, through
    Python's C encoder when it can: this one is its slow path, and for values bound from arbitrary JSON."""
    out: list[str] = []
    _jackson_write(value, out)
    return "".join(out).encode("utf-8")


def _jackson_write(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True or value is False:
        out.append("true" if value else "false")
    elif isinstance(value, str):
        out.append(_jackson_string(value))
    elif isinstance(value, int):
        out.append(java_integer_text(value))
    elif isinstance(value, float):
        text = java_double(value)
        out.append(text if math.isfinite(value) else f'"{text}"')
    elif isinstance(value, Mapping):
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            out.append("," if i else "")
            out.append(_jackson_string(_jackson_key(key)))
            out.append(":")
            _jackson_write(item, out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            out.append("," if i else "")
            _jackson_write(item, out)
        out.append("]")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _jackson_key(key: Any) -> str:
    """A map key as Jackson's key serializers write it (``String``, ``Boolean``/``Integer``/``Long``'s
    ``toString``); anything else is refused, as Python's encoder would write it (``None`` as ``null``) where
    Jackson fails or writes other text."""
    if isinstance(key, str):
        return key
    if key is True or key is False:
        return "true" if key else "false"
    if isinstance(key, int):
        return java_integer_text(key)
    raise TypeError(f"cannot write a {type(key).__name__} map key as JSON")


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"non-standard JSON constant {name}")


_INT_STR_DIGITS = 4300
"""Python's default ``int(str)``/``str(int)`` digit limit (``sys.get_int_max_str_digits``)."""


_STR_SAFE = 10 ** (_INT_STR_DIGITS - 1)
"""Integers of smaller magnitude have fewer digits than the limit: ``str`` takes them."""
_BIG_MAGNITUDE = 10 ** _INT_STR_DIGITS
"""The value a `JsonBigInteger` stands for: past any ``Long``, so every range check refuses it as Jackson's
``DecodeJson`` refuses a ``BigIntegerNode`` for an ``Int`` or ``Long`` field; its digits are never converted."""


class JsonBigInteger(int):
    """A JSON integer of more digits than Python's ``int(str)`` takes (Jackson reads it as a ``BigInteger``): its
    text as written, which ``str`` gives back, and as value a stand-in of its sign past any ``Long`` (converting a
    megabyte of digits cost about a second; no Kafka field takes such a number, so only its sign and text matter:
    the work is bounded by the digit count)."""

    text: str

    def __new__(cls, text: str) -> JsonBigInteger:
        sign = -1 if text.startswith("-") else 1
        value = super().__new__(cls, sign * _BIG_MAGNITUDE)
        value.text = text
        return value

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return self.text if not spec else int.__format__(self, spec)


def _int_of_any_length(text: str) -> int:
    """A JSON integer, past Python's 4300-digit ``int(str)`` limit too (`JsonBigInteger`)."""
    return int(text) if len(text) <= _INT_STR_DIGITS else JsonBigInteger(text)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
"""Built once: ``json.loads``/``json.dumps`` with any non-default argument build a new decoder/encoder per
call, which showed in profiles of reading 100k partition states."""
_LONG_INT_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_int_of_any_length)
"""Slower (a Python call per integer): used only when `_DECODER` refuses an integer's length."""

_BOM = b"\xef\xbb\xbf"
_LEADING_WS = re.compile(r"[ \t\n\r]*")
_ROOT_NUMBER_END = " \t\n\r"
"""What Jackson's ``_verifyRootSpace`` lets follow a number at the top level (else: end of input)."""
_JAVA_IDENTIFIER_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Sc", "Pc", "Nd", "Nl", "Mc", "Mn", "Cf"})


def _java_identifier_part(char: str) -> bool:
    """Java's ``Character.isJavaIdentifierPart`` (letters, digits, ``_``, currency, marks, ignorable controls)."""
    return 0x7F <= ord(char) <= 0x9F or unicodedata.category(char) in _JAVA_IDENTIFIER_CATEGORIES


def _literal_may_end_before(char: str) -> bool:
    """Whether Jackson ends ``true``/``false``/``null`` before ``char`` (``_matchToken``/``_checkMatchEnd``: only a
    character from ``0`` up, other than ``]`` and ``}``, is checked; Java sees a UTF-16 unit)."""
    code = ord(char)
    return code < 0x30 or char in "]}" or not _java_identifier_part(chr(code & 0xFFFF))


def _root_value_end_refused(value: Any, text: str, end: int, cut: bool) -> bool:
    """Whether Jackson refuses what follows a top-level value ending at ``end``: only numbers and literals are
    checked (a string, array or object ends where it closes). ``cut``: ``text`` stops before bytes that are not
    UTF-8, which Jackson refuses to read there."""
    if isinstance(value, dict | list | str):
        return False
    if end == len(text):
        return cut
    if isinstance(value, bool) or value is None:
        return not _literal_may_end_before(text[end])
    return text[end] not in _ROOT_NUMBER_END


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)
"""A JSON string, or an unclosed one running to the end of the text in the same match: a pattern that had to find
the closing quote started again at every escaped quote of an unclosed string (quadratic: a 1 MB node, hours)."""
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_OPENER = {"]": "[", "}": "{"}


def json_nesting(text: str) -> tuple[int, bool]:
    """How deep the brackets of ``text`` nest outside its strings, and whether each one closed is open, of the
    same kind, and all close: linear, no recursion (for the errors below). Only brackets are checked: other
    content that is not JSON, past the depth Python's decoder reads, goes unnoticed."""
    stack: list[str] = []
    depth = 0
    for bracket in _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)):
        if bracket in "[{":
            stack.append(bracket)
            depth = max(depth, len(stack))
        elif not stack or stack.pop() != _OPENER[bracket]:
            return depth, False
    return depth, not stack


_JSON_TOKEN = re.compile(
    r'[ \t\n\r]*(?:(?P<p>[\[\]{},:])|(?P<s>"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")'
    r"|(?P<v>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null))")


def first_json_value_error(text: str, start: int = 0) -> int | None:
    """Where the first JSON value of ``text`` stops being JSON (a char offset), or None if it is whole: iterative and
    linear, for content nested past the depth Python's recursive decoder reads."""
    stack: list[str] = []
    expect = "value"  # value | key_or_close | key | colon | comma_or_close | value_or_close
    pos = start
    while True:
        m = _JSON_TOKEN.match(text, pos)
        if m is None:
            return pos
        kind = "s" if m.group("s") is not None else "v" if m.group("v") is not None else m.group("p")
        if expect in ("value", "value_or_close"):
            if kind in ("[", "{"):
                stack.append(kind)
                expect = "value_or_close" if kind == "[" else "key_or_close"
            elif kind in ("s", "v"):
                expect = "comma_or_close"
            elif kind == "]" and expect == "value_or_close":
                stack.pop()
                expect = "comma_or_close"
            else:
                return m.start(m.lastgroup or 0)
        elif expect in ("key", "key_or_close"):
            if kind == "s":
                expect = "colon"
            elif kind == "}" and expect == "key_or_close":
                stack.pop()
                expect = "comma_or_close"
            else:
                return m.start(m.lastgroup or 0)
        elif expect == "colon":
            if kind != ":":
                return m.start(m.lastgroup or 0)
            expect = "value"
        else:  # comma_or_close
            if kind == "," and stack:
                expect = "value" if stack[-1] == "[" else "key"
            elif kind in ("]", "}") and stack and _OPENER[kind] == stack[-1]:
                stack.pop()
            else:
                return m.start(m.lastgroup or 0)
        pos = m.end()
        if expect == "comma_or_close" and not stack:
            return None


class JsonTooDeepError(UnparseableZnodeError):
    """JSON nested deeper than Python's decoder goes (it recurses, up to ``sys.getrecursionlimit()``, about 1,000
    levels). Jackson 2.10, Kafka 2.8's parser, has no depth limit (``StreamReadConstraints`` came in 2.15), so
    Kafka reads such a node: it is not "not JSON", and the readers of config nodes and notifications report it as
    a failure naming the node and the depth rather than reading it as no data."""

    def __init__(self, path: str, depth: int) -> None:
        self.depth = depth
        super().__init__(path, f"JSON nested {depth} levels deep, deeper than this parser reads (Python's recursion "
                               "limit); Kafka 2.8's Jackson has no depth limit")


def parse_json(data: bytes | None, path: str) -> Any:
    """Parse the first JSON value of ``data`` as Jackson's ``readTree`` does (standard JSON, no NaN/Infinity;
    trailing content ignored, see the module's docstring), or raise `UnparseableZnodeError` naming ``path``.
    Null data raises `NullZnodeDataError`: Jackson 2.10's ``readTree``/``readValue`` refuse a null array
    (IllegalArgumentException), which is no parse error."""
    data = require_data(data, path)
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    cut: UnicodeDecodeError | None = None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:  # Jackson decodes as it reads: bytes after the value are never looked at
        cut, text = e, data[:e.start].decode("utf-8")
    leading = _LEADING_WS.match(text)
    start = leading.end() if leading is not None else 0
    try:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError as e:
            if isinstance(e, json.JSONDecodeError) or "digits" not in str(e):  # not Python's integer length limit
                raise
            value, end = _LONG_INT_DECODER.raw_decode(text, start)
    except json.JSONDecodeError as e:
        reason = f"{e}" if cut is None else f"{e}, before {cut}"
        raise UnparseableZnodeError(path, f"invalid JSON ({reason})") from None
    except RecursionError:
        depth, balanced = json_nesting(text)
        if not balanced:  # no JSON to Jackson either (it fails at the end of the input)
            raise UnparseableZnodeError(path, f"invalid JSON (brackets nested {depth} levels deep, not all "
                                              "closed by their own kind)") from None
        error_at = first_json_value_error(text, start)
        if error_at is not None:  # not JSON to Jackson either: invalid, whatever its depth
            raise UnparseableZnodeError(path, f"invalid JSON (unexpected content at char {error_at}, "
                                              f"{depth} levels deep)") from None
        raise JsonTooDeepError(path, depth) from None
    except ValueError as e:
        raise UnparseableZnodeError(path, f"invalid JSON ({e})") from None
    if (end < len(text) or cut is not None) and _root_value_end_refused(value, text, end, cut is not None):
        reason = str(cut) if end == len(text) else f"unexpected {text[end]!r} after the value at char {end}"
        raise UnparseableZnodeError(path, f"invalid JSON ({reason})")
    return value


def holds_no_value(data: bytes) -> bool:
    """Whether ``data`` holds no JSON value at all: empty, or only whitespace (after a byte order mark).

    Jackson's ``readTree`` answers ``MissingNode`` there rather than failing, so ``Json.parseBytes`` gives
    ``Some(MissingNode)``, not ``None``: the ZkData decoders that read ``None`` (data that is not JSON) as empty
    call ``asJsonObject`` on it and throw (``Expected JSON object, received ``)."""
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    return not data.strip(b" \t\n\r")


def refuse_no_value(data: bytes, path: str) -> None:
    """Raise for data that holds no JSON value (`holds_no_value`), in the words of Kafka's failure there: the
    decoders that call ``asJsonObject`` on ``readTree``'s ``MissingNode`` throw ``Expected JSON object, received ``
    (not a parse error, which Python's decoder would report as "invalid JSON")."""
    if holds_no_value(data):
        raise ZnodeDecodeError(path, f"no JSON value ({len(data)} bytes of data): expected a JSON object")


def parse_object(data: bytes | None, path: str) -> JsonObject:
    """Parse a znode whose content must be a JSON object; empty data is refused as `refuse_no_value` words it,
    since every Kafka decoder of an object znode reaches ``asJsonObject`` (or ``readValue``) on it; null data
    raises `NullZnodeDataError` (`parse_json`)."""
    data = require_data(data, path)
    try:
        value = parse_json(data, path)
    except UnparseableZnodeError:
        refuse_no_value(data, path)
        raise
    if not isinstance(value, dict):
        raise ZnodeDecodeError(path, f"expected a JSON object, got {json_kind(value)}")
    return JsonObject(value, path)


def json_kind(value: Any) -> str:
    """The JSON type of a parsed value, as the error messages name it."""
    if value is None:
        return "null"
    if isinstance(value, JsonNumberText):  # `parse_json_as_written`'s
        return "number"
    if isinstance(value, JsonPairs):
        return "object"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def check_int(value: Any, path: str, where: str) -> int:
    """A JSON integer within Java's ``int`` range (booleans are not integers)."""
    if type(value) is int and INT32_MIN <= value <= INT32_MAX:  # the common case, checked in one test
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise ZnodeDecodeError(path, f"{where}: expected an integer, got {json_kind(value)}")
    if not INT32_MIN <= value <= INT32_MAX:
        raise ZnodeDecodeError(path, f"{where}: integer {value} out of 32-bit range")  # a JsonBigInteger keeps its text
    return value


def clip_text(text: str, limit: int = 40) -> str:
    """``text`` quoted, cut to ``limit`` characters: a malformed value is named, not copied whole into a log."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} characters)"


def decimal_fits(body: str, digits: int) -> bool:
    """Whether an ASCII digit run, leading zeros aside, has at most ``digits`` digits: checked before ``int()``,
    which refuses 4,300 digits and more, and whose cost grows with the length."""
    return len(body) - len(body.lstrip("0")) >= len(body) - digits


def check_str(value: Any, path: str, where: str) -> str:
    if not isinstance(value, str):
        raise ZnodeDecodeError(path, f"{where}: expected a string, got {json_kind(value)}")
    return value


_INT_ONLY = {int}
_LIST_ONLY = {list}


def int_tuple_or_none(value: Any) -> tuple[int, ...] | None:
    """``value`` as a tuple if it is a list of 32-bit JSON integers (checked in C), else None."""
    if type(value) is not list:
        return None
    items = tuple(value)
    if items and (set(map(type, items)) != _INT_ONLY or min(items) < INT32_MIN or max(items) > INT32_MAX):
        return None
    return items


def int_tuples_by_key(values: Mapping[str, Any]) -> dict[str, tuple[int, ...]] | None:
    """Every value as a tuple of 32-bit JSON integers, all checked at once by a few passes in C (a topic znode
    holds one list per partition, thousands of them); None if any value is not such a list."""
    if not values:
        return {}
    if set(map(type, values.values())) != _LIST_ONLY:
        return None
    flat = list(chain.from_iterable(values.values()))
    if flat and (set(map(type, flat)) != _INT_ONLY or min(flat) < INT32_MIN or max(flat) > INT32_MAX):
        return None
    return {key: tuple(value) for key, value in values.items()}


def check_int_list(value: Any, path: str, where: str) -> tuple[int, ...]:
    fast = int_tuple_or_none(value)
    if fast is not None:
        return fast
    if not isinstance(value, list):
        raise ZnodeDecodeError(path, f"{where}: expected an array of integers, got {json_kind(value)}")
    return tuple(check_int(v, path, f"{where}[{i}]") for i, v in enumerate(value))


def parse_int_text(text: str, path: str, where: str) -> int:
    """Java's ``Integer.parseInt``: optional sign, ASCII digits only, 32-bit range (no spaces, no ``_``)."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        raise ZnodeDecodeError(path, f"{where}: {clip_text(text)} is not a decimal integer")
    if not decimal_fits(body, 10):
        raise ZnodeDecodeError(path, f"{where}: integer {clip_text(text)} out of 32-bit range")
    return check_int(significant_int(text[: len(text) - len(body)], body), path, where)


def significant_int(sign: str, digits: str) -> int:
    """A sign and an ASCII digit run that ``decimal_fits``, leading zeros dropped: ``int()`` counts them against
    its 4,300-digit limit, and Java's ``parseInt`` reads any number of them."""
    return int(sign + (digits.lstrip("0") or "0"))


class JsonObject:
    """A parsed JSON object whose getters check types and name the znode and field on failure."""

    __slots__ = ("_prefix", "_values", "path")

    def __init__(self, values: Mapping[str, Any], path: str, prefix: str = "") -> None:
        self._values = values
        self.path = path
        self._prefix = prefix

    def where(self, key: str) -> str:
        """``key`` as error messages name it (with the object's place in the document)."""
        return f"{self._prefix}{key}"

    def __contains__(self, key: str) -> bool:
        return key in self._values

    def is_null_or_absent(self, key: str) -> bool:
        return self._values.get(key) is None

    def items(self) -> Iterator[tuple[str, Any]]:
        return iter(self._values.items())

    def int_tuples(self) -> dict[str, tuple[int, ...]] | None:
        """Every value as a tuple of 32-bit integers (`int_tuples_by_key`), or None when one is not: the caller
        then checks value by value, to say which field is wrong."""
        return int_tuples_by_key(self._values)

    def raw(self, key: str) -> Any:
        """The value of a required key, any type."""
        if key not in self._values:
            raise ZnodeDecodeError(self.path, f"missing field {self.where(key)!r}")
        return self._values[key]

    def get_int(self, key: str) -> int:
        return check_int(self.raw(key), self.path, self.where(key))

    def get_str(self, key: str) -> str:
        return check_str(self.raw(key), self.path, self.where(key))

    def get_opt_str(self, key: str) -> str | None:
        """Absent or null → None (Kafka's ``get(key).flatMap(_.to[Option[String]])``)."""
        value = self._values.get(key)
        return None if value is None else check_str(value, self.path, self.where(key))

    def get_int_list(self, key: str) -> tuple[int, ...]:
        return check_int_list(self.raw(key), self.path, self.where(key))

    def get_list(self, key: str) -> list[Any]:
        value = self.raw(key)
        if not isinstance(value, list):
            raise ZnodeDecodeError(self.path, f"{self.where(key)}: expected an array, got {json_kind(value)}")
        return value

    def get_obj(self, key: str) -> JsonObject:
        return self.as_object(self.raw(key), self.where(key))

    def get_opt_obj(self, key: str) -> JsonObject | None:
        """Absent → None; present must be an object (null is a type error, as in Kafka's ``asJsonObject``)."""
        return self.get_obj(key) if key in self._values else None

    def as_object(self, value: Any, where: str) -> JsonObject:
        if not isinstance(value, dict):
            raise ZnodeDecodeError(self.path, f"{where}: expected an object, got {json_kind(value)}")
        return JsonObject(value, self.path, f"{where}.")

    def version(self, allowed: range | tuple[int, ...], *, required: bool = True) -> int | None:
        """The ``version`` field, for the znodes whose version Kafka 2.8 checks (most it never reads): an
        integer, rejected outside ``allowed`` (the versions Kafka accepts, not only those it writes)."""
        if "version" not in self._values and not required:
            return None
        version = self.get_int("version")
        if version not in allowed:
            raise ZnodeDecodeError(self.path, f"unsupported version {version}")
        return version


def jackson_int_value(value: Any, path: str, where: str) -> int:
    """A value Jackson 2.10's default ``ObjectMapper`` binds to a Java ``int``: absent or null (0), an integer or
    a float within 32 bits (truncated), or a string Java's ``Integer.parseInt`` reads (``""`` and ``"null"``
    count as null) decode, to what Jackson binds; anything else is a decode error there, and here."""
    if value is None:
        return 0
    if type(value) is int and INT32_MIN <= value <= INT32_MAX:
        return value
    if isinstance(value, float) and INT32_MIN <= value <= INT32_MAX:
        return int(value)
    if isinstance(value, str):
        text = value.strip("".join(chr(c) for c in range(33)))  # Java's String.trim
        body = text[1:] if text[:1] in ("+", "-") else text
        if text in ("", "null"):
            return 0
        if body.isdecimal() and decimal_fits(body, 10):
            number = significant_int(text[: len(text) - len(body)].replace("+", ""), body)
            if INT32_MIN <= number <= INT32_MAX:
                return number
    if isinstance(value, str):
        shown = f" {clip_text(value)}"
    elif isinstance(value, list | dict):  # a repr could be megabytes, or nest past the recursion limit
        shown = ""
    else:
        text = repr(value)
        shown = f" {text}" if len(text) <= 40 else f" {text[:40]}... ({len(text)} characters)"
    raise ZnodeDecodeError(path, f"{where}: cannot be read as an int, got {json_kind(value)}{shown}")


class JsonNumberText(str):
    """A JSON number as written (`parse_json_as_written`): Jackson binds a number to a ``String`` field as its
    text (``1.50E+2`` stays so), and to an ``Object`` as ``Integer``, ``Long``, ``BigInteger`` or ``Double``."""

    __slots__ = ()

    @property
    def is_integer(self) -> bool:
        return not any(c in self for c in ".eE")

    def value(self) -> int | float:
        """As `parse_json` reads it: an int of any length (`JsonBigInteger` past Python's digit limit), or a
        float."""
        return _int_of_any_length(self) if self.is_integer else float(self)


class JsonPairs(list[tuple[str, Any]]):
    """A JSON object as its members in order, repeated names included (`parse_json_as_written`): Jackson binds
    every occurrence of a repeated property (each must bind; the last wins), where a dict keeps only the last."""

    __slots__ = ()


_AS_WRITTEN_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_int=JsonNumberText,
                                       parse_float=JsonNumberText, object_pairs_hook=JsonPairs)


def parse_json_as_written(data: bytes | None, path: str) -> tuple[Any, Any]:
    """``data``'s first JSON value as `parse_json` reads it (raising what that raises), and again with objects as
    `JsonPairs` and numbers as `JsonNumberText`, for a binding that must see what `parse_json` folds away."""
    plain = parse_json(data, path)
    data = require_data(data, path)
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    text = data.decode("utf-8", errors="replace")  # parse_json accepted it: bad bytes lie after the value
    leading = _LEADING_WS.match(text)
    return plain, _AS_WRITTEN_DECODER.raw_decode(text, leading.end() if leading is not None else 0)[0]
