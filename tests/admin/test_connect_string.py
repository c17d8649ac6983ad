"""``--zookeeper`` read as ZooKeeper 3.5.9's ``ConnectStringParser`` reads it (the client Kafka 2.8.2 ships): a
host without a port is on 2181, the chroot is everything from the first ``/``, and what ZooKeeper refuses is
refused with its message."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from zkcontroller.admin.deprecation import ZOOKEEPER_DEPRECATED
from zkcontroller.cli import main
from zkcontroller.coordination.connect import make_backend
from zkcontroller.coordination.connect_string import ConnectString, parse_connect_string
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.runtime.clock import wall_clock_ms

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


@pytest.mark.parametrize(("text", "servers", "chroot"), [
    ("zk1", [("zk1", 2181)], ""),
    ("zk1:2182,zk2", [("zk1", 2182), ("zk2", 2181)], ""),
    ("zk1/kafka", [("zk1", 2181)], "/kafka"),
    ("zk1:/kafka/a", [("zk1", 2181)], "/kafka/a"),  # nothing after the colon: the default port
    ("zk1:2181/", [("zk1", 2181)], ""),  # "/" alone is no chroot
    (" zk1 , ,zk2:+3,", [("zk1", 2181), ("zk2", 3)], ""),  # trimmed, empties dropped, Integer.parseInt's "+3"
    ("[::1]:2183,[fe80::2]", [("::1", 2183), ("fe80::2", 2181)], ""),
])
def test_what_zookeeper_accepts(text: str, servers: list[tuple[str, int]], chroot: str) -> None:
    assert parse_connect_string(text) == ConnectString(tuple(servers), chroot)


def test_kazoo_gets_every_port_spelled_out() -> None:
    backend = make_backend("zk1,[::1]:2183/kafka", wall_clock_ms, create_chroot=False)
    assert isinstance(backend, ZooKeeperBackend)
    assert (backend.connect_string, backend.chroot) == ("zk1:2181,[::1]:2183", "/kafka")


@pytest.mark.parametrize(("text", "message"), [
    ("zk1:x", 'For input string: "x"'),
    ("zk1:99999", "port out of range:99999"),
    ("zk1:" + "9" * 5000, 'For input string: "' + "9" * 5000 + '"'),  # Java's message, not int()'s digit limit
    ("zk1:" + "0" * 5000 + "2181/x/", "Path must not end with / character"),  # the port read: the path refused
    ("zk1:2181/kafka/", "Path must not end with / character"),
    ("zk1/a//b", 'Invalid path string "/a//b" caused by empty node name specified @3'),
    ("zk1/a/../b", 'Invalid path string "/a/../b" caused by relative paths not allowed @4'),
    ("/kafka", "A HostProvider may not be empty!"),
    ("[::1", "[::1 starts with '[' but has no matching ']'"),
    ("[::1]2181", "[::1]2181 does not have : after ]"),
])
def test_what_zookeeper_refuses(text: str, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_connect_string(text)
    assert str(refused.value) == message


@pytest.mark.parametrize(("argv", "stdout"), [
    (["topics", "list"], ""),
    # ConfigCommand's notice comes before it makes its ZooKeeper client, which parses the string
    (["configs", "--describe", "--topic", "t"], ZOOKEEPER_DEPRECATED + "\n"),
    (["brokers", "list"], ""),  # ours, alike
    (["demo"], ""),
    (["cluster", "--processes", "1"], ""),
])
def test_a_refused_connect_string_is_one_error_line_naming_it(argv: list[str], stdout: str) -> None:
    """No usage error (it was click's, with the usage lines, exit 1 or 2): Kafka's tools parse the string when they
    make their ZooKeeper client, after the options, and exit 1 with ZooKeeper's exception."""
    result = CliRunner().invoke(main, [*argv, "--zookeeper", "zk1:x"])
    assert result.exit_code == 1, result.output
    assert result.stderr == "Error: bad ZooKeeper connect string 'zk1:x': For input string: \"x\"\n"
    assert result.stdout == stdout
