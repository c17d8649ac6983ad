"""ZooKeeper connect strings read as the ZooKeeper 3.5.9 client Kafka 2.8.2 ships reads them
(``ConnectStringParser``), so ``--zookeeper`` accepts what ``kafka-topics --zookeeper`` accepts.

``host1:2181,host2/chroot``: the chroot is everything from the first ``/`` (``/`` alone is none; otherwise it must
be a valid ZooKeeper path); the hosts are split on ``,``, each piece trimmed (Java's ``trim``) and empty pieces
dropped; a host without a port, or with nothing after its last ``:``, gets ZooKeeper's default port 2181; an IPv6
address is written ``[addr]`` or ``[addr]:port``. Where ZooKeeper throws, `parse_connect_string` raises
`ValueError` with ZooKeeper's (or Java's) message.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

DEFAULT_PORT = 2181
"""``ConnectStringParser.DEFAULT_PORT``."""

_JAVA_TRIM = "".join(map(chr, range(0x21)))


@dataclass(frozen=True)
class ConnectString:
    servers: tuple[tuple[str, int], ...]
    chroot: str
    """``""`` for none, else ``/a/b``."""

    @property
    def hosts(self) -> str:
        """The servers with explicit ports, as kazoo takes them (IPv6 addresses in brackets)."""
        return ",".join(f"[{host}]:{port}" if ":" in host else f"{host}:{port}" for host, port in self.servers)


def _parse_int(text: str) -> int:
    """``Integer.parseInt``, raising with ``NumberFormatException``'s message."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or any(ord(c) > 0xFFFF or not c.isdecimal() for c in digits):
        raise ValueError(f'For input string: "{text}"')
    ascii_digits = "".join(str(unicodedata.decimal(c)) for c in digits).lstrip("0") or "0"
    if len(ascii_digits) > 10:  # out of range, and int() would refuse 4,300 digits with a message of its own
        raise ValueError(f'For input string: "{text}"')
    value = int(ascii_digits) * (-1 if text[0] == "-" else 1)
    if not -(2**31) <= value < 2**31:
        raise ValueError(f'For input string: "{text}"')
    return value


def validate_path(path: str) -> None:
    """``PathUtils.validatePath`` (3.5.9), with its messages (`path_refusal`)."""
    reason = path_refusal(path)
    if reason is not None:
        raise ValueError(reason)


def path_refusal(path: str) -> str | None:
    """Why ZooKeeper's client refuses ``path`` before sending anything (``PathUtils.validatePath``'s message), None
    if it takes it. Positions count UTF-16 units, as Java's ``char[]`` does (a character beyond the BMP is two
    surrogates, both refused)."""
    if not path:
        return "Path length must be > 0"
    if path[0] != "/":
        return "Path must start with / character"
    if len(path) == 1:
        return None
    if path[-1] == "/":
        return "Path must not end with / character"
    units = path.encode("utf-16-le", "surrogatepass")
    chars = [chr(int.from_bytes(units[i:i + 2], "little")) for i in range(0, len(units), 2)]
    reason = None
    for i in range(1, len(chars)):
        c, last = chars[i], chars[i - 1]
        ends_name = i + 1 == len(chars) or chars[i + 1] == "/"
        if c == "\0":
            reason = f"null character not allowed @{i}"
        elif c == "/" and last == "/":
            reason = f"empty node name specified @{i}"
        elif c == "." and ends_name and (last == "/" or (last == "." and chars[i - 2] == "/")):  # "." or ".."
            reason = f"relative paths not allowed @{i}"
        elif ("\u0000" < c <= "\u001f" or "\u007f" <= c <= "\u009f" or "\ud800" <= c <= "\uf8ff"
              or "\ufff0" <= c <= "\uffff"):
            reason = f"invalid character @{i}"
        if reason is not None:
            return f'Invalid path string "{path}" caused by {reason}'
    return None


def _server(piece: str) -> tuple[str, int]:
    if piece.startswith("["):  # NetUtils.getIPV6HostAndPort
        close = piece.rfind("]")
        if close < 0:
            raise ValueError(f"{piece} starts with '[' but has no matching ']'")
        host = piece[1:close]
        if not host:
            raise ValueError(" is empty.")  # ZooKeeper formats the empty host into its message
        if len(piece) == close + 1:
            return host, DEFAULT_PORT
        if piece[close + 1] != ":":
            raise ValueError(f"{piece} does not have : after ]")
        if close + 2 == len(piece):
            raise ValueError(f"{piece} doesn't have a port after colon.")
        host, port = host, _parse_int(piece[close + 2:])
    else:
        colon = piece.rfind(":")
        host, port = piece, DEFAULT_PORT
        if colon >= 0:
            if colon < len(piece) - 1:  # "host:" keeps the default port
                port = _parse_int(piece[colon + 1:])
            host = piece[:colon]
    if not 0 <= port <= 0xFFFF:  # InetSocketAddress.createUnresolved
        raise ValueError(f"port out of range:{port}")
    if not host:
        raise ValueError(f"no host in {piece!r}")  # ZooKeeper would only fail to connect
    return host, port


def parse_connect_string(text: str) -> ConnectString:
    chroot = ""
    slash = text.find("/")
    if slash >= 0:
        if len(text) - slash > 1:
            chroot = text[slash:]
            validate_path(chroot)
        text = text[:slash]
    pieces = text.split(",")
    while pieces and pieces[-1] == "":  # String.split drops trailing empty strings
        pieces.pop()
    servers = tuple(_server(p) for p in (piece.strip(_JAVA_TRIM) for piece in pieces) if p)
    if not servers:
        raise ValueError("A HostProvider may not be empty!")  # StaticHostProvider
    return ConnectString(servers, chroot)
