"""One generic encoder/decoder for every message described by a `schema.MessageSpec`.

Values are plain dicts keyed by the schema's snake_case field names; arrays of structs are lists of dicts,
uuids are 16 raw bytes. A field absent from a version reads as its default and is not written. Flexible
versions use compact lengths (unsigned varint, +1 so 0 means null) and end every struct with its tagged
fields; unknown tags are skipped, as Kafka does. Every read is bounds-checked: bad input raises
`WireFormatError` naming the field and offset, never anything else, and no length can make the decoder
allocate more than the bytes it was given.
"""

from __future__ import annotations

import struct
from typing import Any

from zkcontroller.protocol.wire.schema import Field, MessageSpec, in_versions


class WireFormatError(ValueError):
    """Malformed bytes: what was being read, and where."""


_STRUCTS = {t: struct.Struct(f) for t, f in
            (("int8", ">b"), ("int16", ">h"), ("int32", ">i"), ("int64", ">q"), ("float64", ">d"))}
_INT16, _INT32 = _STRUCTS["int16"], _STRUCTS["int32"]


# ---------------------------------------------------------------------------------------------- writing

def write_uvarint(out: bytearray, value: int) -> None:
    if value < 0:
        raise ValueError(f"unsigned varint cannot be negative: {value}")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _write_length(out: bytearray, n: int | None, flexible: bool, legacy: struct.Struct) -> None:
    if flexible:
        write_uvarint(out, 0 if n is None else n + 1)
    else:
        out += legacy.pack(-1 if n is None else n)


def _write_primitive(out: bytearray, kind: str, value: Any, flexible: bool, name: str) -> None:
    s = _STRUCTS.get(kind)
    if s is not None:
        out += s.pack(value)
    elif kind == "bool":
        out.append(1 if value else 0)
    elif kind == "string":
        data = None if value is None else value.encode("utf-8")
        _write_length(out, None if data is None else len(data), flexible, _INT16)
        if data:
            out += data
    elif kind in ("bytes", "records"):
        _write_length(out, None if value is None else len(value), flexible, _INT32)
        if value:
            out += value
    elif kind == "uuid":
        if len(value) != 16:
            raise ValueError(f"{name}: a uuid has 16 bytes, got {len(value)}")
        out += value
    else:  # pragma: no cover - the schema rejects other types
        raise ValueError(f"{name}: unknown type {kind}")


def _write_fields(out: bytearray, fields: tuple[Field, ...], version: int, flexible: bool,
                  value: dict[str, Any]) -> None:
    tagged: list[tuple[int, bytes]] = []
    for f in _active(fields, version):
        v = value.get(f.name, f.default_value(version)) if value else f.default_value(version)
        if flexible and f.tag is not None and in_versions(f.tagged_versions, version):
            if v == f.default_value(version):
                continue  # tagged fields at their default are left out
            buf = bytearray()
            _write_field(buf, f, version, flexible, v)
            tagged.append((f.tag, bytes(buf)))
            continue
        _write_field(out, f, version, flexible, v)
    if flexible:
        write_uvarint(out, len(tagged))
        for tag, data in sorted(tagged):
            write_uvarint(out, tag)
            write_uvarint(out, len(data))
            out += data


def _write_field(out: bytearray, f: Field, version: int, flexible: bool, v: Any) -> None:
    try:
        if f.is_array:
            _write_length(out, None if v is None else len(v), flexible, _INT32)
            if v is None:
                return
            if f.type == "[]":
                for item in v:
                    _write_fields(out, f.fields, version, flexible, item)
            else:
                element = f.type[2:]
                for item in v:
                    _write_primitive(out, element, item, flexible, f.name)
        elif f.type == "{}":
            _write_fields(out, f.fields, version, flexible, v)
        else:
            _write_primitive(out, f.type, v, flexible, f.name)
    except (struct.error, TypeError, AttributeError) as e:
        raise ValueError(f"{f.name}: cannot write {v!r} as {f.type}: {e}") from None


def encode(spec: MessageSpec, version: int, value: dict[str, Any]) -> bytes:
    """The body of ``spec`` at ``version``; raises ValueError if the version is not valid for it."""
    if not spec.is_valid(version):
        raise ValueError(f"{spec.name} has no version {version} (valid {spec.valid})")
    out = bytearray()
    _write_fields(out, spec.fields, version, spec.is_flexible(version), value)
    return bytes(out)


# ---------------------------------------------------------------------------------------------- reading

