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


_PRIMITIVE, _PRIMITIVE_ARRAY, _STRUCT_ARRAY, _STRUCT = range(4)


class _Op:
    """One field compiled for one version and flexibility: what the loops need, looked up once. Encoding and
    decoding walk these instead of the schema, so version ranges, defaults and types are not re-evaluated for
    every element of a 100,000-partition array."""

    __slots__ = ("default", "element", "field", "kind", "mutable_default", "name", "nullable", "packer", "sub",
                 "tag", "tagged")

    def __init__(self, f: Field, version: int, flexible: bool) -> None:
        self.field = f
        self.name = f.name
        self.default = f.default_value(version)
        self.mutable_default = isinstance(self.default, (list, dict))
        self.nullable = in_versions(f.nullable, version)
        self.tagged = flexible and f.tag is not None and in_versions(f.tagged_versions, version)
        self.tag = f.tag
        if f.type == "[]":
            self.kind, self.element = _STRUCT_ARRAY, ""
        elif f.is_array:
            self.kind, self.element = _PRIMITIVE_ARRAY, f.type[2:]
        elif f.type == "{}":
            self.kind, self.element = _STRUCT, ""
        else:
            self.kind, self.element = _PRIMITIVE, f.type
        self.packer = _STRUCTS.get(self.element)
        self.sub = _plan(f.fields, version, flexible) if f.fields else None

    def fresh_default(self, version: int) -> Any:
        return self.field.default_value(version) if self.mutable_default else self.default


class _Plan:
    __slots__ = ("absent", "fields", "flexible", "present", "tagged", "version")

    def __init__(self, fields: tuple[Field, ...], version: int, flexible: bool) -> None:
        self.fields, self.version, self.flexible = fields, version, flexible
        ops = [(_Op(f, version, flexible), in_versions(f.versions, version)) for f in fields]
        self.present = tuple(op for op, here in ops if here)
        self.absent = tuple(op for op, here in ops if not here)
        self.tagged = {op.tag: op for op in self.present if op.tagged}


_PLANS: dict[tuple[int, int, bool], _Plan] = {}


def _plan(fields: tuple[Field, ...], version: int, flexible: bool) -> _Plan:
    """The compiled fields, cached by the identity of the (long-lived) schema tuple: hashing nested frozen
    dataclasses on every call would cost more than the encoding."""
    key = (id(fields), version, flexible)
    plan = _PLANS.get(key)
    if plan is None or plan.fields is not fields:
        plan = _PLANS[key] = _Plan(fields, version, flexible)
    return plan


def _write_fields(out: bytearray, plan: _Plan, value: dict[str, Any]) -> None:
    flexible = plan.flexible
    tagged: list[tuple[int, bytes]] = []
    get = value.get if value else None
    for op in plan.present:
        v = op.default if get is None else get(op.name, op.default)
        if op.tagged:
            if v == op.default:
                continue  # tagged fields at their default are left out
            buf = bytearray()
            _write_field(buf, op, flexible, v)
            tagged.append((op.tag, bytes(buf)))  # type: ignore[arg-type]
            continue
        packer = op.packer
        if op.kind == _PRIMITIVE and packer is not None:
            try:
                out += packer.pack(v)
            except (struct.error, TypeError) as e:
                raise ValueError(f"{op.name}: cannot write {v!r} as {op.element}: {e}") from None
        else:
            _write_field(out, op, flexible, v)
    if flexible:
        write_uvarint(out, len(tagged))
        for tag, data in sorted(tagged):
            write_uvarint(out, tag)
            write_uvarint(out, len(data))
            out += data


