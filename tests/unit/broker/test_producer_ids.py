"""Producer id blocks claimed in ``/latest_producer_id_block`` on the embedded store (Kafka's
``ProducerIdManager``), and InitProducerId's answers without a transaction coordinator."""

from __future__ import annotations

import asyncio

import pytest

from zkcontroller.broker.producer_ids import (
    INVALID_REQUEST,
    INVALID_TRANSACTION_TIMEOUT,
    LONG_MAX,
    NONE,
    NOT_COORDINATOR,
    NoZooKeeperError,
    ProducerIdManager,
    ProducerIdsExhaustedError,
    init_producer_id,
)
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import ProducerIdBlock, ProducerIdBlockZNode

PATH = "/latest_producer_id_block"


async def _block(zk: KafkaZkClient) -> ProducerIdBlock | None:
    found = await zk.get_producer_id_block()
    assert found is not None
    return found[0]


def test_the_znode_is_kafkas_json_with_ids_as_strings() -> None:
    block = ProducerIdBlock(3, 1000, 1999)
    assert ProducerIdBlockZNode.path() == paths.LATEST_PRODUCER_ID_BLOCK == PATH
    assert ProducerIdBlockZNode.encode(block) == \
        b'{"version":1,"broker":3,"block_start":"1000","block_end":"1999"}'
    assert ProducerIdBlockZNode.decode(b'{"block_end":"999","broker":1,"block_start":"0","version":1}') == \
        ProducerIdBlock(1, 0, 999)


@pytest.mark.parametrize(("data", "reason"), [
    (b"{", "invalid JSON"),
    (b'{"version":1,"broker":1,"block_start":0,"block_end":"999"}', "block_start"),
    (b'{"version":1,"broker":1,"block_start":"0"}', "block_end"),
    (b'{"version":1,"broker":1,"block_start":"0","block_end":"9223372036854775808"}', "64-bit"),
    (b'{"version":1,"broker":"1","block_start":"0","block_end":"999"}', "broker"),
])
def test_a_malformed_znode_is_refused_naming_its_path(data: bytes, reason: str) -> None:
    with pytest.raises(ZnodeDecodeError) as e:
        ProducerIdBlockZNode.decode(data)
    assert e.value.path == PATH and PATH in str(e.value) and reason in str(e.value)


async def test_the_first_block_is_0_to_999_and_ids_are_handed_out_in_order(zk: KafkaZkClient) -> None:
    assert await zk.get_producer_id_block() == (None, 0)  # empty: no block claimed yet
    manager = ProducerIdManager(1, lambda: zk)
    assert [await manager.generate_producer_id() for _ in range(3)] == [0, 1, 2]
    assert await _block(zk) == ProducerIdBlock(1, 0, 999)


async def test_an_absent_znode_is_created_with_the_first_block(zk: KafkaZkClient) -> None:
    await zk.session.delete(PATH)
    assert await ProducerIdManager(2, lambda: zk).generate_producer_id() == 0
    assert await _block(zk) == ProducerIdBlock(2, 0, 999)


async def test_two_brokers_get_disjoint_blocks(zk: KafkaZkClient) -> None:
    first, second = ProducerIdManager(1, lambda: zk), ProducerIdManager(2, lambda: zk)
    ids1 = [await first.generate_producer_id() for _ in range(5)]
    ids2 = [await second.generate_producer_id() for _ in range(5)]
    assert ids1 == [0, 1, 2, 3, 4] and ids2 == [1000, 1001, 1002, 1003, 1004]
    assert first.current_block == ProducerIdBlock(1, 0, 999)
    assert second.current_block == ProducerIdBlock(2, 1000, 1999)
    assert await _block(zk) == ProducerIdBlock(2, 1000, 1999)


async def test_concurrent_claims_end_disjoint(zk: KafkaZkClient) -> None:
    managers = [ProducerIdManager(b, lambda: zk) for b in (1, 2, 3)]
    ids = await asyncio.gather(*(m.generate_producer_id() for m in managers))
    blocks = [m.current_block for m in managers]
    assert sorted(ids) == [0, 1000, 2000]
    assert sorted((b.block_start, b.block_end) for b in blocks if b) == [(0, 999), (1000, 1999), (2000, 2999)]


class _Racing:
    """A client on which another broker claims a block between our read and our conditional write."""

    def __init__(self, zk: KafkaZkClient, rival: ProducerIdManager) -> None:
        self.zk, self.rival, self.raced = zk, rival, False

    async def get_producer_id_block(self) -> tuple[ProducerIdBlock | None, int] | None:
        found = await self.zk.get_producer_id_block()
        if not self.raced:
            self.raced = True
            await self.rival.generate_producer_id()
        return found

    async def set_producer_id_block(self, block: ProducerIdBlock, expected_version: int) -> bool:
        return await self.zk.set_producer_id_block(block, expected_version)

    async def create_producer_id_block(self, block: ProducerIdBlock) -> bool:
        return await self.zk.create_producer_id_block(block)


async def test_a_lost_conditional_write_rereads_and_claims_the_next_block(zk: KafkaZkClient) -> None:
    rival = ProducerIdManager(2, lambda: zk)
    racing = _Racing(zk, rival)
    manager = ProducerIdManager(1, lambda: racing)  # type: ignore[arg-type,return-value]
    assert await manager.generate_producer_id() == 1000  # its write of 0-999 hit BADVERSION
    assert rival.current_block == ProducerIdBlock(2, 0, 999)
    assert await _block(zk) == ProducerIdBlock(1, 1000, 1999)


