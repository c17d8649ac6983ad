"""Same inputs, same requests and state-change lines, whatever ``PYTHONHASHSEED`` says (sets are sorted
before they order effects)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import ManualClock
from tests.unit.controller.conftest import RecordingSender, broker, broker_epoch

from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.event_log import TRACE, EventLog, StateChangeLogger
from zkcontroller.controller.fencing_token import FencingToken
from zkcontroller.controller.partition_state_machine import PartitionStateMachine
from zkcontroller.controller.replica_state_machine import ReplicaStateMachine
from zkcontroller.controller.request_batch import ControllerBrokerRequestBatch
from zkcontroller.controller.states import PartitionState, ReplicaState
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

REPO = Path(__file__).resolve().parents[3]


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(TRACE)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.getMessage()}")


async def scenario() -> str:
    """Topics created, brought online, a broker lost: every request and state-change line, in order."""
    handler = _Lines()
    log = logging.getLogger("state.change.logger")
    level = log.level
    log.setLevel(TRACE)
    log.addHandler(handler)
    try:
        await _drive(handler)
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    return "\n".join(handler.lines)


async def _drive(handler: _Lines) -> None:
    clock = ManualClock()
    backend = EmbeddedBackend(clock)
    zk = KafkaZkClient(await backend.new_session(), clock)
    await zk.create_top_level_paths()
    ctx = ControllerContext()
    ctx.fencing = FencingToken(*await zk.register_controller_and_increment_controller_epoch(1))
    ctx.set_live_brokers({broker(b): broker_epoch(b) for b in (3, 1, 4, 2)})
    for i, topic in enumerate(["kiwi", "apple", "zebra", "mango", "fig"]):
        assignment = {TopicPartition(topic, p): ReplicaAssignment(((p + i) % 4 + 1, (p + i + 1) % 4 + 1))
                      for p in range(3)}
        await zk.create_topic_assignment(topic, None, assignment)
        ctx.all_topics.add(topic)
        for tp, ra in assignment.items():
            ctx.update_partition_full_replica_assignment(tp, ra)
    sender = RecordingSender()
    logger = StateChangeLogger(1, lambda: ctx.epoch, EventLog("d", clock, None))
    config = ControllerConfig(broker_id=1)
    psm = PartitionStateMachine(config, ctx, zk, ControllerBrokerRequestBatch(1, ctx, sender, logger), logger)
    rsm = ReplicaStateMachine(config, ctx, zk, ControllerBrokerRequestBatch(1, ctx, sender, logger), logger)
    await rsm.startup()
    await psm.startup()
    ctx.remove_live_brokers({2})
    dead = sorted(ctx.replicas_on_brokers({2}))
    await psm.handle_state_changes(sorted(ctx.partitions_with_offline_leader), PartitionState.OFFLINE)
    await psm.trigger_online_partition_state_change()
    await rsm.handle_state_changes(dead, ReplicaState.OFFLINE)
    handler.lines.extend(f"{b} {r}" for b, r in sender.sent)


def _run(seed: str) -> str:
    code = "import asyncio\nfrom tests.unit.controller.test_controller_determinism import scenario\n" \
           "print(asyncio.run(scenario()))"
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout


def test_same_trace_under_different_hash_seeds() -> None:
    first = _run("1")
    assert "Sending LeaderAndIsr request" in first and "after removing replica 2 from the ISR" in first
    assert _run("2") == first
    assert _run("3") == first


async def test_scenario_runs_in_process() -> None:
    assert await scenario()
