"""Idempotent produce on real replica managers: the replica manager's producer-expiration task drops a producer
``transactional.id.expiration.ms`` after its last batch, checked every 10 minutes, on virtual time. The helpers
here serve `test_replicated_producer_state.py` too (the state across leadership changes)."""

from __future__ import annotations

import asyncio
import random

from kafka.record.memory_records import MemoryRecordsBuilder

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.produce import ProducePartition, produce
from zkcontroller.broker.producer_state import PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS
from zkcontroller.broker.replica_manager import ReplicaManager
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.runtime.in_process import InProcessTransport
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.sim.loop import run_virtual

from .helpers import MY_EPOCH, leader_and_isr, update_metadata
from .replica_helpers import state
from .test_produce_replica_manager import KNOWN

TP = TopicPartition("t", 0)
NONE, OUT_OF_ORDER_SEQUENCE_NUMBER = 0, 45
PID = 12


def idempotent(n: int, seq: int, timestamp: int = 1) -> bytes:
    b = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20, producer_id=PID, producer_epoch=0,
                             base_sequence=seq)
    for i in range(n):
        b.append(timestamp=timestamp, key=None, value=b"%d" % i)
    b.close()
    return bytes(b.buffer())


async def send(rm: ReplicaManager, records: bytes) -> tuple[int, int]:
    [answer] = await produce(8, 1, 30_000, "c", [ProducePartition("t", 0, records)], cache=KNOWN,  # type: ignore[arg-type]
                             target=rm.produce_target())
    return answer.error, answer.base_offset


def test_the_expiration_task_drops_producers_after_transactional_id_expiration_ms() -> None:
    async def scenario() -> list[set[int]]:
        loop = asyncio.get_running_loop()
        runtime = AsyncioRuntime(random.Random(1), clock=lambda: round(loop.time() * 1000))
        plane = BrokerControlPlane(1, MY_EPOCH)
        assert plane.handle(update_metadata(live=(1,), controller_id=1)).error is Errors.NONE
        rm = ReplicaManager(plane, InProcessTransport(), runtime, ReplicationConfig(replica_fetching=False))
        rm.producer_id_expiration_ms = 1_000_000
        lone = state(isr=(1,), replicas=(1,))
        assert rm.handle_control_request(leader_and_isr(lone)).partition_errors[0][1] is Errors.NONE
        rm.startup()
        start = runtime.now_ms()
        try:
            assert await send(rm, idempotent(2, 0, timestamp=start)) == (NONE, 0)
            seen = []
            producers = rm.partition(TP).producer_state.producers  # type: ignore[union-attr]
            for check in (1, 2):  # just after the 10-minute checks: at 600 s the batch is younger than 1000 s
                await asyncio.sleep((start + check * PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS + 1
                                     - runtime.now_ms()) / 1000)
                seen.append(set(producers))
            return seen
        finally:
            rm.shutdown()

    assert run_virtual(scenario()) == [{PID}, set()]
