"""``regex_tokens`` and the pattern scans built on it: the same answers as the character loops they replaced.

The three scans (``group_spans``, ``_alternative_end``, ``jvm_parser.split_at_dot_star``) each walked the
pattern by hand, escapes and classes included; ``_old_*`` below are those loops as they were (commit 56e1983),
kept here as the reference the tokenizer-based versions are held to over every pattern the parsers use.
"""

from __future__ import annotations

import itertools
import re

import pytest

from zkcontroller.analytics import jvm_parser
from zkcontroller.analytics import kafka_log_parser as k


def _old_group_spans(pattern: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    stack: list[int | None] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = k.class_end(pattern, i)
            continue
        if c == "(":
            if pattern.startswith("(?", i):
                stack.append(None)
            else:
                stack.append(len(spans))
                spans.append((i, -1))
        elif c == ")":
            number = stack.pop()
            if number is not None:
                spans[number] = (spans[number][0], i)
        i += 1
    return spans


def _old_alternative_end(pattern: str, i: int) -> int:
    depth = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = k.class_end(pattern, i)
            continue
        if c in "|)" and depth == 0:
            return i
        depth += {"(": 1, ")": -1}.get(c, 0)
        i += 1
    return i


def _old_split_at_dot_star(pattern: str) -> dict[str, object] | None:
    if not pattern.startswith("^"):
        return None
    i, depth = 1, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = k.class_end(pattern, i)
            continue
        if c == "|" and depth == 0:
            return None
        if c == "." and depth == 0 and pattern.startswith(".*", i):
            break
        depth += {"(": 1, ")": -1}.get(c, 0)
        i += 1
    else:
        return None
    head, tail = pattern[1:i], pattern[i + 2:]
    lazy = tail.startswith("?")
    tail = tail.removeprefix("?")
    if tail.startswith("+") or "(" in head.replace("(?:", "") or re.search(r"(?<!\[)\^", tail):
        return None
    heads, end, complete = k._prefixes_of(head, 0, ("",))
    heads = tuple(sorted(set(heads)))
    if not complete or end != len(head) or len(heads) > 16 or any(
            a != b and b.startswith(a) for a in heads for b in heads):
        return None
    literals = k.literal_prefixes(tail)
    if len(literals) != 1:
        return None
    return {"heads": list(heads), "lazy": lazy, "literal": literals[0], "tail": jvm_parser.java_regex(tail, True)}


def _patterns() -> list[str]:
    """Every pattern of the parsers' template tables and layout constants, strict and loose."""
    out: list[str] = []
    for t in k.TEMPLATES:
        out += [t.pattern, *t.extra.values(), *t.loose_extra.values()]
        out += [t.loose] if t.loose else []
    out += [value for name, value in vars(k).items() if name.isupper() and isinstance(value, str) and len(value) > 1
            and name not in ("SEP", "STATE_CHANGE_LOGGER") and not name.startswith("REASON")]
    out += [*jvm_parser.HAND_WRITTEN.values(), *jvm_parser.HAND_TEMPLATES, *jvm_parser.GROUP_SHAPES]
    out += [jvm_parser.java_regex(t.pattern, plain=True) for t in k.TEMPLATES]
    return sorted(set(out))


PATTERNS = _patterns()
# Odd spellings none of the templates has yet: escaped brackets and parentheses, a class that starts with "]",
# an escape in a class, a literal "{", lazy and possessive quantifiers, lookarounds.
ODD = [r"^a\(b\)(\d+)[\]x](c|d)", r"^[]a](x)[^]\\]+(?:y|z)", r"^x{(\d+)}", r"^(a+?)(?=b)(?<!c)(d*+)|e",
       r"^[\[(](\w+)\.*(?:x)", r"^ab.*?(\d+) c", r"^(?:a|b).*(x)", r"^a(.*)b", r"^\..*(x)"]


def _token_starts(pattern: str) -> list[int]:
    return [token.start for token in k.regex_tokens(pattern)]


def test_the_tables_have_patterns() -> None:
    assert len(PATTERNS) > 100


@pytest.mark.parametrize("pattern", PATTERNS + ODD)
def test_tokens_cover_the_pattern_in_order(pattern: str) -> None:
    tokens = list(k.regex_tokens(pattern))
    assert "".join(pattern[t.start:t.end] for t in tokens) == pattern
    assert all(a.end == b.start for a, b in itertools.pairwise(tokens))


@pytest.mark.parametrize("pattern", PATTERNS + ODD)
def test_group_spans_as_before(pattern: str) -> None:
    spans = k.group_spans(pattern)
    assert spans == _old_group_spans(pattern)
    if "(?<" not in pattern:  # Python's own count (our spans skip nothing it counts)
        assert len(spans) == re.compile(pattern).groups


@pytest.mark.parametrize("pattern", PATTERNS + ODD)
def test_alternative_ends_as_before(pattern: str) -> None:
    for i in _token_starts(pattern):
        assert k._alternative_end(pattern, i) == _old_alternative_end(pattern, i), (pattern, i)


@pytest.mark.parametrize("pattern", PATTERNS + ODD)
def test_dot_star_splits_as_before(pattern: str) -> None:
    try:
        old = _old_split_at_dot_star(pattern)
    except ValueError:  # java_regex refuses the tail (an ODD pattern): so must the new one
        with pytest.raises(ValueError):
            jvm_parser.split_at_dot_star(pattern)
        return
    assert jvm_parser.split_at_dot_star(pattern) == old


def test_some_templates_split() -> None:
    assert sum(jvm_parser.split_at_dot_star(t.pattern) is not None for t in k.TEMPLATES) >= 3
