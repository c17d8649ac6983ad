"""Config values of ConfigDef's number types read as Kafka 2.8's ``ConfigDef.parseType`` reads them: the value
trimmed (``String.trim``), then ``Double.parseDouble``, ``Integer.parseInt`` or ``Long.parseLong``.

Each row's expectation is what Java gives for that string (its grammar, written out here), not what Python's
``float``/``int`` would: they differ both ways (``inf``, ``1_0`` pass in Python; ``1d``, ``0x1p-1`` do not).
"""

from __future__ import annotations

import math

import pytest

from zkcontroller.admin.configs import validate_broker_configs
from zkcontroller.admin.errors import InvalidConfigError
from zkcontroller.admin.topic_rules import java_parse_double, validate_topic_configs

NFE = None
"""``NumberFormatException``: ConfigDef reports "Not a number of type ..."."""

DOUBLES: list[tuple[str, float | None]] = [
    # decimal forms
    ("0.5", 0.5), ("+0.5", 0.5), ("-0.5", -0.5), (".5", 0.5), ("5.", 5.0), ("5e-1", 0.5), ("5E-1", 0.5),
    ("5e+0", 5.0), ("0.5d", 0.5), ("0.5D", 0.5), ("1f", 1.0), ("1F", 1.0), ("1.d", 1.0), (".5f", 0.5),
    ("0.1f", 0.1),  # the suffix does not narrow: the double nearest 0.1, not (double) 0.1f
    (" 0.5 ", 0.5), ("\t0.5\n", 0.5), ("\x000.5\x1f", 0.5),  # trim strips every char up to U+0020
    ("1e400", math.inf), ("-1e400", -math.inf), ("1e-400", 0.0), ("0e99999999999", 0.0),
    # NaN and Infinity: exact spelling, optional sign, nothing after
    ("NaN", math.nan), ("-NaN", math.nan), ("Infinity", math.inf), ("+Infinity", math.inf),
    ("-Infinity", -math.inf),
    # hexadecimal: the binary exponent is required
    ("0x1.0p-1", 0.5), ("0X1P-1", 0.5), ("0x.8p0", 0.5), ("0x1.p-1", 0.5), ("-0x1p-1", -0.5), ("+0x1p-1", 0.5),
    ("0x1.0p-1d", 0.5), ("0x1.0p-1F", 0.5), (" 0x1p-1 ", 0.5), ("0x1p3", 8.0), ("0xAbC.dEfp0", 0xABCDEF / 0x1000),
    ("-0x0p0", -0.0), ("0x0p99999999999", 0.0),
    ("0x1.fffffffffffffp1023", 1.7976931348623157e308),  # Double.MAX_VALUE
    ("0x1.fffffffffffff8p1023", math.inf),  # rounds up past MAX_VALUE
    ("0x1p-1074", 5e-324), ("0x1p-1075", 0.0), ("0x1.8p-1074", 1e-323),  # half-way cases round to even
    ("0x1p99999999999", math.inf), ("-0x1p-99999999999", -0.0),  # exponents past an int's range
    # refused by Java
    ("", NFE), (" ", NFE), (".", NFE), ("+", NFE), ("e1", NFE), ("1e", NFE), ("1e+", NFE), ("1dd", NFE),
    ("1 d", NFE), ("1_0", NFE), ("1,5", NFE), ("0.5 0", NFE), ("--1", NFE), ("inf", NFE), ("infinity", NFE),
    ("INFINITY", NFE), ("nan", NFE), ("NAN", NFE), ("Infinityd", NFE), ("NaNd", NFE), ("0x1.8", NFE),
    ("0x", NFE), ("0xp1", NFE), ("0x.p1", NFE), ("0x1p", NFE), ("0x1p1.5", NFE), ("0x1g", NFE),
    ("0x1p1dd", NFE), ("1p1", NFE), ("0b1", NFE), ("\u0661", NFE),  # Arabic-Indic one: ASCII digits only
    ("\u00a00.5", NFE),  # a no-break space is not trimmed
]


@pytest.mark.parametrize(("text", "expected"), DOUBLES)
def test_java_parse_double(text: str, expected: float | None) -> None:
    got = java_parse_double(text)
    if expected is None or math.isnan(expected):
        assert got is expected or (got is not None and expected is not None and math.isnan(got))
    else:
        assert got == expected and math.copysign(1, got) == math.copysign(1, expected)  # -0.0 stays negative


