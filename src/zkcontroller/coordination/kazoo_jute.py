"""The jute framing shared by our two kazoo multi requests (`kazoo_multi_read.MultiRead`,
`kazoo_multi_write.Multi`): each op and each answer opens with ZooKeeper's ``MultiHeader(type, done, err)``
and the list closes with ``MultiHeader(-1, True, -1)``; integers are big-endian; a stat is eleven fields.
Paths go to the server under the client's chroot, as kazoo's own calls send them.
"""

from __future__ import annotations

import struct

HEADER = struct.Struct("!iBi")
INT = struct.Struct("!i")
STAT = struct.Struct("!qqqqiiiqiiq")
ERROR_OP = -1
"""The header type of an answer that carries an error code instead of a result."""
END = HEADER.pack(-1, 1, -1)
_NULL_BUFFER = (INT.pack(-1), b"")


def buffer_parts(data: bytes | None) -> tuple[bytes, bytes]:
    """A jute buffer as (length, bytes): None is null, length -1 (kazoo's ``write_buffer``), not an empty one."""
    return _NULL_BUFFER if data is None else (INT.pack(len(data)), data)


def op_header(op_type: int) -> bytes:
    return HEADER.pack(op_type, 0, -1)


def chrooted(chroot: str, path: str) -> str:
    """``path`` as the server sees it (kazoo's ``_prefix_root`` for the validated paths we send)."""
    if not chroot:
        return path
    return chroot + path if path != "/" else chroot
