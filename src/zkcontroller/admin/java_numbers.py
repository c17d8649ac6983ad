"""Java's ``Integer.parseInt`` (Scala's ``String.toInt``), which Kafka's admin tools use on broker ids.

Python's ``int`` is both more lenient (surrounding whitespace, ``1_0``, digits outside the BMP, any size) and
reads the same digits otherwise, so an id ``int`` accepts could be one Kafka refuses, and vice versa for nothing:
the grammar is written out here instead. Java accepts one leading ``+`` or ``-``, then one or more chars for
which ``Character.digit(c, 10)`` is not -1 — every Unicode ``Nd`` digit, but only in the BMP, as it reads UTF-16
chars one at a time (a supplementary digit is two surrogates, neither a digit) — and the value must fit 32 bits.
"""

from __future__ import annotations

from typing import TypeGuard

from zkcontroller.zk.config_values import INT_MAX, INT_MIN, JAVA_TRIM, java_parse_int

__all__ = ["INT_MAX", "INT_MIN", "is_json_int", "java_parse_int", "java_split", "number_format_message",
           "parse_int_list"]



def is_json_int(value: object) -> TypeGuard[int]:
    """Kafka's ``DecodeJson[Int]``: a JSON integer Jackson holds as an ``IntNode`` (so within 32 bits); not a
    boolean, a float (``1.0``) or a string."""
    return isinstance(value, int) and not isinstance(value, bool) and INT_MIN <= value <= INT_MAX


def number_format_message(text: str) -> str:
    """``NumberFormatException.forInputString``'s message, which Kafka's tools print as it is."""
    return f'For input string: "{text}"'


def java_split(text: str, separator: str) -> list[str]:
    """``String.split`` on a one-char literal, as Kafka's tools split id lists: no match gives ``[text]`` (so
    ``""`` is one empty piece), otherwise the trailing empty pieces are dropped (``"1,2,"`` is two, ``","``
    none) while leading and inner ones stay."""
    if separator not in text:
        return [text]
    pieces = text.split(separator)
    while pieces and pieces[-1] == "":
        pieces.pop()
    return pieces


def parse_int_list(text: str, separator: str, *, trim: bool = False) -> list[int]:
    """``text.split(separator).map(_.toInt)`` (each piece ``trim``-med first if asked, as TopicCommand does);
    the first piece Java refuses raises ValueError with Java's message."""
    out = []
    for piece in java_split(text, separator):
        value = java_parse_int(piece.strip(JAVA_TRIM) if trim else piece)
        if value is None:
            raise ValueError(number_format_message(piece.strip(JAVA_TRIM) if trim else piece))
        out.append(value)
    return out
