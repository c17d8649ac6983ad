"""A bounds check run on a client request body before kio's native reader sees it.

kio's reader (Rust) sizes an array from its length on the wire before reading it: a length of 2^31 (or a flexible
one near 2^32) makes it ask for hundreds of gigabytes, and a failed allocation aborts the whole process — the
broker, for one bad request. Kafka's own reader refuses such a length ("Tried to allocate a collection of size
N, but there are only M bytes remaining."). This walk follows the kio type's fields as the wire lays them out,
reading only lengths, and refuses (`WireFormatError`) any array, string or byte field longer than the bytes left,
or a body cut short. It allocates nothing in proportion to a length.
"""

from __future__ import annotations

import struct
from dataclasses import fields
from functools import cache
from typing import Any

from kio.serial._introspect import EntityField, EntityTupleField, PrimitiveTupleField, classify_field, get_field_tag

from zkcontroller.protocol.wire.codec import Reader, WireFormatError

_FIXED = {"bool": 1, "int8": 1, "int16": 2, "uint16": 2, "error_code": 2, "int32": 4, "uint32": 4,
          "timedelta_i32": 4, "int64": 8, "uint64": 8, "float64": 8, "timedelta_i64": 8, "datetime_i64": 8,
          "uuid": 16}
_VARIABLE = {"string": 2, "bytes": 4, "records": 4}
"""Variable-length kinds with the width of their length prefix in non-flexible versions."""
_INT16, _INT32 = struct.Struct(">h"), struct.Struct(">i")


class _UnknownKind(Exception):
    """A field kind this walk does not know: leave the body to kio (never seen in the APIs served)."""


def check_lengths(cls: type, buf: bytes | memoryview, offset: int) -> None:
    """Raise `WireFormatError` if a length in the ``cls`` body at ``buf[offset:]`` exceeds what follows it."""
    walker = _Walker(memoryview(buf), offset)
    try:
        walker.entity(cls)
    except _UnknownKind:
        return


class _Walker(Reader):
    """The codec's bounds-checked cursor, reading lengths only."""

    __slots__ = ()

    def _skip(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.end:
            raise WireFormatError(f"{what}: {n} bytes needed at offset {self.pos}, {self.remaining} remaining")
        self.pos += n

    def _length(self, flexible: bool, width: int, what: str) -> int:
        """An array's or a string's length; -1 for null."""
        if flexible:
            return self.uvarint(what) - 1
        return int(self.unpack(_INT16 if width == 2 else _INT32, what))

    def entity(self, cls: type) -> None:
        flexible = bool(getattr(cls, "__flexible__", False))
        for f, kind, shape, tagged in _plan(cls):
            if tagged:
                continue  # a tagged field travels in the tagged section below
            if isinstance(shape, EntityTupleField | PrimitiveTupleField):
                count = self._length(flexible, 4, f)
                if count > self.remaining:  # every element takes a byte at least
                    raise WireFormatError(f"{f}: {count} elements announced, {self.remaining} bytes "
                                          f"remaining at offset {self.pos}")
                for _ in range(max(count, 0)):
                    self._one(shape, kind, flexible, f)
            else:
                self._one(shape, kind, flexible, f)
        if flexible:
            for _ in range(self.uvarint("tagged field count")):
                self.uvarint("tag")
                self._skip(self.uvarint("tagged field size"), "tagged field")

    def _one(self, shape: Any, kind: str, flexible: bool, what: str) -> None:
        if isinstance(shape, EntityField | EntityTupleField):
            self.entity(shape.type_)
        elif kind in _FIXED:
            self._skip(_FIXED[kind], what)
        elif kind in _VARIABLE:
            n = self._length(flexible, _VARIABLE[kind], what)
            if n > 0:
                self._skip(n, what)
        else:
            raise _UnknownKind(kind)


@cache
def _plan(cls: type) -> tuple[tuple[str, str, Any, bool], ...]:
    """(name, kafka_type, shape, tagged) per field, in wire order."""
    return tuple((f.name, f.metadata.get("kafka_type", ""), classify_field(f), get_field_tag(f) is not None)
                 for f in fields(cls))
