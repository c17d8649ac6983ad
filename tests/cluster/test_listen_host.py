"""``--listen-host`` for ``zkcontroller cluster`` and ``demo``: in-process brokers bind the host given and register
the host clients should use. On a wildcard (0.0.0.0) that is this machine's name, as Kafka advertises for a
listener with no host (it refuses 0.0.0.0 as an advertised listener). Real sockets, on loopback only."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest
from click.testing import CliRunner
from tests.helpers import wait_until
from tests.integration.listening import Cluster, listening_cluster, registered

from zkcontroller.cli import main
from zkcontroller.cluster.cluster_shell import listener_lines
from zkcontroller.cluster.listener import ListenerPorts, advertised_host, check_listen_host

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("restored_logging")]


def test_a_wildcard_is_advertised_as_this_machines_name_any_other_host_as_given() -> None:
    assert advertised_host("0.0.0.0") == socket.getfqdn()
    assert advertised_host("::") == socket.getfqdn()
    assert advertised_host("127.0.0.1") == "127.0.0.1"
    assert advertised_host("localhost") == "localhost"


def test_a_host_no_socket_can_listen_on_is_refused_in_a_sentence() -> None:
    check_listen_host("127.0.0.1")
    check_listen_host("0.0.0.0")
    with pytest.raises(ValueError, match=re.escape("cannot resolve 'no-such-host.invalid'")):
        check_listen_host("no-such-host.invalid")
    with pytest.raises(ValueError, match=re.escape("cannot listen on 192.0.2.1")):  # TEST-NET-1: never this machine's
        check_listen_host("192.0.2.1")


@pytest.mark.parametrize("argv, message", [
    (["cluster", "--listen-host", "192.0.2.1"], "Invalid value for --listen-host: cannot listen on 192.0.2.1"),
    (["demo", "--listen-host", "no-such-host.invalid"], "Invalid value for --listen-host: cannot resolve"),
    (["cluster", "--no-listeners", "--listen-host", "0.0.0.0"], "have no effect with --no-listeners"),
    (["cluster", "--processes", "1", "--listen-host", "0.0.0.0"], "are for in-process brokers"),
])
def test_the_commands_refuse_a_listen_host_they_cannot_use(argv: list[str], message: str) -> None:
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, result.output
    assert message in result.output


@pytest.fixture
async def wildcard() -> AsyncIterator[Cluster]:
    async with listening_cluster([1, 2], ListenerPorts(base=None, host="0.0.0.0"), 4000) as cluster_and_zk:
        yield cluster_and_zk


async def test_brokers_on_a_wildcard_listen_everywhere_and_register_this_machines_name(
    wildcard: Cluster,
) -> None:
    cluster, zk = wildcard
    name = socket.getfqdn()
    ports = {}
    for broker_id in (1, 2):
        listener = cluster.listeners[broker_id]
        assert listener.port is not None
        ports[broker_id] = listener.port
        assert listener.bind_address == f"0.0.0.0:{listener.port}"
        assert listener.address == f"{name}:{listener.port}"
        assert await registered(zk, broker_id) == (name, listener.port)  # what clients are told to connect to
        # bound on every interface, so on loopback too: a client's connection is answered
        _, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.close()
        await writer.wait_closed()
    assert listener_lines(cluster) == [
        f"broker {b} listens on 0.0.0.0:{p}, advertised as {name}:{p}" for b, p in sorted(ports.items())]
    # and a Kafka client bootstrapping on loopback is told the advertised addresses, as ZooKeeper holds them
    expected = {b: f"{name}:{p}" for b, p in ports.items()}
    seen: dict[int, str] = {}

    async def told() -> bool:
        seen.update(await asyncio.to_thread(_brokers_as_kafka_python_sees_them, f"127.0.0.1:{ports[1]}"))
        return seen == expected

    await wait_until(told, timeout_s=30.0, poll_s=0.1, what=f"kafka-python to be told {expected}")


def _brokers_as_kafka_python_sees_them(bootstrap: str) -> dict[int, str]:
    """Blocking (run it in a thread: the brokers answer on this test's event loop)."""
    from kafka.admin import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        described = client.describe_cluster()
    finally:
        client.close()
    return {b.get("node_id", b.get("broker_id")): f"{b['host']}:{b['port']}" for b in described["brokers"]}


def test_the_cluster_prompt_names_where_brokers_listen_and_what_they_advertise() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "zkcontroller.cli", "cluster", "--brokers", "1", "--listen-host", "0.0.0.0",
         "--port-base", "0"],
        input="status\nquit\n", capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = [line.removeprefix("> ") for line in run.stdout.splitlines() if "listens on" in line]
    assert len(lines) == 2  # at start-up and under `status`
    assert all(line.startswith("broker 1 listens on 0.0.0.0:") and f", advertised as {socket.getfqdn()}:" in line
               for line in lines), lines
