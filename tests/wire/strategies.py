"""Hypothesis strategies derived from the wire table itself: any value a message can carry at a version."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from zkcontroller.protocol.wire.schema import Field, MessageSpec, in_versions

_INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_text = st.text(max_size=12)


def _primitive(kind: str, nullable: bool) -> st.SearchStrategy[Any]:
    if kind in _INTS:
        bits = _INTS[kind]
        base: st.SearchStrategy[Any] = st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    elif kind == "bool":
        base = st.booleans()
    elif kind == "string":
        base = _text
    elif kind in ("bytes", "records"):
        base = st.binary(max_size=40)
    elif kind == "uuid":
        base = st.binary(min_size=16, max_size=16)
    else:
        base = st.floats(allow_nan=False)
    return st.none() | base if nullable and kind in ("string", "bytes", "records") else base


def fields_values(fields: tuple[Field, ...], version: int, depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for f in fields:
        if not in_versions(f.versions, version):
            parts[f.name] = st.just(f.default_value(version))
            continue
        nullable = in_versions(f.nullable, version)
        if f.type == "{}":
            parts[f.name] = fields_values(f.fields, version, depth + 1)
        elif f.is_array:
            element = (fields_values(f.fields, version, depth + 1) if f.type == "[]"
                       else _primitive(f.type[2:], False))
            lists = st.lists(element, max_size=3 if depth < 2 else 1)
            parts[f.name] = st.none() | lists if nullable else lists
        else:
            parts[f.name] = _primitive(f.type, nullable)
    return st.fixed_dictionaries(parts)


@st.composite
def message_and_value(draw: st.DrawFn, specs: list[MessageSpec]) -> tuple[MessageSpec, int, dict[str, Any]]:
    spec = draw(st.sampled_from(specs))
    version = draw(st.integers(spec.min_version, spec.max_version))
    return spec, version, draw(fields_values(spec.fields, version))
