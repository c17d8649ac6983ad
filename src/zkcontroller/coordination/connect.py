"""Which store a command talks to: the embedded one by default, a real ZooKeeper when a connect string is given."""

from __future__ import annotations

from collections.abc import Callable

from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend


def make_backend(zookeeper: str | None, clock: Callable[[], int], *, create_chroot: bool = True
                 ) -> CoordinationBackend:
    """The embedded store by default; a real ZooKeeper (``host:port[,...][/chroot]``) when named.

    kazoo is imported only when a ZooKeeper is named, so the embedded default never loads it. A malformed
    connect string (no port, a port out of range) is a `ValueError` naming the bad part.
    """
    if zookeeper is None:
        return EmbeddedBackend(clock)
    from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend

    hosts, _, chroot = zookeeper.partition("/")
    for host in hosts.split(","):
        name, sep, port = host.rpartition(":")
        if not sep or not name or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"bad ZooKeeper address {host!r} in {zookeeper!r}: expected HOST:PORT with a port "
                             "from 1 to 65535")
    return ZooKeeperBackend(hosts, f"/{chroot}" if chroot else "", create_chroot=create_chroot)
