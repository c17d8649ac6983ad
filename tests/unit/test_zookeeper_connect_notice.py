"""A ZooKeeper that does not answer: `KazooSession.connect` tells its ``on_slow`` hook once, past a short wait,
and `demo` / `cluster --zookeeper` print one "Connecting to ZooKeeper" line on stderr instead of 15 s of silence
before their error; a `ZooKeeperBackend` passes it on at most once, whatever number of connects it makes. The
bounds are shortened here (a refused connection is retried until the bound)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main
from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess, free_port
from zkcontroller.coordination.errors import ConnectionLossError
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.coordination.kazoo_store import KazooSession

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level

SHORT_WAIT_S = 0.05
"""The "slow" threshold in these tests, well inside the shortened connect bound."""


@pytest.fixture
def slow_after_a_moment(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process, a connection counts as slow after ``SHORT_WAIT_S`` instead of the production 1 s."""
    connect = KazooSession.connect.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(connect, "__kwdefaults__", {**connect.__kwdefaults__, "slow_after_s": SHORT_WAIT_S})


async def test_an_unanswered_connect_tells_its_hook_once_then_fails_at_the_bound() -> None:
    told: list[None] = []
    target = f"127.0.0.1:{free_port()}"
    with pytest.raises(ConnectionLossError, match=re.escape(f"cannot connect to ZooKeeper at {target}")):
        await KazooSession.connect(target, connect_timeout_s=1.0, on_slow=lambda: told.append(None),
                                   slow_after_s=SHORT_WAIT_S)
    assert len(told) == 1


async def test_no_notice_when_the_bound_comes_as_soon() -> None:
    """The error would follow at once (and a shortened bound would race the notice)."""
    told: list[None] = []
    with pytest.raises(ConnectionLossError):
        await KazooSession.connect(f"127.0.0.1:{free_port()}", connect_timeout_s=0.3, on_slow=lambda: told.append(None),
                                   slow_after_s=0.3)
    assert told == []


@pytest.mark.zookeeper
async def test_a_prompt_connect_never_tells_its_hook(zookeeper_server: ZooKeeperServerProcess) -> None:
    told: list[None] = []
    session = await KazooSession.connect(zookeeper_server.connect_string, on_slow=lambda: told.append(None),
                                         slow_after_s=10.0)
    await session.close()
    assert told == []


class _SlowSession:
    """What `ZooKeeperBackend` needs of a session, from a connect that was slow every time."""

    async def ensure_path(self, path: str) -> None:
        pass

    async def close(self) -> None:
        pass


async def test_a_backend_tells_its_hook_once_though_every_connect_is_slow(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chroot check and each session connect on their own; the user reads one line, not one per broker."""
    connects: list[str] = []

    async def slow_connect(hosts: str, *args: Any, on_slow: Any = None, **kwargs: Any) -> _SlowSession:
        connects.append(hosts)
        on_slow()
        return _SlowSession()

    monkeypatch.setattr(KazooSession, "connect", slow_connect)
    told: list[None] = []
    backend = ZooKeeperBackend("zk:2181", "/kafka", on_slow_connect=lambda: told.append(None))
    for _ in range(3):
        await backend.new_session()
    assert connects == ["zk:2181", "zk:2181/kafka", "zk:2181/kafka", "zk:2181/kafka"]
    assert len(told) == 1


@pytest.mark.usefixtures("unreachable_zookeeper_gives_up_soon", "slow_after_a_moment")
async def test_an_unreachable_backend_tells_its_hook_once_over_its_sessions() -> None:
    told: list[None] = []
    backend = ZooKeeperBackend(f"127.0.0.1:{free_port()}", on_slow_connect=lambda: told.append(None))
    for _ in range(2):
        with pytest.raises(ConnectionLossError):
            await backend.new_session()
    await backend.close()
    assert len(told) == 1


@pytest.mark.usefixtures("unreachable_zookeeper_gives_up_soon", "slow_after_a_moment")
@pytest.mark.parametrize("command", [["demo"], ["cluster", "--brokers", "3"], ["cluster", "--processes", "1"]],
                         ids=["demo", "cluster", "cluster-processes"])
def test_demo_and_cluster_say_what_they_wait_for(command: list[str]) -> None:
    """One line: the first session that cannot connect ends the command."""
    target = f"127.0.0.1:{free_port()}"  # nothing listens there
    result = CliRunner().invoke(main, [*command, "--zookeeper", target], input="")
    assert result.exit_code == 1, result.output
    assert result.stderr == f"Connecting to ZooKeeper at {target} ...\nError: cannot connect to ZooKeeper at {target}\n"
