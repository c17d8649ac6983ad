"""`java_utf8_decode` gives what ``new String(bytes, UTF_8)`` gives on JDK 17 (the expected strings were printed by
it); Python's ``errors="replace"`` differs on several of them. `java_trim` is ``String.trim``."""

from __future__ import annotations

import pytest

from zkcontroller.zk.java_text import java_trim, java_utf8_decode

R = "\ufffd"


@pytest.mark.parametrize(("data", "java"), [
    (b"\xed\xa0\x80", R),  # an encoded surrogate: one (Python: three)
    (b"a\xf0\x9f\x98", f"a{R}"),  # truncated at the end: one for the rest
    (b"\xe2\x82", R),
    (b"\xe2\x82A", f"{R}A"),
    (b"\xc0\xaf", R * 2),
    (b"\xf0\x8f\x80\x80", R * 4),  # overlong
    (b"\xf4\x90\x80\x80", R * 4),  # above U+10FFFF
    (b"\xf0\x90\x80A", f"{R}A"),
    (b"\xffA", f"{R}A"),
    (b"\xc2A", f"{R}A"),
    (b"\xe0\x80\x80A", f"{R}{R}{R}A"),
    (b"\xf0\x9f\x98\x80", "\U0001f600"),
    (b"\xe2\x82\xac", "\u20ac"),
])
def test_decodes_as_java_does(data: bytes, java: str) -> None:
    assert java_utf8_decode(data) == java


def test_python_s_replacement_differs_where_java_s_is_needed() -> None:
    assert b"\xed\xa0\x80".decode("utf-8", "replace") == R * 3


def test_trim_takes_control_characters_and_leaves_other_whitespace() -> None:
    assert java_trim("\x00\t 7\x1f ") == "7"
    assert java_trim("\u00a07\u2003") == "\u00a07\u2003"
