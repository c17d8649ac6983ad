"""Fixtures for admin contract tests: a `KafkaZkClient` on the parametrized ``backend`` with brokers registered."""

from __future__ import annotations

import random

import pytest
from tests.contract.zk.conftest import MakeClient, clock, make_client  # noqa: F401  (fixtures reused here)

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.model import Broker, BrokerInfo, EndPoint
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


def broker_info(broker_id: int, rack: str | None = None) -> BrokerInfo:
    endpoint = EndPoint(f"host{broker_id}", 9092, "PLAINTEXT", "PLAINTEXT")
    return BrokerInfo(Broker(broker_id, (endpoint,), rack))


async def register_brokers(client: KafkaZkClient, ids: list[int], racks: dict[int, str] | None = None) -> None:
    for broker_id in ids:
        await client.register_broker(broker_info(broker_id, (racks or {}).get(broker_id)))


@pytest.fixture
async def zk(make_client: MakeClient) -> KafkaZkClient:  # noqa: F811
    """A client whose session has created Kafka's top-level paths and registered brokers 1, 2 and 3."""
    client = await make_client()
    await client.create_top_level_paths()
    await register_brokers(client, [1, 2, 3])
    return client


@pytest.fixture
def admin(zk: KafkaZkClient) -> TopicAdmin:
    return TopicAdmin(zk, random.Random(0))
