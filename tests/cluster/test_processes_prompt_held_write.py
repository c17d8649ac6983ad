"""The ``--processes`` prompt's write that its bound ended while the client still held it: with a way to open a
new session the prompt closes the one holding it (so it is never sent) and the next command runs on a new one;
without, it says the write may still be applied later. A session whose create never answers stands for kazoo
holding it; a real ZooKeeper's is in tests/e2e/test_processes_prompt_zookeeper_gone.py."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.process_cluster import ProcessCluster, ProcessClusterShell
from zkcontroller.cluster.zk_outage import WriteRecorder
from zkcontroller.coordination.api import CoordinationSession, CreateMode, SessionState
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

CONNECT = "127.0.0.1:2181"
TAIL = "; the brokers keep running (zk-status shows an ensemble's servers)"


class HoldsWrite(WriteRecorder):
    """Never answers the create of ``at`` (as kazoo holds a request while no server answers)."""

    def __init__(self, inner: CoordinationSession, at: str) -> None:
        super().__init__(inner)
        self.at = at

    async def create(self, path: str, data: bytes | None = b"", mode: CreateMode = CreateMode.PERSISTENT) -> str:
        if path == self.at:
            self.at = ""
            self.held = asyncio.Event()
            result: str = await self._write([path], self.held.wait())  # type: ignore[arg-type]
            return result
        return await super().create(path, data, mode)


@pytest.mark.parametrize("can_reopen", [True, False], ids=["reopened", "kept"])
async def test_a_held_write_is_dropped_with_its_session_or_said_to_be_pending(tmp_path: Path,
                                                                             can_reopen: bool) -> None:
    backend = EmbeddedBackend(wall_clock_ms)
    first = await backend.new_session()
    admin = KafkaZkClient(HoldsWrite(first, "/admin/delete_topics/orders"), wall_clock_ms)
    await admin.create_top_level_paths()
    await TopicAdmin(admin, random.Random(1)).create_topic_with_assignment("orders", {0: [1]}, check_brokers=False)
    out: list[str] = []
    reopened: list[CoordinationSession] = []

    async def reopen() -> CoordinationSession:
        reopened.append(await backend.new_session())
        return reopened[-1]

    shell = ProcessClusterShell(ProcessCluster([1], tmp_path, zookeeper=CONNECT), admin, out.append,
                                zk_timeout_s=0.5, reopen=reopen if can_reopen else None)
    try:
        assert await shell.run_command("delete orders")
        head = f"error: ZooKeeper ({CONNECT}) is not answering: `delete` gave up (it waits at most 0.5 s); "
        if can_reopen:
            assert out[-1] == (f"{head}ZooKeeper may or may not have applied its write of /admin/delete_topics/orders "
                               "before the connection was lost; its session was closed, so nothing of it is sent "
                               f"later (`describe` shows which once ZooKeeper answers){TAIL}"), out
            assert first.state in (SessionState.CLOSED, SessionState.EXPIRED)  # the embedded store's close
            out.clear()
            assert await shell.run_command("describe orders")
            assert out and out[0].startswith("Topic: orders"), out  # on a new session
            assert len(reopened) == 1
        else:
            assert out[-1] == (f"{head}its write of /admin/delete_topics/orders may still be applied when ZooKeeper "
                               f"is back (the client holds it until then; `describe` shows whether){TAIL}"), out
            assert first.state is SessionState.CONNECTED
    finally:
        for session in (first, *reopened):
            await session.close()
        await backend.close()