def _write_field(out: bytearray, op: _Op, flexible: bool, v: Any) -> None:
    try:
        kind = op.kind
        if kind in (_STRUCT_ARRAY, _PRIMITIVE_ARRAY):
            _write_length(out, None if v is None else len(v), flexible, _INT32)
            if v is None:
                return
            if kind == _STRUCT_ARRAY:
                sub = op.sub
                for item in v:
                    _write_fields(out, sub, item)  # type: ignore[arg-type]
            elif op.packer is not None:
                pack = op.packer.pack
                for item in v:
                    out += pack(item)
            else:
                for item in v:
                    _write_primitive(out, op.element, item, flexible, op.name)
        elif kind == _STRUCT:
            _write_fields(out, op.sub, v)  # type: ignore[arg-type]
        else:
            _write_primitive(out, op.element, v, flexible, op.name)
    except (struct.error, TypeError, AttributeError) as e:
        raise ValueError(f"{op.name}: cannot write {v!r} as {op.field.type}: {e}") from None


def encode(spec: MessageSpec, version: int, value: dict[str, Any]) -> bytes:
    """The body of ``spec`` at ``version``; raises ValueError if the version is not valid for it."""
    if not spec.is_valid(version):
        raise ValueError(f"{spec.name} has no version {version} (valid {spec.valid})")
    out = bytearray()
    _write_fields(out, _plan(spec.fields, version, spec.is_flexible(version)), value)
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


def _read_fields(r: Reader, plan: _Plan, path: str) -> dict[str, Any]:
    flexible, version = plan.flexible, plan.version
    value: dict[str, Any] = {op.name: op.fresh_default(version) for op in plan.absent} if plan.absent else {}
    for op in plan.present:
        if op.tagged:
            value[op.name] = op.fresh_default(version)
        elif op.kind == _PRIMITIVE and op.packer is not None:
            value[op.name] = r.unpack(op.packer, path + op.name)
        else:
            value[op.name] = _read_field(r, op, flexible, path)
    if flexible:
        count = r.uvarint(f"{path}tagged fields")
        for _ in range(count):
            tag = r.uvarint(f"{path}tag")
            size = r.uvarint(f"{path}tag {tag} size")
            if size > r.remaining:
                raise WireFormatError(f"{path}tag {tag}: size {size} exceeds the {r.remaining} bytes left")
            known = plan.tagged.get(tag)
            if known is None:
                r.pos += size  # unknown tags are skipped
                continue
            sub = Reader(r.buf, r.pos, r.pos + size)
            value[known.name] = _read_field(sub, known, flexible, path)
            r.pos += size
    return value


def _read_field(r: Reader, op: _Op, flexible: bool, path: str) -> Any:
    what = path + op.name
    kind = op.kind
    if kind in (_STRUCT_ARRAY, _PRIMITIVE_ARRAY):
        n = r.length(flexible, _INT32, what)
        if n is None:
            if not op.nullable:
                raise WireFormatError(f"{what}: null array where the schema allows none, at offset {r.pos}")
            return None
        if kind == _STRUCT_ARRAY:
            sub = op.sub
            items = []
            for i in range(n):
                try:
                    items.append(_read_fields(r, sub, ""))  # type: ignore[arg-type]
                except WireFormatError as e:  # the element's path, only when something is wrong
                    raise WireFormatError(f"{what}[{i}].{e}") from None
            return items
        if op.packer is not None:
            unpack = r.unpack
            return [unpack(op.packer, what) for _ in range(n)]
        return [_read_primitive(r, op.element, flexible, False, what) for _ in range(n)]
    if kind == _STRUCT:
        return _read_fields(r, op.sub, what + ".")  # type: ignore[arg-type]
    return _read_primitive(r, op.element, flexible, op.nullable, what)


def decode(spec: MessageSpec, version: int, buf: bytes | memoryview, offset: int = 0,
           *, exact: bool = True) -> dict[str, Any]:
    """Read a body of ``spec`` at ``version`` from ``buf[offset:]``; with ``exact``, trailing bytes are an error."""
    if not spec.is_valid(version):
        raise WireFormatError(f"{spec.name} has no version {version} (valid {spec.valid})")
    r = Reader(buf, offset)
    value = _read_fields(r, _plan(spec.fields, version, spec.is_flexible(version)), "")
    if exact and r.remaining:
        raise WireFormatError(f"{spec.name} v{version}: {r.remaining} trailing bytes at offset {r.pos}")
    return value
