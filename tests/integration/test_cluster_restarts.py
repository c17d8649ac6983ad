"""What a user meets restarting clusters: a broker restarted right after a crash waits for its old registration
to expire instead of dying with NODE_EXISTS (and says so at the prompt); two fresh clusters never share a topic
id; the logs rotate by size, rolled event logs keeping a name the analytics job reads."""

from __future__ import annotations

import asyncio
import json
import logging
import random
from pathlib import Path

from tests.helpers import QUICK_SHUTDOWN_BACKOFF_MS, OffsetClock, wait_until

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.cluster_shell import PromptLogHandler
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.logs import LogFiles
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


async def test_restart_right_after_a_crash_waits_for_the_old_registration() -> None:
    clock = OffsetClock(wall_clock_ms)
    backend = EmbeddedBackend(clock, tick_ms=None)
    # the back-off of tests/integration's clusters: broker 2's controlled shutdown at the end, as controller, finds
    # none registered (it resigned) and would wait Kafka's 5 s before its retry
    cluster = LocalCluster(backend, [1, 2], clock, session_timeout_ms=6000,
                           controller_config=ControllerConfig(
                               broker_id=-1, controlled_shutdown_retry_backoff_ms=QUICK_SHUTDOWN_BACKOFF_MS))
    shown: list[str] = []
    with PromptLogHandler(shown.append).attached():
        await cluster.start()
        await cluster.wait_for_controller()
        crashed = cluster.brokers[1]
        await cluster.crash_broker(1)
        restart = asyncio.create_task(cluster.start_broker(1))
        await wait_until(lambda: any("still held by an earlier session" in s for s in shown),
                         what="the prompt to say the restart waits")
        assert not restart.done()
        clock.advance(6000)
        backend.server.tick()  # the store expires the crashed process's session, as ZooKeeper would
        server = await asyncio.wait_for(restart, 10)
    assert server is not crashed and server.running
    assert server.control_plane is not None and server.control_plane.broker_epoch > 0
    assert any("the earlier registration at /brokers/ids/1 is gone" in s for s in shown)
    await cluster.shutdown()
    await backend.close()


async def test_two_fresh_clusters_on_one_store_never_share_a_topic_id(backend: CoordinationBackend) -> None:
    ids = []
    for run in range(2):
        cluster = LocalCluster(backend, [1, 2], wall_clock_ms, session_timeout_ms=6000)  # no seed: OS randomness
        await cluster.start()
        controller = await cluster.wait_for_controller()
        session = await backend.new_session()
        admin = TopicAdmin(KafkaZkClient(session, wall_clock_ms), random.Random(0))  # placement only
        await admin.create_topic(f"t{run}", 1, 1)
        await wait_until(lambda c=controller, r=run: f"t{r}" in c.context.topic_ids, what="the topic's id")
        ids.append(controller.context.topic_ids[f"t{run}"])
        await session.close()
        await cluster.shutdown()
    assert ids[0] != ids[1]


def test_logs_rotate_by_size_and_rolled_event_logs_stay_jsonl(tmp_path: Path) -> None:
    logs = LogFiles(tmp_path, max_bytes=2_000, backups=2)
    events = logs.event_log("rot", lambda: 0)
    log = logging.getLogger("kafka.controller.KafkaController")
    try:
        for i in range(200):
            events.emit("controller_elected", controller_id=1, controller_epoch=i)
            log.info("line %d of a controller that logs a lot", i)
    finally:
        logs.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["controller.log", "controller.log.1", "controller.log.2",
                     "events.1.jsonl", "events.2.jsonl", "events.jsonl", "server.log", "state-change.log"]
    assert all(p.stat().st_size <= 2_000 + 200 for p in tmp_path.iterdir())
    newest = [json.loads(line)["controller_epoch"] for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert newest[-1] == 199
