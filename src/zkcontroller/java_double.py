"""Java's ``Double.toString``, in one place: Kafka prints doubles with it in its generated ``toString`` (request
lines), its config messages and values, and Jackson writes a ``Double`` with it in the JSON of a znode."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Context, Decimal

_TWO_DIGITS = Context(prec=2, rounding=ROUND_HALF_EVEN)


def java_double(value: float) -> str:
    """``Double.toString(value)``: the shortest digits that read back as ``value``, plain for 10^-3 <= |value| < 10^7
    (``100.0``, ``0.001``), else computerized scientific notation (``1.0E7``, ``1.5E-5``); ``Infinity``,
    ``-Infinity``, ``NaN``. The JDKs Kafka 2.8 ran on (8, 11) print those digits with ``FloatingDecimal``, which for
    some values writes more digits than the shortest (JDK-4511638: ``2.0E23`` as ``1.9999999999999998E23``); the
    value read back is the same. JDK 19+ prints exactly this (its specification: the shortest decimal that reads
    back, at least two digits, the nearest)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return f"{sign}0.0"
    magnitude = abs(value)
    decimal = Decimal(repr(magnitude)).normalize().as_tuple()  # repr: the shortest round-tripping digits, nearest
    if len(decimal.digits) == 1:  # Java picks the nearest of one or two digits: Double.MIN_VALUE is 4.9E-324
        decimal = Decimal(magnitude).normalize(_TWO_DIGITS).as_tuple()
    digits = "".join(map(str, decimal.digits))
    point = len(digits) + int(decimal.exponent)  # digits[:point] is the integer part
    if 1e-3 <= magnitude < 1e7:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        whole = digits[:point].ljust(point, "0")
        return f"{sign}{whole}.{digits[point:] or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point - 1}"
