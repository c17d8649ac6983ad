"""Which store a command talks to: the embedded one by default, a real ZooKeeper when a connect string is given."""

from __future__ import annotations

from collections.abc import Callable

from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend


def make_backend(zookeeper: str | None, clock: Callable[[], int]) -> CoordinationBackend:
    """The embedded store by default; a real ZooKeeper (``host:port[,...][/chroot]``) when named.

    kazoo is imported only when a ZooKeeper is named, so the embedded default never loads it.
    """
    if zookeeper is None:
        return EmbeddedBackend(clock)
    from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend

    hosts, _, chroot = zookeeper.partition("/")
    return ZooKeeperBackend(hosts, f"/{chroot}" if chroot else "")
