"""``Integer.parseInt``/``Long.parseLong`` (`java_parse_int`) on hostile lengths: Java fails at the first digit past
the range, and reads any number of leading zeros. Ours walked every char in Python (a megabyte of zeros before a
``1`` took 0.1 s on the event loop, per value); the zeros are now skipped at C speed and the digits after them are
at most as many as the range has. The work is counted, not timed."""

from __future__ import annotations

import unicodedata
from types import SimpleNamespace

import pytest

from zkcontroller.zk import config_values
from zkcontroller.zk.config_values import java_parse_int

MB = 1 << 20


@pytest.mark.parametrize(("text", "bits", "expected"), [
    ("2147483647", 32, 2**31 - 1), ("-2147483648", 32, -(2**31)), ("2147483648", 32, None),
    ("-2147483649", 32, None), ("+0", 32, 0), ("-", 32, None), ("+", 32, None), ("", 32, None), (" 1", 32, None),
    ("1_0", 32, None), ("00012a", 32, None), ("-0000", 32, 0), ("\u0663", 32, 3),
    ("\u0660" * 5 + "0\u0660" * 3 + "12", 32, 12),  # Arabic-Indic zeros are zeros to Character.digit too
    ("0" * 50 + "2147483647", 32, 2**31 - 1), ("0" * 50 + "2147483648", 32, None),
    ("9223372036854775807", 64, 2**63 - 1), ("-9223372036854775808", 64, -(2**63)),
    ("9223372036854775808", 64, None), ("0" * 99 + "-1", 64, None), ("\U0001d7ce", 32, None),
])
def test_java_s_results(text: str, bits: int, expected: int | None) -> None:
    assert java_parse_int(text, bits) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("0" * MB + "1", 1), ("-" + "0" * MB + "7", -7), ("0" * MB + "x", None), ("1" * MB, None), ("0" * MB, 0),
    ("\u0660" * MB + "5", 5), ("0" * MB + "1" * MB, None),
])
def test_a_megabyte_costs_a_handful_of_digit_reads(monkeypatch: pytest.MonkeyPatch, text: str,
                                                   expected: int | None) -> None:
    reads = []

    def decimal(c: str) -> int:
        reads.append(c)
        return unicodedata.decimal(c)

    monkeypatch.setattr(config_values, "unicodedata", SimpleNamespace(decimal=decimal))
    for bits in (32, 64):
        reads.clear()
        assert java_parse_int(text, bits) == expected
        assert len(reads) <= 19
