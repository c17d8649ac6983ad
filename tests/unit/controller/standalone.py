"""A ``KafkaController`` of its own on the embedded store, driven by a runtime whose sleeps the test controls:
for the tests of the controller's (and the stopping broker's) timing decisions."""

from __future__ import annotations

import random

from tests.helpers import ManualClock

from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.event_log import EventLog
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import Broker, BrokerInfo, EndPoint
from zkcontroller.runtime.in_process import InProcessTransport
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


class RecordingRuntime(AsyncioRuntime):
    """Sleeps are recorded and return at once (the back-off is a decision to check, not a wait to sit out)."""

    def __init__(self) -> None:
        super().__init__(random.Random(0), ManualClock())
        self.sleeps: list[int] = []

    async def sleep_ms(self, ms: int) -> None:
        self.sleeps.append(ms)


async def standalone_controller(runtime: AsyncioRuntime, **config: object) -> tuple[KafkaController, KafkaZkClient]:
    """Broker 1 registered on a fresh embedded store on ``runtime``'s clock, and a controller for it (not started),
    configured with ``config``; returns it and its ``KafkaZkClient``."""
    backend = EmbeddedBackend(runtime.now_ms, tick_ms=None)
    zk = KafkaZkClient(await backend.new_session(), runtime.now_ms, rng=runtime.rng)
    await zk.create_top_level_paths()
    info = BrokerInfo(Broker(1, (EndPoint("localhost", 9092, "PLAINTEXT", "PLAINTEXT"),), None))
    epoch = await zk.register_broker(info)
    controller = KafkaController(ControllerConfig(broker_id=1, **config), zk, info, epoch,  # type: ignore[arg-type]
                                 InProcessTransport(), runtime, EventLog("test", runtime.now_ms, None))
    return controller, zk
