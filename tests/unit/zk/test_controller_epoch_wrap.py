"""``/controller_epoch`` at Int.MaxValue: Kafka 2.8's ``curEpoch + 1`` is Scala Int arithmetic, so the next
controller's epoch wraps to Int.MinValue and is written as ``-2147483648`` (which ``String.toInt`` reads back)."""

from __future__ import annotations

import pytest
from tests.helpers import OffsetClock

from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import ControllerEpochZNode

INT_MAX, INT_MIN = 2**31 - 1, -(2**31)


@pytest.mark.parametrize(("epoch", "following"), [(0, 1), (41, 42), (INT_MAX - 1, INT_MAX), (INT_MAX, INT_MIN),
                                                  (INT_MIN, INT_MIN + 1), (-1, 0)])
def test_next_epoch_is_a_32_bit_increment(epoch: int, following: int) -> None:
    assert ControllerEpochZNode.next_epoch(epoch) == following


async def test_election_after_int_max_writes_and_returns_int_min() -> None:
    backend = EmbeddedBackend(OffsetClock(wall_clock_ms))
    session = await backend.new_session()
    try:
        client = KafkaZkClient(session, wall_clock_ms)
        await session.create(paths.CONTROLLER_EPOCH, str(INT_MAX).encode())
        assert await client.register_controller_and_increment_controller_epoch(1) == (INT_MIN, 1)
        data, stat = await session.get_data(paths.CONTROLLER_EPOCH)
        assert (data, stat.version) == (b"-2147483648", 1)
        found = await client.get_controller_epoch()  # readable: the next election can increment it again
        assert found is not None and found[0] == INT_MIN
        await session.delete(paths.CONTROLLER)
        assert await client.register_controller_and_increment_controller_epoch(2) == (INT_MIN + 1, 2)
    finally:
        await session.close()
        await backend.close()
