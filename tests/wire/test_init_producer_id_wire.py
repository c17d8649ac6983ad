"""InitProducerId (API 22) through `KafkaApis.handle`, as a Kafka 2.8 broker answers a producer without a
transactional id: a new producer id from the broker's block in ``/latest_producer_id_block`` at epoch 0, for every
version 0–4; a transactional id gets NOT_COORDINATOR (no transaction coordinator); a malformed znode or a lost
ZooKeeper session gets UNKNOWN_SERVER_ERROR and a log line, and the broker answers again once it is fixed."""

from __future__ import annotations

import io
import logging
import struct
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from kio.serial import entity_reader, entity_writer
from tests.helpers import embedded_zk_client

from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis
from zkcontroller.broker.producer_ids import ProducerIdManager
from zkcontroller.protocol.wire.client_apis import API_VERSIONS, INIT_PRODUCER_ID, schema_module
from zkcontroller.protocol.wire.frames import decode_response_header
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import ProducerIdBlock, ProducerIdBlockZNode

from .server_fixture import request_frame

NONE, UNKNOWN_SERVER_ERROR, NOT_COORDINATOR, INVALID_REQUEST = 0, -1, 16, 42
PATH = "/latest_producer_id_block"


class MemoryBlocks:
    """`KafkaZkClient`'s producer-id-block calls over a dict: for tests that need no store (the fuzz)."""

    def __init__(self) -> None:
        self.block: ProducerIdBlock | None = None
        self.version = 0

    async def get_producer_id_block(self) -> tuple[ProducerIdBlock | None, int] | None:
        return self.block, self.version

    async def set_producer_id_block(self, block: ProducerIdBlock, expected_version: int) -> bool:
        if expected_version != self.version:
            return False
        self.block, self.version = block, self.version + 1
        return True

    async def create_producer_id_block(self, block: ProducerIdBlock) -> bool:
        return False


def memory_manager(broker_id: int = 1) -> ProducerIdManager:
    blocks = MemoryBlocks()
    return ProducerIdManager(broker_id, lambda: blocks)  # type: ignore[arg-type,return-value]


def frame(version: int, transactional_id: str | None = None, timeout_ms: int = 60_000, producer_id: int = -1,
          producer_epoch: int = -1, correlation_id: int = 7) -> bytes:
    m = schema_module(INIT_PRODUCER_ID, version, "request")
    extra = {"producer_id": producer_id, "producer_epoch": producer_epoch} if version >= 3 else {}
    request = m.InitProducerIdRequest(transactional_id=transactional_id,
                                      transaction_timeout=timedelta(milliseconds=timeout_ms), **extra)
    buf = io.BytesIO()
    entity_writer(type(request))(buf, request)
    return request_frame(INIT_PRODUCER_ID, version, correlation_id, buf.getvalue())[4:]


def answer(payload: bytes | None, version: int) -> tuple[int, int, int]:
    """(error, producer id, epoch)."""
    assert payload is not None
    correlation_id, offset = decode_response_header(payload, INIT_PRODUCER_ID, version)
    assert correlation_id == 7
    m = schema_module(INIT_PRODUCER_ID, version, "response")
    response, _ = entity_reader(m.InitProducerIdResponse)(memoryview(payload)[offset:], 0)
    assert response.throttle_time == timedelta(0)
    return int(response.error_code), int(response.producer_id), int(response.producer_epoch)


@pytest.fixture
async def zk() -> AsyncIterator[KafkaZkClient]:
    async with embedded_zk_client() as client:
        yield client


def _apis(broker_id: int, zk: KafkaZkClient | None) -> KafkaApis:
    return KafkaApis(broker_id, control_handler=lambda: None, metadata_cache=lambda: None, cluster_id=lambda: "c",
                     producer_ids=ProducerIdManager(broker_id, lambda: zk))


def test_api_versions_advertises_kafka_2_8s_range_only_with_a_manager() -> None:
    assert _apis(1, None).supported_versions()[INIT_PRODUCER_ID] == (0, 4)
    bare = KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: None, cluster_id=lambda: "c")
    assert INIT_PRODUCER_ID not in bare.supported_versions()
    assert API_VERSIONS in bare.supported_versions()


async def test_every_version_gets_a_new_producer_id_at_epoch_0(zk: KafkaZkClient) -> None:
    apis = _apis(1, zk)
    assert [answer(await apis.handle(frame(v)), v) for v in range(5)] == [(NONE, i, 0) for i in range(5)]
    found = await zk.get_producer_id_block()
    assert found is not None and found[0] == ProducerIdBlock(1, 0, 999)


async def test_two_brokers_answer_from_disjoint_blocks(zk: KafkaZkClient) -> None:
    one, two = _apis(1, zk), _apis(2, zk)
    assert answer(await one.handle(frame(4)), 4) == (NONE, 0, 0)
    assert answer(await two.handle(frame(4)), 4) == (NONE, 1000, 0)
    assert answer(await one.handle(frame(2)), 2) == (NONE, 1, 0)