async def test_the_second_block_starts_after_the_latest_one(zk: KafkaZkClient) -> None:
    first, second = ProducerIdManager(1, lambda: zk), ProducerIdManager(2, lambda: zk)
    ids = [await first.generate_producer_id() for _ in range(1000)]
    assert ids == list(range(1000))
    assert await second.generate_producer_id() == 1000
    assert await first.generate_producer_id() == 2000  # used up: the block after broker 2's
    assert first.current_block == ProducerIdBlock(1, 2000, 2999)
    assert await first.generate_producer_id() == 2001


async def test_a_malformed_znode_fails_the_claim_naming_its_path_and_a_later_one_recovers(
        zk: KafkaZkClient) -> None:
    await zk.session.set_data(PATH, b'{"version":1,"broker":1,"block_start":"x","block_end":"999"}')
    manager = ProducerIdManager(1, lambda: zk)
    with pytest.raises(ZnodeDecodeError) as e:
        await manager.generate_producer_id()
    assert e.value.path == PATH and manager.current_block is None
    await zk.session.set_data(PATH, ProducerIdBlockZNode.encode(ProducerIdBlock(2, 0, 999)))
    assert await manager.generate_producer_id() == 1000


async def test_exhausted_ids_fail_as_kafka_does(zk: KafkaZkClient) -> None:
    manager = ProducerIdManager(1, lambda: zk)
    await zk.session.set_data(PATH, ProducerIdBlockZNode.encode(ProducerIdBlock(2, 0, LONG_MAX - 1000)))
    assert await manager.generate_producer_id() == LONG_MAX - 999  # the last block there is
    await zk.session.set_data(PATH, ProducerIdBlockZNode.encode(ProducerIdBlock(2, 0, LONG_MAX - 999)))
    other = ProducerIdManager(3, lambda: zk)
    with pytest.raises(ProducerIdsExhaustedError, match="Have exhausted all producerIds"):
        await other.generate_producer_id()


async def test_no_zookeeper_client_fails_the_claim() -> None:
    with pytest.raises(NoZooKeeperError):
        await ProducerIdManager(1, lambda: None).generate_producer_id()


async def test_init_producer_id_answers(zk: KafkaZkClient) -> None:
    manager = ProducerIdManager(1, lambda: zk)
    first = await init_producer_id(manager, None, 60_000, -1, -1)
    assert (first.producer_id, first.producer_epoch, first.error) == (0, 0, NONE)
    bumped = await init_producer_id(manager, None, 60_000, 0, 0)  # KIP-360: a new id, epoch 0
    assert (bumped.producer_id, bumped.producer_epoch, bumped.error) == (1, 0, NONE)
    for args, error in [((None, 60_000, 5, -1), INVALID_REQUEST), ((None, 60_000, -1, 3), INVALID_REQUEST),
                        (("", 60_000, -1, -1), INVALID_REQUEST), (("tx", 0, -1, -1), INVALID_TRANSACTION_TIMEOUT),
                        (("tx", 900_001, -1, -1), INVALID_TRANSACTION_TIMEOUT),
                        (("tx", 60_000, -1, -1), NOT_COORDINATOR), (("tx", 900_000, 1, 0), NOT_COORDINATOR)]:
        result = await init_producer_id(manager, *args)  # type: ignore[arg-type]
        assert (result.producer_id, result.producer_epoch, result.error) == (-1, -1, error), args
    assert await manager.generate_producer_id() == 2  # the refusals took no id


async def test_the_acquired_line_names_the_znode_version_the_claim_wrote(
        zk: KafkaZkClient, caplog: pytest.LogCaptureFixture) -> None:
    """ProducerIdManager 2.8.2: ``Acquired new producerId block $block by writing to Zk with path version $v``,
    ``v`` the version the conditional write produced (the empty znode is version 0, each claim adds one)."""
    first, second = ProducerIdManager(1, lambda: zk), ProducerIdManager(2, lambda: zk)
    with caplog.at_level("INFO"):
        await first.generate_producer_id()
        await second.generate_producer_id()
    acquired = [r.getMessage() for r in caplog.records if "Acquired" in r.getMessage()]
    assert acquired == [
        "[ProducerId Manager 1]: Acquired new producerId block (brokerId:1,blockStartProducerId:0,"
        "blockEndProducerId:999) by writing to Zk with path version 1",
        "[ProducerId Manager 2]: Acquired new producerId block (brokerId:2,blockStartProducerId:1000,"
        "blockEndProducerId:1999) by writing to Zk with path version 2",
    ]
    found = await zk.get_producer_id_block()
    assert found is not None and found[1] == 2


async def test_a_created_znode_is_acquired_at_version_0(zk: KafkaZkClient, caplog: pytest.LogCaptureFixture) -> None:
    await zk.session.delete(PATH)
    with caplog.at_level("INFO"):
        await ProducerIdManager(2, lambda: zk).generate_producer_id()
    assert any(r.getMessage().endswith("by writing to Zk with path version 0") for r in caplog.records)
