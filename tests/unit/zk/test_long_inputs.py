"""Values a notification or a config node can hold up to ZooKeeper's 1 MB, read in time linear in their length
(the brokers and the controller read them on their one event loop), and names URL-decoded as Java's
``URLDecoder`` does."""

from __future__ import annotations

import time

import pytest

from zkcontroller.zk.config_values import java_parse_int
from zkcontroller.zk.errors import UnparseableZnodeError, ZnodeDecodeError
from zkcontroller.zk.java_text import IllegalArgumentException, jackson_text
from zkcontroller.zk.json_fields import JsonBigInteger, JsonTooDeepError, check_int, json_nesting, parse_json
from zkcontroller.zk.log_config_def import java_parse_double, parse_config_value
from zkcontroller.zk.quota_configs import desanitize, sanitize

BOUND_S = 2.0
"""Far above the linear time (milliseconds), far below the quadratic one (seconds to hours at these sizes)."""


def _timed(parse: object, text: str) -> object:
    start = time.monotonic()
    result = parse(text)  # type: ignore[operator]
    assert time.monotonic() - start < BOUND_S, f"{len(text)} chars took {time.monotonic() - start:.1f}s"
    return result


@pytest.mark.parametrize("text", ["9" * 200_000, "-" + "0" * 200_000 + "1", "1" * 200_000 + "x"])
def test_java_parse_int_stops_at_the_overflow(text: str) -> None:
    """It multiplied a growing int digit by digit: 200k digits took 7 s, a megabyte about two minutes."""
    assert _timed(java_parse_int, text) == (-1 if text.startswith("-") else None)


def test_java_parse_int_still_reads_the_extremes() -> None:
    assert java_parse_int("-2147483648") == -(2**31) and java_parse_int("2147483647") == 2**31 - 1
    assert java_parse_int("2147483648") is None and java_parse_int("-2147483649") is None
    assert java_parse_int("-9223372036854775808", bits=64) == -(2**63)
    assert java_parse_int("9223372036854775808", bits=64) is None
    assert java_parse_int("0" * 50 + "7") == 7


@pytest.mark.parametrize("text", ["9" * 50_000 + "x", "1." + "9" * 50_000 + "x", "0x" + "f" * 50_000 + ".x",
                                  "0x1p" + "9" * 50_000 + "x", "." + "9" * 50_000 + "e"])
def test_java_parse_double_refuses_a_long_bad_value_in_linear_time(text: str) -> None:
    """Digits, an optional dot, digits: a long run of digits that ended badly backtracked over every split
    (10k digits took 5 s, 40k 95 s): ``request_percentage`` and ``controller_mutation_rate`` are read so."""
    assert _timed(java_parse_double, text) is None


def test_java_parse_double_grammar_is_unchanged() -> None:
    cases = {"1": 1.0, "1.": 1.0, ".5": 0.5, "1.5e3": 1500.0, "1.5f": 1.5, "+.5d": 0.5, "0x1.8p1": 3.0,
             "0x.8p1": 1.0, "0x1.p1": 2.0, "1e": None, "1..2": None, ".": None, "0x1.8": None, "1.5.": None}
    assert {text: java_parse_double(text) for text in cases} == cases


def test_an_integer_past_python_s_digit_limit_keeps_its_text() -> None:
    """Jackson's ``BigIntegerNode`` prints its digits; ``str`` of so long a Python int raises ValueError."""
    digits = "-" + "12345" * 1000
    value = parse_json(f'{{"v":{digits}}}'.encode(), "/x")["v"]
    assert isinstance(value, JsonBigInteger) and value < -(2**63)
    assert str(value) == f"{value}" == digits and jackson_text([value]) == f"[{digits}]"
    with pytest.raises(ZnodeDecodeError, match=f"integer {digits} out of 32-bit range"):
        check_int(value, "/x", "v")