async def test_an_epoch_bump_without_transactional_id_gets_a_new_producer_id(zk: KafkaZkClient) -> None:
    """KIP-360: an idempotent producer sends its id and epoch; TransactionCoordinator without a transactional id
    ignores them and hands out a new id at epoch 0."""
    apis = _apis(1, zk)
    assert answer(await apis.handle(frame(4)), 4) == (NONE, 0, 0)
    assert answer(await apis.handle(frame(4, producer_id=0, producer_epoch=0)), 4) == (NONE, 1, 0)
    assert answer(await apis.handle(frame(3, producer_id=0, producer_epoch=5)), 3) == (NONE, 2, 0)
    assert answer(await apis.handle(frame(3, producer_id=0, producer_epoch=-1)), 3) == (INVALID_REQUEST, -1, -1)


async def test_a_transactional_id_gets_not_coordinator(zk: KafkaZkClient) -> None:
    """Transactions are not served: as a 2.8 broker that does not own the id's __transaction_state partition."""
    apis = _apis(1, zk)
    for v in range(5):
        assert answer(await apis.handle(frame(v, transactional_id="tx-1")), v) == (NOT_COORDINATOR, -1, -1)
    assert answer(await apis.handle(frame(1, transactional_id="")), 1) == (INVALID_REQUEST, -1, -1)
    found = await zk.get_producer_id_block()
    assert found == (None, 0)  # no block claimed for them


async def test_a_malformed_znode_answers_unknown_server_error_and_logs_its_path(
        zk: KafkaZkClient, caplog: pytest.LogCaptureFixture) -> None:
    await zk.session.set_data(PATH, b'{"version":1,"broker":2,"block_start":"0"}')
    apis = _apis(1, zk)
    with caplog.at_level(logging.ERROR):
        assert answer(await apis.handle(frame(4)), 4) == (UNKNOWN_SERVER_ERROR, -1, -1)
    assert any("api=INIT_PRODUCER_ID, version=4, body=InitProducerIdRequestData(transactionalId=null, "
               "transactionTimeoutMs=60000, producerId=-1, producerEpoch=-1)\n" in r.getMessage()
               and f"Malformed znode {PATH}" in r.getMessage()
               for r in caplog.records), caplog.text  # InitProducerIdRequest.json's generated toString
    await zk.session.set_data(PATH, ProducerIdBlockZNode.encode(ProducerIdBlock(2, 0, 999)))
    assert answer(await apis.handle(frame(4)), 4) == (NONE, 1000, 0)


async def test_a_lost_zookeeper_session_answers_unknown_server_error(
        zk: KafkaZkClient, caplog: pytest.LogCaptureFixture) -> None:
    apis = _apis(1, zk)
    await zk.session.close()
    with caplog.at_level(logging.ERROR):
        assert answer(await apis.handle(frame(4)), 4) == (UNKNOWN_SERVER_ERROR, -1, -1)
    assert any("api=INIT_PRODUCER_ID" in r.getMessage() and "SessionExpiredError" in r.getMessage()
               for r in caplog.records), caplog.text
    not_started = _apis(2, None)
    assert answer(await not_started.handle(frame(0)), 0) == (UNKNOWN_SERVER_ERROR, -1, -1)


async def test_v5_and_malformed_bodies_close_the_connection() -> None:
    apis = KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: None, cluster_id=lambda: "c",
                     producer_ids=memory_manager())
    bad = [frame(5), frame(2)[:-3], request_frame(INIT_PRODUCER_ID, 1, 7, struct.pack(">h", 0x7FFF))[4:]]
    for payload in bad:
        with pytest.raises(CloseConnection):
            await apis.handle(payload)
    assert answer(await apis.handle(frame(1)), 1) == (NONE, 0, 0)


def test_the_advertised_versions_follow_a_manager_provided_after_start() -> None:
    """The table is built once per set of handlers, not per request: a manager provided later is still served."""
    apis = KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: None, cluster_id=lambda: "c")
    assert apis.supported_versions() is apis.supported_versions()
    assert INIT_PRODUCER_ID not in apis.supported_versions()
    apis.producer_ids = _apis(1, None).producer_ids
    assert apis.supported_versions()[INIT_PRODUCER_ID] == (0, 4)
    apis.producer_ids = None
    assert INIT_PRODUCER_ID not in apis.supported_versions()


def test_the_advertised_versions_cannot_be_changed_by_a_caller() -> None:
    apis = KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: None, cluster_id=lambda: "c")
    with pytest.raises(TypeError):
        apis.supported_versions()[INIT_PRODUCER_ID] = (0, 4)  # type: ignore[index]
    assert INIT_PRODUCER_ID not in apis.supported_versions()
