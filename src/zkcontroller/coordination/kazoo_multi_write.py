"""ZooKeeper's ``multi`` (opcode 14) as a lean kazoo request: our ops in, our results out.

kazoo's own ``Transaction`` costs about 9 µs of Python per op on the way through — a namedtuple and a
``bytearray`` per op to serialize, a ``ZnodeStat`` and an exception instance per result, then our translation
of each — which is a tenth of a second per 10,000 partition-state writes, taken under the GIL from the
controller's loop. This class writes the same bytes (each op a ``MultiHeader(type, done=False, err=-1)``
and its record, closed by ``MultiHeader(-1, True, -1)``) straight from our `Op` values, and reads the answer
into plain values that `multi_results` turns into our `OpResult` types.

kazoo's connection sends any object with ``type``, ``serialize()`` and ``deserialize(bytes, offset)``; for
type 14 it also strips the chroot from the created paths in the answer, as for its own transactions.
Creates carry the client's default ACL (``OPEN_ACL_UNSAFE`` without one), as kazoo's ``transaction().create``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zkcontroller.coordination.api import (
    CheckOp,
    CheckResult,
    CreateOp,
    CreateResult,
    DeleteOp,
    DeleteResult,
    ErrorResult,
    Op,
    OpResult,
    SetDataOp,
    SetDataResult,
    Stat,
)
from zkcontroller.coordination.errors import ErrorCode
from zkcontroller.coordination.kazoo_jute import END, ERROR_OP, HEADER, INT, STAT, buffer_parts, chrooted, op_header

MULTI_OPCODE = 14
CREATE, DELETE, SET_DATA, CHECK = 1, 2, 5, 13

_OP_HEADERS = {kind: op_header(kind) for kind in (CREATE, DELETE, SET_DATA, CHECK)}

RawResult = str | tuple[int, ...] | bool | int
"""Per op: the created path, a setData's stat fields, True (delete, check), or an error code (int)."""


def encode_acl(acl: Sequence[Any]) -> bytes:
    """kazoo ``ACL`` values (perms, id.scheme, id.id) in jute: a count, then each entry."""
    parts = [INT.pack(len(acl))]
    for entry in acl:
        scheme, ident = entry.id.scheme.encode(), entry.id.id.encode()
        parts += (INT.pack(entry.perms), INT.pack(len(scheme)), scheme, INT.pack(len(ident)), ident)
    return b"".join(parts)


class Multi:
    """A kazoo request: ``ops`` applied atomically; ``chroot`` is prefixed to every path."""

    type = MULTI_OPCODE
    __slots__ = ("acl", "chroot", "ops")

    def __init__(self, ops: Sequence[Op], chroot: str, acl: bytes) -> None:
        self.ops = ops
        self.chroot = chroot
        self.acl = acl

    def serialize(self) -> bytes:
        pack_int, chroot, acl = INT.pack, self.chroot, self.acl
        parts: list[bytes] = []
        for op in self.ops:
            encoded = chrooted(chroot, op.path).encode()
            if isinstance(op, SetDataOp):
                parts += (_OP_HEADERS[SET_DATA], pack_int(len(encoded)), encoded, *buffer_parts(op.data),
                          pack_int(op.version))
            elif isinstance(op, CreateOp):
                flags = (1 if op.mode.ephemeral else 0) | (2 if op.mode.sequential else 0)
                parts += (_OP_HEADERS[CREATE], pack_int(len(encoded)), encoded, *buffer_parts(op.data),
                          acl, pack_int(flags))
            elif isinstance(op, DeleteOp):
                parts += (_OP_HEADERS[DELETE], pack_int(len(encoded)), encoded, pack_int(op.version))
            elif isinstance(op, CheckOp):
                parts += (_OP_HEADERS[CHECK], pack_int(len(encoded)), encoded, pack_int(op.version))
            else:
                raise TypeError(f"not a multi op: {op!r}")
        parts.append(END)
        return b"".join(parts)

    @classmethod
    def deserialize(cls, buf: bytes, offset: int) -> list[RawResult]:
        out: list[RawResult] = []
        header_unpack, int_unpack, stat_unpack = HEADER.unpack_from, INT.unpack_from, STAT.unpack_from
        header_size, stat_size = HEADER.size, STAT.size
        while True:
            kind, done, _err = header_unpack(buf, offset)
            offset += header_size
            if done:
                return out
            if kind == SET_DATA:
                out.append(stat_unpack(buf, offset))
                offset += stat_size
            elif kind in (DELETE, CHECK):
                out.append(True)
            elif kind == CREATE:
                (length,) = int_unpack(buf, offset)
                offset += 4
                out.append(bytes(buf[offset : offset + length]).decode())
                offset += length
            elif kind == ERROR_OP:
                out.append(int_unpack(buf, offset)[0])
                offset += 4
            else:
                raise ValueError(f"unexpected op type {kind} in a multi answer")

    def __repr__(self) -> str:
        return f"Multi({len(self.ops)} ops)"


def _error(code: int) -> ErrorResult:
    try:
        return ErrorResult(ErrorCode(code))
    except ValueError:  # a code this client does not know
        return ErrorResult(ErrorCode.SYSTEM_ERROR)


def multi_results(ops: Sequence[Op], raw: Sequence[RawResult]) -> tuple[OpResult, ...]:
    """Our result for each op from a `Multi` answer (its created paths already without the chroot)."""
    if len(raw) != len(ops):
        raise ValueError(f"multi answered {len(raw)} results for {len(ops)} ops")
    out: list[OpResult] = []
    for op, answer in zip(ops, raw, strict=True):
        if type(answer) is tuple:
            out.append(SetDataResult(Stat(*answer)))
        elif type(answer) is int:
            out.append(_error(answer))
        elif type(answer) is str:
            out.append(CreateResult(answer))
        else:
            out.append(DeleteResult() if isinstance(op, DeleteOp) else CheckResult())
    return tuple(out)
