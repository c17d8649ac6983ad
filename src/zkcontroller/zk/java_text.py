"""Java's ways with text that Kafka's log lines show: `java_utf8_decode` (``new String(bytes, UTF_8)``),
`java_trim` (``String.trim``), `jackson_text` (a Jackson ``JsonNode``'s ``toString``, which ``DecodeJson``'s
errors print) and the exceptions Kafka's handlers throw, named as Java names them (`JavaException`).

Kafka prints a config change notification it failed on as ``new String(data, UTF_8)``: bytes that are not UTF-8
come out as U+FFFD, as many as Java's decoder makes, which is not always as many as Python's ``errors="replace"``
makes (an encoded surrogate ``ED A0 80`` is one U+FFFD in Java, three in Python; a truncated sequence at the end is
one, whatever its length). `java_utf8_decode` follows OpenJDK 11 to 25's ``String`` decoding loop
(``decodeUTF8_UTF16``, the same in all of them); it was checked against JDK 17 on random bytes.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

from zkcontroller.coordination.connect_string import path_refusal
from zkcontroller.java_double import java_double

REPLACEMENT = "\ufffd"


def _not_continuation(b: int) -> bool:
    return (b & 0xC0) != 0x80


def _malformed3(b1: int, b2: int) -> bool:
    """``isMalformed3_2``: a bad second byte of a three-byte sequence (an overlong E0 included)."""
    return (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or _not_continuation(b2)


def _malformed4_2(b1: int, b2: int) -> bool:
    return (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF) or (b1 == 0xF4 and (b2 & 0xF0) != 0x80) or _not_continuation(b2)


def _skip4(data: bytes, sp: int) -> int:
    """``malformed4``: how many bytes of a bad four-byte sequence at ``sp`` one U+FFFD stands for."""
    b1, b2 = data[sp], data[sp + 1]
    if b1 > 0xF4 or _malformed4_2(b1, b2):
        return 1
    return 2 if _not_continuation(data[sp + 2]) else 3


def java_utf8_decode(data: bytes) -> str:
    """``new String(data, StandardCharsets.UTF_8)`` on Java 11+ (see the module docstring)."""
    out: list[str] = []
    sp, sl = 0, len(data)
    while sp < sl:
        b1 = data[sp]
        sp += 1
        if b1 < 0x80:
            out.append(chr(b1))
        elif (b1 >> 5) == 0b110 and (b1 & 0x1E) != 0:  # C2..DF
            if sp < sl:
                b2 = data[sp]
                if _not_continuation(b2):
                    out.append(REPLACEMENT)  # the second byte is read again
                else:
                    out.append(chr(((b1 & 0x1F) << 6) | (b2 & 0x3F)))
                    sp += 1
                continue
            out.append(REPLACEMENT)
            break
        elif (b1 >> 4) == 0b1110:  # E0..EF
            if sp + 1 < sl:
                b2, b3 = data[sp], data[sp + 1]
                if _malformed3(b1, b2) or _not_continuation(b3):
                    out.append(REPLACEMENT)
                    sp += 0 if _malformed3(b1, b2) else 1  # malformed3: 1 byte, or 2 with a good second one
                else:
                    c = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
                    out.append(REPLACEMENT if 0xD800 <= c <= 0xDFFF else chr(c))
                    sp += 2
                continue
            if sp < sl and _malformed3(b1, data[sp]):
                out.append(REPLACEMENT)
                continue
            out.append(REPLACEMENT)  # a truncated sequence: one U+FFFD for the rest
            break
        elif (b1 >> 3) == 0b11110:  # F0..F7
            if sp + 2 < sl:
                b2, b3, b4 = data[sp], data[sp + 1], data[sp + 2]
                uc = ((b1 & 0x07) << 18) | ((b2 & 0x3F) << 12) | ((b3 & 0x3F) << 6) | (b4 & 0x3F)
                if (_not_continuation(b2) or _not_continuation(b3) or _not_continuation(b4)
                        or not 0x10000 <= uc <= 0x10FFFF):
                    out.append(REPLACEMENT)
                    sp = sp - 1 + _skip4(data, sp - 1)
                else:
                    out.append(chr(uc))
                    sp += 3
                continue
            if b1 > 0xF4 or (sp < sl and _malformed4_2(b1, data[sp])):
                out.append(REPLACEMENT)
                continue
            sp += 1
            out.append(REPLACEMENT)
            if sp < sl and _not_continuation(data[sp]):
                continue
            break
        else:
            out.append(REPLACEMENT)
    return "".join(out)


def java_trim(text: str) -> str:
    """``String.trim``: every leading and trailing char up to U+0020 removed (Python's ``strip`` takes other
    whitespace and leaves control characters)."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def java_length(text: str) -> int:
    """``String.length``: UTF-16 code units (a character beyond the BMP counts twice)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class JavaException(Exception):
    """An exception Kafka throws, for a log line's stack trace: its traceback names it as Java's ``toString`` does
    (``java.lang.X: message``), each subclass setting ``__module__`` to its Java package."""


class IllegalArgumentException(JavaException, ValueError):
    """Also a ValueError: Python's name for a value refused."""


