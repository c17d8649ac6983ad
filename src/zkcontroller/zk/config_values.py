"""Kafka's ``ConfigDef.parseType`` for the config values every layer reads alike.

It sits this low so that the controller (a stored topic override or dynamic broker config), the admin tools
(``kafka-configs``/``kafka-topics`` validation) and the cluster's ``server.properties`` loader all parse a value
one way; each caller raises its own error class with ConfigException's wording.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

JAVA_TRIM = "".join(map(chr, range(0x21)))
"""What Java's ``String.trim`` strips from both ends: every char up to U+0020 (not Unicode whitespace)."""


class ConfigValueError(ValueError):
    """``ConfigException(name, value, message)``: the default error of the parsers here."""


def config_exception_message(name: str, value: object, message: str) -> str:
    """``ConfigException(name, value, message)``'s text; the value is shown as given, untrimmed."""
    return f"Invalid value {value} for configuration {name}: {message}"


def _java_upper(c: str) -> str:
    """``Character.toUpperCase(char)``: a one-to-one mapping, so a char that upper-cases to several stays."""
    u = c.upper()
    return u if len(u) == 1 else c


def _java_lower(c: str) -> str:
    low = c.lower()
    return low if len(low) == 1 else c


def java_equals_ignore_case(a: str, b: str) -> bool:
    """``String.equalsIgnoreCase``: char by char, equal upper cases or equal lower cases of the upper cases
    (so U+017F LATIN SMALL LETTER LONG S matches ``s``, as it does in Java)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x == y:
            continue
        ux, uy = _java_upper(x), _java_upper(y)
        if ux != uy and _java_lower(ux) != _java_lower(uy):
            return False
    return True


def parse_boolean(name: str, value: str, error: Callable[[str], Exception] = ConfigValueError) -> bool:
    """ConfigDef's BOOLEAN: the value Java-trimmed, then ``true``/``false`` ignoring case; anything else raises
    ``error`` with Kafka's "Invalid value X for configuration K: Expected value to be either true or false"."""
    trimmed = value.strip(JAVA_TRIM)
    if java_equals_ignore_case(trimmed, "true"):
        return True
    if java_equals_ignore_case(trimmed, "false"):
        return False
    raise error(config_exception_message(name, value, "Expected value to be either true or false"))


INT_MIN = -(2**31)
INT_MAX = 2**31 - 1


_JAVA_ZEROS = "".join(c for c in map(chr, range(0x10000)) if c.isdecimal() and unicodedata.decimal(c) == 0)
"""Every BMP char ``Character.digit(c, 10)`` reads as 0 (Java's chars are UTF-16 units: none beyond the BMP)."""
_MAX_DIGITS = {32: 10, 64: 19}
"""The significant digits of ``2**31`` and ``2**63``: any more cannot fit, whatever they are."""


def java_parse_int(text: str, bits: int = 32) -> int | None:
    """``Integer.parseInt(text)`` (``Long.parseLong`` with ``bits=64``), or None where Java throws
    ``NumberFormatException``. Linear with a small constant whatever the length: leading zeros (which Java
    accepts, ``"000…01"`` is 1) are skipped at C speed, and past them more digits than the range has fail at once,
    as Java fails at the first digit past the range (a non-digit among them fails in Java too)."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits:
        return None
    significant = digits.lstrip("0")  # the common case, faster than the set below
    if significant[:1] > "\x7f":
        significant = significant.lstrip(_JAVA_ZEROS)
    if len(significant) > _MAX_DIGITS.get(bits, bits):
        return None
    limit = 2 ** (bits - 1)  # the magnitude of the most negative value
    value = 0
    for c in significant:
        if ord(c) > 0xFFFF or not c.isdecimal():  # isdecimal: category Nd, Character.isDigit's set
            return None
        value = value * 10 + unicodedata.decimal(c)
        if value > limit:
            return None
    value = -value if text[0] == "-" else value
    return value if value < limit else None
