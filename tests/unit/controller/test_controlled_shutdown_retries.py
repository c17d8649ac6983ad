"""The stopping broker's side of controlled shutdown (spec §8.3): attempts, back-off and the give-up, on the
embedded store with virtual time (back-offs are recorded, never waited out; see `BackOffRuntime`)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from tests.helpers import ManualClock
from tests.unit.controller.standalone import RecordingRuntime

from zkcontroller.broker.timeouts import TIMER_TASK
from zkcontroller.cluster.controlled_shutdown import controlled_shutdown
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import Broker, BrokerInfo, EndPoint, TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import ControlledShutdownRequest, ControlledShutdownResponse
from zkcontroller.protocol.transport import BrokerUnreachableError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


class BackOffRuntime(RecordingRuntime):
    """Back-offs are recorded and end at once; an attempt's bound (the sleep of `within`'s timer) never ends, as on
    a clock that does not move, so each attempt gets its scripted answer however many loop turns it takes."""

    async def sleep_ms(self, ms: int) -> None:
        task = asyncio.current_task()
        if task is not None and task.get_name() == TIMER_TASK:
            await asyncio.Event().wait()
        await super().sleep_ms(ms)


class ScriptedTransport:
    """Answers each ControlledShutdown with the next scripted response (an exception is raised instead)."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers
        self.sent: list[tuple[int, ControlledShutdownRequest]] = []

    async def send(self, broker: Broker, request: Any) -> Any:
        self.sent.append((broker.id, request))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def info(broker_id: int) -> BrokerInfo:
    return BrokerInfo(Broker(broker_id, (EndPoint(f"b{broker_id}", 9092, "PLAINTEXT", "PLAINTEXT"),), None))


@pytest.fixture
async def zk() -> KafkaZkClient:
    clock = ManualClock()
    client = KafkaZkClient(await EmbeddedBackend(clock, tick_ms=None).new_session(), clock)
    await client.create_top_level_paths()
    await client.register_broker(info(2))
    await client.register_controller_and_increment_controller_epoch(2)
    return client


CONFIG = ControllerConfig(broker_id=1, controlled_shutdown_max_retries=3, controlled_shutdown_retry_backoff_ms=5000)
STILL_LEADS = ControlledShutdownResponse(Errors.NONE, (TopicPartition("t", 0),))


async def test_retries_until_nothing_is_left_to_move(zk: KafkaZkClient) -> None:
    runtime = BackOffRuntime()
    transport = ScriptedTransport([STILL_LEADS, ControlledShutdownResponse(Errors.NONE)])
    outcome = await controlled_shutdown(1, lambda: 77, CONFIG, zk, transport, runtime)
    assert outcome.succeeded and outcome.attempts == 2
    assert transport.sent == [(2, ControlledShutdownRequest(1, 77))] * 2  # to the controller, with our epoch
    assert runtime.sleeps == [5000]


async def test_gives_up_after_max_retries_without_a_last_back_off(zk: KafkaZkClient,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kafka.server.KafkaServer")
    runtime = BackOffRuntime()
    transport = ScriptedTransport([ControlledShutdownResponse(Errors.STALE_BROKER_EPOCH),
                                   BrokerUnreachableError("gone"), STILL_LEADS])
    outcome = await controlled_shutdown(1, lambda: 77, CONFIG, zk, transport, runtime)
    assert not outcome.succeeded and outcome.attempts == 3
    assert runtime.sleeps == [5000, 5000]
    text = caplog.text
    assert "Error from controller: STALE_BROKER_EPOCH" in text
    assert "Retrying controlled shutdown after the previous attempt failed..." in text
    assert "Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed" in text


async def test_without_a_controller_each_attempt_fails_and_disabled_sends_nothing(zk: KafkaZkClient) -> None:
    await zk.session.delete("/controller")
    runtime = BackOffRuntime()
    transport = ScriptedTransport([])
    outcome = await controlled_shutdown(1, lambda: 77, CONFIG, zk, transport, runtime)
    assert not outcome.succeeded and outcome.attempts == 3 and transport.sent == []
    disabled = ControllerConfig(broker_id=1, controlled_shutdown_enable=False)
    assert (await controlled_shutdown(1, lambda: 77, disabled, zk, transport, runtime)).attempts == 0


async def test_a_controller_gone_from_zookeeper_between_attempts_is_still_asked(
        zk: KafkaZkClient, caplog: pytest.LogCaptureFixture) -> None:
    """Kafka's ``prevController``: when ``/controller`` is momentarily empty (a failover under way) or names a broker
    whose registration is gone, the attempt still goes to the controller asked last instead of being spent."""
    caplog.set_level(logging.INFO, logger="kafka.server.KafkaServer")
    runtime = BackOffRuntime()

    class Failover(ScriptedTransport):
        async def send(self, broker: Broker, request: Any) -> Any:
            if not self.sent:  # the first answer leaves partitions to move, and the controller's znode goes
                await zk.session.delete("/controller")
            return await super().send(broker, request)

    transport = Failover([STILL_LEADS, ControlledShutdownResponse(Errors.NONE)])
    outcome = await controlled_shutdown(1, lambda: 77, CONFIG, zk, transport, runtime)
    assert outcome.succeeded and outcome.attempts == 2
    assert [b for b, _ in transport.sent] == [2, 2]
    assert "No controller registered in ZooKeeper" in caplog.text