class NumberFormatException(IllegalArgumentException):
    pass


class StringIndexOutOfBoundsException(JavaException):
    pass


class JsonMappingException(JavaException):
    """Jackson's, as ``DecodeJson``/``JsonObject`` throw it (no location: its message is the text given)."""


IllegalArgumentException.__module__ = NumberFormatException.__module__ = "java.lang"
StringIndexOutOfBoundsException.__module__ = "java.lang"
JsonMappingException.__module__ = "com.fasterxml.jackson.databind"

_ESCAPE = re.compile(r"\\\\|\\u00([0-9a-f]{2})")
"""An escaped backslash (left as it is), or a control character's ``\\u00xx``."""


def _jackson_string(text: str) -> str:
    """A JSON string as Jackson writes it: Python's escapes, but ``\\u00XX`` in upper-case hex."""
    quoted = json.dumps(text, ensure_ascii=False)
    return _ESCAPE.sub(lambda m: m.group(0) if m.group(1) is None else "\\u00" + m.group(1).upper(), quoted)


def _jackson_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        try:
            return str(value)  # a JsonBigInteger: its text
        except ValueError:  # an int past the digit limit not read from JSON
            return f"{Decimal(value)}"
    if isinstance(value, float):
        return java_double(value) if math.isfinite(value) else f'"{java_double(value)}"'
    return _jackson_string(value)


def jackson_text(value: Any) -> str:
    """``JsonNode.toString`` (Jackson 2.10: its compact serialization) of a value `json_fields.parse_json` read:
    a float as Java's ``Double.toString`` (a ``DoubleNode``; not finite: quoted, as ``QUOTE_NON_NUMERIC_NUMBERS``
    writes it), an integer past Python's ``str`` limit as it was written (`JsonBigInteger`). Written without
    recursion: a value nested deeper than Python's recursion limit is printed as Jackson prints it."""
    out: list[str] = []
    stack: list[tuple[bool, Any]] = [(False, value)]  # (text to write as it is, or a value to write)
    while stack:
        written, item = stack.pop()
        if written:
            out.append(item)
        elif isinstance(item, list):
            out.append("[")
            stack.append((True, "]"))
            for i in range(len(item) - 1, -1, -1):
                stack.append((False, item[i]))
                if i:
                    stack.append((True, ","))
        elif isinstance(item, dict):
            out.append("{")
            stack.append((True, "}"))
            entries = list(item.items())
            for i in range(len(entries) - 1, -1, -1):
                key, member = entries[i]
                stack.append((False, member))
                stack.append((True, _jackson_string(key) + ":"))
                if i:
                    stack.append((True, ","))
        else:
            out.append(_jackson_scalar(item))
    return "".join(out)


def zookeeper_path_error(path: str) -> IllegalArgumentException | None:
    """What ZooKeeper's client throws for a path it refuses before sending anything (``PathUtils.validatePath``,
    called by ``ZooKeeper.getData``; Kafka's handlers reach it with an entity name such as ``""`` or ``a//b``),
    None for a path it takes."""
    reason = path_refusal(path)
    return None if reason is None else IllegalArgumentException(reason)