RATIO = "min.cleanable.dirty.ratio"


@pytest.mark.parametrize(("text", "message"), [
    ("0x1.0p-1", None), ("1d", None), (" 0.5f ", None), ("0x0p0", None), ("0x1p0", None),
    ("NaN", None),  # Range compares with < and >, both false for NaN: Kafka accepts it
    ("0x1p3", "Invalid value 8.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"),
    ("-0x1p-1", "Invalid value -0.5 for configuration min.cleanable.dirty.ratio: Value must be at least 0"),
    ("Infinity", "Invalid value Infinity for configuration min.cleanable.dirty.ratio: Value must be no more than 1"),
    ("-Infinity", "Invalid value -Infinity for configuration min.cleanable.dirty.ratio: Value must be at least 0"),
    ("0x1.8", "Invalid value 0x1.8 for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE"),
    (" inf ", "Invalid value  inf  for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE"),
])
def test_double_config_parsed_then_range_checked(text: str, message: str | None) -> None:
    if message is None:
        validate_topic_configs({RATIO: text})
    else:
        with pytest.raises(InvalidConfigError) as refused:
            validate_topic_configs({RATIO: text})
        assert str(refused.value) == message


@pytest.mark.parametrize(("name", "kind", "text", "accepted"), [
    # segment.index.bytes is an INT at least 0; retention.bytes a LONG with no validator
    ("segment.index.bytes", "INT", "+5", True), ("segment.index.bytes", "INT", " 5 ", True),
    ("segment.index.bytes", "INT", "2147483647", True), ("segment.index.bytes", "INT", "2147483648", False),
    ("segment.index.bytes", "INT", "\u0663", True),  # Character.digit takes any Unicode decimal digit
    ("segment.index.bytes", "INT", "+\uff15", True),  # fullwidth five
    ("segment.index.bytes", "INT", "0x10", False), ("segment.index.bytes", "INT", "010", True),
    ("segment.index.bytes", "INT", "1e3", False), ("segment.index.bytes", "INT", "5.0", False),
    ("segment.index.bytes", "INT", "5L", False), ("segment.index.bytes", "INT", "1_000", False),
    ("segment.index.bytes", "INT", "1 000", False), ("segment.index.bytes", "INT", "++5", False),
    ("segment.index.bytes", "INT", "+", False), ("segment.index.bytes", "INT", "", False),
    ("retention.bytes", "LONG", "-9223372036854775808", True),
    ("retention.bytes", "LONG", "+9223372036854775807", True),
    ("retention.bytes", "LONG", "9223372036854775808", False), ("retention.bytes", "LONG", "-1", True),
    ("retention.bytes", "LONG", "0x7f", False), ("retention.bytes", "LONG", "1d", False),
    # Character.digit reads one UTF-16 char: a digit outside the BMP is two surrogates, neither a digit
    ("segment.index.bytes", "INT", "\U0001d7d3", False), ("retention.bytes", "LONG", "1\U0001d7ce", False),
])
def test_integer_configs(name: str, kind: str, text: str, accepted: bool) -> None:
    if accepted:
        validate_topic_configs({name: text})
    else:
        with pytest.raises(InvalidConfigError) as refused:
            validate_topic_configs({name: text})
        assert str(refused.value) == f"Invalid value {text} for configuration {name}: Not a number of type {kind}"



@pytest.mark.parametrize(("text", "accepted"), [
    ("+9223372036854775807", True), ("\u0661", True), (" 5\t", True),
    ("9223372036854775808", False), ("-9223372036854775809", False), ("\U0001d7d3", False), ("1_0", False),
])
def test_broker_throttles_are_longs(text: str, accepted: bool) -> None:
    """DynamicConfig.Broker's throttles are LONGs: ``Long.parseLong`` of the trimmed value, range included."""
    name = "leader.replication.throttled.rate"
    if accepted:
        validate_broker_configs({name: text})
    else:
        with pytest.raises(InvalidConfigError) as refused:
            validate_broker_configs({name: text})
        assert str(refused.value) == f"Invalid value {text} for configuration {name}: Not a number of type LONG"
