"""ZooKeeper >= 3.6's read-only multi (``multiRead``, opcode 22) as a kazoo request.

kazoo has no call for it, but its connection sends any object with a ``type``, ``serialize()`` and
``deserialize(bytes, offset)``. The encoding is the one of kazoo's ``Transaction`` (opcode 14): each op is a
``MultiHeader(type, done=False, err=-1)`` followed by the op's record, closed by ``MultiHeader(-1, True, -1)``.
The answer holds one header per op: ``getData`` (4) with the data buffer and the stat, or ``-1`` with an error
code (a missing node answers ``NONODE`` there without failing the others). Unlike a write multi, reads are not
atomic: each answers on its own.

ZooKeeper drops the watch flag of a ``getData`` inside a ``multiRead`` (``MultiOperationRecord`` keeps only the
path), so these reads never arm watches; callers that need one use single reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zkcontroller.coordination.api import Stat
from zkcontroller.coordination.errors import ErrorCode, error_for_code
from zkcontroller.coordination.kazoo_jute import END, ERROR_OP, HEADER, INT, STAT, op_header

MULTI_READ_OPCODE = 22
GET_DATA_OPCODE = 4
# One answer is a few hundred KiB for Kafka's small znodes: well inside ZooKeeper's 1 MiB jute.maxbuffer.
MULTI_READ_MAX_OPS = 1000

_GET_DATA_HEADER = op_header(GET_DATA_OPCODE)
_NO_WATCH = b"\x00"

RawAnswer = tuple[bytes | None, tuple[int, ...]] | int


class MultiRead:
    """A kazoo request: ``getData`` (no watch) of each of ``paths``, already chrooted."""

    type = MULTI_READ_OPCODE
    __slots__ = ("paths",)

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = paths

    def serialize(self) -> bytes:
        parts: list[bytes] = []
        for path in self.paths:
            encoded = path.encode()
            parts += (_GET_DATA_HEADER, INT.pack(len(encoded)), encoded, _NO_WATCH)
        parts.append(END)
        return b"".join(parts)

    @classmethod
    def deserialize(cls, buf: bytes, offset: int) -> list[RawAnswer]:
        """One entry per op: ``(data, stat fields)`` or an error code (int)."""
        out: list[RawAnswer] = []
        header_unpack, int_unpack, stat_unpack = HEADER.unpack_from, INT.unpack_from, STAT.unpack_from
        header_size, stat_size = HEADER.size, STAT.size
        while True:
            op_type, done, _err = header_unpack(buf, offset)
            offset += header_size
            if done:
                return out
            if op_type == GET_DATA_OPCODE:
                (length,) = int_unpack(buf, offset)
                offset += 4
                data = None
                if length >= 0:
                    data = bytes(buf[offset : offset + length])
                    offset += length
                out.append((data, stat_unpack(buf, offset)))
                offset += stat_size
            elif op_type == ERROR_OP:
                out.append(int_unpack(buf, offset)[0])
                offset += 4
            else:
                raise ValueError(f"unexpected op type {op_type} in a multiRead answer")

    def __repr__(self) -> str:
        return f"MultiRead({len(self.paths)} paths)"


def read_results(raw: Any, paths: Sequence[str]) -> list[tuple[bytes | None, Stat] | None]:
    """Our results for ``paths`` from a `MultiRead` answer: None for a missing node, other errors raised."""
    if len(raw) != len(paths):
        raise ValueError(f"multiRead answered {len(raw)} results for {len(paths)} reads")
    out: list[tuple[bytes | None, Stat] | None] = []
    for path, answer in zip(paths, raw, strict=True):
        if isinstance(answer, int):
            if answer == ErrorCode.NO_NODE:
                out.append(None)
                continue
            raise error_for_code(answer, path)
        data, fields = answer
        out.append((data, Stat(*fields)))  # None (length -1) is null data, kept apart from b""
    return out
