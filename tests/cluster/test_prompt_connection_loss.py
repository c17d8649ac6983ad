"""What the in-process prompt says when the connection to ZooKeeper is lost under a write: whether the write took
effect, read back once the connection returns, or that it cannot tell yet. It printed ZooKeeper's raw
"CONNECTION_LOSS at PATH ... (nothing else was done)", untrue of a write already sent. The loss is injected at
the write (applied first or not), so each outcome is forced; a real ZooKeeper's loss is in
tests/e2e/test_prompt_zookeeper_gone.py."""

from __future__ import annotations

import random

import pytest
from tests.integration.conftest import ClusterFactory

from zkcontroller.cluster import cluster_shell
from zkcontroller.cluster.cluster_shell import ClusterShell
from zkcontroller.cluster.zk_outage import WriteRecorder
from zkcontroller.coordination.api import CreateMode, SessionState
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.errors import ConnectionLossError
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


class LosingSession(WriteRecorder):
    """Once `arm`ed, loses the connection once, at the create of ``lose_at``: after ZooKeeper applied it
    (``applied``) or before it reached ZooKeeper; the connection comes back at once unless ``stays_down``. The
    shell records writes through it (it is the admin client's `WriteRecorder` already)."""

    lose_at: str | None = None
    apply_first = stays_down = lost = False

    def arm(self, lose_at: str, applied: bool, stays_down: bool = False) -> None:
        self.lose_at, self.apply_first, self.stays_down = lose_at, applied, stays_down

    @property
    def state(self) -> SessionState:
        return SessionState.DISCONNECTED if self.lost and self.stays_down else self.inner.state

    async def create(self, path: str, data: bytes | None = b"", mode: CreateMode = CreateMode.PERSISTENT) -> str:
        if path != self.lose_at or self.lost:
            return await super().create(path, data, mode)
        self.lost = True

        async def lose() -> str:
            if self.apply_first:
                await self.inner.create(path, data, mode)
            raise ConnectionLossError(path)

        result: str = await self._write([path], lose())
        return result


async def _shell(make_cluster: ClusterFactory, backend: CoordinationBackend, lines: list[str]) -> ClusterShell:
    cluster = await make_cluster([1, 2])
    await cluster.wait_for_controller()
    admin = KafkaZkClient(LosingSession(await backend.new_session()), wall_clock_ms)
    return ClusterShell(cluster, admin, out=lines.append, rng=random.Random(1))


def _lose(shell: ClusterShell, path: str, applied: bool, stays_down: bool = False) -> None:
    session = shell.admin.session
    assert isinstance(session, LosingSession)
    session.arm(path, applied, stays_down)


def _zookeeper(shell: ClusterShell) -> str:
    hosts = getattr(shell.admin.session, "hosts", None)
    return f"ZooKeeper ({hosts})" if hosts else "ZooKeeper"


@pytest.mark.parametrize("applied", [True, False], ids=["applied", "not applied"])
async def test_a_create_cut_off_at_its_write_says_whether_the_topic_was_created(
        make_cluster: ClusterFactory, backend: CoordinationBackend, applied: bool) -> None:
    lines: list[str] = []
    shell = await _shell(make_cluster, backend, lines)
    try:
        _lose(shell, "/brokers/topics/orders", applied)
        assert await shell.run_command("create orders 1 1")
        head = (f"error: {_zookeeper(shell)} is not answering: `create` lost its connection at "
                "/brokers/topics/orders; ")
        tail = "; the brokers keep running and reconnect by themselves"
        if applied:
            assert lines[-1] == (f"{head}it took effect: ZooKeeper has its write of /brokers/topics/orders, read "
                                 f"back once the connection returned{tail}"), lines
        else:
            assert lines[-1] == (f"{head}it did not take effect: its write of /brokers/topics/orders never reached "
                                 "ZooKeeper (read back once the connection returned), after ZooKeeper had taken its "
                                 f"write of /config/topics/orders; run it again{tail}"), lines
        lines.clear()
        await shell.run_command("create orders 1 1")  # the prompt goes on, and the next command says the truth
        if applied:
            assert lines == ["error: Topic 'orders' already exists."], lines
        else:
            assert lines[0] == "Created topic orders.", lines
    finally:
        await shell.admin.session.close()


async def test_a_delete_cut_off_at_its_mark_says_it_took_effect(make_cluster: ClusterFactory,
                                                                  backend: CoordinationBackend) -> None:
    lines: list[str] = []
    shell = await _shell(make_cluster, backend, lines)
    try:
        await shell.run_command("create orders 1 1")
        _lose(shell, "/admin/delete_topics/orders", applied=True)
        lines.clear()
        await shell.run_command("delete orders")
        assert lines[-1].startswith(f"error: {_zookeeper(shell)} is not answering: `delete` lost its "
                                    "connection at /admin/delete_topics/orders; it took effect: "), lines
    finally:
        await shell.admin.session.close()


async def test_a_write_whose_outcome_cannot_be_read_back_in_time_says_it_may_have_been_applied(
        make_cluster: ClusterFactory, backend: CoordinationBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster_shell, "OUTCOME_WAIT_S", 0.2)
    lines: list[str] = []
    shell = await _shell(make_cluster, backend, lines)
    try:
        _lose(shell, "/brokers/topics/orders", applied=False, stays_down=True)
        assert await shell.run_command("create orders 1 1")
        assert lines[-1] == (f"error: {_zookeeper(shell)} is not answering: `create` lost its connection "
                             "at /brokers/topics/orders; ZooKeeper may or may not have applied its write of "
                             "/brokers/topics/orders before the connection was lost, after ZooKeeper had taken its "
                             "write of /config/topics/orders (`describe` shows which once ZooKeeper answers); the "
                             "brokers keep running and reconnect by themselves"), lines
    finally:
        await shell.admin.session.close()


async def test_a_create_cut_off_at_its_config_says_the_topic_was_not_created(make_cluster: ClusterFactory,
                                                                            backend: CoordinationBackend) -> None:
    """The config znode goes first (as Kafka writes it): lost there, the topic's own znode was never written,
    whether or not the config landed (it said the config write "took effect")."""
    lines: list[str] = []
    shell = await _shell(make_cluster, backend, lines)
    try:
        _lose(shell, "/config/topics/orders", applied=True)
        assert await shell.run_command("create orders 1 1")
        assert lines[-1] == (f"error: {_zookeeper(shell)} is not answering: `create` lost its connection at "
                             "/config/topics/orders; it did not create the topic: the connection was lost at its "
                             "config (/config/topics/orders), before the topic's own znode was written (run it "
                             "again: it writes the config anew); the brokers keep running and reconnect by "
                             "themselves"), lines
        lines.clear()
        await shell.run_command("create orders 1 1")
        assert lines[0] == "Created topic orders.", lines
    finally:
        await shell.admin.session.close()
