"""Produce against a topic's config (Kafka 2.8.2's ``Log.analyzeAndValidateRecords``): an entry larger than the
topic's ``max.message.bytes`` (else the broker's ``message.max.bytes``) is RECORD_TOO_LARGE for that partition
alone, checked entry by entry with the CRC (a corrupt entry before an oversized one is CORRUPT_MESSAGE), after
``min.insync.replicas``; and a topic whose config is still being read is waited for."""

from __future__ import annotations

import asyncio

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder
from tests.helpers import until_idle

from zkcontroller.broker.kafka_apis import KafkaApis
from zkcontroller.broker.produce import ProduceTarget

from .test_produce_wire import (
    CORRUPT_MESSAGE,
    NONE,
    NOT_ENOUGH_REPLICAS,
    ORDERS_0,
    Replicas,
    apis,  # noqa: F401 (the fixture)
    batch,
    corrupt,
    legacy_answers,
    legacy_frame,
    send,
)

RECORD_TOO_LARGE = 10


def legacy_set(n: int, magic: int, value: bytes = b"v") -> bytes:
    b = MemoryRecordsBuilder(magic=magic, compression_type=0, batch_size=1 << 20)
    for _ in range(n):
        b.append(timestamp=1_000, key=None, value=value)
    b.close()
    return bytes(b.buffer())


class ConfiguredReplicas(Replicas):
    """The produce fixture's replicas with a topic's ``max.message.bytes`` and a config read to wait for."""

    def __init__(self) -> None:
        super().__init__()
        self.max_bytes: int | None = None
        self.loading: asyncio.Event | None = None
        self.waiting = asyncio.Event()
        """Set once a produce waits for the config read (`loading`)."""

    def produce_target(self) -> ProduceTarget:
        target = super().produce_target()
        target.max_message_bytes = lambda _t: self.max_bytes
        target.configs_loaded = self._loaded
        return target

    async def _loaded(self, _topics: object) -> None:
        if self.loading is not None:
            self.waiting.set()
            await self.loading.wait()


@pytest.fixture
def configured(apis: tuple[KafkaApis, Replicas]) -> tuple[KafkaApis, ConfiguredReplicas]:  # noqa: F811
    api, plain = apis
    replicas = ConfiguredReplicas()
    replicas.parts = plain.parts
    replicas.waiters = plain.waiters
    api._replica_manager = lambda: replicas  # type: ignore[assignment]
    return api, replicas


async def test_an_entry_above_max_message_bytes_is_record_too_large(configured) -> None:
    api, replicas = configured
    size = len(batch(3))
    replicas.max_bytes = size  # the limit itself passes: Kafka refuses only a larger batch
    assert await send(api, 8, 1, [("orders", [(0, batch(3))])]) == [("orders", 0, NONE, 10, 0)]
    replicas.max_bytes = size - 1
    assert await send(api, 8, 1, [("orders", [(0, batch(3))])]) == [("orders", 0, RECORD_TOO_LARGE, -1, -1)]
    assert await send(api, 3, 1, [("orders", [(0, batch(3))])]) == [("orders", 0, RECORD_TOO_LARGE, -1, None)]
    assert replicas.parts[ORDERS_0].log_end_offset == 13  # nothing appended by the refused ones


async def test_size_and_crc_are_checked_entry_by_entry_after_min_insync(configured) -> None:
    """Legacy message sets (Produce v0-v2) may hold several entries: the first failing check wins."""
    api, replicas = configured
    small, large = legacy_set(1, 1), legacy_set(1, 1, value=b"x" * 200)
    replicas.max_bytes = len(small)

    async def legacy(records: bytes, acks: int = 1) -> tuple[str, int, int, int]:
        return legacy_answers(await api.handle(legacy_frame(2, acks, [("orders", [(0, records)])])), 2)[0]

    assert await legacy(corrupt(small) + large) == ("orders", 0, CORRUPT_MESSAGE, -1)
    assert await legacy(large + corrupt(small)) == ("orders", 0, RECORD_TOO_LARGE, -1)
    assert await legacy(small + small) == ("orders", 0, NONE, 10)
    replicas.min_isr = 3
    assert await legacy(large, acks=-1) == ("orders", 0, NOT_ENOUGH_REPLICAS, -1)


async def test_produce_waits_for_a_topic_config_being_read(configured) -> None:
    api, replicas = configured
    replicas.loading = asyncio.Event()
    replicas.max_bytes = 1
    sent = asyncio.ensure_future(send(api, 8, 1, [("orders", [(0, batch(2))])]))
    await asyncio.wait_for(replicas.waiting.wait(), 5)  # the request is held at the config read
    await until_idle()  # and stays there while the read lasts: nothing else can move it
    assert not sent.done() and replicas.parts[ORDERS_0].log_end_offset == 10  # nothing appended meanwhile
    replicas.max_bytes = None  # the config read says: no tighter limit
    replicas.loading.set()
    assert await asyncio.wait_for(sent, 5) == [("orders", 0, NONE, 10, 0)]
