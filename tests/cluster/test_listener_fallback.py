"""The start-up and ``status`` lines of a broker whose listener fell back to a free port: "(9093 was taken)" only
when another socket holds the port; any other bind failure said so too, blaming a process that did not exist."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import cast

from zkcontroller.cluster.cluster_shell import admin_hint_line, listener_lines
from zkcontroller.cluster.listener import BrokerListener
from zkcontroller.cluster.local_cluster import LocalCluster


def _lines(listener: BrokerListener) -> list[str]:
    cluster = SimpleNamespace(running_brokers=lambda: [SimpleNamespace(broker_id=listener.broker_id)],
                              listeners={listener.broker_id: listener})
    return listener_lines(cast(LocalCluster, cluster))


async def test_a_port_in_use_is_said_to_be_taken() -> None:
    blocker = await asyncio.start_server(lambda _r, w: w.close(), "127.0.0.1", 0)
    taken = int(blocker.sockets[0].getsockname()[1])
    listener = BrokerListener(1, "127.0.0.1")
    try:
        port = await listener.bind(taken)
        assert port != taken
        assert _lines(listener) == [f"broker 1 listens on 127.0.0.1:{port} ({taken} was taken)"]
    finally:
        await listener.close()
        blocker.close()
        await blocker.wait_closed()


async def test_another_bind_failure_gives_its_own_reason() -> None:
    listener = BrokerListener(1, "127.0.0.1")
    try:
        port = await listener.bind(65536)
        assert _lines(listener) == [f"broker 1 listens on 127.0.0.1:{port} (cannot listen on 65536: not a port "
                                    "(0 to 65535))"]
        await listener.close()
        assert await listener.bind(port) == port  # bound as asked (a restart): no note
        assert listener.fallback_note is None
    finally:
        await listener.close()


async def test_start_up_names_the_bootstrap_server_for_our_admin_commands() -> None:
    """The embedded store is reachable from another shell only through a listener: start-up says how."""
    listener = BrokerListener(1, "127.0.0.1")
    try:
        port = await listener.bind(0)
        cluster = SimpleNamespace(running_brokers=lambda: [SimpleNamespace(broker_id=1)], listeners={1: listener})
        assert admin_hint_line(cast(LocalCluster, cluster)) == (
            f"from another shell: zkcontroller topics describe --bootstrap-server 127.0.0.1:{port} (topics, "
            "leader-election, reassign and configs take --bootstrap-server)")
        assert admin_hint_line(cast(LocalCluster, SimpleNamespace(running_brokers=list, listeners={}))) is None
    finally:
        await listener.close()
