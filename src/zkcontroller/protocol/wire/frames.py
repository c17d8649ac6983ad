"""Kafka's framing and headers: a 4-byte big-endian size before every request and response; request header
v0 (api key, version, correlation id), v1 (+ client id) and v2 (+ tagged fields); response header v0
(correlation id) and v1 (+ tagged fields).

Which header a message takes follows from whether its version is flexible (Kafka's
``ApiMessageType.requestHeaderVersion``): ControlledShutdown v0 alone has header v0, and ApiVersions
responses always have header v0 so that a client that does not yet know our versions can read them.
The client id keeps its two-byte length even in header v2, as Kafka's schema says.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from zkcontroller.protocol.wire.codec import Reader, WireFormatError, write_uvarint

SIZE = struct.Struct(">i")
_HEADER = struct.Struct(">hhi")
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")

DEFAULT_MAX_REQUEST_BYTES = 104_857_600
"""``socket.request.max.bytes``: a larger size prefix closes the connection (Kafka's InvalidReceiveException)."""

API_VERSIONS_KEY = 18
CONTROLLED_SHUTDOWN_KEY = 7

FLEXIBLE_FROM: dict[int, int] = {
    0: 9, 1: 12, 2: 6, 3: 9, 4: 4, 5: 2, 6: 6, 7: 3, 8: 8, 9: 6, 10: 3, 11: 6, 12: 4, 13: 4, 14: 4, 15: 5, 16: 3,
    18: 3, 19: 5, 20: 4, 21: 2, 22: 2, 23: 4, 24: 3, 25: 3, 26: 3, 27: 1, 28: 3, 29: 2, 30: 2, 31: 2, 32: 4,
    33: 2, 34: 2, 35: 2, 36: 2, 37: 2, 38: 2, 39: 2, 40: 2, 41: 2, 42: 2, 43: 2, 44: 1, 45: 0, 46: 0, 48: 1,
    49: 1, 50: 0, 51: 0, 52: 0, 55: 0, 56: 0, 57: 0, 58: 0, 59: 0, 60: 0, 62: 0, 63: 0, 64: 0,
}
"""First flexible version of each API key Kafka 2.8 knows (from its message schemas). Needed to parse the
header of any request, even one we then refuse."""


def is_flexible(api_key: int, api_version: int) -> bool:
    first = FLEXIBLE_FROM.get(api_key)
    return first is not None and api_version >= first


def request_header_version(api_key: int, api_version: int) -> int:
    if api_key == CONTROLLED_SHUTDOWN_KEY and api_version == 0:
        return 0
    return 2 if is_flexible(api_key, api_version) else 1


def response_header_version(api_key: int, api_version: int) -> int:
    if api_key == API_VERSIONS_KEY:
        return 0
    return 1 if is_flexible(api_key, api_version) else 0


@dataclass(frozen=True, slots=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None = None

    @property
    def version(self) -> int:
        return request_header_version(self.api_key, self.api_version)


def encode_request_header(header: RequestHeader) -> bytes:
    out = bytearray(_HEADER.pack(header.api_key, header.api_version, header.correlation_id))
    version = header.version
    if version >= 1:
        if header.client_id is None:
            out += _INT16.pack(-1)
        else:
            data = header.client_id.encode("utf-8")
            out += _INT16.pack(len(data)) + data
    if version >= 2:
        write_uvarint(out, 0)  # no tagged fields
    return bytes(out)


def decode_request_header(buf: bytes | memoryview) -> tuple[RequestHeader, int]:
    """The header and the offset where the body starts. Raises `WireFormatError` on malformed bytes."""
    r = Reader(buf)
    api_key = r.unpack(_INT16, "request_api_key")
    api_version = r.unpack(_INT16, "request_api_version")
    correlation_id = r.unpack(_INT32, "correlation_id")
    client_id = None
    version = request_header_version(api_key, api_version)
    if version >= 1:
        n = r.unpack(_INT16, "client_id length")
        if n < -1:
            raise WireFormatError(f"client_id: negative length {n} at offset 8")
        if n >= 0:
            client_id = r.take(n, "client_id").decode("utf-8", errors="replace")
    if version >= 2:
        for _ in range(r.uvarint("header tagged fields")):
            r.uvarint("header tag")
            r.take(r.uvarint("header tag size"), "header tag data")
    return RequestHeader(api_key, api_version, correlation_id, client_id), r.pos


def encode_response_header(correlation_id: int, api_key: int, api_version: int) -> bytes:
    head = _INT32.pack(correlation_id)
    return head + b"\x00" if response_header_version(api_key, api_version) >= 1 else head


def decode_response_header(buf: bytes | memoryview, api_key: int, api_version: int) -> tuple[int, int]:
    """(correlation id, body offset) of a response to a request with this key and version."""
    r = Reader(buf)
    correlation_id = r.unpack(_INT32, "correlation_id")
    if response_header_version(api_key, api_version) >= 1:
        for _ in range(r.uvarint("header tagged fields")):
            r.uvarint("header tag")
            r.take(r.uvarint("header tag size"), "header tag data")
    return correlation_id, r.pos


def frame(*parts: bytes) -> bytes:
    """Size-prefix the concatenation of ``parts``."""
    payload = b"".join(parts)
    return SIZE.pack(len(payload)) + payload
