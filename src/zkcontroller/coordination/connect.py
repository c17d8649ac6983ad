"""Which store a command talks to: the embedded one by default, a real ZooKeeper when a connect string is given."""

from __future__ import annotations

from collections.abc import Callable

from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.connect_string import parse_connect_string
from zkcontroller.coordination.embedded_backend import EmbeddedBackend


def make_backend(zookeeper: str | None, clock: Callable[[], int], *, create_chroot: bool = True,
                 on_slow_connect: Callable[[], None] | None = None) -> CoordinationBackend:
    """The embedded store by default; a real ZooKeeper (``host[:port][,...][/chroot]``) when named.

    The connect string is read as ZooKeeper's own client reads it (`parse_connect_string`: a host without a
    port is on 2181); one ZooKeeper would refuse is a `ValueError` with ZooKeeper's message. kazoo is imported
    only when a ZooKeeper is named, so the embedded default never loads it. ``on_slow_connect``: see
    `ZooKeeperBackend` (the embedded store never waits).
    """
    if zookeeper is None:
        return EmbeddedBackend(clock)
    from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend

    try:
        parsed = parse_connect_string(zookeeper)
    except ValueError as e:
        raise ValueError(f"bad ZooKeeper connect string {zookeeper!r}: {e}") from None
    return ZooKeeperBackend(parsed.hosts, parsed.chroot, create_chroot=create_chroot, on_slow_connect=on_slow_connect)
