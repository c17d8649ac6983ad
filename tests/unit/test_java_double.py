"""``Double.toString`` as Java 17 prints it (outputs taken from ``jshell``), the one copy every layer uses."""

from __future__ import annotations

import math

import pytest

from zkcontroller.java_double import java_double


@pytest.mark.parametrize(("value", "java"), [
    (5e-324, "4.9E-324"),  # Double.MIN_VALUE: the nearest two digits, not 5.0E-324
    (1.5e-323, "1.5E-323"),
    (2.2250738585072014e-308, "2.2250738585072014E-308"),  # Double.MIN_NORMAL
    (1.7976931348623157e308, "1.7976931348623157E308"),  # Double.MAX_VALUE
    (1e7, "1.0E7"),
    (9999999.999999998, "9999999.999999998"),
    (0.001, "0.001"),
    (0.0009999999999999998, "9.999999999999998E-4"),
    (1e-4, "1.0E-4"),
    (100.0, "100.0"),
    (1024.0, "1024.0"),
    (0.5, "0.5"),
    (123456789.0, "1.23456789E8"),
    (1.5e-5, "1.5E-5"),
    (-2e10, "-2.0E10"),
    (0.1, "0.1"),
    (1 / 3, "0.3333333333333333"),
    (0.0, "0.0"),
    (-0.0, "-0.0"),
    (math.inf, "Infinity"),
    (-math.inf, "-Infinity"),
    (math.nan, "NaN"),
])
def test_doubles_print_as_java_does(value: float, java: str) -> None:
    assert java_double(value) == java