class Reader:
    """A cursor over a buffer; every read checks there are enough bytes left."""

    __slots__ = ("buf", "end", "pos")

    def __init__(self, buf: bytes | memoryview, pos: int = 0, end: int | None = None) -> None:
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise WireFormatError(f"{what}: needs {n} bytes at offset {self.pos}, {self.remaining} left")
        data = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return data

    def unpack(self, s: struct.Struct, what: str) -> Any:
        if self.pos + s.size > self.end:
            raise WireFormatError(f"{what}: needs {s.size} bytes at offset {self.pos}, {self.remaining} left")
        (value,) = s.unpack_from(self.buf, self.pos)
        self.pos += s.size
        return value

    def uvarint(self, what: str) -> int:
        value = shift = 0
        while True:
            if self.pos >= self.end:
                raise WireFormatError(f"{what}: varint runs past the end at offset {self.pos}")
            b = self.buf[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift > 28:
                raise WireFormatError(f"{what}: varint longer than 5 bytes at offset {self.pos}")

    def length(self, flexible: bool, legacy: struct.Struct, what: str) -> int | None:
        """A length or count; None for null. Negative legacy lengths other than -1 are malformed."""
        n = self.uvarint(what) - 1 if flexible else self.unpack(legacy, what)
        if n == -1:
            return None
        if n < 0:
            raise WireFormatError(f"{what}: negative length {n} at offset {self.pos}")
        if n > self.remaining:
            raise WireFormatError(f"{what}: length {n} exceeds the {self.remaining} bytes left at offset {self.pos}")
        return n


def _read_primitive(r: Reader, kind: str, flexible: bool, nullable: bool, what: str) -> Any:
    s = _STRUCTS.get(kind)
    if s is not None:
        return r.unpack(s, what)
    if kind == "bool":
        return r.take(1, what) != b"\x00"
    if kind == "uuid":
        return r.take(16, what)
    legacy = _INT16 if kind == "string" else _INT32
    n = r.length(flexible, legacy, what)
    if n is None:
        if not nullable:
            raise WireFormatError(f"{what}: null where the schema allows none, at offset {r.pos}")
        return None
    data = r.take(n, what)
    if kind != "string":
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise WireFormatError(f"{what}: invalid UTF-8 at offset {r.pos - n}: {e}") from None


def _read_fields(r: Reader, fields: tuple[Field, ...], version: int, flexible: bool, path: str) -> dict[str, Any]:
    value: dict[str, Any] = {}
    tagged: dict[int, Field] = {}
    for f in fields:
        if not in_versions(f.versions, version):
            value[f.name] = f.default_value(version)
        elif flexible and f.tag is not None and in_versions(f.tagged_versions, version):
            tagged[f.tag] = f
            value[f.name] = f.default_value(version)
        else:
            value[f.name] = _read_field(r, f, version, flexible, path)
    if flexible:
        count = r.uvarint(f"{path}tagged fields")
        for _ in range(count):
            tag = r.uvarint(f"{path}tag")
            size = r.uvarint(f"{path}tag {tag} size")
            if size > r.remaining:
                raise WireFormatError(f"{path}tag {tag}: size {size} exceeds the {r.remaining} bytes left")
            known = tagged.get(tag)
            if known is None:
                r.pos += size  # unknown tags are skipped
                continue
            sub = Reader(r.buf, r.pos, r.pos + size)
            value[known.name] = _read_field(sub, known, version, flexible, path)
            r.pos += size
    return value


def _read_field(r: Reader, f: Field, version: int, flexible: bool, path: str) -> Any:
    what = path + f.name
    nullable = in_versions(f.nullable, version)
    if f.is_array:
        n = r.length(flexible, _INT32, what)
        if n is None:
            if not nullable:
                raise WireFormatError(f"{what}: null array where the schema allows none, at offset {r.pos}")
            return None
        if f.type == "[]":
            return [_read_fields(r, f.fields, version, flexible, f"{what}[{i}].") for i in range(n)]
        element = f.type[2:]
        return [_read_primitive(r, element, flexible, False, what) for _ in range(n)]
    if f.type == "{}":
        return _read_fields(r, f.fields, version, flexible, what + ".")
    return _read_primitive(r, f.type, flexible, nullable, what)


def decode(spec: MessageSpec, version: int, buf: bytes | memoryview, offset: int = 0,
           *, exact: bool = True) -> dict[str, Any]:
    """Read a body of ``spec`` at ``version`` from ``buf[offset:]``; with ``exact``, trailing bytes are an error."""
    if not spec.is_valid(version):
        raise WireFormatError(f"{spec.name} has no version {version} (valid {spec.valid})")
    r = Reader(buf, offset)
    value = _read_fields(r, spec.fields, version, spec.is_flexible(version), "")
    if exact and r.remaining:
        raise WireFormatError(f"{spec.name} v{version}: {r.remaining} trailing bytes at offset {r.pos}")
    return value


_ACTIVE: dict[tuple[int, int], tuple[tuple[Field, ...], tuple[Field, ...]]] = {}


def _active(fields: tuple[Field, ...], version: int) -> tuple[Field, ...]:
    """The fields present at ``version``, cached by the identity of the (long-lived) schema tuple: hashing
    nested frozen dataclasses on every call would cost more than the encoding."""
    key = (id(fields), version)
    hit = _ACTIVE.get(key)
    if hit is None or hit[0] is not fields:
        hit = _ACTIVE[key] = (fields, tuple(f for f in fields if in_versions(f.versions, version)))
    return hit[1]
