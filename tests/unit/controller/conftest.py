"""Fixtures for the controller's state layer: a context with live brokers, a recording sender, loggers, and
a `KafkaZkClient` on the embedded store elected as controller."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from tests.helpers import ManualClock

from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.event_log import TRACE, EventLog, StateChangeLogger
from zkcontroller.controller.fencing_token import FencingToken
from zkcontroller.controller.request_batch import ControllerBrokerRequestBatch
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import (
    Broker,
    EndPoint,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
)
from zkcontroller.protocol.control_requests import AnyControlRequest
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import NO_FENCING, KafkaZkClient

CONTROLLER_ID = 1


def broker(broker_id: int) -> Broker:
    return Broker(broker_id, (EndPoint(f"broker{broker_id}", 9092, "PLAINTEXT", "PLAINTEXT"),), rack=None)


def broker_epoch(broker_id: int) -> int:
    return 1000 + broker_id


class RecordingSender:
    """The channel manager as the batch sees it: records ``(broker_id, request)`` in send order."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, AnyControlRequest]] = []
        self.fail_with: Exception | None = None

    def __call__(self, broker_id: int, request: AnyControlRequest) -> None:
        if self.fail_with is not None:
            raise self.fail_with
        self.sent.append((broker_id, request))

    def of_type(self, kind: type) -> list[tuple[int, AnyControlRequest]]:
        return [(b, r) for b, r in self.sent if isinstance(r, kind)]

    def take(self) -> list[tuple[int, AnyControlRequest]]:
        sent, self.sent = self.sent, []
        return sent


@dataclass
class JsonlSink:
    records: list[dict] = field(default_factory=list)

    def __call__(self, line: str) -> None:
        self.records.append(json.loads(line))

    def of_type(self, record_type: str) -> list[dict]:
        return [r for r in self.records if r["type"] == record_type]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def context() -> ControllerContext:
    ctx = ControllerContext()
    ctx.fencing = FencingToken(1, 0)
    ctx.set_live_brokers({broker(b): broker_epoch(b) for b in (1, 2, 3)})
    return ctx


@pytest.fixture
def sender() -> RecordingSender:
    return RecordingSender()


@pytest.fixture
def jsonl() -> JsonlSink:
    return JsonlSink()


@pytest.fixture
def state_change_logger(context: ControllerContext, clock: ManualClock, jsonl: JsonlSink) -> StateChangeLogger:
    return StateChangeLogger(CONTROLLER_ID, lambda: context.epoch, EventLog("test", clock, jsonl, validate=True))


@pytest.fixture
def batch(context: ControllerContext, sender: RecordingSender,
          state_change_logger: StateChangeLogger) -> ControllerBrokerRequestBatch:
    return ControllerBrokerRequestBatch(CONTROLLER_ID, context, sender, state_change_logger)


@pytest.fixture
def config() -> ControllerConfig:
    return ControllerConfig(broker_id=CONTROLLER_ID)


@pytest.fixture
def state_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Captures the state-change log at TRACE."""
    caplog.set_level(logging.INFO)
    caplog.set_level(TRACE, logger="state.change.logger")  # last: it also sets the capture handler's level
    return caplog


def messages(caplog: pytest.LogCaptureFixture, level: int | None = None) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "state.change.logger" and (level is None or r.levelno == level)]


@pytest.fixture
async def backend(clock: ManualClock) -> AsyncIterator[EmbeddedBackend]:
    b = EmbeddedBackend(clock)
    yield b
    with contextlib.suppress(Exception):
        await b.close()


@pytest.fixture
async def zk(backend: EmbeddedBackend, clock: ManualClock, context: ControllerContext) -> KafkaZkClient:
    """A client elected as controller; the context carries its epoch and fencing token."""
    client = KafkaZkClient(await backend.new_session(), clock)
    await client.create_top_level_paths()
    context.fencing = FencingToken(*await client.register_controller_and_increment_controller_epoch(
        CONTROLLER_ID))
    return client


@pytest.fixture
async def config_zk(backend: EmbeddedBackend, clock: ManualClock) -> KafkaZkClient:
    """A session of no elected controller, with Kafka's top-level paths and ``/config/changes``: for the readers
    of config change notifications."""
    client = KafkaZkClient(await backend.new_session(), clock)
    await client.create_top_level_paths()
    await client.session.ensure_path(paths.CONFIG_CHANGES)
    return client


@pytest.fixture
async def admin_zk(backend: EmbeddedBackend, clock: ManualClock) -> KafkaZkClient:
    """Another session: admin tools, other controllers, brokers writing behind the controller's back."""
    return KafkaZkClient(await backend.new_session(), clock)


async def create_topic(admin_zk: KafkaZkClient, context: ControllerContext, topic: str,
                       assignment: dict[int, tuple[int, ...]]) -> list[TopicPartition]:
    """The topic's znode (as an admin tool writes it) and the controller's cached assignment."""
    full = {TopicPartition(topic, p): ReplicaAssignment(rs) for p, rs in assignment.items()}
    await admin_zk.create_topic_assignment(topic, None, full)
    context.all_topics.add(topic)
    for tp, ra in full.items():
        context.update_partition_full_replica_assignment(tp, ra)
    return sorted(full)


async def write_states(admin_zk: KafkaZkClient, states: dict[TopicPartition, LeaderAndIsr],
                       controller_epoch: int) -> None:
    """Partition state znodes written outside the controller under test (unfenced)."""
    wrapped = {tp: LeaderIsrAndControllerEpoch(lai, controller_epoch) for tp, lai in states.items()}
    created = await admin_zk.create_topic_partition_states(wrapped, NO_FENCING)
    assert not created.failed


async def read_state(zk: KafkaZkClient, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
    return await zk.get_topic_partition_state(tp)
