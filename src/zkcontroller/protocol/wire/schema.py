"""The shape of a Kafka message as data: fields with the versions they exist in, nullable versions, tags and
defaults, exactly as Kafka's JSON message schemas state them (``clients/.../common/message/*.json``).

`messages` holds one table of these for the inter-broker APIs of Kafka 2.8; `codec` reads and writes any of
them, so no message has a hand-written encoder. A version range is written as Kafka writes it: ``"0+"``,
``"3-5"``, ``"7"``; the empty string means "never" (e.g. a field that is never nullable).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

MAX_VERSION = 0x7FFF

PRIMITIVES = frozenset({"int8", "int16", "int32", "int64", "float64", "bool", "string", "bytes", "records", "uuid"})


@cache
def version_range(spec: str) -> tuple[int, int] | None:
    """``"0+"`` → (0, 32767), ``"3-5"`` → (3, 5), ``"7"`` → (7, 7), ``""``/``"none"`` → None."""
    spec = spec.strip()
    if not spec or spec == "none":
        return None
    if spec.endswith("+"):
        return int(spec[:-1]), MAX_VERSION
    if "-" in spec:
        lo, hi = spec.split("-", 1)
        return int(lo), int(hi)
    return int(spec), int(spec)


def in_versions(spec: str, version: int) -> bool:
    r = version_range(spec)
    return r is not None and r[0] <= version <= r[1]


@dataclass(frozen=True, slots=True)
class Field:
    """One field. ``type`` is a primitive name, ``"[]int32"``-style arrays of primitives, ``"[]"`` for an
    array of the struct ``fields``, or ``"{}"`` for a single struct (Kafka's tagged struct fields)."""

    name: str
    type: str
    versions: str = "0+"
    nullable: str = ""
    tag: int | None = None
    tagged_versions: str = ""
    default: Any = None
    fields: tuple[Field, ...] = ()

    def __post_init__(self) -> None:
        element = self.type[2:] if self.type.startswith("[]") else self.type
        if element not in ("", "{}") and element not in PRIMITIVES:
            raise ValueError(f"field {self.name}: unknown type {self.type!r}")
        if element in ("", "{}") and not self.fields:
            raise ValueError(f"field {self.name}: a struct needs fields")
        if (self.tag is None) != (not self.tagged_versions):
            raise ValueError(f"field {self.name}: a tagged field needs both tag and tagged_versions")

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    def default_value(self, version: int) -> Any:
        """Kafka's implicit defaults: 0, false, "", empty array, zero uuid; null where nullable and unset."""
        if self.default is not None:
            return self.default
        if self.is_array:
            return None if in_versions(self.nullable, version) else []
        if self.type == "{}":
            return {f.name: f.default_value(version) for f in self.fields}
        if in_versions(self.nullable, version) and self.type in ("string", "bytes", "records"):
            return None
        return _ZERO[self.type]


_ZERO: dict[str, Any] = {"int8": 0, "int16": 0, "int32": 0, "int64": 0, "float64": 0.0, "bool": False,
                         "string": "", "bytes": b"", "records": None, "uuid": bytes(16)}


@dataclass(frozen=True, slots=True)
class MessageSpec:
    """A request or response body: valid and flexible versions, fields."""

    name: str
    valid: str
    flexible: str
    fields: tuple[Field, ...]

    @property
    def max_version(self) -> int:
        r = version_range(self.valid)
        assert r is not None
        return r[1]

    @property
    def min_version(self) -> int:
        r = version_range(self.valid)
        assert r is not None
        return r[0]

    def is_valid(self, version: int) -> bool:
        return in_versions(self.valid, version)

    def is_flexible(self, version: int) -> bool:
        return in_versions(self.flexible, version)


@dataclass(frozen=True, slots=True)
class ApiSpec:
    api_key: int
    name: str
    request: MessageSpec
    response: MessageSpec
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def min_version(self) -> int:
        return self.request.min_version

    @property
    def max_version(self) -> int:
        return self.request.max_version