def test_a_big_integer_s_digits_are_never_converted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading a hostile megabyte of digits stays linear: no digit string past the limit reaches ``int``."""
    import builtins

    converted = 0
    real_int = builtins.int

    def counting_int(x: object = 0, *args: object) -> int:
        nonlocal converted
        if isinstance(x, str):
            converted += len(x)
        return real_int(x, *args)  # type: ignore[call-overload]

    monkeypatch.setattr("zkcontroller.zk.json_fields.int", counting_int, raising=False)
    value = parse_json(b"1" + b"0" * 999_999, "/x")
    assert isinstance(value, JsonBigInteger) and str(value) == "1" + "0" * 999_999
    assert converted <= 4300  # the old halving conversion turned all 1,000,000 digits into an int


@pytest.mark.parametrize(("name", "message"), [
    ("%zz", 'Illegal hex characters in escape (%) pattern - Error at index 0 in: "zz"'),
    ("a%1g", 'Illegal hex characters in escape (%) pattern - Error at index 1 in: "1g"'),
    ("%-1", "Illegal hex characters in escape (%) pattern - negative value"),
    ("%4", "Incomplete trailing escape (%) pattern"),
    ("%41%4", "Incomplete trailing escape (%) pattern"),
])
def test_desanitize_throws_url_decoder_s_exception(name: str, message: str) -> None:
    """Kafka's ``Sanitizer.desanitize`` lets ``URLDecoder``'s ``IllegalArgumentException`` (Java 11+ messages)
    through: the listener logs it for a notification naming such a client id."""
    with pytest.raises(IllegalArgumentException) as raised:
        desanitize(name)
    assert str(raised.value) == f"URLDecoder: {message}"


@pytest.mark.parametrize(("name", "decoded"), [
    ("a+b", "a b"), ("%2A%20", "* "), ("%C3%A9x", "éx"), ("%C3x%A9", "\ufffdx\ufffd"), ("%+1", "\x01"),
    ("%-0", "\x00"), ("%E2%82%AC", "€"), ("\U0001f600%41", "\U0001f600A"), ("%\uff14\uff11", "A"), ("%4\uff41", "J"),
])
def test_desanitize_decodes_as_url_decoder_does(name: str, decoded: str) -> None:
    """Each run of escapes is decoded apart (a byte cut from its sequence is one U+FFFD each side); a sign is
    read by ``Integer.parseInt``; full-width hex letters are digits to ``Character.digit``."""
    assert desanitize(name) == decoded


@pytest.mark.parametrize("name", ["user", "a b*c", "é€", "\U0001f600", "%", "+"])
def test_desanitize_undoes_sanitize(name: str) -> None:
    assert desanitize(sanitize(name)) == name


@pytest.mark.parametrize("text", ["[" * 3000 + '"' + '\\"' * 40_000, "[" * 3000 + '"' + '\\"' * 40_000 + "\\"])
def test_a_deep_node_ending_in_an_unclosed_string_of_escaped_quotes_is_scanned_in_linear_time(text: str) -> None:
    """The depth scan's string pattern looked for the closing quote from every escaped quote: 35 kB took 6 s, a
    megabyte about an hour and a half (any JSON node the controller or a broker reads); these 80 kB about 20 s."""
    with pytest.raises(UnparseableZnodeError, match="not all closed"):
        _timed(lambda t: parse_json(t.encode(), "/x"), text)


def test_deep_brackets_closed_by_the_other_kind_are_not_json() -> None:
    """Jackson refuses ``[[[...}}}``: not JSON, not "nested too deep"."""
    assert json_nesting("[" * 3000 + "}" * 3000) == (3000, False)
    assert json_nesting('{"a":"[[[{{","b":[{"c":"\\"["}]}') == (3, True)
    with pytest.raises(UnparseableZnodeError, match="not all closed by their own kind") as refused:
        parse_json(("[" * 3000 + "}" * 3000).encode(), "/x")
    assert not isinstance(refused.value, JsonTooDeepError)
    with pytest.raises(JsonTooDeepError):
        parse_json(("[" * 3000 + "]" * 3000).encode(), "/x")


def test_a_list_config_with_a_long_run_of_spaces_splits_in_linear_time() -> None:
    """``\\s*,\\s*`` rescanned a run of spaces with no comma from every start (1 MB: about half an hour), now
    on the controller's event loop too (it validates a topic's config before enabling unclean election); these
    128k spaces took about 16 s."""
    assert _timed(lambda v: parse_config_value("cleanup.policy", "LIST", v), "delete" + " " * 128_000 + "x") == [
        "delete" + " " * 128_000 + "x"]
    assert parse_config_value("cleanup.policy", "LIST", "a , b,\tc ,") == ["a", "b", "c", ""]


@pytest.mark.parametrize("inner", ["x", "1 2", '"a', "01", "[,]", "{1:2}", '{"a" 1}', "nul"])
def test_invalid_content_past_the_decoder_s_depth_is_invalid_not_too_deep(inner: str) -> None:
    """Jackson (no depth limit) fails on the bad content: that is invalid JSON, not a node too deep to read."""
    text = "[" * 5000 + inner + "]" * 5000
    with pytest.raises(UnparseableZnodeError, match="invalid JSON") as info:
        parse_json(text.encode(), "/x")
    assert not isinstance(info.value, JsonTooDeepError)


def test_valid_content_past_the_decoder_s_depth_is_still_too_deep() -> None:
    text = '{"a":' * 3000 + '[1, 2.5e3, "x\\u0041", true, null, {}, []]' + "}" * 3000 + "trailing"
    with pytest.raises(JsonTooDeepError):
        parse_json(text.encode(), "/x")
